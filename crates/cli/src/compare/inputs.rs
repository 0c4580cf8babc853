//! The two sides of a comparison: result files (or directories of them) read into
//! repetitions, jobs matched by name and group, and one row per job, direction and
//! metric with the values of every repetition.

use anyhow::{bail, Context, Result};
use ioscope_analysis::{compare, Comparison, Goal};
use ioscope_results::{ResultFile, DIR_NAMES, METRICS};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One side: its name on screen and its repetitions.
pub struct Side {
    /// What was given (a file or a directory).
    pub origin: String,
    pub reps: Vec<(PathBuf, ResultFile)>,
}

/// Read `path`: one result file, or every `*.json` in a directory (sorted by name).
pub fn load(path: &Path) -> Result<Side> {
    let files = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("{}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
            .collect();
        v.sort();
        if v.is_empty() {
            bail!(
                "{}: no *.json result files in this directory",
                path.display()
            );
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    from_files(path.display().to_string(), files)
}

/// Read the given result files as one side.
pub fn from_files(origin: String, files: Vec<PathBuf>) -> Result<Side> {
    let reps = files
        .into_iter()
        .map(|f| Ok((f.clone(), ioscope_results::read_file(&f)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Side { origin, reps })
}

/// A job across files: name, group and which of several same-named jobs (numjobs
/// without group_reporting repeats the name) it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
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

/// The jobs of a file with their keys, in file order.
pub fn keyed(file: &ResultFile) -> Vec<(JobKey, &ioscope_results::Job)> {
    let mut seen: Vec<(&str, u32)> = Vec::new();
    file.jobs
        .iter()
        .map(|j| {
            let nth = seen
                .iter()
                .filter(|&&(n, g)| n == j.name && g == j.groupid)
                .count();
            seen.push((&j.name, j.groupid));
            let key = JobKey {
                name: j.name.clone(),
                groupid: j.groupid,
                nth,
            };
            (key, j)
        })
        .collect()
}

/// Every key of a side, in the order of its first appearance.
pub fn keys(side: &Side) -> Vec<JobKey> {
    let mut v: Vec<JobKey> = Vec::new();
    for (_, f) in &side.reps {
        for (k, _) in keyed(f) {
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    v
}

/// One row of the comparison.
pub struct Row {
    pub job: JobKey,
    pub dir: &'static str,
    pub metric: &'static str,
    pub cmp: Comparison,
    /// The interval is the within-run one from json+ bins (one run per side), not a
    /// bootstrap over repetitions.
    pub ci_from_bins: bool,
}

/// The values of one metric over a side's repetitions (those that ran the job and
/// moved data in that direction and report the metric).
fn values(side: &Side, key: &JobKey, d: usize, metric: &str) -> Vec<f64> {
    side.reps
        .iter()
        .filter_map(|(_, f)| {
            let (_, j) = keyed(f).into_iter().find(|(k, _)| k == key)?;
            let dir = &j.dirs[d];
            (dir.io_bytes > 0).then(|| dir.metric(metric)).flatten()
        })
        .collect()
}

/// The json+ completion-latency bins of a job and direction, summed over a side's
/// repetitions (empty when a document has none).
pub fn bins(side: &Side, key: &JobKey, d: usize) -> Vec<(u64, u64)> {
    let hists: Vec<&[(u64, u64)]> = side
        .reps
        .iter()
        .filter_map(|(_, f)| {
            let (_, j) = keyed(f).into_iter().find(|(k, _)| k == key)?;
            Some(j.dirs[d].clat_bins.as_slice())
        })
        .collect();
    if hists.iter().any(|h| h.is_empty()) {
        return Vec::new();
    }
    ioscope_analysis::shape::merge(hists)
}

/// Rows for every job in both sides, direction with data on both sides, and metric
/// reported on both sides.
pub fn rows(a: &Side, b: &Side) -> Vec<Row> {
    let kb = keys(b);
    let mut out = Vec::new();
    for key in keys(a).into_iter().filter(|k| kb.contains(k)) {
        for (d, dir) in DIR_NAMES.iter().enumerate() {
            for metric in METRICS {
                let (va, vb) = (values(a, &key, d, metric), values(b, &key, d, metric));
                if va.is_empty() || vb.is_empty() {
                    continue;
                }
                let mut cmp = compare(&va, &vb, Goal::of(metric));
                let mut ci_from_bins = false;
                if va.len() == 1 && vb.len() == 1 {
                    let (ha, hb) = (bins(a, &key, d), bins(b, &key, d));
                    if let Some(ci) = ioscope_analysis::shape::bins_ci(metric, &ha, &hb, cmp.a) {
                        (cmp.ci_pct, ci_from_bins) = (Some(ci), true);
                    }
                }
                out.push(Row {
                    job: key.clone(),
                    dir,
                    metric,
                    cmp,
                    ci_from_bins,
                });
            }
        }
    }
    out
}

/// What differs between A and B besides the results, one line each.
pub fn differences(a: &Side, b: &Side) -> Vec<String> {
    let mut out = Vec::new();
    let (ka, kb) = (keys(a), keys(b));
    for k in ka.iter().filter(|k| !kb.contains(k)) {
        out.push(format!("job '{}' only in A (not compared)", k.label()));
    }
    for k in kb.iter().filter(|k| !ka.contains(k)) {
        out.push(format!("job '{}' only in B (not compared)", k.label()));
    }
    for k in ka.iter().filter(|k| kb.contains(k)) {
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
    for (_, f) in &side.reps {
        let Some((_, j)) = keyed(f).into_iter().find(|(k, _)| k == key) else {
            continue;
        };
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
