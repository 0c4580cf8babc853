//! The two sides of a comparison: result files (or directories of them) read into
//! repetitions, jobs matched by name and group, and one row per job, direction and
//! metric with the values of every repetition.

use anyhow::{bail, Result};
use ioscope_analysis::shape;
use ioscope_analysis::{compare, Comparison, Goal};
use ioscope_results::gather::{gather, Options};
use ioscope_results::{Prio, ResultFile, Skipped, DIR_NAMES, METRICS};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One side: its name on screen, its repetitions and the files it left out.
pub struct Side {
    /// What was given (a file or a directory).
    pub origin: String,
    pub reps: Vec<(PathBuf, ResultFile)>,
    pub skipped: Vec<Skipped>,
    /// Per repetition, where each job key is among its jobs; and every key in order
    /// of first appearance. Built once: lookups stay constant-time however many jobs a
    /// file has (a 1000-job file took minutes).
    index: Vec<HashMap<JobKey, usize>>,
    keys: Vec<JobKey>,
}

impl Side {
    pub fn new(origin: String, reps: Vec<(PathBuf, ResultFile)>, skipped: Vec<Skipped>) -> Side {
        let index: Vec<HashMap<JobKey, usize>> = reps
            .iter()
            .map(|(_, f)| {
                keyed(f)
                    .into_iter()
                    .enumerate()
                    .map(|(i, k)| (k, i))
                    .collect()
            })
            .collect();
        let mut seen = HashSet::new();
        let mut keys = Vec::new();
        for (_, f) in &reps {
            for k in keyed(f) {
                if seen.insert(k.clone()) {
                    keys.push(k);
                }
            }
        }
        Side {
            origin,
            reps,
            skipped,
            index,
            keys,
        }
    }

    /// The job `key` of each repetition that has it, with its file.
    fn jobs<'a>(
        &'a self,
        key: &'a JobKey,
    ) -> impl Iterator<Item = (&'a ResultFile, &'a ioscope_results::Job)> + 'a {
        self.reps
            .iter()
            .zip(&self.index)
            .filter_map(move |((_, f), ix)| ix.get(key).map(|&i| (f, &f.jobs[i])))
    }

    pub fn has(&self, key: &JobKey) -> bool {
        self.index.iter().any(|ix| ix.contains_key(key))
    }
}

/// Read `path`: one result file, or every `*.json` result in a directory (sorted by
/// name). Files that are not results, cut short or interrupted (unless
/// `include_interrupted`) are left out and named; ioscope's report files are no input.
pub fn load(path: &Path, include_interrupted: bool) -> Result<Side> {
    let o = Options {
        recursive: false,
        include_interrupted,
    };
    let g = gather(path, o)?;
    if g.results.is_empty() {
        let why: Vec<String> = g.skipped.iter().map(|s| format!("\n  {s}")).collect();
        bail!("{}: no result to compare{}", path.display(), why.concat());
    }
    Ok(Side::new(path.display().to_string(), g.results, g.skipped))
}

/// The given result files as one side (those of interrupted runs left out, named).
pub fn from_files(origin: String, files: Vec<PathBuf>) -> Result<Side> {
    let (mut reps, mut skipped) = (Vec::new(), Vec::new());
    for f in files {
        let g = gather(&f, Options::default())?;
        reps.extend(g.results);
        skipped.extend(g.skipped);
    }
    Ok(Side::new(origin, reps, skipped))
}

/// A job across files: name, group and which of several same-named jobs (numjobs
/// without group_reporting repeats the name) it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobKey {
    pub name: String,
    pub groupid: u32,
    pub nth: usize,
}

impl JobKey {
    /// Job name as shown: `name`, or `name#2` for the second job of that name.
    pub fn label(&self) -> String {
        match self.nth {
            0 => self.name.clone(),
            n => format!("{}#{}", self.name, n + 1),
        }
    }
}

/// The keys of a file's jobs, in file order.
fn keyed(file: &ResultFile) -> Vec<JobKey> {
    let mut seen: HashMap<(&str, u32), usize> = HashMap::new();
    file.jobs
        .iter()
        .map(|j| {
            let n = seen.entry((&j.name, j.groupid)).or_insert(0);
            let key = JobKey {
                name: j.name.clone(),
                groupid: j.groupid,
                nth: *n,
            };
            *n += 1;
            key
        })
        .collect()
}

/// Every key of a side, in the order of its first appearance.
pub fn keys(side: &Side) -> &[JobKey] {
    &side.keys
}

