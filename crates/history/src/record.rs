//! One row of the history: a run (or a sweep point, or a comparison repetition), its
//! context and its results.

use crate::error::HistoryError;
use crate::store::History;
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// Per direction: IOPS, bandwidth (bytes/s) and clat p99 (ns), summed over the jobs
/// (p99: the largest job's), when the direction moved data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirSummary {
    pub iops: Option<f64>,
    pub bw_bytes: Option<f64>,
    pub clat_p99_ns: Option<f64>,
}

/// What a row holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Set by the database when written.
    pub id: i64,
    /// When the run started, ms since the Unix epoch.
    pub unix_ms: i64,
    pub label: Option<String>,
    /// "run", "point" (a sweep's) or "repetition" (a comparison's).
    pub kind: String,
    pub host: String,
    /// The kernel's release (uname -r).
    pub kernel: String,
    /// The ioscope version that ran it.
    pub ioscope_version: String,
    /// The devices under the jobs' files: JSON (path, disk, model, serial, firmware).
    pub devices: serde_json::Value,
    /// The resolved jobs: JSON.
    pub job: serde_json::Value,
    /// The command line, one word per element.
    pub command: Vec<String>,
    /// Where the run's report went (--output), when it went to a file.
    pub results_file: Option<String>,
    pub interrupted: bool,
    pub read: DirSummary,
    pub write: DirSummary,
    /// The run's json+ document.
    pub document: serde_json::Value,
}

impl History {
    /// Write `r` as a new row (one transaction: on any failure, a full disk included,
    /// nothing is written). Returns its id.
    pub fn record(&mut self, r: &Record) -> Result<i64, HistoryError> {
        crate::store::patiently(|| self.insert(r))
    }

    fn insert(&mut self, r: &Record) -> Result<i64, HistoryError> {
        let json = |v: &serde_json::Value| v.to_string();
        let command = serde_json::to_string(&r.command).unwrap_or_default();
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_at(&path, e))?;
        tx.execute(
            "INSERT INTO runs (unix_ms, label, kind, host, kernel, ioscope, devices, job, \
             command, results_file, interrupted, read_iops, read_bw_bytes, read_clat_p99_ns, \
             write_iops, write_bw_bytes, write_clat_p99_ns, document) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            params![
                r.unix_ms,
                r.label,
                r.kind,
                r.host,
                r.kernel,
                r.ioscope_version,
                json(&r.devices),
                json(&r.job),
                command,
                r.results_file,
                r.interrupted,
                r.read.iops,
                r.read.bw_bytes,
                r.read.clat_p99_ns,
                r.write.iops,
                r.write.bw_bytes,
                r.write.clat_p99_ns,
                json(&r.document),
            ],
        )
        .map_err(|e| sql_at(&path, e))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(|e| sql_at(&path, e))?;
        Ok(id)
    }
}

fn sql_at(path: &std::path::Path, source: rusqlite::Error) -> HistoryError {
    HistoryError::Sql {
        path: path.to_path_buf(),
        source,
    }
}
