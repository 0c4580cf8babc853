//! What the fio face and the workflows share under MPI: each rank's log names, and the
//! measurement of a planned run with a gate per phase, merged on rank 0.

use crate::term::signals;
use ioscope_cluster::{ClusterObserver, Rank, Transport};
use ioscope_options::JobSet;
use ioscope_runner::{JobProgress, Observer, Runner};
use ioscope_stats::hosts::HostRun;
use std::path::PathBuf;

/// Logs are written per rank: `PREFIX.<host>.<rank>` (the job name when no prefix).
/// Returns the prefixes.
pub(crate) fn per_rank_logs(set: &mut JobSet, t: &dyn Transport) -> Vec<PathBuf> {
    let suffix = format!(".{}.{}", t.host(), t.rank());
    let mut prefixes = Vec::new();
    for j in &mut set.jobs {
        let name = j.name.clone();
        ioscope_iolog::kind::for_each_prefix_mut(&mut j.opts, |p| {
            let base = if p.is_empty() {
                name.clone()
            } else {
                p.clone()
            };
            *p = format!("{base}{suffix}");
            if !prefixes
                .iter()
                .any(|q: &PathBuf| q.as_os_str() == p.as_str())
            {
                prefixes.push(PathBuf::from(p.as_str()));
            }
        });
    }
    prefixes
}

/// The run itself, once the ranks agreed: each phase's I/O starts on every rank
/// together; rank 0 (whose observer is `status`) gets every rank's results merged and
/// whether all reported; the other ranks get None.
pub(super) fn measure(
    rank: &mut Rank,
    runner: &Runner,
    plan: &ioscope_runner::Plan,
    status: Option<&mut dyn Observer>,
) -> Option<(ioscope_stats::hosts::ClusterResult, bool)> {
    let mut quiet = RankMessages;
    let inner: &mut dyn Observer = match status {
        Some(s) => s,
        None => &mut quiet,
    };
    let result = {
        let mut obs = ClusterObserver::new(rank, &mut *inner);
        runner.run(plan, &mut obs)
    };
    rank.finish_gates(plan.phases.len());
    let mine = match result {
        Ok(mut r) => {
            signals::mark(&mut r);
            host_run(rank, Some(r), None)
        }
        Err(e) => host_run(rank, None, Some(e.to_string())),
    };
    let merged = rank.collect(mine, &ioscope_runner::STOP);
    // Rank 0: the other ranks' last live intervals, which came with (or after) their
    // results.
    for (host, r, rec) in rank.take_live() {
        inner.interval(&rec.view(&host, r));
    }
    merged
}

fn host_run(
    rank: &Rank,
    result: Option<ioscope_stats::RunResult>,
    error: Option<String>,
) -> HostRun {
    HostRun {
        rank: rank.rank(),
        host: rank.host().to_string(),
        result,
        error,
        live_sent: 0,
        interim: Vec::new(),
    }
}

/// Ranks > 0: their messages and warnings go to stderr (mpirun forwards it), with
/// the rank's prefix that [`ClusterObserver`] adds; no status line of their own.
struct RankMessages;

impl Observer for RankMessages {
    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }
    fn progress(&mut self, _jobs: &[JobProgress]) {}
}
