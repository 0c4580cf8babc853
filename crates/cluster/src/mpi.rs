//! [`Transport`] over MPI (rsmpi). Every call is made from the main thread
//! (MPI_THREAD_FUNNELED); waits poll non-blocking requests with sleeps in between,
//! so a rank that waits for others costs no CPU (a blocking MPI_Barrier spins one).

use crate::transport::{Tag, Transport};
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};
use std::time::Duration;

/// Sleep between polls of a pending request.
const POLL: Duration = Duration::from_millis(2);

/// This process's place in the MPI job. Dropping it finalizes MPI.
pub struct MpiTransport {
    world: SimpleCommunicator,
    host: String,
    // Last: finalizes MPI when the transport goes (after `world`).
    _universe: Universe,
}

impl MpiTransport {
    /// Initialize MPI (funneled: only the main thread calls it).
    pub fn init() -> Result<MpiTransport, String> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or("MPI was already initialized")?;
        if provided < Threading::Funneled {
            return Err(format!(
                "the MPI library offers only {provided:?} threading; ioscope needs Funneled"
            ));
        }
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(MpiTransport {
            world,
            host,
            _universe: universe,
        })
    }

    /// The MPI library, for the report ("Open MPI v4.1.4, …").
    pub fn library() -> String {
        mpi::environment::library_version().unwrap_or_default()
    }

    /// End every rank at once (a rank that cannot go on and cannot tell the others).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    fn size(&self) -> u32 {
        self.world.size() as u32
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn barrier(&self, idle: &mut dyn FnMut()) {
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => {
                    req = r;
                    idle();
                    std::thread::sleep(POLL);
                }
            }
        }
    }

    fn all_gather(&self, mine: &[u8], idle: &mut dyn FnMut()) -> Vec<Vec<u8>> {
        // Ranks arrive at different times: wait for all without spinning, then the
        // collectives themselves are short.
        self.barrier(idle);
        let n = self.world.size() as usize;
        let len = mine.len() as Count;
        let mut counts = vec![0 as Count; n];
        self.world.all_gather_into(&len, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
            .collect()
    }

    fn send_to_root(&self, tag: Tag, bytes: &[u8]) {
        let root = self.world.process_at_rank(0);
        mpi::request::scope(|scope| {
            let mut req = root.immediate_send_with_tag(scope, bytes, tag as i32);
            loop {
                match req.test() {
                    Ok(_) => return,
                    Err(r) => {
                        req = r;
                        std::thread::sleep(POLL);
                    }
                }
            }
        });
    }

    fn try_receive(&self, tag: Tag) -> Option<(u32, Vec<u8>)> {
        let (msg, status) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(tag as i32)?;
        let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
        Some((status.source_rank() as u32, bytes))
    }
}
