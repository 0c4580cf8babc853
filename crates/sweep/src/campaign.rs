//! Reading results back: a sweep's run directory (its sweep file copy, journal and
//! point files) or any directory of JSON results of ioscope or fio (one file per run,
//! e.g. a bench-fio/fio-plot tree), as one list of points with their axes.
//!
//! For a run directory the sweep file is expanded again with the identity the journal
//! recorded, so every point is known — finished, failed, pruned or not run yet. For a
//! plain directory the axes are the job options whose values differ between files.

use crate::error::SweepError;
use crate::execute::nominal_seconds;
use crate::file::{SweepFile, SWEEP_COPY};
use crate::journal::{self, Event, PointState};
use crate::matrix;
use ioscope_analysis::steady::Criteria;
use ioscope_results::gather::{self, Options};
use ioscope_results::{merge_clones, Aggregation, ResultFile, Skipped};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What became of a point, as far as the directory tells.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Done,
    Failed(String),
    Pruned(String),
    /// Not run (yet), or interrupted.
    Left,
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::Done => "ok",
            Status::Failed(_) => "failed",
            Status::Pruned(_) => "pruned",
            Status::Left => "not run",
        }
    }
}

/// One point (one job of one result file, for plain directories).
#[derive(Clone, Debug)]
pub struct Record {
    pub id: String,
    pub sweep: String,
    pub profile: String,
    pub axes: Vec<(String, String)>,
    pub status: Status,
    pub file: Option<PathBuf>,
    /// The result file (shared by the records of its jobs); `job` is the one of
    /// interest (the first job of a point's file).
    pub result: Option<Arc<ResultFile>>,
    pub job: usize,
    /// How the job's figures were made (clones summed or as reported).
    pub aggregation: Aggregation,
    /// Planned seconds (ramp + runtime), when time-bounded.
    pub nominal_s: Option<f64>,
    pub seconds: Option<f64>,
}

/// A steady-state round from the journal.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    pub round: usize,
    pub value: f64,
    pub steady: bool,
}

#[derive(Debug)]
pub struct Loaded {
    pub dir: PathBuf,
    /// A sweep's run directory (journal and sweep file), or a plain directory.
    pub is_sweep: bool,
    pub records: Vec<Record>,
    /// Axis names in order (columns of the CSV).
    pub axes: Vec<String>,
    pub rounds: Vec<Round>,
    pub criteria: Criteria,
    /// The steady-state metric's name (iops or bw).
    pub steady_metric: String,
    /// `fio` when steady state used fio's ss= (one round, fio's verdict).
    pub steady_mode: String,
    pub sweep_file: Option<SweepFile>,
    /// Files left out, and why (not results, cut short, interrupted, another
    /// campaign's point).
    pub skipped: Vec<Skipped>,
}

/// Read `dir`: a sweep's run directory, or any directory of results (interrupted runs
/// left out unless `include_interrupted`).
pub fn load(dir: &Path, include_interrupted: bool) -> Result<Loaded, SweepError> {
    if dir.join(journal::FILE).exists() && dir.join(SWEEP_COPY).exists() {
        return load_sweep(dir);
    }
    load_plain(dir, include_interrupted)
}

/// A finished point's result, or why it is left out (the point then counts as not
/// run: the next `sweep run` runs it again).
fn point_result(path: &Path, key: &str) -> Result<ResultFile, String> {
    let g = gather::gather(path, Options::default()).map_err(|e| e.to_string())?;
    if let Some(s) = g.skipped.into_iter().next() {
        return Err(s.why);
    }
    let (_, r) = g.results.into_iter().next().ok_or("not a result")?;
    let theirs = r
        .meta
        .as_ref()
        .and_then(|m| m.sweep.as_ref())
        .map(|t| t.key.as_str());
    match theirs {
        Some(k) if k == key => Ok(r),
        _ => Err(format!(
            "a point of another version of the sweep or another target (its key is not {key})"
        )),
    }
}

