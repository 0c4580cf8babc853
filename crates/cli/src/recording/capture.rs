//! `--history[=DB]` on a run: the database is opened before any I/O (a file that is
//! not ours, or is newer, stops the run there), and after the report is written the
//! run becomes a row. A failed write (a full disk) costs the row, never the results:
//! it is a warning, and the run's exit status stays its own.

use super::flags::HistoryArgs;
use anyhow::{Context, Result};
use ioscope_history::record::DirSummary;
use ioscope_history::{History, HistoryError, Record};
use ioscope_options::JobSet;
use ioscope_report::OutputFormat;
use ioscope_stats::RunResult;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Where the run is recorded, and how it is labelled.
pub struct Capture {
    db: History,
    label: Option<String>,
}

impl Capture {
    /// The flags' database and label (None without --history; --label alone is an
    /// error: it names runs in the history).
    pub fn from_args(h: &HistoryArgs) -> Result<Option<Capture>> {
        match &h.db {
            Some(db) => Capture::open(db.as_deref(), h.label.clone()),
            None if h.label.is_some() => {
                anyhow::bail!("--label names runs in the history: give --history too")
            }
            None => Ok(None),
        }
    }

    /// `--history`'s database (None: the default place), opened or created now. A
    /// file that is not a history of ours, or is newer, stops the run (Err); one that
    /// cannot be written now (a full disk) costs this run its row (a warning, None).
    pub fn open(db: Option<&Path>, label: Option<String>) -> Result<Option<Capture>> {
        let path = match db {
            Some(p) => p.to_path_buf(),
            None => ioscope_history::default_path()?,
        };
        match History::open(&path, true) {
            Ok(db) => Ok(Some(Capture { db, label })),
            Err(e @ (HistoryError::Foreign { .. } | HistoryError::Newer { .. })) => {
                Err(e).context("--history")
            }
            Err(e) => {
                eprintln!("ioscope: --history: {e}; this run will not be recorded");
                Ok(None)
            }
        }
    }

    /// Record the finished run; a failure is a warning on stderr.
    pub fn record(mut self, set: &JobSet, result: &RunResult, results_file: Option<&Path>) {
        let r = record_of(set, result, self.label.take(), results_file);
        self.write(&r);
    }

    /// Record a workflow's run (a sweep's `point`, a comparison's `repetition`) from
    /// its result document, labelled LABEL/NAME (NAME without --label); `job`: its
    /// resolved jobs (or what the document says of them).
    pub fn record_document(
        &mut self,
        (kind, name): (&str, &str),
        document: Value,
        file: &Path,
        (job, devices): (Value, Value),
    ) {
        let label = match &self.label {
            Some(l) => format!("{l}/{name}"),
            None => name.to_string(),
        };
        let r = Record {
            id: 0,
            unix_ms: document["timestamp_ms"].as_i64().unwrap_or_else(now_ms),
            label: Some(label),
            kind: kind.into(),
            host: ioscope_options::jobfile::hostname(),
            kernel: kernel(),
            ioscope_version: env!("CARGO_PKG_VERSION").into(),
            devices,
            job,
            command: std::env::args().collect(),
            results_file: Some(absolute(file).display().to_string()),
            interrupted: document["ioscope"]["interrupted"]
                .as_bool()
                .unwrap_or(false),
            read: summary(&document, "read"),
            write: summary(&document, "write"),
            document,
        };
        self.write(&r);
    }

    fn write(&mut self, r: &Record) {
        if let Err(e) = self.db.record(r) {
            eprintln!(
                "ioscope: --history: this run was not recorded ({e}); its results are as \
                 reported"
            );
        }
    }
}

/// The row of a run: its context and its json+ document.
pub fn record_of(
    set: &JobSet,
    result: &RunResult,
    label: Option<String>,
    results_file: Option<&Path>,
) -> Record {
    let text = ioscope_report::render(result, &[OutputFormat::JsonPlus], 3);
    let document: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Record {
        id: 0,
        unix_ms: document["timestamp_ms"].as_i64().unwrap_or_else(now_ms),
        label,
        kind: "run".into(),
        host: ioscope_options::jobfile::hostname(),
        kernel: kernel(),
        ioscope_version: env!("CARGO_PKG_VERSION").into(),
        devices: devices(set),
        job: serde_json::to_value(set).unwrap_or(Value::Null),
        command: std::env::args().collect(),
        results_file: results_file.map(|p| absolute(p).display().to_string()),
        interrupted: result.meta.interrupted,
        read: summary(&document, "read"),
        write: summary(&document, "write"),
        document,
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn absolute(p: &Path) -> PathBuf {
    std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
}

/// The kernel's release, as `uname -r` prints it.
fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A direction over the jobs: IOPS and bandwidth summed, the largest clat p99.
fn summary(doc: &Value, dir: &str) -> DirSummary {
    let jobs = doc["jobs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let moved: Vec<&Value> = jobs
        .iter()
        .map(|j| &j[dir])
        .filter(|d| d["io_bytes"].as_u64().unwrap_or(0) > 0)
        .collect();
    if moved.is_empty() {
        return DirSummary::default();
    }
    let sum = |k: &str| moved.iter().filter_map(|d| d[k].as_f64()).sum::<f64>();
    let p99 = moved
        .iter()
        .filter_map(|d| d["clat_ns"]["percentile"]["99.000000"].as_f64())
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    DirSummary {
        iops: Some(sum("iops")),
        bw_bytes: Some(sum("bw_bytes")),
        clat_p99_ns: p99,
    }
}

/// The disks under the jobs' files and directories: path, disk, model, serial,
/// firmware (one entry per distinct path).
pub fn devices(set: &JobSet) -> Value {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for j in &set.jobs {
        let o = &j.opts;
        let named = o.filename.as_deref().map(|f| {
            let first = f.split(':').next().unwrap_or_default();
            (first.to_string(), false)
        });
        let dir = o.directory.as_deref().map(|d| (d.to_string(), true));
        // Neither: the files are made in the current directory.
        let (path, is_dir) = named.or(dir).unwrap_or_else(|| (".".into(), true));
        if !seen.insert(path.clone()) {
            continue;
        }
        let id = ioscope_sweep::identity::Identity::of_path(Path::new(&path), is_dir);
        let fw = id
            .disk
            .as_deref()
            .and_then(ioscope_sweep::identity::firmware);
        out.push(json!({
            "path": id.path, "kind": id.kind, "disk": id.disk,
            "model": id.model, "serial": id.serial, "firmware": fw,
        }));
    }
    Value::Array(out)
}
