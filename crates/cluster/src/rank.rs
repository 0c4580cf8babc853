//! The steps every rank takes, in the same order on every rank, so that no rank ever
//! waits for a message another will not send:
//!
//! 1. [`Rank::agree`]: each rank parses and plans the same jobs (with its own
//!    `${IOSCOPE_RANK}`); all verdicts go to all ranks, and one rank's error stops
//!    every rank before any I/O, with that rank's message.
//! 2. One [`Rank::gate`] per phase, after its files are laid out: the I/O of each
//!    phase starts together. A rank whose run ends early passes its remaining gates
//!    at once ([`Rank::finish_gates`]), so the others never wait for it.
//! 3. While running, ranks > 0 send progress (status line) and interim reports to
//!    rank 0, which shows their aggregate ([`ClusterObserver`]).
//! 4. [`Rank::collect`]: ranks > 0 send their results (or their error); rank 0 merges
//!    them exactly. A rank that never reports (killed) is named, and the others'
//!    results are kept.

use crate::transport::{Tag, Transport};
use ioscope_runner::{JobProgress, LiveInterval, LiveRecord, Observer};
use ioscope_stats::hosts::{merge_hosts, ClusterResult, HostRun};
use ioscope_stats::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// How long rank 0 waits for missing results once the run was told to stop: mpirun
/// kills every rank one second after its SIGTERM (odls_base_sigkill_timeout).
pub const STOP_GRACE: Duration = Duration::from_millis(800);

/// Ranks > 0 send their progress this often.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// An interim report is printed without the ranks that have not sent theirs this long
/// after rank 0's own (they may have finished).
const INTERIM_WAIT: Duration = Duration::from_secs(2);

/// One rank's verdict on the jobs, as all ranks receive it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verdict {
    pub rank: u32,
    pub host: String,
    pub error: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Interim {
    seq: u64,
    result: RunResult,
}

/// A job's interval of the live stream, from a rank to rank 0.
#[derive(Serialize, Deserialize)]
struct LiveMsg {
    host: String,
    record: LiveRecord,
}

/// What rank 0 has received and not yet used.
#[derive(Default)]
struct Inbox {
    /// Live intervals by sender, in order, and how many arrived from each.
    live: Vec<(u32, LiveMsg)>,
    live_got: BTreeMap<u32, u64>,
    progress: BTreeMap<u32, Vec<JobProgress>>,
    /// Interim reports by sequence number, by rank; and when rank 0's own arrived.
    interim: BTreeMap<u64, (BTreeMap<u32, RunResult>, Option<Instant>)>,
    results: BTreeMap<u32, HostRun>,
}

/// This process as one rank of the run.
pub struct Rank<'t> {
    t: &'t dyn Transport,
    hosts: Vec<String>,
    gates: usize,
    inbox: Inbox,
    /// Rank 0: the ranks whose results arrived in [`Rank::collect`].
    reported: Vec<u32>,
    /// Ranks > 0: live intervals sent to rank 0.
    live_sent: u64,
}

