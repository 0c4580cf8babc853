//! `io_submit_mode=offload`: the job thread decides every I/O (offset, size, pacing,
//! buffers) and hands it to one of `iodepth` worker threads, each with an engine of its
//! own at depth 1 that does one I/O at a time on the job's open files — a sync engine
//! then keeps `iodepth` I/Os in flight. To the job loop this is an asynchronous engine:
//! `commit` hands the queued units over, `getevents` takes back what the workers
//! finished. So the submission latency is the hand-off to a worker, and the depth
//! statistics show the I/Os out with the workers (fio 3.33 reports depth 1 there).
//!
//! The workers are scoped threads that end with the job; their CPU time is not the job
//! thread's (as in fio, the job's CPU figures are its own thread's). Engines that must
//! not be offloaded are refused by name: io_uring (fio refuses it too) and the
//! metadata engines, whose timed operation is tied to the job loop's passes.

use crate::{Completion, Engine, EngineConfig, EngineError, EngineUser, IoUnit, Queued};
use std::io;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// One I/O for a worker: the unit's index and what the engine needs of it.
struct Task {
    idx: u32,
    unit: IoUnit,
}

// SAFETY: the unit's buffer belongs to the job, which does not touch it until the I/O
// comes back (the same contract as an asynchronous engine's kernel).
unsafe impl Send for Task {}

/// Why offload refuses an engine (None: it can be offloaded).
pub fn refusal(engine: &str) -> Option<String> {
    if engine == "io_uring" || engine == "io_uring_cmd" {
        return Some(format!(
            "{engine}: can't be used with offloaded submit (io_submit_mode=offload). Use a sync engine"
        ));
    }
    crate::is_path_engine(engine).then(|| {
        format!(
            "ioengine={engine} times operations on file names, which cannot be offloaded \
             (io_submit_mode=offload)"
        )
    })
}

/// Run `user` with `name` offloaded to `cfg.depth` workers.
pub fn with_offload<U: EngineUser>(
    name: &str,
    cfg: &EngineConfig<'_>,
    user: U,
) -> Result<U::Output, EngineError> {
    if let Some(why) = refusal(name) {
        return Err(EngineError::Invalid {
            engine: "offload",
            msg: why,
        });
    }
    let depth = cfg.depth.max(1);
    let (task_tx, task_rx) = channel::<Task>();
    let task_rx = Arc::new(Mutex::new(task_rx));
    let (done_tx, done_rx) = channel::<Completion>();
    let (ready_tx, ready_rx) = channel::<Result<(), String>>();
    std::thread::scope(|s| {
        for _ in 0..depth {
            let rx = task_rx.clone();
            let done = done_tx.clone();
            let ready = ready_tx.clone();
            let one = OneDeep(EngineConfig {
                depth: 1,
                files: cfg.files,
                paths: cfg.paths,
                buffers: cfg.buffers,
                unit_buf_len: cfg.unit_buf_len,
                opts: cfg.opts.clone(),
            });
            s.spawn(move || worker(name, one, rx, done, ready));
        }
        drop(ready_tx);
        let mut failed = None;
        for _ in 0..depth {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failed = failed.or(Some(e)),
                Err(_) => failed = failed.or(Some("a worker ended at setup".into())),
            }
        }
        if let Some(msg) = failed {
            // Dropping the task sender ends the workers that did start.
            drop(task_tx);
            return Err(EngineError::Invalid {
                engine: "offload",
                msg,
            });
        }
        let eng = Offload {
            depth,
            tasks: task_tx,
            done: done_rx,
            pending: Vec::with_capacity(depth as usize),
            out: 0,
            events: Vec::with_capacity(depth as usize),
        };
        // The engine (and with it the task sender) is gone when `run` returns: the
        // workers see the channel close and end, and the scope joins them.
        Ok(user.run(eng))
    })
}

/// A worker's engine configuration: the job's, at depth 1.
struct OneDeep<'a>(EngineConfig<'a>);

// SAFETY: the buffer region it points to is the job's, used by a worker only for the
// unit it was handed (the same contract as an asynchronous engine's kernel).
unsafe impl Send for OneDeep<'_> {}

/// A worker: its own engine at depth 1, one I/O at a time, until the job is over.
fn worker(
    name: &str,
    one: OneDeep<'_>,
    tasks: Arc<Mutex<Receiver<Task>>>,
    done: Sender<Completion>,
    ready: Sender<Result<(), String>>,
) {
    let one = one.0;
    let w = Worker {
        tasks,
        done,
        ready: ready.clone(),
    };
    if let Err(e) = crate::with_engine(name, &one, w) {
        let _ = ready.send(Err(e.to_string()));
    }
}

struct Worker {
    tasks: Arc<Mutex<Receiver<Task>>>,
    done: Sender<Completion>,
    ready: Sender<Result<(), String>>,
}

impl EngineUser for Worker {
    type Output = ();

