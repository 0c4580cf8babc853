//! Figures shared by the writers: which directions a job reports, distributions as
//! percentages, latency bucket shares, percentile lists, group aggregates.

use ioscope_stats::hist::{self, Histogram};
use ioscope_stats::merge::{group_dir, mixed_dir};
use ioscope_stats::{DirStats, GroupDir, JobInfo, JobResult, RunResult, DATA_DIRS, DIR_NAMES};
use std::borrow::Cow;

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Most percentiles fio reports (FIO_IO_U_LIST_MAX_LEN); terse always has this many slots.
pub const MAX_PERCENTILES: usize = 20;

/// The job's percentile list, sorted, at most 20 entries.
pub fn percentile_list(info: &JobInfo) -> Vec<f64> {
    let mut v: Vec<f64> = if info.percentile_list.is_empty() {
        DEFAULT_PERCENTILES.to_vec()
    } else {
        info.percentile_list
            .iter()
            .copied()
            .filter(|p| p.is_finite())
            .collect()
    };
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.truncate(MAX_PERCENTILES);
    v
}

/// (percentile, ns) pairs of a histogram, None when it is empty.
pub fn percentiles(h: &Histogram, list: &[f64]) -> Option<Vec<(f64, u64)>> {
    if h.is_empty() || list.is_empty() {
        return None;
    }
    let vals = h.percentiles(list);
    Some(
        list.iter()
            .copied()
            .zip(vals.into_iter().map(|v| v.unwrap_or(0)))
            .collect(),
    )
}

/// Which kind of report block a direction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirKind {
    Read,
    Write,
    Trim,
    Mixed,
}

impl DirKind {
    pub fn name(self) -> &'static str {
        match self {
            DirKind::Read => DIR_NAMES[0],
            DirKind::Write => DIR_NAMES[1],
            DirKind::Trim => DIR_NAMES[2],
            DirKind::Mixed => "mixed",
        }
    }
    pub fn index(self) -> Option<usize> {
        match self {
            DirKind::Read => Some(0),
            DirKind::Write => Some(1),
            DirKind::Trim => Some(2),
            DirKind::Mixed => None,
        }
    }
    pub fn from_index(i: usize) -> DirKind {
        match i {
            0 => DirKind::Read,
            1 => DirKind::Write,
            _ => DirKind::Trim,
        }
    }
}

/// unified_rw_reporting of a job: 0 none, 1 mixed, 2 both.
pub fn unified(job: &JobResult) -> u32 {
    job.info.unified_rw_reporting.min(2)
}

/// The directions a job reports, in fio's order: read, write, trim; only mixed with
/// unified_rw_reporting=mixed; read, write, trim then mixed with `both`.
pub fn report_dirs(job: &JobResult) -> Vec<(DirKind, Cow<'_, DirStats>)> {
    let mut v = Vec::new();
    let u = unified(job);
    if u != 1 {
        for (i, d) in job.dirs.iter().enumerate() {
            v.push((DirKind::from_index(i), Cow::Borrowed(d)));
        }
    }
    if u != 0 {
        v.push((
            DirKind::Mixed,
            Cow::Owned(mixed_dir(&job.dirs, job.info.lat_percentiles)),
        ));
    }
    v
}

/// Did this direction do any I/O.
pub fn has_io(d: &DirStats) -> bool {
    d.io_bytes > 0 || d.total_ios > 0
}

/// Runtime of a direction as fio reports it: 0 when it did no I/O.
pub fn runtime(d: &DirStats) -> u64 {
    if has_io(d) {
        d.runtime_ms
    } else {
        0
    }
}

/// Bytes/s of a direction (0 without runtime).
pub fn bw_bytes(d: &DirStats) -> u64 {
    let rt = runtime(d);
    if rt == 0 {
        0
    } else {
        (d.io_bytes as u128 * 1000 / rt as u128) as u64
    }
}

/// IOPS of a direction as a float (JSON) and truncated (normal, terse).
pub fn iops(d: &DirStats) -> f64 {
    let rt = runtime(d);
    if rt == 0 {
        0.0
    } else {
        d.total_ios as f64 * 1000.0 / rt as f64
    }
}

pub fn iops_int(d: &DirStats) -> u64 {
    let rt = runtime(d);
    if rt == 0 {
        0
    } else {
        (d.total_ios as u128 * 1000 / rt as u128) as u64
    }
}

/// Group figures of the mixed direction of a group: per entry, all its directions
/// together.
pub fn mixed_group(run: &RunResult, groupid: u32) -> GroupDir {
    group_dir(run.jobs.iter().filter(|j| j.groupid == groupid).map(|j| {
        let io: u64 = j.dirs.iter().map(|d| d.io_bytes).sum();
        let rt = j
            .dirs
            .iter()
            .filter(|d| d.io_bytes > 0)
            .map(|d| d.runtime_ms)
            .max()
            .unwrap_or(0);
        (io, rt)
    }))
}

/// Aggregate bandwidth (bytes/s) of the job's group in one direction, for `per=` and
/// `bw_agg`.
pub fn group_agg(run: &RunResult, groupid: u32, kind: DirKind) -> u64 {
    match kind.index() {
        Some(i) => run
            .groups
            .iter()
            .find(|g| g.groupid == groupid)
            .map(|g| g.dirs[i].agg_bw)
            .unwrap_or(0),
        None => mixed_group(run, groupid).agg_bw,
    }
}

