//! Many hosts (MPI ranks): each rank's run, and their exact aggregate.
//!
//! The aggregate ("All clients", the name fio's client/server mode uses) is one entry
//! per reporting group over every host: histograms summed bucket by bucket, latency
//! moments merged exactly, I/O counts summed (see [`crate::merge::merge_group`]). Its
//! bandwidth and IOPS are over the common window, from the earliest start of any host
//! to the latest end, so hosts that started together add up and hosts that did not are
//! not flattered.

use crate::merge::{group_results, merge_group};
use crate::result::{JobResult, RunResult, DATA_DIRS};
use serde::{Deserialize, Serialize};

/// The name of the aggregate entries, as fio's client mode calls them.
pub const ALL_CLIENTS: &str = "All clients";

/// One rank's outcome, as rank 0 receives it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostRun {
    pub rank: u32,
    pub host: String,
    /// The rank's results (None when it has none: see `error`).
    pub result: Option<RunResult>,
    /// Why the rank failed or has no results (its own error message).
    pub error: Option<String>,
    /// Live-stream intervals the rank sent to rank 0 before its results (rank 0 waits
    /// for them all, so that every host's intervals add up).
    #[serde(default)]
    pub live_sent: u64,
    /// Interim reports (fio's `--status-interval`) a server sent before its results,
    /// in order: a client prints them as fio's does. Never sent between ranks.
    #[serde(skip)]
    pub interim: Vec<RunResult>,
}

/// Every rank's run, and the aggregate over them.
#[derive(Clone, Debug, Default)]
pub struct ClusterResult {
    pub hosts: Vec<HostRun>,
    /// The aggregate as a run of its own: one job named [`ALL_CLIENTS`] per group.
    pub all: RunResult,
}

impl ClusterResult {
    /// Ranks without results or with a failed job.
    pub fn failed(&self) -> bool {
        self.hosts.iter().any(|h| {
            h.error.is_some()
                || h.result.as_ref().map_or(true, |r| {
                    r.jobs.iter().any(|j| j.error != 0 && !j.error_tolerated)
                })
        })
    }

    /// Any rank's run was cut short.
    pub fn interrupted(&self) -> bool {
        self.hosts
            .iter()
            .any(|h| h.result.as_ref().is_some_and(|r| r.meta.interrupted))
    }
}

/// What running a job set gave: this host's run, or every rank's and their aggregate
/// (a workflow's run under MPI).
#[derive(Clone, Debug)]
pub enum Ran {
    One(RunResult),
    Hosts(ClusterResult),
}

impl Ran {
    /// The run to analyse: the only one, or the aggregate over the hosts.
    pub fn run(&self) -> &RunResult {
        match self {
            Ran::One(r) => r,
            Ran::Hosts(c) => &c.all,
        }
    }

    /// A signal cut the run short (on any host).
    pub fn interrupted(&self) -> bool {
        match self {
            Ran::One(r) => r.meta.interrupted,
            Ran::Hosts(c) => c.interrupted(),
        }
    }

    /// The first failure, in words: a job's error (with its rank and host under MPI),
    /// or a rank without results. Tolerated errors are not failures.
    pub fn failure(&self) -> Option<String> {
        let job = |r: &RunResult| {
            r.jobs
                .iter()
                .find(|j| j.error != 0 && !j.error_tolerated)
                .map(|j| {
                    let text = j
                        .error_text
                        .clone()
                        .unwrap_or_else(|| format!("error {}", j.error));
                    format!("job '{}': err={}: {text}", j.name, j.error)
                })
        };
        match self {
            Ran::One(r) => job(r),
            Ran::Hosts(c) => c.hosts.iter().find_map(|h| {
                let why = match (&h.error, &h.result) {
                    (Some(e), _) => Some(e.clone()),
                    (None, Some(r)) => job(r),
                    (None, None) => Some("no results".into()),
                }?;
                Some(format!("rank {} ({}): {why}", h.rank, h.host))
            }),
        }
    }
}

/// Merge the ranks' runs (in rank order) into their aggregate.
pub fn merge_hosts(mut hosts: Vec<HostRun>) -> ClusterResult {
    hosts.sort_by_key(|h| h.rank);
    let runs: Vec<&RunResult> = hosts.iter().filter_map(|h| h.result.as_ref()).collect();
    let mut all = RunResult::default();
    if let Some(first) = runs.first() {
        all.global_options = first.global_options.clone();
        all.meta = first.meta.clone();
        all.meta.hostname = ALL_CLIENTS.to_string();
        all.timestamp_ms = runs.iter().map(|r| r.timestamp_ms).min().unwrap_or(0);
        all.meta.interrupted = runs.iter().any(|r| r.meta.interrupted);
        all.meta.signal = runs.iter().find_map(|r| r.meta.signal.clone());
    }
    let mut gids: Vec<u32> = runs
        .iter()
        .flat_map(|r| r.jobs.iter().map(|j| j.groupid))
        .collect();
    gids.sort_unstable();
    gids.dedup();
    for gid in gids {
        let members: Vec<JobResult> = runs
            .iter()
            .flat_map(|r| r.jobs.iter().filter(|j| j.groupid == gid).cloned())
            .collect();
        // One host's steady state is not the aggregate's (fio's "All clients" has
        // none).
        let mut agg = aggregate(&members);
        agg.steadystate = None;
        all.jobs.push(agg);
    }
    all.groups = group_results(&all.jobs);
    ClusterResult { hosts, all }
}

