//! What the ranks need from MPI, as a trait: the seam that lets the protocol in
//! [`crate::rank`] be tested with threads instead of processes.

/// Kinds of messages sent to rank 0 (MPI tags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Tag {
    /// A rank's job progress (status line), at most once a second.
    Progress = 11,
    /// A rank's interim report (--status-interval).
    Interim = 12,
    /// A rank's final results.
    Result = 13,
    /// Per-rank log files sent to rank 0 (--gather-logs).
    Log = 14,
    /// A job's interval of the live stream (--live, --metrics).
    Live = 15,
}

/// Communication among the ranks of one run.
pub trait Transport {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// The host the rank runs on (MPI's processor name: the host name).
    fn host(&self) -> &str;
    /// Wait until every rank has called this. `idle` runs between polls: the wait
    /// sleeps rather than spins, and rank 0 keeps taking messages meanwhile.
    fn barrier(&self, idle: &mut dyn FnMut());
    /// Every rank's bytes, on every rank, in rank order (after a barrier).
    fn all_gather(&self, mine: &[u8], idle: &mut dyn FnMut()) -> Vec<Vec<u8>>;
    /// Send to rank 0 and wait, sleeping, until the send is complete.
    fn send_to_root(&self, tag: Tag, bytes: &[u8]);
    /// Rank 0: a message of this kind if one has arrived — (sender, bytes).
    fn try_receive(&self, tag: Tag) -> Option<(u32, Vec<u8>)>;
}

/// Ranks as threads of one process: the test seam for the protocol.
pub mod local {
    use super::{Tag, Transport};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[derive(Default)]
    struct State {
        generation: u64,
        arrived: u32,
        slots: Vec<Vec<u8>>,
        mail: Vec<(Tag, u32, Vec<u8>)>,
    }

    /// One rank of a [`ranks`] group.
    pub struct Local {
        rank: u32,
        size: u32,
        host: String,
        state: Arc<Mutex<State>>,
    }

    /// `size` ranks named `host0`, `host1`, …, sharing one state.
    pub fn ranks(size: u32) -> Vec<Local> {
        let state = Arc::new(Mutex::new(State {
            slots: vec![Vec::new(); size as usize],
            ..State::default()
        }));
        (0..size)
            .map(|rank| Local {
                rank,
                size,
                host: format!("host{rank}"),
                state: state.clone(),
            })
            .collect()
    }

    impl Local {
        fn lock(&self) -> std::sync::MutexGuard<'_, State> {
            self.state.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    impl Transport for Local {
        fn rank(&self) -> u32 {
            self.rank
        }
        fn size(&self) -> u32 {
            self.size
        }
        fn host(&self) -> &str {
            &self.host
        }
        fn barrier(&self, idle: &mut dyn FnMut()) {
            let mine = {
                let mut s = self.lock();
                let g = s.generation;
                s.arrived += 1;
                if s.arrived == self.size {
                    s.arrived = 0;
                    s.generation += 1;
                }
                g
            };
            while self.lock().generation == mine {
                idle();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        fn all_gather(&self, mine: &[u8], idle: &mut dyn FnMut()) -> Vec<Vec<u8>> {
            self.lock().slots[self.rank as usize] = mine.to_vec();
            self.barrier(idle);
            let all = self.lock().slots.clone();
            // Nobody writes the slots again before everyone has read them.
            self.barrier(idle);
            all
        }
        fn send_to_root(&self, tag: Tag, bytes: &[u8]) {
            self.lock().mail.push((tag, self.rank, bytes.to_vec()));
        }
        fn try_receive(&self, tag: Tag) -> Option<(u32, Vec<u8>)> {
            let mut s = self.lock();
            let i = s.mail.iter().position(|(t, _, _)| *t == tag)?;
            let (_, from, b) = s.mail.remove(i);
            Some((from, b))
        }
    }
}