/// One row of the comparison.
pub struct Row {
    pub job: JobKey,
    pub dir: &'static str,
    /// The I/O priority (`rt/0`) whose I/Os the row measures (fio's `prios`); `None`:
    /// every I/O of the job.
    pub prio: Option<String>,
    pub metric: &'static str,
    pub cmp: Comparison,
    /// The interval is the within-run one from json+ bins (one run per side), not a
    /// bootstrap over repetitions.
    pub ci_from_bins: bool,
    /// The value of every repetition, A's and B's (drawn as dots).
    pub reps: (Vec<f64>, Vec<f64>),
}

impl Row {
    /// The job as shown, with the priority when the row is one priority's.
    pub fn label(&self) -> String {
        match &self.prio {
            Some(p) => format!("{} prio {p}", self.job.label()),
            None => self.job.label(),
        }
    }
}

/// The latency metrics compared per priority: what a priority bought.
pub const PRIO_METRICS: [&str; 4] = ["clat_mean", "clat_p50", "clat_p99", "clat_p99.9"];

/// One of [`PRIO_METRICS`] for one priority's I/Os: the mean from its json+ bins, a
/// percentile as fio reported it (or from the bins when fio's list lacks it).
fn prio_value(p: &Prio, metric: &str) -> Option<f64> {
    if metric == "clat_mean" {
        return shape::mean_var(&p.bins).map(|(mean, _)| mean);
    }
    let q: f64 = metric.strip_prefix("clat_p")?.parse().ok()?;
    p.percentile(q).map(|v| v as f64)
}

/// The values of a per-priority metric over a side's repetitions.
fn prio_values(side: &Side, key: &JobKey, d: usize, prio: &str, metric: &str) -> Vec<f64> {
    side.jobs(key)
        .filter_map(|(_, j)| {
            let p = j.dirs[d].prios.iter().find(|p| p.name() == prio)?;
            (p.total_ios > 0).then(|| prio_value(p, metric)).flatten()
        })
        .collect()
}

/// The priorities of a job and direction on a side, in order of first appearance.
fn prio_names(side: &Side, key: &JobKey, d: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, j) in side.jobs(key) {
        for p in &j.dirs[d].prios {
            if !names.contains(&p.name()) {
                names.push(p.name());
            }
        }
    }
    names
}

/// The json+ bins of one priority of a job and direction, summed over a side's
/// repetitions (empty when a repetition has none).
pub fn prio_bins(side: &Side, key: &JobKey, d: usize, prio: &str) -> Vec<(u64, u64)> {
    let hists: Vec<&[(u64, u64)]> = side
        .jobs(key)
        .map(|(_, j)| {
            let p = j.dirs[d].prios.iter().find(|p| p.name() == prio);
            p.map_or(&[][..], |p| p.bins.as_slice())
        })
        .collect();
    if hists.iter().any(|h| h.is_empty()) {
        return Vec::new();
    }
    shape::merge(hists)
}

/// The values of one metric over a side's repetitions (those that ran the job and
/// moved data in that direction and report the metric).
fn values(side: &Side, key: &JobKey, d: usize, metric: &str) -> Vec<f64> {
    side.jobs(key)
        .filter_map(|(_, j)| {
            let dir = &j.dirs[d];
            (dir.io_bytes > 0).then(|| dir.metric(metric)).flatten()
        })
        .collect()
}

/// The json+ completion-latency bins of a job and direction, summed over a side's
/// repetitions (empty when a document has none).
pub fn bins(side: &Side, key: &JobKey, d: usize) -> Vec<(u64, u64)> {
    let hists: Vec<&[(u64, u64)]> = side
        .jobs(key)
        .map(|(_, j)| j.dirs[d].clat_bins.as_slice())
        .collect();
    if hists.iter().any(|h| h.is_empty()) {
        return Vec::new();
    }
    shape::merge(hists)
}

/// Rows for every job in both sides, direction with data on both sides, and metric
/// reported on both sides.
pub fn rows(a: &Side, b: &Side) -> Vec<Row> {
    let mut out = Vec::new();
    for key in keys(a).iter().filter(|k| b.has(k)) {
        for (d, dir) in DIR_NAMES.iter().enumerate() {
            for metric in METRICS {
                let (va, vb) = (values(a, key, d, metric), values(b, key, d, metric));
                if va.is_empty() || vb.is_empty() {
                    continue;
                }
                let mut cmp = compare(&va, &vb, Goal::of(metric));
                let mut ci_from_bins = false;
                if va.len() == 1 && vb.len() == 1 {
                    let (ha, hb) = (bins(a, key, d), bins(b, key, d));
                    if let Some(ci) = ioscope_analysis::shape::bins_ci(metric, &ha, &hb, cmp.a) {
                        (cmp.ci_pct, ci_from_bins) = (Some(ci), true);
                    }
                }
                out.push(Row {
                    job: key.clone(),
                    dir,
                    prio: None,
                    metric,
                    cmp,
                    ci_from_bins,
                    reps: (va, vb),
                });
            }
            out.extend(prio_rows(a, b, key, d, dir));
        }
    }
    out
}

