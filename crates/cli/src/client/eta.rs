//! The client's status line (`--eta`, `--eta-newline`, `--eta-interval` before
//! `--client`): every interval each server is asked for its progress (SEND_ETA), and
//! the line shows the sum over the servers, as fio's client's does. It goes to stderr
//! and is shown when stderr is a terminal or with `--eta=always`, as a local run's.

use super::quit::Quit;
use crate::term::status::{Line, Status};
use ioscope_wire::msg::{self, op};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The servers' latest progress and the line drawn from it.
pub struct Board {
    /// Each host's latest ETA reply.
    slots: Mutex<Vec<Option<msg::Eta>>>,
    status: Mutex<Status>,
    interval: Duration,
}

impl Board {
    pub fn new(hosts: usize, status: Status, interval: Duration) -> Board {
        Board {
            slots: Mutex::new(vec![None; hosts]),
            status: Mutex::new(status),
            interval,
        }
    }

    /// Host `i`'s progress (its ETA reply); None once it is done, when its jobs
    /// leave the line.
    pub fn set(&self, i: usize, e: Option<msg::Eta>) {
        if let Ok(mut s) = self.slots.lock() {
            if let Some(slot) = s.get_mut(i) {
                *slot = e;
            }
        }
    }

    /// Clear the line before other text is written.
    pub fn clear(&self) {
        if let Ok(mut s) = self.status.lock() {
            s.finish();
        }
    }

    /// Until every host's session ended: ask each server for its progress, draw the
    /// sum of the latest replies every interval.
    pub fn watch(&self, quit: &Quit, hosts: usize) {
        if !self.status.lock().is_ok_and(|s| s.shown()) {
            return;
        }
        while !quit.all_done(hosts) {
            quit.send_all(op::SEND_ETA, &[]);
            let next = Instant::now() + self.interval;
            while Instant::now() < next && !quit.all_done(hosts) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let line = self
                .slots
                .lock()
                .ok()
                .and_then(|s| summed(s.iter().flatten()));
            if let (Some(line), Ok(mut st)) = (line, self.status.lock()) {
                st.draw(&line);
            }
        }
        self.clear();
    }
}

/// The line for every server's progress together: jobs, rates and states summed; done
/// as far as the server furthest from its end; its ETA.
fn summed<'a>(etas: impl Iterator<Item = &'a msg::Eta>) -> Option<Line> {
    let mut line = Line {
        running: 0,
        files: 0,
        states: String::new(),
        pct: Some(1.0),
        bw: [0.0; 3],
        iops: [0.0; 3],
        eta_s: 0.0,
    };
    let mut any = false;
    for e in etas {
        any = true;
        line.running += e.running as usize;
        line.files += e.files_open as usize;
        if !e.states.is_empty() {
            if !line.states.is_empty() {
                line.states.push(',');
            }
            line.states.push_str(&e.states);
        }
        for d in 0..3 {
            line.bw[d] += e.kib_s[d] as f64 * 1024.0;
            line.iops[d] += f64::from(e.iops[d]);
        }
        // Unknown (fio's "-.-%") while any server cannot tell.
        let (left, elapsed) = (e.eta_s.unwrap_or(0) as f64, e.elapsed_s as f64);
        let pct = e
            .eta_s
            .map(|_| elapsed / (elapsed + left).max(1.0))
            .filter(|_| elapsed > 0.0);
        line.pct = line.pct.zip(pct).map(|(a, b)| a.min(b));
        line.eta_s = line.eta_s.max(left);
    }
    // Nothing to show until a server has jobs.
    (any && !line.states.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_servers_sum() {
        let a = msg::Eta {
            running: 1,
            kib_s: [4000, 0, 0],
            iops: [1000, 0, 0],
            elapsed_s: 2,
            eta_s: Some(2),
            states: "r(1)".into(),
            ..msg::Eta::default()
        };
        let b = msg::Eta {
            running: 2,
            kib_s: [0, 8000, 0],
            iops: [0, 2000, 0],
            elapsed_s: 1,
            eta_s: Some(3),
            states: "w(2)".into(),
            ..msg::Eta::default()
        };
        let l = summed([&a, &b].into_iter()).unwrap();
        assert_eq!((l.running, l.states.as_str()), (3, "r(1),w(2)"));
        assert_eq!(l.iops, [1000.0, 2000.0, 0.0]);
        assert_eq!(l.bw, [4000.0 * 1024.0, 8000.0 * 1024.0, 0.0]);
        assert_eq!((l.pct, l.eta_s), (Some(0.25), 3.0));
        assert!(summed(std::iter::empty()).is_none());
    }
}
