//! Job clones (numjobs > 1 without group_reporting) summed into one job, as fio's
//! group reporting sums them: a point of a report is the job, not its first clone.

use crate::{Dir, Job, Prio, ResultFile};
use ioscope_analysis::shape::percentile;

/// How the figures of a job of a merged document were made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Aggregation {
    /// One job, as reported.
    Single,
    /// `clones` jobs summed; percentiles from their merged json+ histograms when
    /// `exact`, otherwise the highest clone's.
    Clones { clones: usize, exact: bool },
}

impl Aggregation {
    /// The note a report shows beside the point.
    pub fn note(&self) -> String {
        match *self {
            Aggregation::Single => "as reported".into(),
            Aggregation::Clones { clones, exact } => format!(
                "sum of {clones} clones: I/O, IOPS and bandwidth summed, latency means weighted by I/Os, percentiles {}",
                if exact {
                    "from the merged json+ histograms"
                } else {
                    "the highest clone's (plain JSON has no histograms)"
                }
            ),
        }
    }
}

/// `file` with the clones of each job merged into one (jobs in first-seen order), and
/// how each merged job was made.
pub fn merge_clones(file: &ResultFile) -> (ResultFile, Vec<Aggregation>) {
    let mut groups: Vec<Vec<&Job>> = Vec::new();
    for j in &file.jobs {
        let same = |g: &&mut Vec<&Job>| {
            let f = g[0];
            f.name == j.name && f.groupid == j.groupid && f.options == j.options
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.push(j),
            None => groups.push(vec![j]),
        }
    }
    let mut out = file.clone();
    out.jobs = Vec::with_capacity(groups.len());
    let mut how = Vec::with_capacity(groups.len());
    for g in groups {
        if g.len() == 1 {
            out.jobs.push(g[0].clone());
            how.push(Aggregation::Single);
            continue;
        }
        let mut job = g[0].clone();
        job.job_runtime_ms = g.iter().map(|j| j.job_runtime_ms).max().unwrap_or(0);
        let mut exact = true;
        for d in 0..3 {
            let dirs: Vec<&Dir> = g.iter().map(|j| &j.dirs[d]).collect();
            exact &= dirs
                .iter()
                .all(|x| x.total_ios == 0 || !x.clat_bins.is_empty());
            job.dirs[d] = sum_dirs(&dirs);
        }
        out.jobs.push(job);
        how.push(Aggregation::Clones {
            clones: g.len(),
            exact,
        });
    }
    (out, how)
}

fn sum_dirs(dirs: &[&Dir]) -> Dir {
    let ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let weighted = |f: fn(&Dir) -> Option<f64>| {
        let mut acc = 0.0;
        for d in dirs {
            if d.total_ios > 0 {
                acc += f(d)? * d.total_ios as f64;
            }
        }
        (ios > 0).then(|| acc / ios as f64)
    };
    let bins = ioscope_analysis::shape::merge(dirs.iter().map(|d| d.clat_bins.as_slice()));
    let with_bins = dirs
        .iter()
        .all(|d| d.total_ios == 0 || !d.clat_bins.is_empty());
    let first = dirs.first().copied().cloned().unwrap_or_default();
    let clat_pct = match with_bins && !bins.is_empty() {
        true => first
            .clat_pct
            .iter()
            .map(|&(p, _)| (p, percentile(&bins, p).unwrap_or(0)))
            .collect(),
        false => highest(dirs, |d| &d.clat_pct),
    };
    Dir {
        io_bytes: dirs.iter().map(|d| d.io_bytes).sum(),
        bw_bytes: dirs.iter().map(|d| d.bw_bytes).sum(),
        iops: dirs.iter().map(|d| d.iops).sum(),
        runtime_ms: dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
        total_ios: ios,
        clat_pct,
        lat_pct: highest(dirs, |d| &d.lat_pct),
        clat_mean_ns: weighted(|d| d.clat_mean_ns),
        lat_mean_ns: weighted(|d| d.lat_mean_ns),
        clat_bins: if with_bins { bins } else { Vec::new() },
        prios: sum_prios(dirs),
    }
}