impl<'t> Rank<'t> {
    pub fn new(t: &'t dyn Transport) -> Rank<'t> {
        Rank {
            t,
            hosts: Vec::new(),
            gates: 0,
            inbox: Inbox::default(),
            reported: Vec::new(),
            live_sent: 0,
        }
    }

    pub fn rank(&self) -> u32 {
        self.t.rank()
    }

    pub fn size(&self) -> u32 {
        self.t.size()
    }

    pub fn host(&self) -> &str {
        self.t.host()
    }

    pub fn is_root(&self) -> bool {
        self.t.rank() == 0
    }

    /// `<host:rank>`, the prefix of this rank's lines.
    pub fn label(&self) -> String {
        format!("<{}:{}>", self.t.host(), self.t.rank())
    }

    /// Rank 0, after [`Rank::collect`]: the ranks that sent their results (and so go
    /// on to the steps after it).
    pub fn reported(&self) -> &[u32] {
        &self.reported
    }

    /// Host of every rank (known after [`Rank::agree`]).
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Every rank's verdict on the jobs; the failed ones (all ranks get the same list).
    pub fn agree(&mut self, mine: Result<(), String>) -> Vec<Verdict> {
        let v = Verdict {
            rank: self.t.rank(),
            host: self.t.host().to_string(),
            error: mine.err(),
        };
        let bytes = serde_json::to_vec(&v).unwrap_or_default();
        let all = self.t.all_gather(&bytes, &mut || {});
        let verdicts: Vec<Verdict> = all
            .iter()
            .enumerate()
            .map(|(r, b)| {
                serde_json::from_slice(b).unwrap_or(Verdict {
                    rank: r as u32,
                    host: "?".into(),
                    error: Some("its verdict could not be read".into()),
                })
            })
            .collect();
        self.hosts = verdicts.iter().map(|v| v.host.clone()).collect();
        verdicts.into_iter().filter(|v| v.error.is_some()).collect()
    }

    /// The start of a phase's I/O, together with every other rank.
    pub fn gate(&mut self) {
        self.gates += 1;
        self.wait_all();
    }

    /// A run that ended (finished, failed or stopped) passes the gates of the phases
    /// it did not start, so that ranks still running are not held at them.
    pub fn finish_gates(&mut self, phases: usize) {
        while self.gates < phases {
            self.gate();
        }
    }

    /// A barrier during which rank 0 keeps taking messages.
    pub fn wait_all(&mut self) {
        let t = self.t;
        let root = self.is_root();
        let inbox = &mut self.inbox;
        t.barrier(&mut || {
            if root {
                pump(t, inbox);
            }
        });
    }

    /// Rank 0: take every message that has arrived.
    pub fn pump(&mut self) {
        if self.is_root() {
            pump(self.t, &mut self.inbox);
        }
    }

    /// Rank 0: its own jobs' progress followed by the latest of every other rank.
    pub fn progress_of_all(&mut self, mine: &[JobProgress]) -> Vec<JobProgress> {
        self.pump();
        let mut all = mine.to_vec();
        for p in self.inbox.progress.values() {
            all.extend(p.iter().cloned());
        }
        all
    }

    /// Ranks > 0: send progress to rank 0.
    pub fn send_progress(&self, jobs: &[JobProgress]) {
        if let Ok(b) = serde_json::to_vec(jobs) {
            self.t.send_to_root(Tag::Progress, &b);
        }
    }

    /// Ranks > 0: send a job's live interval to rank 0.
    pub fn send_live(&mut self, iv: &LiveInterval) {
        let msg = LiveMsg {
            host: self.t.host().to_string(),
            record: LiveRecord::of(iv),
        };
        if let Ok(b) = serde_json::to_vec(&msg) {
            self.t.send_to_root(Tag::Live, &b);
            self.live_sent += 1;
        }
    }

    /// Rank 0: the live intervals that arrived from the other ranks, in order, each
    /// with its host and rank.
    pub fn take_live(&mut self) -> Vec<(String, u32, LiveRecord)> {
        self.pump();
        std::mem::take(&mut self.inbox.live)
            .into_iter()
            .map(|(rank, m)| (m.host, rank, m.record))
            .collect()
    }

    /// Ranks > 0: send the `seq`-th interim report. Rank 0: keep its own.
    pub fn interim(&mut self, seq: u64, result: &RunResult) {
        if self.is_root() {
            let e = self.inbox.interim.entry(seq).or_default();
            e.0.insert(0, result.clone());
            e.1 = Some(Instant::now());
            return;
        }
        let msg = Interim {
            seq,
            result: result.clone(),
        };
        if let Ok(b) = serde_json::to_vec(&msg) {
            self.t.send_to_root(Tag::Interim, &b);
        }
    }

    /// Rank 0: interim reports that are complete (or waited for long enough), merged.
    pub fn ready_interims(&mut self) -> Vec<ClusterResult> {
        self.pump();
        let n = self.t.size() as usize;
        let ready: Vec<u64> = self
            .inbox
            .interim
            .iter()
            .filter(|(_, (by_rank, own))| {
                by_rank.len() >= n || own.is_some_and(|t| t.elapsed() >= INTERIM_WAIT)
            })
            .map(|(&seq, _)| seq)
            .collect();
        let hosts = self.hosts.clone();
        ready
            .into_iter()
            .filter_map(|seq| self.inbox.interim.remove(&seq))
            .filter(|(_, own)| own.is_some())
            .map(|(by_rank, _)| {
                let runs = by_rank
                    .into_iter()
                    .map(|(r, res)| host_run(&hosts, r, Some(res), None))
                    .collect();
                merge_hosts(runs)
            })
            .collect()
    }

    /// The end of the run. Ranks > 0 send `mine` and get None. Rank 0 gets every
    /// rank's results merged, and whether all ranks reported: once `stop` is set it
    /// waits [`STOP_GRACE`] more for the missing ones, then names them.
    pub fn collect(
        &mut self,
        mut mine: HostRun,
        stop: &AtomicBool,
    ) -> Option<(ClusterResult, bool)> {
        if !self.is_root() {
            mine.live_sent = self.live_sent;
            if let Ok(b) = serde_json::to_vec(&mine) {
                self.t.send_to_root(Tag::Result, &b);
            }
            return None;
        }
        self.inbox.results.insert(0, mine);
        let n = self.t.size();
        let mut stopped: Option<Instant> = None;
        while (self.inbox.results.len() as u32) < n {
            self.pump();
            if stop.load(Relaxed) && stopped.get_or_insert_with(Instant::now).elapsed() > STOP_GRACE
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let complete = self.inbox.results.len() as u32 == n;
        self.await_live(stop);
        self.reported = self.inbox.results.keys().copied().collect();
        let mut runs: Vec<HostRun> = std::mem::take(&mut self.inbox.results)
            .into_values()
            .collect();
        for r in 0..n {
            if !runs.iter().any(|h| h.rank == r) {
                let why = "no results: the rank ended without reporting (killed, or stopped by the launcher)";
                runs.push(host_run(&self.hosts, r, None, Some(why.into())));
            }
        }
        Some((merge_hosts(runs), complete))
    }
}

impl Rank<'_> {
    /// Rank 0, with the results in: wait (a little) for the live intervals each rank
    /// says it sent before them, which may arrive after them.
    fn await_live(&mut self, stop: &AtomicBool) {
        let started = Instant::now();
        let missing = |inbox: &Inbox| {
            inbox
                .results
                .iter()
                .any(|(r, h)| *r != 0 && inbox.live_got.get(r).copied().unwrap_or(0) < h.live_sent)
        };
        while missing(&self.inbox) && started.elapsed() < LIVE_WAIT && !stop.load(Relaxed) {
            self.pump();
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// How long rank 0 waits for live intervals that a rank sent before its results.
const LIVE_WAIT: Duration = Duration::from_secs(2);

fn host_run(
    hosts: &[String],
    rank: u32,
    result: Option<RunResult>,
    error: Option<String>,
) -> HostRun {
    HostRun {
        rank,
        host: hosts
            .get(rank as usize)
            .cloned()
            .unwrap_or_else(|| "?".into()),
        result,
        error,
        live_sent: 0,
        interim: Vec::new(),
    }
}

/// Rank 0: move every arrived message into the inbox.
fn pump(t: &dyn Transport, inbox: &mut Inbox) {
    while let Some((from, b)) = t.try_receive(Tag::Progress) {
        if let Ok(p) = serde_json::from_slice::<Vec<JobProgress>>(&b) {
            inbox.progress.insert(from, p);
        }
    }
    while let Some((from, b)) = t.try_receive(Tag::Interim) {
        if let Ok(m) = serde_json::from_slice::<Interim>(&b) {
            let e = inbox.interim.entry(m.seq).or_default();
            e.0.insert(from, m.result);
        }
    }
    while let Some((from, b)) = t.try_receive(Tag::Live) {
        if let Ok(m) = serde_json::from_slice::<LiveMsg>(&b) {
            *inbox.live_got.entry(from).or_default() += 1;
            inbox.live.push((from, m));
        }
    }
    while let Some((from, b)) = t.try_receive(Tag::Result) {
        let h = serde_json::from_slice::<HostRun>(&b).unwrap_or_else(|e| HostRun {
            rank: from,
            error: Some(format!("its results could not be read: {e}")),
            ..Default::default()
        });
        inbox.results.insert(from, h);
    }
}

/// The run's observer on one rank: gates at each phase, progress and interim reports
/// to rank 0, rank 0's status line and interim reports over every rank.
pub struct ClusterObserver<'a, 't> {
    pub rank: &'a mut Rank<'t>,
    pub inner: &'a mut dyn Observer,
    last_sent: Option<Instant>,
    interim_seq: u64,
    prefix: String,
}

impl<'a, 't> ClusterObserver<'a, 't> {
    pub fn new(rank: &'a mut Rank<'t>, inner: &'a mut dyn Observer) -> Self {
        let prefix = if rank.size() > 1 {
            format!("{} ", rank.label())
        } else {
            String::new()
        };
        ClusterObserver {
            rank,
            inner,
            last_sent: None,
            interim_seq: 0,
            prefix,
        }
    }

    fn deliver_interims(&mut self) {
        for c in self.rank.ready_interims() {
            self.inner.interim(&c.all);
        }
    }

    /// Rank 0: the other ranks' live intervals that arrived.
    fn deliver_live(&mut self) {
        for (host, rank, rec) in self.rank.take_live() {
            self.inner.interval(&rec.view(&host, rank));
        }
    }
}

impl Observer for ClusterObserver<'_, '_> {
    fn message(&mut self, line: &str) {
        self.inner.message(&format!("{}{line}", self.prefix));
    }

    fn warning(&mut self, line: &str) {
        self.inner.warning(&format!("{}{line}", self.prefix));
    }

    fn progress(&mut self, jobs: &[JobProgress]) {
        if self.rank.is_root() {
            let all = self.rank.progress_of_all(jobs);
            self.inner.progress(&all);
            self.deliver_interims();
            self.deliver_live();
            return;
        }
        if self
            .last_sent
            .map_or(true, |t| t.elapsed() >= PROGRESS_EVERY)
        {
            self.last_sent = Some(Instant::now());
            self.rank.send_progress(jobs);
        }
    }

    fn interim(&mut self, report: &RunResult) {
        self.rank.interim(self.interim_seq, report);
        self.interim_seq += 1;
        if self.rank.is_root() {
            self.deliver_interims();
        }
    }

    fn phase_ready(&mut self, phase: usize) {
        self.rank.gate();
        self.inner.phase_ready(phase);
    }

    fn interval(&mut self, iv: &LiveInterval) {
        if !self.rank.is_root() {
            self.rank.send_live(iv);
            return;
        }
        let host = self.rank.host().to_string();
        self.inner.interval(&LiveInterval {
            host: Some((&host, 0)),
            ..*iv
        });
        self.deliver_live();
    }
}

#[cfg(test)]
mod tests;
