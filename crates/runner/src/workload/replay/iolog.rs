//! fio's iolog, versions 2 and 3: `add`/`open`/`close` of files, then I/Os (`read`,
//! `write`, `trim`, `sync`, `datasync`) with offsets and lengths — after version 2's
//! `wait` lines, or at version 3's µs timestamps. Errors name the line.
//!
//! Version 3's timestamps are read as fio reads them: each line waits the time since
//! the line before (none when time goes back, and none after a line at time 0), so
//! only the gaps count, never where the clock started.

use super::{skipped, Entry, Trace};
use crate::workload::io::Io;
use ioscope_engine::Ddir;
use ioscope_options::JobOptions;
use std::io::BufRead;
use std::path::PathBuf;

/// Parse a version 2 or 3 iolog.
pub fn parse(r: impl BufRead, o: &JobOptions, readonly: bool) -> Result<Trace, String> {
    let mut lines = r.lines().enumerate();
    let version = match lines.next() {
        Some((_, Ok(l))) if l.trim() == "fio version 2 iolog" => 2,
        Some((_, Ok(l))) if l.trim() == "fio version 3 iolog" => 3,
        _ => {
            return Err(
                "not a fio iolog of version 2 or 3 (the first line names the version); \
                 nor a blktrace"
                    .into(),
            )
        }
    };
    let mut p = Parser {
        version,
        o,
        readonly,
        t: Trace::default(),
        names: Vec::new(),
        waited_us: 0,
        last_ts: 0,
        skipped_writes: 0,
    };
    for (i, line) in lines {
        let line = line.map_err(|e| e.to_string())?;
        p.line(&line).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    p.finish()
}

/// The state of a parse.
struct Parser<'a> {
    version: u32,
    o: &'a JobOptions,
    readonly: bool,
    t: Trace,
    /// The files added, in order (their numbers in the trace).
    names: Vec<String>,
    /// The waits so far (version 2's `wait` lines, version 3's gaps): the time of the
    /// next I/O.
    waited_us: u64,
    /// Version 3: the previous line's timestamp.
    last_ts: u64,
    /// Writes and trims left out under --readonly.
    skipped_writes: u64,
}

impl Parser<'_> {
    fn line(&mut self, line: &str) -> Result<(), String> {
        let mut w = line.split_whitespace();
        let ts = if self.version == 3 {
            match w.next() {
                None => return Ok(()),
                Some(s) => Some(num(s)?),
            }
        } else {
            None
        };
        if let Some(ts) = ts {
            let gap = match self.last_ts {
                0 => 0,
                last => ts.saturating_sub(last),
            };
            self.last_ts = ts;
            self.wait(gap)?;
        }
        let Some(fname) = w.next() else {
            return Ok(());
        };
        let action = w.next().ok_or("no action")?;
        let ddir = match action {
            "add" => return self.file(fname, true).map(|_| ()),
            "open" | "close" => return self.file(fname, false).map(|_| ()),
            "wait" if self.version == 2 => {
                let us = num(w.next().unwrap_or(""))?;
                // As fio: waits below 100 µs are dropped.
                if us >= 100 {
                    self.wait(us)?;
                }
                return Ok(());
            }
            "read" => Ddir::Read,
            "write" => Ddir::Write,
            "trim" => Ddir::Trim,
            "sync" => Ddir::Sync,
            "datasync" => Ddir::DataSync,
            other => return Err(format!("unknown action '{other}'")),
        };
        let file = self.file(fname, false)?;
        let (offset, len) = if ddir.is_data() {
            let off = num(w.next().unwrap_or(""))?;
            let len = num(w.next().unwrap_or(""))?;
            let len = u32::try_from(len).map_err(|_| format!("length {len} is too large"))?;
            if len == 0 {
                return Err(format!("{action} of 0 bytes (an I/O needs a length)"));
            }
            (off, len)
        } else {
            (0, 0)
        };
        self.io(ddir, file, offset, len);
        Ok(())
    }

    /// The replay waits `us` more before its next I/O. A log that waits more than a
    /// year in all is damaged (a timestamp of 2^64−1 would hold the job forever).
    fn wait(&mut self, us: u64) -> Result<(), String> {
        const YEAR_US: u64 = 365 * 24 * 3600 * 1_000_000;
        self.waited_us = self.waited_us.saturating_add(us);
        if self.waited_us > YEAR_US && !self.o.replay_no_stall {
            return Err(format!(
                "the log waits {} s in all, more than a year: a damaged timestamp? \
                 (replay_no_stall=1 replays without waiting)",
                self.waited_us / 1_000_000
            ));
        }
        Ok(())
    }

    /// The number of file `fname`; `add` adds it if new.
    fn file(&mut self, fname: &str, add: bool) -> Result<u32, String> {
        if let Some(i) = self.names.iter().position(|n| n == fname) {
            return Ok(i as u32);
        }
        if !add {
            return Err(format!("file {fname} was not added"));
        }
        self.names.push(fname.to_string());
        Ok(self.names.len() as u32 - 1)
    }

    /// An I/O of the log, as replay_skip, --readonly, replay_scale and replay_align
    /// have it.
    fn io(&mut self, ddir: Ddir, file: u32, mut offset: u64, len: u32) {
        let o = self.o;
        if skipped(o, ddir) {
            return;
        }
        if self.readonly && matches!(ddir, Ddir::Write | Ddir::Trim) {
            self.skipped_writes += 1;
            return;
        }
        if o.replay_scale > 1 {
            offset /= u64::from(o.replay_scale);
        }
        if o.replay_align > 1 {
            offset &= !(u64::from(o.replay_align) - 1);
        }
        let at_us = (self.version == 3 || self.waited_us > 0).then_some(self.waited_us);
        let io = Io {
            ddir,
            file,
            offset,
            len,
            verify: false,
        };
        self.t.entries.push(Entry { io, at_us });
    }

    fn finish(mut self) -> Result<Trace, String> {
        let o = self.o;
        if self.names.is_empty() {
            return Err("no file is added".into());
        }
        if self.skipped_writes > 0 {
            self.t.notes.push(format!(
                "ioscope: job '{}' skips replay of {} writes and trims due to --readonly",
                o.name, self.skipped_writes
            ));
        }
        let mut t = self.t;
        t.set_ends(self.names.len());
        t.files = match &o.replay_redirect {
            // Every file of the trace onto one: its entries all name file 0.
            Some(to) => {
                let end = t.ends.iter().copied().max().unwrap_or(0);
                for e in &mut t.entries {
                    e.io.file = 0;
                }
                t.ends = vec![end];
                vec![PathBuf::from(to)]
            }
            None => self.names.into_iter().map(PathBuf::from).collect(),
        };
        Ok(t)
    }
}

/// A whole number of the log.
fn num(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("'{s}' is not a number"))
}
