//! Callbacks from a run to the program: messages, progress, interim reports, phase
//! starts.

use ioscope_stats::interval::DirInterval;
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

/// One job's I/O over one interval of the live stream (`RunOptions::live_interval`):
/// what the interval added, so that a job's intervals add up to its report.
#[derive(Clone, Copy, Debug)]
pub struct LiveInterval<'a> {
    pub job: &'a str,
    /// The job clone's 1-based number over the run (as in its log files' names).
    pub number: u32,
    pub groupid: u32,
    /// The stonewall phase (0-based).
    pub phase: usize,
    /// The job's measured time the interval covers, ms (0 in its ramp): its rates'
    /// denominator.
    pub ms: u64,
    /// The job's measurement epoch: it grows when the job starts measuring afresh
    /// (the ramp's end, latency_target's final window); the intervals of its last
    /// epoch add up to its report.
    pub epoch: u32,
    /// The job was still in its ramp (nothing is measured then: all counts are 0).
    pub ramp: bool,
    /// The job's last interval: it ended.
    pub last: bool,
    /// I/Os in flight when the interval ended (None in the last one).
    pub inflight: Option<u32>,
    pub dirs: &'a [DirInterval; 3],
    /// Under MPI: the host and rank the job ran on (None: this process).
    pub host: Option<(&'a str, u32)>,
}

/// A [`LiveInterval`] as data of its own (sent from rank to rank under MPI).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LiveRecord {
    pub job: String,
    pub number: u32,
    pub groupid: u32,
    pub phase: usize,
    pub ms: u64,
    pub epoch: u32,
    pub ramp: bool,
    pub last: bool,
    pub inflight: Option<u32>,
    pub dirs: [DirInterval; 3],
}

impl LiveRecord {
    pub fn of(iv: &LiveInterval) -> LiveRecord {
        LiveRecord {
            job: iv.job.to_string(),
            number: iv.number,
            groupid: iv.groupid,
            phase: iv.phase,
            ms: iv.ms,
            epoch: iv.epoch,
            ramp: iv.ramp,
            last: iv.last,
            inflight: iv.inflight,
            dirs: iv.dirs.clone(),
        }
    }

    /// The interval again, as the job on `host` (rank `rank`) had it.
    pub fn view<'a>(&'a self, host: &'a str, rank: u32) -> LiveInterval<'a> {
        LiveInterval {
            job: &self.job,
            number: self.number,
            groupid: self.groupid,
            phase: self.phase,
            ms: self.ms,
            epoch: self.epoch,
            ramp: self.ramp,
            last: self.last,
            inflight: self.inflight,
            dirs: &self.dirs,
            host: Some((host, rank)),
        }
    }
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
    /// A verification trigger fired and every running job has saved its verify state
    /// (in the run's aux_path): the trigger command runs when this returns (a server
    /// sends the states to its client first).
    fn states_saved(&mut self) {}
    /// One job's interval of the live stream, each `RunOptions::live_interval` while
    /// it runs and once when it ends (stats=0 jobs have none).
    fn interval(&mut self, _iv: &LiveInterval) {}
}
