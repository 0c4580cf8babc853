//! blktrace input for `read_iolog`: the binary trace `blktrace` records of a block
//! device (the kernel's `struct blk_io_trace`, 48 bytes per event and a payload of
//! `pdu_len` bytes after it), replayed as fio 3.33 replays it:
//!
//! - only queue events become I/O (issues, completions, merges and notifies do not);
//!   a discard is a trim, a flush (even a write with a pre-flush) a sync, else a write
//!   or a read by the event's category;
//! - offsets are sectors × 512, then `replay_scale` and `replay_align` (which also
//!   rounds lengths up); zero-byte reads and writes are dropped with a note;
//! - times: each queue event is due its distance from the previous queue event after
//!   the previous I/O (none after a time of 0 or when time goes backwards, as in fio);
//! - each event's device (major:minor) is the block device of that number under /dev,
//!   or `replay_redirect`;
//! - the job's depth, when iodepth is not set, is the deepest queue the trace shows
//!   (queued minus merged, per direction, between completions).
//!
//! A trace in the other byte order (recorded on a big-endian machine) reads alike.

use super::{skipped, Entry, Trace};
use crate::workload::io::Io;
use ioscope_engine::Ddir;
use ioscope_options::JobOptions;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes of one event before its payload.
pub const RECORD: usize = 48;
/// The magic in the top 24 bits of an event's first word; the low byte is the version.
const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 7;

// Event categories (the top 16 bits of `action`), from the kernel's blktrace_api.h.
const TC_READ: u32 = 1 << 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
// Actions (the low 16 bits).
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;

/// fio's cap on the depth it reads from a trace.
const MAX_DEPTH: u32 = 1024;

/// One event (the payload is skipped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub magic: u32,
    pub sequence: u32,
    /// ns since the trace started.
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    /// The kernel's dev_t: major in the top 12 bits, minor in the low 20.
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

impl Record {
    fn category(&self) -> u32 {
        self.action >> 16
    }

    fn act(&self) -> u32 {
        self.action & 0xffff
    }

    fn notify(&self) -> bool {
        self.category() & TC_NOTIFY != 0
    }

    pub fn queue(&self) -> bool {
        self.act() == TA_QUEUE
    }

    /// (major, minor) of the event's device.
    pub fn dev(&self) -> (u32, u32) {
        (self.device >> 20, self.device & 0xf_ffff)
    }

    /// The direction the depth probe and the merge count it in: read, write, discard.
    pub fn data_dir(&self) -> Option<usize> {
        let c = self.category();
        [TC_READ, TC_WRITE, TC_DISCARD]
            .iter()
            .position(|&bit| c & bit != 0)
    }

    /// What a queue event replays as (None: a notify).
    fn kind(&self) -> Option<Ddir> {
        let c = self.category();
        if c & TC_NOTIFY != 0 {
            None
        } else if c & TC_DISCARD != 0 {
            Some(Ddir::Trim)
        } else if c & TC_FLUSH != 0 {
            Some(Ddir::Sync)
        } else if c & TC_WRITE != 0 {
            Some(Ddir::Write)
        } else {
            Some(Ddir::Read)
        }
    }

