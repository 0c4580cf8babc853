//! I/O replay in fio's iolog formats. `write_iolog` records the I/O a job issues as a
//! version 3 iolog (a timestamp in µs since the job started, the file, the action and,
//! for I/O, offset and length); `read_iolog` replays a version 2 or 3 iolog or a
//! blktrace ([`blktrace`]; several merged into one first with `merge_blktrace_file`:
//! [`merge`]): its files become the job's files, its I/Os the job's I/Os, at their
//! recorded times unless `replay_no_stall` (scaled by `replay_time_scale`), with
//! `replay_redirect`, `replay_align`, `replay_scale` and `replay_skip` applied as they
//! are read. Under `--readonly` the trace's writes and trims are left out, and said so.

pub mod blktrace;
pub mod merge;

use crate::workload::io::Io;
use ioscope_engine::Ddir;
use ioscope_options::JobOptions;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
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
        None => parse(r, o, readonly),
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
    let mut t = Trace::default();
    let mut names: Vec<String> = Vec::new();
    let mut waited_us = 0u64;
    let mut skipped_writes = 0u64;
    for (i, line) in lines {
        let line = line.map_err(|e| e.to_string())?;
        let at = |e: String| format!("line {}: {e}", i + 1);
        let mut w = line.split_whitespace();
        let ts = if version == 3 {
            match w.next() {
                None => continue,
                Some(s) => Some(num(s).map_err(at)?),
            }
        } else {
            None
        };
        let Some(fname) = w.next() else {
            continue;
        };
        let action = w.next().ok_or_else(|| at("no action".into()))?;
        let fileno = |names: &mut Vec<String>, add: bool| -> Result<u32, String> {
            if let Some(i) = names.iter().position(|n| n == fname) {
                return Ok(i as u32);
            }
            if !add {
                return Err(format!("file {fname} was not added"));
            }
            names.push(fname.to_string());
            Ok(names.len() as u32 - 1)
        };
        let ddir = match action {
            "add" => {
                fileno(&mut names, true).map_err(at)?;
                continue;
            }
            "open" | "close" => {
                fileno(&mut names, false).map_err(at)?;
                continue;
            }
            "wait" if version == 2 => {
                let us = num(w.next().unwrap_or("")).map_err(at)?;
                // As fio: waits below 100 µs are dropped.
                if us >= 100 {
                    waited_us += us;
                }
                continue;
            }
            "read" => Ddir::Read,
            "write" => Ddir::Write,
            "trim" => Ddir::Trim,
            "sync" => Ddir::Sync,
            "datasync" => Ddir::DataSync,
            other => return Err(at(format!("unknown action '{other}'"))),
        };
        let file = fileno(&mut names, false).map_err(at)?;
        let (mut offset, len) = if ddir.is_data() {
            let off = num(w.next().unwrap_or("")).map_err(at)?;
            let len = num(w.next().unwrap_or("")).map_err(at)?;
            let len = u32::try_from(len).map_err(|_| at(format!("length {len} is too large")))?;
            (off, len)
        } else {
            (0, 0)
        };
        if skipped(o, ddir) {
            continue;
        }
        if readonly && matches!(ddir, Ddir::Write | Ddir::Trim) {
            skipped_writes += 1;
            continue;
        }
        if o.replay_scale > 1 {
            offset /= u64::from(o.replay_scale);
        }
        if o.replay_align > 1 {
            offset &= !(u64::from(o.replay_align) - 1);
        }
        let at_us = match ts {
            Some(us) => Some(us),
            None if waited_us > 0 => Some(waited_us),
            None => None,
        };
        t.entries.push(Entry {
            io: Io {
                ddir,
                file,
                offset,
                len,
                verify: false,
            },
            at_us,
        });
    }
    if names.is_empty() {
        return Err("no file is added".into());
    }
    if skipped_writes > 0 {
        t.notes.push(format!(
            "ioscope: job '{}' skips replay of {skipped_writes} writes and trims due to --readonly",
            o.name
        ));
    }
    t.set_ends(names.len());
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
        None => names.into_iter().map(PathBuf::from).collect(),
    };
    Ok(t)
}

fn num(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("'{s}' is not a number"))
}

/// write_iolog: the job's issued I/O as a version 3 iolog.
pub struct Recorder {
    out: BufWriter<File>,
    names: Vec<String>,
    last_us: u64,
    failed: Option<std::io::Error>,
}