/// One group's entries of every host as one [`ALL_CLIENTS`] entry.
fn aggregate(members: &[JobResult]) -> JobResult {
    let mut out = merge_group(members);
    out.name = ALL_CLIENTS.to_string();
    out.pid = 0;
    out.start_unix_ms = members.iter().map(|j| j.start_unix_ms).min().unwrap_or(0);
    for d in 0..DATA_DIRS {
        out.dirs[d].runtime_ms = common_window(members, d);
    }
    out
}

/// From the earliest start to the latest end of the entries that did I/O in
/// direction `d`, in ms (at least the longest runtime, whatever the clocks say).
fn common_window(members: &[JobResult], d: usize) -> u64 {
    let active = || members.iter().filter(|j| j.dirs[d].total_ios > 0);
    let longest = active().map(|j| j.dirs[d].runtime_ms).max().unwrap_or(0);
    let (Some(start), Some(end)) = (
        active().map(|j| j.start_unix_ms).min(),
        active()
            .map(|j| j.start_unix_ms + j.dirs[d].runtime_ms)
            .max(),
    ) else {
        return longest;
    };
    (end - start).max(longest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lat::LatTrack;

    fn run(host: &str, start: u64, lat: &[u64], runtime: u64) -> RunResult {
        let mut j = JobResult {
            name: "j".into(),
            jobs: 1,
            start_unix_ms: start,
            runtime_ms: runtime,
            ..Default::default()
        };
        let d = &mut j.dirs[0];
        d.clat = LatTrack::new(true);
        for &v in lat {
            d.clat.add(v);
            d.io_bytes += 4096;
            d.total_ios += 1;
        }
        d.runtime_ms = runtime;
        let mut r = RunResult {
            jobs: vec![j],
            timestamp_ms: start,
            ..Default::default()
        };
        r.meta.hostname = host.into();
        r
    }

    fn host(rank: u32, r: Option<RunResult>) -> HostRun {
        HostRun {
            rank,
            host: format!("h{rank}"),
            result: r,
            error: None,
            live_sent: 0,
            interim: Vec::new(),
        }
    }

    #[test]
    fn histograms_are_summed_and_the_window_is_common() {
        let a = run("a", 1_000, &[100, 200, 300], 1_000);
        let b = run("b", 1_010, &[1_000, 2_000], 1_000);
        let c = merge_hosts(vec![host(1, Some(b.clone())), host(0, Some(a.clone()))]);
        assert_eq!(c.hosts[0].rank, 0, "rank order");
        let all = &c.all.jobs[0];
        assert_eq!(all.name, ALL_CLIENTS);
        assert_eq!(all.jobs, 2);
        let d = &all.dirs[0];
        assert_eq!(d.total_ios, 5);
        assert_eq!(d.io_bytes, 5 * 4096);
        let mut want = a.jobs[0].dirs[0].clat.hist.clone().unwrap();
        want.merge(b.jobs[0].dirs[0].clat.hist.as_ref().unwrap());
        assert_eq!(d.clat.hist.as_ref(), Some(&want));
        assert_eq!(d.clat.stat.n, 5);
        assert_eq!(d.clat.stat.min, 100);
        assert_eq!(d.clat.stat.max, 2_000);
        assert_eq!(d.runtime_ms, 1_010, "from the first start to the last end");
        assert_eq!(c.all.groups[0].dirs[0].io_bytes, 5 * 4096);
        assert!(!c.failed());
    }

    #[test]
    fn a_rank_without_results_is_a_failure_but_the_others_count() {
        let a = run("a", 1_000, &[100], 1_000);
        let mut h = host(1, None);
        h.error = Some("open: No such file or directory".into());
        let c = merge_hosts(vec![host(0, Some(a)), h]);
        assert!(c.failed());
        assert_eq!(c.all.jobs[0].dirs[0].total_ios, 1);
    }

    #[test]
    fn results_survive_the_wire() {
        let a = run("a", 1_000, &[100, 5_000_000], 1_000);
        let s = serde_json::to_string(&host(0, Some(a.clone()))).unwrap();
        let back: HostRun = serde_json::from_str(&s).unwrap();
        let r = back.result.unwrap();
        assert_eq!(r.jobs[0].dirs[0].clat.hist, a.jobs[0].dirs[0].clat.hist);
        assert_eq!(r.jobs[0].dirs[0].clat.stat, a.jobs[0].dirs[0].clat.stat);
    }
}