    /// The event as 48 bytes in this machine's byte order, with no payload.
    pub fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_ne_bytes());
        b[8..16].copy_from_slice(&self.time.to_ne_bytes());
        b[16..24].copy_from_slice(&self.sector.to_ne_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_ne_bytes());
        b[28..32].copy_from_slice(&self.action.to_ne_bytes());
        b[32..36].copy_from_slice(&self.pid.to_ne_bytes());
        b[36..40].copy_from_slice(&self.device.to_ne_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_ne_bytes());
        b[44..46].copy_from_slice(&self.error.to_ne_bytes());
        b[46..48].copy_from_slice(&0u16.to_ne_bytes());
        b
    }

    fn decode(b: &[u8; RECORD], swapped: bool) -> Record {
        let u32_at = |i: usize| {
            let v = u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            if swapped {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            let v = u64::from_ne_bytes(a);
            if swapped {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u16_at = |i: usize| {
            let v = u16::from_ne_bytes([b[i], b[i + 1]]);
            if swapped {
                v.swap_bytes()
            } else {
                v
            }
        };
        Record {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }
}

/// Whether a file that begins with `head` is a blktrace: Some(swapped) when it is
/// (swapped: in the other byte order), None when it is not.
pub fn detect(head: &[u8]) -> Option<bool> {
    let first: [u8; 4] = head.get(..4)?.try_into().ok()?;
    let v = u32::from_ne_bytes(first);
    if head.len() < RECORD {
        return None;
    }
    if v & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if v.swap_bytes() & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// The events of a trace, in file order. A partial event at the end ends the trace
/// (as a trace cut short by a full disk ends); a bad magic or version is an error.
pub struct Events<R: Read> {
    r: R,
    swapped: bool,
    index: u64,
    done: bool,
}

impl<R: Read> Events<R> {
    pub fn new(r: R, swapped: bool) -> Events<R> {
        Events {
            r,
            swapped,
            index: 0,
            done: false,
        }
    }
}

impl<R: Read> Iterator for Events<R> {
    type Item = Result<Record, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut b = [0u8; RECORD];
        match read_full(&mut self.r, &mut b) {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return None;
            }
            Err(e) => {
                self.done = true;
                return Some(Err(e.to_string()));
            }
        }
        self.index += 1;
        let rec = Record::decode(&b, self.swapped);
        let bad = if rec.magic & 0xffff_ff00 != MAGIC {
            Some(format!("bad magic {:#x}", rec.magic))
        } else if rec.magic & 0xff != VERSION {
            Some(format!(
                "blktrace version {} (only version {VERSION} is read)",
                rec.magic & 0xff
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            self.done = true;
            return Some(Err(format!("event {}: {why}", self.index)));
        }
        let skip = u64::from(rec.pdu_len);
        match std::io::copy(&mut (&mut self.r).take(skip), &mut std::io::sink()) {
            Ok(n) if n == skip => Some(Ok(rec)),
            Ok(_) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.to_string()))
            }
        }
    }
}

/// Fill `b` (true), or find the end before its first byte or in its middle (false).
fn read_full(r: &mut impl Read, b: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < b.len() {
        match r.read(&mut b[got..]) {
            Ok(0) => return Ok(false),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// The block device of `major:minor` under /dev (not through symlinks).
pub fn find_device(major: u32, minor: u32) -> Option<PathBuf> {
    find_in(Path::new("/dev"), libc::makedev(major, minor), 0)
}

fn find_in(dir: &Path, rdev: libc::dev_t, depth: u32) -> Option<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if depth > 8 {
        return None;
    }
    let mut subdirs = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if md.file_type().is_block_device() && md.rdev() == rdev {
            return Some(e.path());
        }
        if md.is_dir() {
            subdirs.push(e.path());
        }
    }
    subdirs.sort();
    subdirs.iter().find_map(|d| find_in(d, rdev, depth + 1))
}

/// Parse a blktrace into the job's trace. `device` names the file of a major:minor
/// (None: not on this machine); `readonly` drops writes and trims (counted in a note).
pub fn parse(
    events: impl Iterator<Item = Result<Record, String>>,
    o: &JobOptions,
    readonly: bool,
    device: &mut dyn FnMut(u32, u32) -> Option<PathBuf>,
) -> Result<Trace, String> {
    let mut r = Replay {
        o,
        t: Trace::default(),
        devs: Vec::new(),
        zero_noted: false,
    };
    let mut p = Probe::default();
    let mut prev_ns = 0u64;
    let mut at_us = 0u64;
    let mut skipped_writes = 0u64;
    for rec in events {
        let rec = rec?;
        if !rec.notify() && readonly && rec.category() & (TC_WRITE | TC_DISCARD) != 0 {
            skipped_writes += 1;
            continue;
        }
        if !rec.notify() {
            p.see(&rec);
        }
        let Some(ddir) = rec.kind().filter(|_| rec.queue()) else {
            continue;
        };
        // The distance from the previous queue event, as fio measures it (before any
        // skip, so skipped events still move the time base).
        if prev_ns != 0 && rec.time >= prev_ns {
            at_us += (rec.time - prev_ns) / 1000;
        }
        prev_ns = rec.time;
        if !skipped(o, ddir) {
            r.event(&rec, ddir, at_us, device)?;
        }
    }
    r.finish(skipped_writes, p.depth())
}

/// A blktrace's queue events becoming a trace.
struct Replay<'a> {
    o: &'a JobOptions,
    t: Trace,
    /// Devices seen, by number, and their file numbers in the trace.
    devs: Vec<((u32, u32), u32)>,
    zero_noted: bool,
}

impl Replay<'_> {
    /// A queue event of direction `ddir` at `at_us`: an entry, unless it moves no
    /// data (said once, as fio says it).
    fn event(
        &mut self,
        rec: &Record,
        ddir: Ddir,
        at_us: u64,
        device: &mut dyn FnMut(u32, u32) -> Option<PathBuf>,
    ) -> Result<(), String> {
        let o = self.o;
        let align = u64::from(o.replay_align.max(1));
        let mut len = u64::from(rec.bytes);
        if align > 1 {
            len = len.div_ceil(align) * align;
        }
        if ddir.is_data() && rec.bytes == 0 {
            if !self.zero_noted {
                self.t.notes.push(format!(
                    "blktrace: ignoring zero byte trace: action={:x}",
                    rec.action
                ));
                self.zero_noted = true;
            }
            return Ok(());
        }
        let file = file_of(rec, &mut self.devs, &mut self.t.files, device)?;
        let (offset, len) = if ddir == Ddir::Sync {
            (0, 0)
        } else {
            let mut off = rec.sector.saturating_mul(512) / u64::from(o.replay_scale.max(1));
            off &= !(align - 1);
            let len =
                u32::try_from(len).map_err(|_| format!("an event of {len} bytes is too large"))?;
            (off, len)
        };
        let io = Io {
            ddir,
            file,
            offset,
            len,
            verify: false,
        };
        self.t.entries.push(Entry {
            io,
            at_us: Some(at_us),
        });
        Ok(())
    }

    fn finish(mut self, skipped_writes: u64, depth: u32) -> Result<Trace, String> {
        if skipped_writes > 0 {
            self.t.notes.push(format!(
                "ioscope: job '{}' skips replay of {skipped_writes} writes and trims due to --readonly",
                self.o.name
            ));
        }
        let t = &mut self.t;
        if !t
            .entries
            .iter()
            .any(|e| e.io.ddir.is_data() || e.io.ddir == Ddir::Sync)
        {
            return Err(
                "found no I/O in the blktrace (no queue events of reads, writes, \
                        discards or flushes)"
                    .into(),
            );
        }
        t.depth = Some(depth);
        t.set_ends(t.files.len());
        Ok(self.t)
    }
}

