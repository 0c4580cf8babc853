//! The runner's test seam: a scripted engine driven by a manual clock.
//!
//! A [`Script`] decides, for the n-th I/O a job issues, how long it takes and how it
//! ends (full transfer, short transfer, or an errno). The [`ScriptedEngine`] moves the
//! manual clock ([`Clock::manual`]) exactly as a device would: a synchronous engine's
//! call takes the I/O's latency; an asynchronous one completes each I/O its latency
//! after the commit that submitted it, and `getevents` waits (jumps the clock) for as
//! many completions as it must. So ramp, rate, think time, latency statistics, errors
//! and limits are tested deterministically, in microseconds, through the real job loop:
//!
//! ```no_run
//! # use ioscope_runner::{testing::Script, Runner, RunOptions, EngineSource, Clock};
//! # fn f(set: &ioscope_options::JobSet, obs: &mut dyn ioscope_runner::Observer) {
//! let script = Script::fixed(100_000); // every I/O takes 100 µs
//! let runner = Runner::new(RunOptions::default())
//!     .with_clock(Clock::manual(0))
//!     .with_engine(EngineSource::Scripted(script.clone()));
//! let result = runner.run_set(set, obs);
//! let issued = script.trace(); // what the job issued, with issue times
//! # }
//! ```
//! A script whose latencies are all 0 never moves time: use it only with size-bound
//! jobs, never with time_based ones.

use crate::clock::Clock;
use ioscope_engine::{Completion, Ddir, Engine, IoUnit, Queued};
use ioscope_options::{engines, JobOptions};
use std::io;
use std::sync::{Arc, Mutex};

/// How one scripted I/O ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Time from submission to completion, ns.
    pub latency_ns: u64,
    /// Bytes transferred, or -errno; None transfers the whole unit.
    pub result: Option<i64>,
}

impl Outcome {
    pub fn ok(latency_ns: u64) -> Outcome {
        Outcome {
            latency_ns,
            result: None,
        }
    }

    pub fn error(latency_ns: u64, errno: i32) -> Outcome {
        Outcome {
            latency_ns,
            result: Some(-(errno as i64)),
        }
    }

    pub fn short(latency_ns: u64, bytes: u64) -> Outcome {
        Outcome {
            latency_ns,
            result: Some(bytes as i64),
        }
    }
}

/// One I/O as the engine saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    /// 0-based sequence number of the I/O in its job.
    pub seq: u64,
    pub ddir: Ddir,
    pub offset: u64,
    pub len: u32,
    pub file: u32,
    pub ioprio: u16,
    /// Manual-clock time at which the engine received it, ns.
    pub at_ns: u64,
    /// A trim of several ranges (num_range): how many, and the first four (offset,
    /// length) pairs from the unit's buffer.
    pub ranges: u16,
    pub first_ranges: [(u64, u64); 4],
}

type OutcomeFn = dyn Fn(u64, &IoUnit) -> Outcome + Send + Sync;

/// What the scripted engine does; cheap to clone (clones share the trace).
#[derive(Clone)]
pub struct Script {
    outcome: Arc<OutcomeFn>,
    /// Force synchronous (true) or asynchronous (false) completion; None follows the
    /// job's ioengine.
    sync: Option<bool>,
    /// Time each commit (submission call) takes, ns: it shows up as slat.
    submit_ns: u64,
    trace: Arc<Mutex<Vec<Issued>>>,
}

impl Script {
    /// I/O number n (per job, from 0) ends as `f(n, unit)` says.
    pub fn new(f: impl Fn(u64, &IoUnit) -> Outcome + Send + Sync + 'static) -> Script {
        Script {
            outcome: Arc::new(f),
            sync: None,
            submit_ns: 0,
            trace: Arc::default(),
        }
    }

    /// Every I/O succeeds after `latency_ns`.
    pub fn fixed(latency_ns: u64) -> Script {
        Script::new(move |_, _| Outcome::ok(latency_ns))
    }

    /// Complete synchronously (true) or asynchronously (false), whatever the job's engine.
    pub fn sync(mut self, sync: bool) -> Script {
        self.sync = Some(sync);
        self
    }