/// Rows per priority where a job and direction has more than one on either side (one
/// priority's rows would repeat the job's) and both sides have it.
fn prio_rows(a: &Side, b: &Side, key: &JobKey, d: usize, dir: &'static str) -> Vec<Row> {
    let (na, nb) = (prio_names(a, key, d), prio_names(b, key, d));
    if na.len() < 2 && nb.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for prio in na.iter().filter(|p| nb.contains(p)) {
        for metric in PRIO_METRICS {
            let va = prio_values(a, key, d, prio, metric);
            let vb = prio_values(b, key, d, prio, metric);
            if va.is_empty() || vb.is_empty() {
                continue;
            }
            out.push(Row {
                job: key.clone(),
                dir,
                prio: Some(prio.clone()),
                metric,
                cmp: compare(&va, &vb, Goal::of(metric)),
                ci_from_bins: false,
                reps: (va, vb),
            });
        }
    }
    out
}

/// What differs between A and B besides the results, one line each.
pub fn differences(a: &Side, b: &Side) -> Vec<String> {
    let mut out = Vec::new();
    let (ka, kb) = (keys(a), keys(b));
    for k in ka.iter().filter(|k| !b.has(k)) {
        out.push(format!("job '{}' only in A (not compared)", k.label()));
    }
    for k in kb.iter().filter(|k| !a.has(k)) {
        out.push(format!("job '{}' only in B (not compared)", k.label()));
    }
    for k in ka.iter().filter(|k| b.has(k)) {
        let (oa, ob) = (options(a, k), options(b, k));
        let names: BTreeSet<&String> = oa.iter().chain(&ob).map(|(n, _)| n).collect();
        for n in names {
            let va = values_of(&oa, n);
            let vb = values_of(&ob, n);
            if va != vb {
                out.push(format!(
                    "job '{}' option {n}: A {}, B {}",
                    k.label(),
                    va.unwrap_or_else(|| "unset".into()),
                    vb.unwrap_or_else(|| "unset".into())
                ));
            }
        }
    }
    let fio_only = |s: &Side| s.reps.iter().all(|(_, f)| f.meta.is_none());
    let field = |s: &Side, get: fn(&ResultFile) -> Option<String>| -> Option<String> {
        let v: BTreeSet<String> = s.reps.iter().filter_map(|(_, f)| get(f)).collect();
        (!v.is_empty()).then(|| v.into_iter().collect::<Vec<_>>().join(" / "))
    };
    type Get = fn(&ResultFile) -> Option<String>;
    let fields: [(&str, Get); 5] = [
        ("version", |f| f.version.clone()),
        ("ioscope_version", |f| {
            f.meta.as_ref()?.ioscope_version.clone()
        }),
        ("kernel", |f| f.meta.as_ref()?.kernel.clone()),
        ("hostname", |f| f.meta.as_ref()?.hostname.clone()),
        ("cpu_model", |f| f.meta.as_ref()?.cpu_model.clone()),
    ];
    for (name, get) in fields {
        match (field(a, get), field(b, get)) {
            (Some(x), Some(y)) if x == y => out.push(format!("{name}: same ({x})")),
            (x, y) => {
                let show = |v: Option<String>, s: &Side| {
                    v.unwrap_or_else(|| match fio_only(s) {
                        true => "unknown (fio's JSON does not record it)".into(),
                        false => "unknown".into(),
                    })
                };
                out.push(format!("{name}: A {}, B {}", show(x, a), show(y, b)));
            }
        }
    }
    out
}

/// A job's effective options over a side's repetitions: the document's global options
/// overridden by the job's own, as fio applies them.
fn options(side: &Side, key: &JobKey) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for (f, j) in side.jobs(key) {
        let mut eff: Vec<(String, String)> = f.global_options.clone();
        for (n, val) in &j.options {
            eff.retain(|(m, _)| m != n);
            eff.push((n.clone(), val.clone()));
        }
        for o in eff {
            if !v.contains(&o) {
                v.push(o);
            }
        }
    }
    v
}

/// The values an option has on a side, joined when repetitions differ.
fn values_of(opts: &[(String, String)], name: &str) -> Option<String> {
    let v: Vec<&str> = opts
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect();
    (!v.is_empty()).then(|| v.join(" / "))
}