/// The job file of an event's device, added at its first event.
fn file_of(
    rec: &Record,
    devs: &mut Vec<((u32, u32), u32)>,
    files: &mut Vec<PathBuf>,
    device: &mut dyn FnMut(u32, u32) -> Option<PathBuf>,
) -> Result<u32, String> {
    let dev = rec.dev();
    if let Some(&(_, f)) = devs.iter().find(|(d, _)| *d == dev) {
        return Ok(f);
    }
    let path = device(dev.0, dev.1).ok_or_else(|| {
        format!(
            "the trace's device {}:{} is not a block device on this machine \
             (replay_redirect=PATH replays it onto PATH)",
            dev.0, dev.1
        )
    })?;
    let f = match files.iter().position(|p| *p == path) {
        Some(i) => i as u32,
        None => {
            files.push(path);
            files.len() as u32 - 1
        }
    };
    devs.push((dev, f));
    Ok(f)
}

/// The deepest queue a trace shows, per direction: queued minus merged between
/// completions.
#[derive(Default)]
struct Probe {
    cur: [u32; 3],
    max: [u32; 3],
    seen: [bool; 3],
}

impl Probe {
    fn see(&mut self, rec: &Record) {
        let Some(d) = rec.data_dir() else {
            return;
        };
        match rec.act() {
            TA_QUEUE => {
                self.cur[d] += 1;
                self.seen[d] = true;
            }
            TA_BACKMERGE | TA_FRONTMERGE => self.cur[d] = self.cur[d].saturating_sub(1),
            TA_COMPLETE => {
                self.max[d] = self.max[d].max(self.cur[d]);
                self.cur[d] = 0;
            }
            _ => {}
        }
    }

    fn depth(&self) -> u32 {
        (0..3)
            .map(|d| match (self.max[d], self.seen[d]) {
                (0, true) => 1,
                (m, _) => m.min(MAX_DEPTH),
            })
            .max()
            .unwrap_or(1)
            .max(1)
    }
}

#[cfg(test)]
mod tests;