/// The clones' priorities, each summed over the clones that have it: percentiles from
/// the merged bins where every one has bins, none otherwise (a clone's own would
/// mislead).
fn sum_prios(dirs: &[&Dir]) -> Vec<Prio> {
    let mut keys: Vec<(u32, u32)> = dirs
        .iter()
        .flat_map(|d| d.prios.iter().map(|p| (p.class, p.level)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .map(|(class, level)| {
            let mine: Vec<&Prio> = dirs
                .iter()
                .flat_map(|d| &d.prios)
                .filter(|p| (p.class, p.level) == (class, level))
                .collect();
            let exact = mine.iter().all(|p| !p.bins.is_empty());
            let bins = match exact {
                true => ioscope_analysis::shape::merge(mine.iter().map(|p| p.bins.as_slice())),
                false => Vec::new(),
            };
            let pct = match (mine.as_slice(), exact) {
                ([one], _) => one.pct.clone(),
                (_, true) => mine[0]
                    .pct
                    .iter()
                    .map(|&(q, _)| (q, percentile(&bins, q).unwrap_or(0)))
                    .collect(),
                (_, false) => Vec::new(),
            };
            Prio {
                class,
                level,
                total_ios: mine.iter().map(|p| p.total_ios).sum(),
                pct,
                bins,
            }
        })
        .collect()
}

/// Per percentile, the highest value among the clones that moved data.
fn highest(dirs: &[&Dir], f: fn(&Dir) -> &Vec<(f64, u64)>) -> Vec<(f64, u64)> {
    let moved: Vec<&Dir> = dirs.iter().copied().filter(|d| d.total_ios > 0).collect();
    let Some(first) = moved.first() else {
        return Vec::new();
    };
    f(first)
        .iter()
        .map(|&(p, _)| {
            let v = moved
                .iter()
                .filter_map(|d| f(d).iter().find(|q| (q.0 - p).abs() < 1e-9))
                .map(|q| q.1)
                .max()
                .unwrap_or(0);
            (p, v)
        })
        .collect()
}

/// The bin value at which the cumulative count first reaches `p` percent of the total.
#[cfg(test)]
mod tests {
    use super::*;

    fn clone_job(iops: f64, bins: Vec<(u64, u64)>) -> Job {
        let ios = bins.iter().map(|b| b.1).sum();
        let mut j = Job {
            name: "j".into(),
            ..Job::default()
        };
        j.dirs[0] = Dir {
            io_bytes: ios * 4096,
            bw_bytes: (iops * 4096.0) as u64,
            iops,
            runtime_ms: 1000,
            total_ios: ios,
            clat_pct: vec![(50.0, 0), (99.0, 0)],
            clat_mean_ns: Some(bins[0].0 as f64),
            clat_bins: bins,
            ..Dir::default()
        };
        j
    }

    #[test]
    fn clones_are_summed_and_their_histograms_merged() {
        let f = ResultFile {
            jobs: vec![
                clone_job(100.0, vec![(1000, 100)]),
                clone_job(300.0, vec![(3000, 300)]),
            ],
            ..ResultFile::default()
        };
        let (m, how) = merge_clones(&f);
        assert_eq!(m.jobs.len(), 1);
        assert_eq!(
            how,
            [Aggregation::Clones {
                clones: 2,
                exact: true
            }]
        );
        let d = &m.jobs[0].dirs[0];
        assert_eq!(d.iops, 400.0);
        assert_eq!(d.total_ios, 400);
        assert_eq!(d.clat_mean_ns, Some(2500.0));
        assert_eq!(d.clat_pct, [(50.0, 3000), (99.0, 3000)]);
        assert_eq!(d.clat_bins, [(1000, 100), (3000, 300)]);
    }

    #[test]
    fn different_jobs_stay_apart() {
        let mut b = clone_job(1.0, vec![(1, 1)]);
        b.name = "other".into();
        let f = ResultFile {
            jobs: vec![clone_job(1.0, vec![(1, 1)]), b],
            ..ResultFile::default()
        };
        let (m, how) = merge_clones(&f);
        assert_eq!(m.jobs.len(), 2);
        assert_eq!(how, [Aggregation::Single, Aggregation::Single]);
    }
}
