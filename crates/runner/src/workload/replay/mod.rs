//! I/O replay in fio's iolog formats. `write_iolog` records the I/O a job issues as a
//! version 3 iolog (a timestamp in µs since the job started, the file, the action and,
//! for I/O, offset and length); `read_iolog` replays a version 2 or 3 iolog or a
//! blktrace ([`blktrace`]; several merged into one first with `merge_blktrace_file`:
//! [`merge`]): its files become the job's files, its I/Os the job's I/Os, at their
//! recorded times unless `replay_no_stall` (scaled by `replay_time_scale`), with
//! `replay_redirect`, `replay_align`, `replay_scale` and `replay_skip` applied as they
//! are read. Under `--readonly` the trace's writes and trims are left out, and said so.

pub mod blktrace;
mod iolog;
pub mod merge;
mod record;
#[cfg(test)]
mod tests;

pub use record::Recorder;

use crate::workload::io::Io;
use ioscope_engine::Ddir;
use ioscope_options::JobOptions;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// One I/O (or sync) of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub io: Io,
    /// When to issue it, in µs after the job started (None: at once).
    pub at_us: Option<u64>,
}

/// A parsed iolog: its files (after replay_redirect) and its I/Os in order.
#[derive(Debug, Default)]
pub struct Trace {
    pub files: Vec<PathBuf>,
    /// Per file, the end of the furthest I/O: the region the job needs.
    pub ends: Vec<u64>,
    pub entries: Vec<Entry>,
    /// A blktrace's queue depth (the job's iodepth when not set).
    pub depth: Option<u32>,
    /// What the job should say about the trace (entries left out and why).
    pub notes: Vec<String>,
}

impl Trace {
    /// Each of `files` files' end: that of the furthest I/O to it.
    fn set_ends(&mut self, files: usize) {
        self.ends = vec![0; files];
        for e in &self.entries {
            let end = &mut self.ends[e.io.file as usize];
            *end = (*end).max(e.io.offset + u64::from(e.io.len));
        }
    }

    /// The directions the trace does I/O in: read, write, trim.
    pub fn dirs(&self) -> [bool; 3] {
        let any = |d: Ddir| self.entries.iter().any(|e| e.io.ddir == d);
        [any(Ddir::Read), any(Ddir::Write), any(Ddir::Trim)]
    }
}

/// The iolog a clone replays: read_iolog may list one per clone, ':'-separated.
fn iolog_of(o: &JobOptions, clone: u32) -> Option<String> {
    let list = o.read_iolog.as_deref()?;
    let names: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    names
        .get(clone as usize % names.len().max(1))
        .map(|s| s.to_string())
}

/// The trace a job clone replays, if it replays one. `readonly` (the run's
/// --readonly) leaves its writes and trims out.
pub fn load(o: &JobOptions, clone: u32, readonly: bool) -> Result<Option<Trace>, String> {
    let Some(mut name) = iolog_of(o, clone) else {
        return Ok(None);
    };
    if o.replay_align > 0 && !o.replay_align.is_power_of_two() {
        return Err(format!(
            "replay_align={} must be a power of 2",
            o.replay_align
        ));
    }
    if let Some(out) = &o.merge_blktrace_file {
        // The merge is the trace of every clone; the first clone writes it.
        if clone == 0 {
            merge::merge_job(o, Path::new(out))?;
        }
        name = out.clone();
    }
    let f = File::open(&name).map_err(|e| format!("read_iolog={name}: {e}"))?;
    let mut r = BufReader::new(f);
    let head = r
        .fill_buf()
        .map_err(|e| format!("read_iolog={name}: {e}"))?;
    let trace = match blktrace::detect(head) {
        Some(swapped) => blktrace::parse(
            blktrace::Events::new(r, swapped),
            o,
            readonly,
            &mut |major, minor| match &o.replay_redirect {
                Some(to) => Some(PathBuf::from(to)),
                None => blktrace::find_device(major, minor),
            },
        ),
        None => iolog::parse(r, o, readonly),
    };
    trace
        .map(Some)
        .map_err(|e| format!("read_iolog={name}: {e}"))
}

/// What replay_skip leaves out.
fn skipped(o: &JobOptions, ddir: Ddir) -> bool {
    let Some(s) = o.replay_skip else {
        return false;
    };
    match ddir {
        Ddir::Read => s.read,
        Ddir::Write => s.write,
        Ddir::Trim => s.trim,
        _ => s.sync,
    }
}