/// Percentages of counts; non-zero shares below `floor` are shown as `floor`
/// (fio prints 0.01% for a rare latency bucket, 0.1% for a rare queue depth).
pub fn dist_pct(counts: &[u64], total: u64, floor: f64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 || c == 0 {
                0.0
            } else {
                (c as f64 * 100.0 / total as f64).max(floor)
            }
        })
        .collect()
}

/// Queue-depth style distribution (IO depths, submit, complete) as percentages of the
/// total of the counts.
pub fn depth_pct(counts: &[u64; 7]) -> Vec<f64> {
    dist_pct(counts, counts.iter().sum(), 0.1)
}

/// Labels of the latency buckets (exclusive upper bounds).
pub const LAT_LABELS_NS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
pub const LAT_LABELS_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

fn class10(v: u64) -> usize {
    match v {
        0..=1 => 0,
        2..=3 => 1,
        4..=9 => 2,
        10..=19 => 3,
        20..=49 => 4,
        50..=99 => 5,
        100..=249 => 6,
        250..=499 => 7,
        500..=749 => 8,
        _ => 9,
    }
}

/// Completion-latency shares: [0,2), [2,4), … in ns, in µs (for latencies ≥ 1 µs)
/// and in ms (≥ 1 ms, with 2000 and ≥2000), as percentages of all completions.
pub struct LatBuckets {
    pub ns: Vec<f64>,
    pub us: Vec<f64>,
    pub ms: Vec<f64>,
    /// Counts, for terse (which folds the ns buckets into its first µs field).
    pub counts_ns: [u64; 10],
    pub counts_us: [u64; 10],
    #[cfg_attr(not(test), allow(dead_code))]
    pub counts_ms: [u64; 12],
    pub total: u64,
}

/// Bucket the clat histogram of all directions like fio's `lat (nsec/usec/msec)` lines.
/// Each of our buckets is counted at its reported value (within 0.1% of any value in
/// it), so only values within 0.1% of a boundary can land on the other side.
pub fn lat_buckets(h: &Histogram) -> LatBuckets {
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    for (idx, c) in h.buckets() {
        let v = hist::value(idx);
        if v < 1000 {
            ns[class10(v)] += c;
        } else if v < 1_000_000 {
            us[class10(v / 1000)] += c;
        } else {
            let m = v / 1_000_000;
            let i = match m {
                0..=999 => class10(m),
                1000..=1999 => 10,
                _ => 11,
            };
            ms[i] += c;
        }
    }
    let total = h.count();
    LatBuckets {
        ns: dist_pct(&ns, total, 0.01),
        us: dist_pct(&us, total, 0.01),
        ms: dist_pct(&ms, total, 0.01),
        counts_ns: ns,
        counts_us: us,
        counts_ms: ms,
        total,
    }
}

/// CPU use as percentages of the job's runtime: (usr, sys).
pub fn cpu_pct(job: &JobResult) -> (f64, f64) {
    if job.runtime_ms == 0 {
        return (0.0, 0.0);
    }
    let rt = job.runtime_ms as f64;
    let f = |s: f64| {
        let v = s * 100_000.0 / rt;
        if v.is_finite() {
            v
        } else {
            0.0
        }
    };
    (f(job.cpu.usr_s), f(job.cpu.sys_s))
}

/// Latency track whose percentiles a priority entry carries: lat with
/// lat_percentiles, else clat.
pub fn prio_uses_lat(info: &JobInfo) -> bool {
    info.lat_percentiles
}

/// (issued, short, dropped) per direction as the `issued rwts` line shows them; with
/// unified_rw_reporting=mixed everything is in the first slot.
pub fn issued(job: &JobResult) -> [[u64; DATA_DIRS]; 3] {
    let mut out = [[0u64; DATA_DIRS]; 3];
    for (i, d) in job.dirs.iter().enumerate() {
        let slot = if unified(job) == 1 { 0 } else { i };
        out[0][slot] += d.total_ios;
        out[1][slot] += d.short_ios;
        out[2][slot] += d.drop_ios;
    }
    out
}

/// Is the latency type's histogram to be reported (percentiles enabled and present).
pub fn pct_hist(enabled: bool, track: &ioscope_stats::LatTrack) -> Option<&Histogram> {
    if !enabled || track.stat.n == 0 {
        return None;
    }
    track.hist.as_ref().filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_floors() {
        let mut h = Histogram::new();
        for _ in 0..10_000 {
            h.add(120_000); // 120 µs → "250"
        }
        h.add(1); // [0,2) ns
        h.add(1_500_000); // 1.5 ms → "2"
        h.add(3_000_000_000); // 3 s → ">=2000"
        h.add(1_500_000_000); // 1.5 s → "2000"
        let b = lat_buckets(&h);
        assert_eq!(b.total, 10_004);
        assert_eq!(b.counts_us[6], 10_000);
        assert_eq!(b.counts_ns[0], 1);
        assert_eq!(b.counts_ms[0], 1);
        assert_eq!(b.counts_ms[10], 1);
        assert_eq!(b.counts_ms[11], 1);
        assert_eq!(b.ns[0], 0.01);
        assert!((b.us[6] - 99.96).abs() < 0.01);
        assert_eq!(dist_pct(&[0, 0], 0, 0.1), vec![0.0, 0.0]);
        assert_eq!(depth_pct(&[1, 0, 0, 9999, 0, 0, 0])[0], 0.1);
    }

    #[test]
    fn lists() {
        let mut info = JobInfo::default();
        assert_eq!(percentile_list(&info).len(), 17);
        info.percentile_list = vec![99.0, 50.0, 50.0];
        assert_eq!(percentile_list(&info), vec![50.0, 99.0]);
    }
}
