//! A sweep made ready to run: the campaign (its target and points), the settings of a
//! run, how it tells its progress, and how it writes results. [`crate::execute`] runs
//! it; [`crate::precondition`] prepares its target.

use crate::error::SweepError;
use crate::file::SweepFile;
use crate::identity::Identity;
use crate::matrix::{self, Point};
use ioscope_runner::Observer;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// How a run treats what it finds.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Allow writes the safety checks refuse, and a purge.
    pub allow_destructive: bool,
    /// Run points that failed before again.
    pub retry_failed: bool,
}

/// Where the campaign stands when a point starts.
#[derive(Clone, Debug)]
pub struct Position {
    /// Points already settled (finished, failed, pruned), this run or before.
    pub settled: usize,
    pub total: usize,
    /// Time left, from the points' runtimes scaled by what finished points took.
    pub eta: Option<Duration>,
}

/// What became of a point.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Done {
        seconds: f64,
        iops: f64,
        bw: f64,
    },
    /// Finished in an earlier run.
    Skipped,
    Failed(String),
    Pruned(String),
    Interrupted,
}

/// How the sweep reports what it does (the command line draws a progress bar).
pub trait Progress {
    /// Where the runner's messages (layout notices, I/O errors) go.
    fn observer(&mut self) -> &mut dyn Observer;
    /// A step outside the points (preconditioning, a steady-state round).
    fn stage(&mut self, text: &str);
    fn point_start(&mut self, p: &Point, at: &Position);
    fn point_end(&mut self, p: &Point, outcome: &Outcome);
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub total: usize,
    pub done: usize,
    pub skipped: usize,
    pub failed: usize,
    pub pruned: usize,
    /// Points never reached (a signal stopped the run).
    pub left: usize,
    pub interrupted: bool,
}

/// A sweep file made ready: its target's identity and its points.
pub struct Campaign {
    pub file: SweepFile,
    pub identity: Identity,
    pub points: Vec<Point>,
}

/// Subdirectory of the points' results.
pub const POINTS_DIR: &str = "points";

/// IOPS and bandwidth (all directions) and the worst direction's p99 clat, in ns, of
/// the first job of a result document.
pub fn figures(doc: &Value) -> (f64, f64, Option<f64>) {
    let Ok(r) = ioscope_results::from_value(doc, Path::new("point")) else {
        return (f64::NAN, f64::NAN, None);
    };
    let Some(j) = r.jobs.first() else {
        return (f64::NAN, f64::NAN, None);
    };
    let iops = j.dirs.iter().map(|d| d.iops).sum();
    let bw = j.dirs.iter().map(|d| d.bw_bytes as f64).sum();
    let p99 = j
        .dirs
        .iter()
        .filter_map(|d| d.metric("clat_p99"))
        .reduce(f64::max);
    (iops, bw, p99)
}

/// Write `doc` (fio's JSON layout) to `path` through a new temporary file and a rename
/// (see ioscope-fs), so a result file is either absent or whole, and a link planted
/// at its name is replaced, never followed.
pub fn write_atomically(path: &Path, doc: &Value) -> Result<(), SweepError> {
    let mut text = String::new();
    ioscope_report::json::print_value(doc, 0, &mut text);
    text.push('\n');
    write_text(path, &text)
}

/// Write `text` as the whole of `path` (see [`write_atomically`]).
pub fn write_text(path: &Path, text: &str) -> Result<(), SweepError> {
    ioscope_fs::write_atomically(path, text.as_bytes()).map_err(|e| SweepError::Io {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })
}

/// A directory of this user's (made if missing; see ioscope-fs's own_dir).
pub fn own_dir(dir: &Path) -> Result<(), SweepError> {
    ioscope_fs::own_dir(dir).map_err(|e| SweepError::Io {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    })
}

impl Campaign {
    /// Identify the target, refuse the wrong disk, expand the points.
    pub fn new(file: SweepFile) -> Result<Campaign, SweepError> {
        let identity = Identity::of(&file.target);
        identity.check(&file.target)?;
        let points = matrix::expand(&file, &identity.key())?;
        Ok(Campaign {
            file,
            identity,
            points,
        })
    }
}
