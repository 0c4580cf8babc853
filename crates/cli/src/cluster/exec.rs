//! Workflows under MPI (`mpirun ioscope sweep run …`, `mpirun ioscope compare --run …`):
//! rank 0 runs the workflow, and every job set the workflow runs is run by all ranks
//! together. Each rank builds the set again from its source with its own
//! `${IOSCOPE_RANK}` (so `filename=/mnt/shared/data.${IOSCOPE_RANK}` is each rank's
//! file), the ranks agree that it is valid, start each phase together and send their
//! results to rank 0, which merges them exactly — as `mpirun ioscope job.fio` does for
//! one job file. The other ranks only serve: they wait, asleep, for rank 0's next
//! command, and end when rank 0 says the workflow is over.

use super::measure::{measure, per_rank_logs};
use ioscope_cluster::{Rank, Transport};
use ioscope_options::jobfile::Keywords;
use ioscope_options::spec::{self, SetSource};
use ioscope_options::JobSet;
use ioscope_runner::{Execute, Observer, RunError, RunOptions, Runner};
use ioscope_stats::hosts::Ran;
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// What rank 0 asks of every rank.
#[derive(Serialize, Deserialize)]
enum Command {
    /// Check a job set on every rank (nothing touched).
    Check { source: SetSource, opts: RunOptions },
    /// Run a job set on every rank.
    Run { source: SetSource, opts: RunOptions },
    /// The workflow is over.
    Done,
}

/// Rank 0's side: the workflow's hosts. Dropping it tells the other ranks to end.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub struct Cluster<'t> {
    t: &'t dyn Transport,
    /// A rank stopped answering: no collective call can complete any more.
    broken: Cell<bool>,
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl<'t> Cluster<'t> {
    pub fn new(t: &'t dyn Transport) -> Cluster<'t> {
        Cluster {
            t,
            broken: Cell::new(false),
        }
    }

    /// The executor for runs made with `opts`.
    pub fn exec(&self, opts: RunOptions) -> ClusterExec<'_, 't> {
        ClusterExec {
            cluster: self,
            opts,
        }
    }

    /// Whether a rank was lost (the process must then end without finalizing MPI,
    /// which would wait for it).
    pub fn broken(&self) -> bool {
        self.broken.get()
    }

    fn send(&self, cmd: &Command) -> Result<(), RunError> {
        if self.broken.get() {
            return Err(RunError::Ranks(
                "a rank stopped answering earlier: the MPI job cannot run anything more".into(),
            ));
        }
        broadcast(self.t, Some(cmd));
        Ok(())
    }
}

impl Drop for Cluster<'_> {
    fn drop(&mut self) {
        if !self.broken.get() {
            broadcast(self.t, Some(&Command::Done));
        }
    }
}

/// [`Execute`] over every rank.
pub struct ClusterExec<'c, 't> {
    cluster: &'c Cluster<'t>,
    opts: RunOptions,
}

impl Execute for ClusterExec<'_, '_> {
    fn check(&self, set: &JobSet) -> Result<(), RunError> {
        let source = set.source.clone();
        self.cluster.send(&Command::Check {
            source: source.clone(),
            opts: self.opts.clone(),
        })?;
        check_here(self.cluster.t, &source, &self.opts)
    }

    fn execute(&self, set: &JobSet, obs: &mut dyn Observer) -> Result<Ran, RunError> {
        let source = set.source.clone();
        self.cluster.send(&Command::Run {
            source: source.clone(),
            opts: self.opts.clone(),
        })?;
        let (ran, complete) = run_here(self.cluster.t, &source, &self.opts, Some(obs))?;
        if !complete {
            self.cluster.broken.set(true);
        }
        ran.ok_or_else(|| RunError::Ranks("rank 0 without the merged results".into()))
    }

    fn ranks(&self) -> u32 {
        self.cluster.t.size()
    }
}

/// The other ranks' side: do what rank 0 asks until it says the workflow is over.
/// Returns false when a rank was lost (do not finalize MPI then).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn serve(t: &dyn Transport) -> bool {
    loop {
        match broadcast(t, None) {
            Command::Check { source, opts } => {
                // Rank 0 reports the verdicts.
                let _ = check_here(t, &source, &opts);
            }
            Command::Run { source, opts } => {
                if let Ok((_, false)) = run_here(t, &source, &opts, None) {
                    return false;
                }
            }
            Command::Done => return true,
        }
    }
}

/// Rank 0's command to every rank (rank 0 passes it, the others None and get it).
fn broadcast(t: &dyn Transport, cmd: Option<&Command>) -> Command {
    let mine = cmd
        .and_then(|c| serde_json::to_vec(c).ok())
        .unwrap_or_default();
    let all = t.all_gather(&mine, &mut || {});
    all.first()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Command::Done)
}

/// This rank's jobs of `source` (its own `${IOSCOPE_RANK}`, its own log names).
fn build_here(t: &dyn Transport, source: &SetSource) -> Result<JobSet, String> {
    let kw = Keywords::probe().with_rank(t.rank(), t.size(), t.host());
    let mut set = spec::rebuild(source, &kw).map_err(|e| e.to_string())?;
    per_rank_logs(&mut set, t);
    Ok(set)
}

