//! The synchronised start across ioscope servers: each server says when a phase is
//! ready (READY); its host's thread waits here until every server still running has
//! said so, then tells its server to go (GO). Servers that are not ioscope's, and
//! those that failed or finished, leave the line-up and are not waited for.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

pub struct Lineup {
    /// Servers still taking part, and how many reached each phase.
    state: Mutex<(usize, HashMap<u32, usize>)>,
    cv: Condvar,
}

impl Lineup {
    pub fn new(servers: usize) -> Lineup {
        Lineup {
            state: Mutex::new((servers, HashMap::new())),
            cv: Condvar::new(),
        }
    }

    /// This server reached `phase`: wait until every server taking part has.
    pub fn arrive(&self, phase: u32) {
        let Ok(mut s) = self.state.lock() else { return };
        *s.1.entry(phase).or_insert(0) += 1;
        self.cv.notify_all();
        while s.1.get(&phase).copied().unwrap_or(0) < s.0 {
            s = match self.cv.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
    }

    /// This server takes no (further) part: nobody waits for it.
    pub fn leave(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 = s.0.saturating_sub(1);
            self.cv.notify_all();
        }
    }
}

/// One server's place in the line-up, left once: when it is not ioscope's, or when
/// its session ends, however it ends.
pub struct Member<'a> {
    lineup: &'a Lineup,
    left: std::cell::Cell<bool>,
}

impl<'a> Member<'a> {
    pub fn new(lineup: &'a Lineup) -> Member<'a> {
        Member {
            lineup,
            left: std::cell::Cell::new(false),
        }
    }

    pub fn arrive(&self, phase: u32) {
        if !self.left.get() {
            self.lineup.arrive(phase);
        }
    }

    pub fn leave(&self) {
        if !self.left.replace(true) {
            self.lineup.leave();
        }
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_taking_part_goes_together() {
        let l = Lineup::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| l.arrive(0));
            let b = s.spawn(|| l.arrive(0));
            // The third server fails before phase 0: the others go without it.
            l.leave();
            a.join().unwrap();
            b.join().unwrap();
        });
    }
}
