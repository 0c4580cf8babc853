//! An engine's own loop, for a job that does nothing between its I/Os (`ioscope
//! peak`): the engine fills its queue, submits and reaps in as few steps as its
//! interface allows, and the runner only supplies the I/Os and records what happened.
//! The general loop (queue / commit / getevents, one call per step) stays the answer
//! for every other job; an engine without a loop of its own leaves it to that one.

use crate::Completion;

/// The runner's side of an engine loop. Units are the runner's, referred to by index,
/// as in [`crate::Engine`]; times are the runner's clock ticks.
pub trait Burst {
    /// I/Os per submission call, and completions to wait for per reaping call (each
    /// at least 1).
    fn batches(&self) -> (u32, u32);
    /// The clock, now.
    fn stamp(&mut self) -> u64;
    /// The job's next I/Os, at most `out.len()`, each placed in a free unit whose setup
    /// time is `now`: their indices written to `out` in queue order, and how many
    /// returned. Fewer than asked: the job issues nothing more after these (it is at
    /// its end, or its next step is not an I/O this loop issues); the engine then reaps
    /// what is in flight and returns. A batch at a time, so that what is the same for
    /// every I/O of a batch is done once.
    fn next_batch(&mut self, now: u64, out: &mut [u32]) -> usize;
    /// Unit `idx`, as [`Self::next_batch`] set it up (None: not a unit of this job).
    fn unit(&self, idx: u32) -> Option<&crate::IoUnit>;
    /// One submission call handed `units` (in queue order) to the kernel at `t`.
    fn submitted(&mut self, units: &[u32], t: u64);
    /// A unit completed at `t`.
    fn completed(&mut self, c: Completion, t: u64);
    /// One reaping call returned `n` completions at `t`. False: the job must end
    /// (its runtime is over, or a stop was asked for).
    fn reaped(&mut self, n: u32, t: u64) -> bool;
}

/// The runner's side of an engine's NOP loop (`ioscope peak --nop`). Every NOP of a
/// job is the same I/O, so none needs a unit of its own: the engine tags each SQE
/// with its submission batch, as t/io_uring does, and hands the runner completions a
/// batch at a time with the batch's times. Times are the runner's clock ticks.
pub trait NopBurst {
    /// NOPs per submission call, and completions to wait for per reaping call (each
    /// at least 1).
    fn batches(&self) -> (u32, u32);
    /// The clock, now.
    fn stamp(&mut self) -> u64;
    /// The bytes one NOP stands for: its result when it succeeds.
    fn nop_len(&self) -> u32;
    /// Up to `k` more NOPs, counted by the job: how many it takes. Fewer than `k`:
    /// the job issues nothing more after these.
    fn take(&mut self, k: u32) -> u32;
    /// One submission call handed the kernel `n` NOPs at `t`.
    fn submitted(&mut self, n: u32, t: u64);
    /// `n` NOPs set up at `start` and submitted at `issue` completed at `t`, each with
    /// `result` (its length, or a negated errno).
    fn completed(&mut self, n: u32, start: u64, issue: u64, result: i64, t: u64);
    /// One reaping call returned `n` completions at `t`. False: the job must end.
    fn reaped(&mut self, n: u32, t: u64) -> bool;
}
