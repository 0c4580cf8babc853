//! What a job publishes while it runs, for the monitor thread: counters, its state,
//! stop and snapshot requests, messages. Written per I/O with relaxed atomics only.

use ioscope_stats::JobResult;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::Mutex;

/// Job phases, as seen by the monitor thread.
const STATE_SETUP: u8 = 0;
pub const STATE_RAMP: u8 = 1;
pub const STATE_RUNNING: u8 = 2;
pub const STATE_DONE: u8 = 3;
// A new `Shared` (all zero) is a job in setup.
const _: () = assert!(STATE_SETUP == 0);

/// `snapshot_request` bits: a copy for an interim report (--status-interval), and one
/// that ends an interval of the live stream (--live, --metrics).
pub const WANT_INTERIM: u64 = 1;
pub const WANT_LIVE: u64 = 2;
/// A trigger fired: save the verify state now, with the writes then in flight, and
/// set `vstate_saved`.
pub const WANT_VSTATE: u64 = 4;

/// A copy of a job's results for the live stream, with what the monitor cannot see
/// for itself at that instant.
pub struct LiveCopy {
    pub result: JobResult,
    /// I/Os in flight when the copy was made.
    pub inflight: u32,
    /// Made in the ramp (nothing measured yet: the result is all zero).
    pub ramp: bool,
    /// The job's measurement epoch: it grows each time the job starts measuring
    /// afresh (the ramp's end; latency_target's final window).
    pub epoch: u32,
    /// The job's final results, put here as it ends.
    pub last: bool,
}

/// What the job publishes for the monitor (bandwidth samples, status line).
#[derive(Default)]
pub struct Shared {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Clock ticks when measurement began (after ramp).
    pub measure_start: AtomicU64,
    /// Set by exitall or the run to end this job early.
    pub stop: AtomicBool,
    /// Set by the job when it has answered [`WANT_VSTATE`].
    pub vstate_saved: AtomicBool,
    /// Set by the job (exitall_on_error) to end the whole run; the monitor acts on it.
    pub abort_run: AtomicBool,
    /// steadystate=lat|lat_slope: completion latencies summed (ns), and how many
    /// (written from the recorder's cold path, by such jobs only).
    pub clat_sum_ns: AtomicU64,
    pub clat_count: AtomicU64,
    /// Submit and reap calls made (I/Os per call for `ioscope peak`).
    pub submit_calls: AtomicU64,
    pub reap_calls: AtomicU64,
    /// Copies of the results so far: the monitor sets the bits of what it wants
    /// ([`WANT_INTERIM`], [`WANT_LIVE`]); the job answers by putting a copy in
    /// `snapshot` (interim reports) or `live` (with the I/Os then in flight), outside
    /// the per-I/O path.
    pub snapshot_request: AtomicU64,
    pub snapshot: std::sync::Mutex<Option<JobResult>>,
    pub live: std::sync::Mutex<Option<LiveCopy>>,
    /// Set by the phase when a live feed wants each job's final results as it ends
    /// (rather than when the whole phase has ended).
    pub live_last: AtomicBool,
    /// The measurement epoch (see [`LiveCopy::epoch`]), written by the job only.
    pub epoch: std::sync::atomic::AtomicU32,
    /// Set by the monitor when the job must fail (errno, message), e.g. rate_min.
    pub failure: Mutex<Option<(i32, String)>>,
    /// Error messages for the user (fio prints them as they happen); the monitor
    /// hands them to the observer. Written only when something fails.
    pub messages: Mutex<Vec<String>>,
}

impl Shared {
    /// Queue a message for the observer.
    pub fn say(&self, msg: String) {
        if let Ok(mut m) = self.messages.lock() {
            m.push(msg);
        }
    }

    /// Messages queued since the last call.
    pub fn take_messages(&self) -> Vec<String> {
        self.messages
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default()
    }
}