    /// Each submission call takes `ns`.
    pub fn submit_ns(mut self, ns: u64) -> Script {
        self.submit_ns = ns;
        self
    }

    /// Every I/O issued so far, by every job, in the order the engines saw them.
    pub fn trace(&self) -> Vec<Issued> {
        self.trace.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The engine for one job.
    pub fn engine(&self, o: &JobOptions, clock: &'static Clock) -> ScriptedEngine {
        ScriptedEngine {
            sync: self
                .sync
                .unwrap_or_else(|| engines::is_sync(&o.ioengine, o.iodepth)),
            script: self.clone(),
            clock,
            seq: 0,
            queued: Vec::new(),
            inflight: Vec::new(),
            reaped: Vec::new(),
        }
    }
}

/// An engine that does no I/O: it completes units as its [`Script`] says, on a
/// manual clock.
pub struct ScriptedEngine {
    script: Script,
    clock: &'static Clock,
    sync: bool,
    seq: u64,
    /// (unit, outcome) queued since the last commit.
    queued: Vec<(u32, Outcome)>,
    /// (completion time, unit, result) submitted and not yet reaped.
    inflight: Vec<(u64, u32, i64)>,
    reaped: Vec<Completion>,
}

impl ScriptedEngine {
    /// Decide the unit's outcome and record it in the trace.
    fn take(&mut self, unit: &IoUnit) -> (Outcome, i64) {
        let seq = self.seq;
        self.seq += 1;
        let out = (self.script.outcome)(seq, unit);
        if let Ok(mut t) = self.script.trace.lock() {
            t.push(Issued {
                seq,
                ddir: unit.ddir,
                offset: unit.offset,
                len: unit.len,
                file: unit.file,
                ioprio: unit.ioprio,
                at_ns: self.clock.now(),
                ranges: unit.ranges,
                first_ranges: first_ranges(unit),
            });
        }
        let result = out.result.unwrap_or(unit.len as i64);
        (out, result)
    }
}

impl Engine for ScriptedEngine {
    fn is_sync(&self) -> bool {
        self.sync
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        let (out, result) = self.take(unit);
        if self.sync {
            self.clock.advance(out.latency_ns);
            unit.result = result;
            return Ok(Queued::Done);
        }
        self.queued.push((
            idx,
            Outcome {
                latency_ns: out.latency_ns,
                result: Some(result),
            },
        ));
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        self.clock.advance(self.script.submit_ns);
        let now = self.clock.now();
        let n = self.queued.len() as u32;
        for (idx, out) in self.queued.drain(..) {
            let result = out.result.unwrap_or(0);
            self.inflight.push((now + out.latency_ns, idx, result));
        }
        Ok(n)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        self.reaped.clear();
        self.inflight.sort_unstable_by_key(|c| c.0);
        let min = (min as usize).min(self.inflight.len());
        if min > 0 {
            // Wait for the min-th completion.
            self.clock.advance_to(self.inflight[min - 1].0);
        }
        let now = self.clock.now();
        let ready = self.inflight.iter().take_while(|c| c.0 <= now).count();
        let n = ready.min(max as usize);
        for (_, unit, result) in self.inflight.drain(..n) {
            self.reaped.push(Completion { unit, result });
        }
        Ok(n as u32)
    }

    fn event(&mut self, i: u32) -> Completion {
        self.reaped[i as usize]
    }
}

/// The first four of a multi-range trim's (offset, length) pairs in its buffer.
fn first_ranges(unit: &IoUnit) -> [(u64, u64); 4] {
    let mut out = [(0, 0); 4];
    let n = usize::from(unit.ranges).min(4);
    if unit.ranges < 2 || unit.buf.is_null() || (unit.buf_len as usize) < 16 * n {
        return out;
    }
    for (i, o) in out.iter_mut().enumerate().take(n) {
        // SAFETY: the unit's buffer holds at least 16 * n bytes (checked above).
        *o = unsafe {
            let p = unit.buf.add(16 * i) as *const u64;
            (p.read_unaligned(), p.add(1).read_unaligned())
        };
    }
    out
}