/// Every rank's verdict; rank 0 gets the failures as one error (so do the others,
/// which ignore it).
fn agree<T>(rank: &mut Rank, mine: &Result<T, String>) -> Result<(), RunError> {
    let failed = rank.agree(mine.as_ref().map(|_| ()).map_err(Clone::clone));
    if failed.is_empty() {
        return Ok(());
    }
    rank.wait_all();
    let lines: Vec<String> = failed
        .iter()
        .map(|f| {
            let e = f.error.as_deref().unwrap_or("");
            format!("rank {} ({}): {e}", f.rank, f.host)
        })
        .collect();
    Err(RunError::Ranks(lines.join("; ")))
}

fn check_here(t: &dyn Transport, source: &SetSource, opts: &RunOptions) -> Result<(), RunError> {
    let mut rank = Rank::new(t);
    let runner = Runner::new(opts.clone());
    let set = build_here(t, source);
    let planned = set
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|s| runner.plan(s).map(|_| ()).map_err(|e| e.to_string()));
    agree(&mut rank, &planned)
}

/// Run `source` on this rank with the others: rank 0 gets the merged results (None on
/// the other ranks) and whether every rank reported.
fn run_here(
    t: &dyn Transport,
    source: &SetSource,
    opts: &RunOptions,
    status: Option<&mut dyn Observer>,
) -> Result<(Option<Ran>, bool), RunError> {
    let mut rank = Rank::new(t);
    let runner = Runner::new(opts.clone());
    let set = build_here(t, source);
    let plan = set
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|s| runner.plan(s).map_err(|e| e.to_string()));
    agree(&mut rank, &plan)?;
    let Ok(plan) = plan else {
        return Err(RunError::Ranks(format!(
            "rank {}: its jobs were valid and are not",
            t.rank()
        )));
    };
    let Some((cluster, complete)) = measure(&mut rank, &runner, &plan, status) else {
        rank.wait_all();
        return Ok((None, true));
    };
    if complete {
        rank.wait_all();
    }
    Ok((Some(Ran::Hosts(cluster)), complete))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioscope_cluster::transport::local;
    use ioscope_options::jobfile;
    use std::path::Path;

    struct Quiet;
    impl Observer for Quiet {
        fn message(&mut self, _line: &str) {}
        fn progress(&mut self, _jobs: &[ioscope_runner::JobProgress]) {}
    }

    fn set(text: &str) -> JobSet {
        let mut sections = Vec::new();
        jobfile::parse_text(Path::new("t.fio"), text, &mut sections, 0).expect("parses");
        spec::build(&[], &[], &[sections], &[], &Keywords::probe()).expect("builds")
    }

    /// Three ranks as threads: rank 0 checks and runs two sets, the others serve. Each
    /// rank writes its own file (`${IOSCOPE_RANK}`); rank 0 gets all three merged.
    #[test]
    fn every_set_runs_on_every_rank_with_its_own_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("data.${IOSCOPE_RANK}");
        let text = format!(
            "[w]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\nfilename={}\n",
            file.display()
        );
        let bad = set("[r]\nrw=read\nsize=64k\ndirectory=/nonexistent-${IOSCOPE_RANK}\n");
        let good = set(&text);
        let ranks = local::ranks(3);
        let results = std::thread::scope(|s| {
            let mut workers = Vec::new();
            for r in &ranks[1..] {
                workers.push(s.spawn(move || serve(r)));
            }
            let c = Cluster::new(&ranks[0]);
            let exec = c.exec(RunOptions::default());
            assert_eq!(exec.ranks(), 3);
            exec.check(&good).expect("valid on every rank");
            let Err(e) = exec.execute(&bad, &mut Quiet) else {
                panic!("a directory that exists on no rank")
            };
            let runs = [
                exec.execute(&good, &mut Quiet).expect("runs"),
                exec.execute(&good, &mut Quiet).expect("runs again"),
            ];
            drop(c);
            for w in workers {
                assert!(w.join().expect("worker"), "every rank served to the end");
            }
            (e.to_string(), runs)
        });
        let (err, runs) = results;
        for r in 0..3 {
            let line = format!("rank {r} (host{r})");
            assert!(err.contains(&line), "{err}");
            assert!(err.contains(&format!("/nonexistent-{r}")), "{err}");
        }
        for ran in &runs {
            let Ran::Hosts(c) = ran else {
                panic!("a run over the ranks")
            };
            assert_eq!(c.hosts.len(), 3);
            for (i, h) in c.hosts.iter().enumerate() {
                assert_eq!(h.rank, i as u32);
                let r = h.result.as_ref().expect("each rank's results");
                assert_eq!(r.jobs[0].dirs[1].io_bytes, 64 << 10);
            }
            assert_eq!(
                c.all.jobs[0].dirs[1].total_ios,
                3 * 16,
                "the aggregate sums them"
            );
        }
        for r in 0..3 {
            let f = dir.path().join(format!("data.{r}"));
            assert_eq!(
                std::fs::metadata(&f).expect("each rank's file").len(),
                64 << 10
            );
        }
    }
}