    fn run<E: Engine>(self, mut e: E) {
        let _ = self.ready.send(Ok(()));
        loop {
            let task = {
                let rx = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
                rx.recv()
            };
            let Ok(mut t) = task else {
                return;
            };
            let result = one_io(&mut e, t.idx, &mut t.unit);
            if self
                .done
                .send(Completion {
                    unit: t.idx,
                    result,
                })
                .is_err()
            {
                return;
            }
        }
    }
}

/// One I/O through `e`, start to finish: bytes or -errno.
fn one_io<E: Engine>(e: &mut E, idx: u32, u: &mut IoUnit) -> i64 {
    let errno = |err: io::Error| -i64::from(err.raw_os_error().unwrap_or(libc::EIO));
    match e.queue(idx, u) {
        Ok(Queued::Done) => u.result,
        Ok(Queued::Queued) => {
            if let Err(err) = e.commit() {
                return errno(err);
            }
            loop {
                match e.getevents(1, 1) {
                    Ok(0) => continue,
                    Ok(_) => return e.event(0).result,
                    Err(err) => return errno(err),
                }
            }
        }
        Ok(Queued::Busy) => -i64::from(libc::EBUSY),
        Err(err) => errno(err),
    }
}

/// The job thread's side.
struct Offload {
    depth: u32,
    tasks: Sender<Task>,
    done: Receiver<Completion>,
    pending: Vec<Task>,
    /// I/Os with the workers.
    out: u32,
    events: Vec<Completion>,
}

impl Engine for Offload {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        if self.out + self.pending.len() as u32 >= self.depth {
            return Ok(Queued::Busy);
        }
        self.pending.push(Task {
            idx,
            unit: IoUnit {
                buf: unit.buf,
                buf_len: unit.buf_len,
                len: unit.len,
                offset: unit.offset,
                file: unit.file,
                ddir: unit.ddir,
                ioprio: unit.ioprio,
                flags: unit.flags,
                ranges: unit.ranges,
                placement: unit.placement,
                result: 0,
                start: unit.start,
                issue: 0,
            },
        });
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        let n = self.pending.len() as u32;
        for t in self.pending.drain(..) {
            self.tasks
                .send(t)
                .map_err(|_| io::Error::other("the offload workers are gone"))?;
        }
        self.out += n;
        Ok(n)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        self.events.clear();
        let max = max.max(min);
        while (self.events.len() as u32) < max {
            match self.done.try_recv() {
                Ok(c) => self.events.push(c),
                Err(_) => break,
            }
        }
        while (self.events.len() as u32) < min.min(self.out) {
            match self.done.recv() {
                Ok(c) => self.events.push(c),
                Err(_) => return Err(io::Error::other("the offload workers are gone")),
            }
        }
        let n = self.events.len() as u32;
        self.out -= n;
        Ok(n)
    }

    fn event(&mut self, i: u32) -> Completion {
        self.events[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ddir, FileInfo};
    use std::os::fd::AsRawFd;

    struct Run;
    impl EngineUser for Run {
        type Output = Vec<Completion>;
        fn run<E: Engine>(self, mut e: E) -> Vec<Completion> {
            assert!(!e.is_sync());
            let mut bufs = vec![0u8; 4 * 4096];
            let mut units: Vec<IoUnit> = (0..4)
                .map(|i| IoUnit {
                    buf: bufs[i * 4096..].as_mut_ptr(),
                    buf_len: 4096,
                    len: 4096,
                    offset: (3 - i as u64) * 4096,
                    ddir: Ddir::Read,
                    ..Default::default()
                })
                .collect();
            for (i, u) in units.iter_mut().enumerate() {
                assert_eq!(e.queue(i as u32, u).unwrap(), Queued::Queued);
            }
            let mut extra = IoUnit::default();
            assert_eq!(e.queue(9, &mut extra).unwrap(), Queued::Busy, "depth 4");
            assert_eq!(e.commit().unwrap(), 4);
            let mut got = Vec::new();
            while got.len() < 4 {
                let n = e.getevents(1, 4).unwrap();
                got.extend((0..n).map(|i| e.event(i)));
            }
            got.sort_by_key(|c| c.unit);
            // Each buffer holds the block its unit read: block k is filled with k.
            for (i, b) in bufs.chunks(4096).enumerate() {
                assert!(b.iter().all(|&x| x == 3 - i as u8), "unit {i}");
            }
            got
        }
    }

    #[test]
    fn workers_do_the_queued_ios_and_hand_them_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let data: Vec<u8> = (0..4u8).flat_map(|k| vec![k; 4096]).collect();
        std::fs::write(&p, data).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let files = [FileInfo {
            fd: f.as_raw_fd(),
            size: 16384,
            is_block: false,
        }];
        let cfg = EngineConfig {
            depth: 4,
            files: &files,
            paths: &[],
            buffers: (std::ptr::null_mut(), 0),
            unit_buf_len: 4096,
            opts: Default::default(),
        };
        let got = with_offload("psync", &cfg, Run).unwrap();
        assert_eq!(
            got.iter().map(|c| (c.unit, c.result)).collect::<Vec<_>>(),
            [(0, 4096), (1, 4096), (2, 4096), (3, 4096)]
        );
        assert!(with_offload("io_uring", &cfg, Run).is_err());
    }
}
