//! `flow`, `flow_id`, `flow_sleep`: jobs of one flow group issue I/O in proportion to
//! their weights, counted in I/Os (not bytes), as fio 3.33 does. A job joins its group
//! when it starts and leaves when it ends; before each I/O it compares its own count,
//! as a share of the group's, with its weight's share of the group's weight, and while
//! it is ahead it holds back: sleeping flow_sleep µs (after its I/O in flight is done),
//! or, with flow_sleep=0 (fio's default), trying again at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// One flow group: I/Os issued and the weight of the jobs in it.
#[derive(Debug, Default)]
pub struct FlowGroup {
    ios: AtomicU64,
    weight: AtomicU64,
}

/// A job's membership: its weight and count, and its group.
#[derive(Debug)]
pub struct Flow {
    group: Arc<FlowGroup>,
    weight: u64,
    ios: u64,
}

fn registry() -> &'static Mutex<HashMap<u32, Weak<FlowGroup>>> {
    static R: std::sync::OnceLock<Mutex<HashMap<u32, Weak<FlowGroup>>>> =
        std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

impl Flow {
    /// Join group `id` with `weight` (None for weight 0: the job is not in flow control).
    pub fn join(id: u32, weight: u32) -> Option<Flow> {
        if weight == 0 {
            return None;
        }
        let group = {
            let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
            r.retain(|_, w| w.strong_count() > 0);
            match r.get(&id).and_then(Weak::upgrade) {
                Some(g) => g,
                None => {
                    let g = Arc::new(FlowGroup::default());
                    r.insert(id, Arc::downgrade(&g));
                    g
                }
            }
        };
        group.weight.fetch_add(u64::from(weight), Ordering::SeqCst);
        Some(Flow {
            group,
            weight: u64::from(weight),
            ios: 0,
        })
    }

    /// Is the job ahead of its share (its I/O must wait)?
    #[inline]
    pub fn ahead(&self) -> bool {
        let total = self.group.ios.load(Ordering::Relaxed).max(1);
        let weights = self.group.weight.load(Ordering::Relaxed).max(1);
        // own / total > weight / weights, without division.
        u128::from(self.ios) * u128::from(weights) > u128::from(total) * u128::from(self.weight)
    }

    /// One I/O was issued (counted once, however often it was held before).
    #[inline]
    pub fn issued(&mut self) {
        self.ios += 1;
        self.group.ios.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Flow {
    /// Leaving: the group forgets this job's weight and I/Os, so the others' shares
    /// are among themselves.
    fn drop(&mut self) {
        self.group.weight.fetch_sub(self.weight, Ordering::SeqCst);
        self.group.ios.fetch_sub(self.ios, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_in_proportion_to_the_weights() {
        let mut a = Flow::join(77, 3).unwrap();
        let mut b = Flow::join(77, 1).unwrap();
        let (mut na, mut nb) = (0, 0);
        for _ in 0..4000 {
            for (f, n) in [(&mut a, &mut na), (&mut b, &mut nb)] {
                if !f.ahead() {
                    f.issued();
                    *n += 1;
                }
            }
        }
        // a goes every round; b only while a stays at least three times ahead.
        assert!(na == 4000 && (1330..=1340).contains(&nb), "{na} {nb}");
        assert!(Flow::join(77, 0).is_none());
        drop(a);
        assert_eq!(b.group.weight.load(Ordering::SeqCst), 1);
    }
}
