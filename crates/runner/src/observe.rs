//! Callbacks from a run to the program: messages, progress, interim reports, phase
//! starts.

use ioscope_stats::RunResult;

/// Progress of one job, for status lines (sent between MPI ranks, hence serde).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct JobProgress {
    pub name: String,
    pub rw: char,
    pub running: bool,
    pub done: bool,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    pub submit_calls: u64,
    pub reap_calls: u64,
    /// Bytes the job will do in total, when size-bounded.
    pub planned: Option<u64>,
    /// Seconds of ramp + runtime, when time-bounded.
    pub runtime_s: Option<f64>,
    pub elapsed_s: f64,
}

/// Callbacks from the run to the program (messages and live status).
pub trait Observer {
    /// fio-style informational lines ("Laying out IO file …").
    fn message(&mut self, line: &str);
    /// Errors and warnings ("io_u error on file …"); fio prints them on stderr.
    fn warning(&mut self, line: &str) {
        self.message(line);
    }
    /// Called about every 100 ms while jobs run.
    fn progress(&mut self, _jobs: &[JobProgress]) {}
    /// An interim report of the running jobs (every --status-interval).
    fn interim(&mut self, _report: &RunResult) {}
    /// Phase `phase` (0-based) is prepared — files laid out, logs opened — and its
    /// I/O starts when this returns: where other processes line up (MPI ranks start
    /// their I/O together). Phases cut short by a stop request are not announced.
    fn phase_ready(&mut self, _phase: usize) {}
}