fn load_sweep(dir: &Path) -> Result<Loaded, SweepError> {
    let file = SweepFile::read_copy(dir)?;
    let state = journal::load(dir)?;
    let identity = state
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Campaign { identity, .. } => Some(identity.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let points = matrix::expand(&file, &identity)?;
    let mut axes: Vec<String> = Vec::new();
    for s in &file.sweeps {
        for a in &s.axes {
            if !axes.contains(&a.name) {
                axes.push(a.name.clone());
            }
        }
    }
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    for p in &points {
        let nominal_s = p.job_set().ok().as_ref().and_then(nominal_seconds);
        let (mut status, file_rel, seconds) = match state.points.get(&p.key) {
            Some(PointState::Finished { file, seconds }) => {
                (Status::Done, Some(file.clone()), Some(*seconds))
            }
            Some(PointState::Failed(e)) => (Status::Failed(e.clone()), None, None),
            Some(PointState::Pruned(r)) => (Status::Pruned(r.clone()), None, None),
            _ => (Status::Left, None, None),
        };
        let path = file_rel.map(|f| dir.join(f));
        let mut aggregation = Aggregation::Single;
        let result = match &path {
            Some(f) => match point_result(f, &p.key) {
                Ok(r) => {
                    let (r, how) = merge_clones(&r);
                    aggregation = how.into_iter().next().unwrap_or(Aggregation::Single);
                    Some(Arc::new(r))
                }
                Err(why) => {
                    skipped.push(Skipped {
                        path: f.clone(),
                        why,
                    });
                    status = Status::Left;
                    None
                }
            },
            None => None,
        };
        records.push(Record {
            id: p.id.clone(),
            sweep: p.sweep.clone(),
            profile: p.profile.clone(),
            axes: p.axes.clone(),
            status,
            file: path.filter(|_| result.is_some()),
            result,
            job: 0,
            aggregation,
            nominal_s,
            seconds,
        });
    }
    let rounds = state
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Round {
                round,
                value,
                steady,
                ..
            } => Some(Round {
                round: *round,
                value: *value,
                steady: *steady,
            }),
            _ => None,
        })
        .collect::<Vec<_>>();
    // Only the last series of rounds (a resumed run starts its rounds again).
    let start = rounds.iter().rposition(|r| r.round == 1).unwrap_or(0);
    let steady = file.steady.clone();
    Ok(Loaded {
        dir: dir.to_path_buf(),
        is_sweep: true,
        records,
        axes,
        rounds: rounds[start..].to_vec(),
        criteria: steady
            .as_ref()
            .map(|s| s.criteria.clone())
            .unwrap_or_default(),
        steady_metric: steady
            .as_ref()
            .map_or("iops", |s| s.metric.name())
            .to_string(),
        steady_mode: match steady.as_ref().and_then(|s| s.fio_ss.as_ref()) {
            Some(_) => "fio".into(),
            None => "snia".into(),
        },
        sweep_file: Some(file),
        skipped,
    })
}

/// Options that name files or outputs, never an axis of a comparison (nor are the log
/// options: [`is_axis`]).
const NOT_AXES: &[&str] = &[
    "name",
    "filename",
    "directory",
    "description",
    "output",
    "runtime",
    "ramp_time",
];

/// Whether option `k` can be an axis: not one that names files or outputs.
fn is_axis(k: &str) -> bool {
    !NOT_AXES.contains(&k) && !ioscope_iolog::kind::options().contains(&k)
}

/// Axes that come first, in this order, when they vary.
const AXIS_ORDER: &[&str] = &[
    "iodepth",
    "numjobs",
    "bs",
    "rwmixread",
    "iodepth_batch_submit",
];

