//! Assembling a run's results: group_reporting merges (exact: histograms summed),
//! fio's per-priority crediting, and group totals.

use crate::clock::Clock;
use ioscope_stats::{JobResult, RunResult};

/// A job's results with what grouping needs.
pub(crate) struct Finished {
    pub result: JobResult,
    pub groupid: u32,
    pub grouped: bool,
    /// The job's default ioprio (prio/prioclass).
    pub ioprio: u16,
}

/// fio's per-priority stats for a group: when some job uses cmdprio or the jobs'
/// default priorities differ, a job without per-I/O priorities contributes its whole
/// clat (or lat, with lat_percentiles) histogram under its own ioprio.
fn credit_default_prio(members: &mut [Finished]) {
    let distinct = members
        .iter()
        .map(|m| m.ioprio)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let cmdprio = members
        .iter()
        .any(|m| m.result.dirs.iter().any(|d| !d.prios.is_empty()));
    if distinct < 2 && !cmdprio {
        return;
    }
    for m in members.iter_mut() {
        let use_lat = m.result.info.lat_percentiles;
        for d in m.result.dirs.iter_mut() {
            if !d.prios.is_empty() || d.total_ios == 0 {
                continue;
            }
            let track = if use_lat { &d.lat } else { &d.clat };
            if let Some(h) = &track.hist {
                d.prios.push(ioscope_stats::PrioStat {
                    ioprio: m.ioprio,
                    stat: track.stat,
                    hist: h.clone(),
                });
            }
        }
    }
}

/// group_reporting merges, then group totals.
pub(crate) fn assemble(
    mut results: Vec<Finished>,
    disks: Vec<ioscope_stats::DiskUtil>,
    timestamp_ms: u64,
    globals: &[(String, String)],
    clock: &Clock,
) -> RunResult {
    let mut jobs: Vec<JobResult> = Vec::new();
    let mut i = 0;
    while i < results.len() {
        let (gid, grouped) = (results[i].groupid, results[i].grouped);
        let mut j = i + 1;
        while j < results.len() && results[j].groupid == gid {
            j += 1;
        }
        if grouped {
            credit_default_prio(&mut results[i..j]);
            let members: Vec<JobResult> = results[i..j].iter().map(|r| r.result.clone()).collect();
            let mut merged = ioscope_stats::merge::merge_group(&members);
            merged.name = results[i].result.name.clone();
            jobs.push(merged);
        } else {
            jobs.extend(results[i..j].iter().map(|r| r.result.clone()));
        }
        i = j;
    }
    // fio takes group min/max over the reported entries (merged under group_reporting).
    let groups = ioscope_stats::merge::group_results(&jobs);
    RunResult {
        jobs,
        groups,
        disks,
        timestamp_ms,
        global_options: globals.to_vec(),
        meta: crate::sys::meta::run_meta(clock),
    }
}