impl Recorder {
    /// Open (append, as fio) and write the header and the files' add and open lines.
    pub fn create(path: &str, files: &[&Path]) -> std::io::Result<Recorder> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let mut out = BufWriter::with_capacity(1 << 16, f);
        writeln!(out, "fio version 3 iolog")?;
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        for n in &names {
            writeln!(out, "0 {n} add")?;
        }
        for n in &names {
            writeln!(out, "0 {n} open")?;
        }
        Ok(Recorder {
            out,
            names,
            last_us: 0,
            failed: None,
        })
    }

    /// An I/O (or sync) issued `us` after the job started.
    pub fn issued(&mut self, us: u64, io: &Io) {
        let name = self.names.get(io.file as usize).map_or("?", String::as_str);
        let r = match io.ddir {
            Ddir::Read => writeln!(self.out, "{us} {name} read {} {}", io.offset, io.len),
            Ddir::Write => writeln!(self.out, "{us} {name} write {} {}", io.offset, io.len),
            Ddir::Trim => writeln!(self.out, "{us} {name} trim {} {}", io.offset, io.len),
            Ddir::Sync => writeln!(self.out, "{us} {name} sync 0 0"),
            Ddir::DataSync => writeln!(self.out, "{us} {name} datasync 0 0"),
        };
        self.last_us = us;
        if let Err(e) = r {
            self.failed.get_or_insert(e);
        }
    }

    /// The files' close lines; the first error writing the log, if any.
    pub fn finish(mut self) -> std::io::Result<()> {
        for n in &self.names {
            writeln!(self.out, "{} {n} close", self.last_us)?;
        }
        self.out.flush()?;
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
        let mut o = ioscope_options::spec::defaults().clone();
        f(&mut o);
        o
    }

    #[test]
    fn version_2_with_waits_and_version_3_with_times() {
        let v2 = "fio version 2 iolog\n/d/a add\n/d/a open\n/d/a read 0 4096\n/d/a wait 50\n\
                  /d/a write 8192 4096\n/d/a wait 1000\n/d/a sync 0 0\n/d/a close\n";
        let t = parse(v2.as_bytes(), &opts(|_| {}), false).unwrap();
        assert_eq!(t.files, [PathBuf::from("/d/a")]);
        assert_eq!(t.ends, [12288]);
        let got: Vec<(Ddir, u64, u32, Option<u64>)> = t
            .entries
            .iter()
            .map(|e| (e.io.ddir, e.io.offset, e.io.len, e.at_us))
            .collect();
        // The 50 µs wait is dropped (below 100), the 1000 µs one is kept.
        assert_eq!(
            got,
            [
                (Ddir::Read, 0, 4096, None),
                (Ddir::Write, 8192, 4096, None),
                (Ddir::Sync, 0, 0, Some(1000)),
            ]
        );
        let v3 = "fio version 3 iolog\n0 a add\n0 b add\n5 a open\n9 b open\n\
                  10 a read 4096 512\n20 b trim 1000000 4096\n30 a close\n";
        let t = parse(v3.as_bytes(), &opts(|_| {}), false).unwrap();
        assert_eq!(t.files.len(), 2);
        assert_eq!(t.ends, [4608, 1004096]);
        assert_eq!(t.entries[1].io.file, 1);
        assert_eq!(t.entries[1].at_us, Some(20));
    }

    #[test]
    fn redirect_scale_align_and_skip() {
        let v3 = "fio version 3 iolog\n0 a add\n0 b add\n1 a read 10000 4096\n\
                  2 b write 20000 4096\n3 b read 40000 4096\n";
        let o = opts(|o| {
            o.replay_redirect = Some("/dev/x".into());
            o.replay_scale = 2;
            o.replay_align = 4096;
            o.replay_skip = Some(ioscope_options::ReplaySkip {
                write: true,
                ..Default::default()
            });
        });
        let t = parse(v3.as_bytes(), &o, false).unwrap();
        assert_eq!(t.files, [PathBuf::from("/dev/x")]);
        let got: Vec<(u32, u64)> = t.entries.iter().map(|e| (e.io.file, e.io.offset)).collect();
        // 10000/2 = 5000 → 4096; 40000/2 = 20000 → 16384; the write is skipped.
        assert_eq!(got, [(0, 4096), (0, 16384)]);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = [
            ("blktrace\n", "version 2 or 3"),
            (
                "fio version 3 iolog\n0 a add\n1 a frobnicate 0 1\n",
                "line 3: unknown action",
            ),
            (
                "fio version 3 iolog\n0 a add\n1 b read 0 1\n",
                "line 3: file b was not added",
            ),
            (
                "fio version 2 iolog\na add\na read x 1\n",
                "line 3: 'x' is not a number",
            ),
            ("fio version 3 iolog\n", "no file"),
        ];
        for (text, want) in bad {
            let e = parse(text.as_bytes(), &opts(|_| {}), false).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn recorded_logs_read_back() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        let a = d.path().join("a");
        let mut r = Recorder::create(log.to_str().unwrap(), &[a.as_path()]).unwrap();
        let io = |ddir, offset| Io {
            ddir,
            file: 0,
            offset,
            len: 4096,
            verify: false,
        };
        r.issued(7, &io(Ddir::Write, 8192));
        r.issued(9, &io(Ddir::DataSync, 0));
        r.issued(12, &io(Ddir::Read, 0));
        r.finish().unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        let name = a.display();
        assert_eq!(
            text,
            format!(
                "fio version 3 iolog\n0 {name} add\n0 {name} open\n7 {name} write 8192 4096\n\
                 9 {name} datasync 0 0\n12 {name} read 0 4096\n12 {name} close\n"
            )
        );
        let t = parse(text.as_bytes(), &opts(|_| {}), false).unwrap();
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.entries[2].at_us, Some(12));
    }
}