fn load_plain(dir: &Path, include_interrupted: bool) -> Result<Loaded, SweepError> {
    let o = Options {
        recursive: true,
        include_interrupted,
    };
    let found = gather::gather(dir, o).map_err(|e| SweepError::Io {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    })?;
    let mut records = Vec::new();
    for (f, r) in found.results {
        // A point is a job, all its clones together (as fio's group reporting).
        let (r, how) = merge_clones(&r);
        let r = Arc::new(r);
        let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        for ((j, job), aggregation) in r.jobs.iter().enumerate().zip(how) {
            records.push(Record {
                id: if r.jobs.len() == 1 {
                    rel.clone()
                } else {
                    format!("{rel}#{}", job.name)
                },
                sweep: String::new(),
                profile: job.option("rw", &r).map_or(job.name.clone(), |rw| {
                    match job.option("rwmixread", &r) {
                        Some(m) if rw.contains("rw") => format!("{rw}-{m}"),
                        _ => rw.to_string(),
                    }
                }),
                axes: Vec::new(),
                status: Status::Done,
                file: Some(f.clone()),
                result: Some(Arc::clone(&r)),
                job: j,
                aggregation,
                nominal_s: None,
                seconds: None,
            });
        }
    }
    if records.is_empty() {
        return Err(SweepError::Io {
            path: dir.to_path_buf(),
            msg: "no JSON results of ioscope or fio here (--output-format=json or json+)".into(),
        });
    }
    // Results that say which sweep point they are (sweep import, copied run
    // directories) keep their sweep, profile and axes.
    let tags: Vec<Option<ioscope_results::SweepTag>> = records
        .iter()
        .map(|r| {
            r.result
                .as_ref()
                .and_then(|x| x.meta.as_ref())
                .and_then(|m| m.sweep.clone())
        })
        .collect();
    if tags.iter().all(Option::is_some) {
        let mut axes: Vec<String> = Vec::new();
        for (rec, tag) in records.iter_mut().zip(tags.into_iter().flatten()) {
            for (k, _) in &tag.axes {
                if !axes.contains(k) {
                    axes.push(k.clone());
                }
            }
            rec.sweep = tag.sweep;
            rec.profile = tag.profile;
            rec.axes = tag.axes;
        }
        return Ok(plain(dir, records, axes, found.skipped));
    }
    let axes = infer_axes(&records);
    for rec in &mut records {
        let (r, j) = (rec.result.as_ref(), rec.job);
        rec.axes = axes
            .iter()
            .map(|a| {
                let v = r
                    .and_then(|r| r.jobs[j].option(a, r))
                    .unwrap_or("")
                    .to_string();
                (a.clone(), v)
            })
            .collect();
    }
    Ok(plain(dir, records, axes, found.skipped))
}

fn plain(dir: &Path, records: Vec<Record>, axes: Vec<String>, skipped: Vec<Skipped>) -> Loaded {
    Loaded {
        dir: dir.to_path_buf(),
        is_sweep: false,
        records,
        axes,
        rounds: Vec::new(),
        criteria: Criteria::default(),
        steady_metric: "iops".into(),
        steady_mode: "snia".into(),
        sweep_file: None,
        skipped,
    }
}

/// Options whose values differ between records (profile-defining rw aside).
fn infer_axes(records: &[Record]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for rec in records {
        let (Some(r), j) = (&rec.result, rec.job) else {
            continue;
        };
        for (k, _) in r.jobs[j].options.iter().chain(&r.global_options) {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    let value = |rec: &Record, k: &str| {
        rec.result
            .as_ref()
            .and_then(|r| r.jobs[rec.job].option(k, r).map(str::to_string))
    };
    let mut axes: Vec<String> = names
        .into_iter()
        .filter(|k| is_axis(k) && k != "rw" && k != "rwmixread")
        .filter(|k| {
            let first = value(&records[0], k);
            records.iter().any(|r| value(r, k) != first)
        })
        .collect();
    axes.sort_by_key(|a| {
        (
            AXIS_ORDER
                .iter()
                .position(|o| o == a)
                .unwrap_or(AXIS_ORDER.len()),
            a.clone(),
        )
    });
    axes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(iodepth: u32, bs: &str, iops: f64) -> String {
        serde_json::json!({"fio version": "fio-3.33", "jobs": [{"jobname": "j",
            "job options": {"rw": "randread", "iodepth": iodepth.to_string(), "bs": bs,
                "filename": format!("/dev/x{iodepth}")},
            "read": {"io_bytes": 1, "bw_bytes": 1, "iops": iops, "runtime": 1000}}]})
        .to_string()
    }

    #[test]
    fn a_plain_directory_gets_its_axes_from_the_options_that_vary() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("a.json"), doc(1, "4k", 10.0)).unwrap();
        std::fs::write(d.path().join("sub/b.json"), doc(8, "4k", 50.0)).unwrap();
        std::fs::write(d.path().join("notes.json"), "{\"x\": 1}").unwrap();
        let l = load(d.path(), false).unwrap();
        assert!(!l.is_sweep);
        // filename varies too, but names a file, not a parameter.
        assert_eq!(l.axes, ["iodepth"]);
        assert_eq!(l.records.len(), 2);
        assert_eq!(
            l.records[1].axes,
            [("iodepth".to_string(), "8".to_string())]
        );
        assert_eq!(l.records[0].profile, "randread");
        let empty = tempfile::tempdir().unwrap();
        assert!(load(empty.path(), false)
            .unwrap_err()
            .to_string()
            .contains("no JSON results"));
    }
}
