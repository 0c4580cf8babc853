//! verify_async=N: N threads that check verified blocks, so that the job thread goes on
//! issuing I/O while checksums are computed. A unit whose block is being checked stays
//! out of the free list until its check comes back, so its buffer is never reused
//! early; the job thread collects results as it loops, and waits for all of them
//! before the job ends.

use crate::job::verify::{check_block, Job};
use ioscope_verify::{Failure, Spec};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

struct Task {
    unit: u32,
    /// The unit's buffer (address), valid for `len` bytes until the result returns.
    buf: usize,
    len: usize,
    job: Job,
}

/// A finished check.
pub(crate) struct Done {
    pub unit: u32,
    pub result: Result<(), Failure>,
    pub phase: bool,
}

pub(crate) struct Checkers {
    tx: Vec<Sender<Task>>,
    rx: Receiver<Done>,
    next: usize,
    /// Checks sent and not yet collected.
    pub pending: u32,
    threads: Vec<JoinHandle<()>>,
}

impl Checkers {
    /// verify_async=N: N checker threads for a verifying job.
    pub fn for_job(run: &super::inputs::JobRun) -> Option<Checkers> {
        let n = run.ctx.opts.verify_async;
        let v = run.verify.as_ref().filter(|_| n > 0)?;
        let cpus = run.ctx.opts.verify_async_cpus.as_ref().map(|l| l.0.clone());
        match Checkers::new(n, &v.spec, &run.ctx.opts.name, cpus) {
            Ok(c) => Some(c),
            Err(e) => {
                run.ctx.shared.say(format!(
                    "ioscope: job '{}': verify_async: cannot start a checker thread ({e}); checking in the job thread",
                    run.ctx.opts.name
                ));
                None
            }
        }
    }

    /// `cpus`: verify_async_cpus, the CPUs the checker threads run on.
    pub fn new(
        n: u32,
        spec: &Spec,
        job: &str,
        cpus: Option<Vec<usize>>,
    ) -> std::io::Result<Checkers> {
        let (done_tx, rx) = channel::<Done>();
        let mut tx = Vec::new();
        let mut threads = Vec::new();
        for i in 0..n.max(1) {
            let (t, r) = channel::<Task>();
            let spec = spec.clone();
            let done = done_tx.clone();
            let cpus = cpus.clone();
            let h = std::thread::Builder::new()
                .name(format!("{job}-verify{i}"))
                .spawn(move || {
                    if let Some(c) = &cpus {
                        // Checked before the job started (thread.rs).
                        let _ = crate::sys::cpu::set_affinity(c);
                    }
                    for task in r {
                        // SAFETY: the job thread keeps the unit (and its buffer) out of
                        // use until this result is collected.
                        let buf = unsafe {
                            std::slice::from_raw_parts_mut(task.buf as *mut u8, task.len)
                        };
                        let result = check_block(&spec, buf, &task.job);
                        let d = Done {
                            unit: task.unit,
                            result,
                            phase: task.job.phase,
                        };
                        if done.send(d).is_err() {
                            break;
                        }
                    }
                })?;
            tx.push(t);
            threads.push(h);
        }
        Ok(Checkers {
            tx,
            rx,
            next: 0,
            pending: 0,
            threads,
        })
    }

    /// Hand a block to the next checker; false when none takes it (check it inline).
    pub fn send(&mut self, unit: u32, buf: *mut u8, len: usize, job: Job) -> bool {
        let t = Task {
            unit,
            buf: buf as usize,
            len,
            job,
        };
        let i = self.next;
        self.next = (self.next + 1) % self.tx.len();
        match self.tx[i].send(t) {
            Ok(()) => {
                self.pending += 1;
                true
            }
            Err(_) => false,
        }
    }

    /// A finished check, waiting for one when `block`.
    pub fn take(&mut self, block: bool) -> Option<Done> {
        if self.pending == 0 {
            return None;
        }
        let d = match block {
            true => self.rx.recv().ok(),
            false => self.rx.try_recv().ok(),
        }?;
        self.pending -= 1;
        Some(d)
    }
}

impl Drop for Checkers {
    fn drop(&mut self) {
        self.tx.clear();
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}
