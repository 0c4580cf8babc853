//! I/O logs (write_lat_log, write_bw_log, write_iops_log, write_hist_log) in fio's
//! formats, written *during* the run without disturbing it.
//!
//! Each log owns a fixed set of pre-faulted chunks of entries. The job thread appends
//! entries to the current chunk (a store, no allocation, lock or syscall); a full chunk
//! is sent to the log's writer thread, which formats and writes it and sends the chunk
//! back for reuse. Memory is bounded (CHUNKS × CHUNK_ENTRIES × 32 bytes per log, 8 MiB)
//! whatever the run length. If the writer falls behind so that no empty chunk is
//! available, entries are dropped — never waited for — and the drop count is reported.

use crate::clock::{Clock, Ticks};
use ioscope_engine::IoUnit;
use ioscope_options::{JobOptions, LogWindowValue};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Entries per chunk and chunks per log.
pub const CHUNK_ENTRIES: usize = 65_536;
pub const CHUNKS: usize = 4;

/// One log line before formatting.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Entry {
    pub t_ms: u64,
    pub value: u64,
    /// Second value (log_window_value=both: the max).
    pub value2: u64,
    pub offset: u64,
    pub bs: u32,
    pub ddir: u8,
    pub prio: u16,
}

type Chunk = Box<[Entry]>;

enum Msg {
    Chunk(Chunk, usize),
    Hist(u64, u8, u32, Vec<u64>),
}

/// How lines are written.
#[derive(Clone, Copy, Debug)]
struct Format {
    offset: bool,
    prio_hex: bool,
    both: bool,
}

fn new_chunk() -> Chunk {
    let mut c = vec![Entry::default(); CHUNK_ENTRIES].into_boxed_slice();
    // Touch every page so appends never fault on the I/O path.
    for i in (0..c.len()).step_by(4096 / std::mem::size_of::<Entry>()) {
        // SAFETY: in bounds; volatile so the write is not elided.
        unsafe { std::ptr::write_volatile(&mut c[i], Entry::default()) };
    }
    c
}

/// One log file with its writer thread.
pub struct Log {
    chunk: Option<Chunk>,
    len: usize,
    to_writer: SyncSender<Msg>,
    from_writer: Receiver<Chunk>,
    writer: Option<JoinHandle<std::io::Result<u64>>>,
    pub dropped: u64,
    pub path: PathBuf,
}

impl Log {
    fn open(path: PathBuf, fmt: Format, append: bool) -> std::io::Result<Log> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)?;
        let (to_writer, rx) = sync_channel::<Msg>(CHUNKS + 2);
        let (back, from_writer) = sync_channel::<Chunk>(CHUNKS);
        for _ in 1..CHUNKS {
            // The channel has room for every chunk: this cannot block.
            let _ = back.send(new_chunk());
        }
        let writer = std::thread::Builder::new()
            .name("ioscope-log".into())
            .spawn(move || write_loop(file, rx, back, fmt))?;
        Ok(Log {
            chunk: Some(new_chunk()),
            len: 0,
            to_writer,
            from_writer,
            writer: Some(writer),
            dropped: 0,
            path,
        })
    }

    #[inline(always)]
    pub fn push(&mut self, e: Entry) {
        match &mut self.chunk {
            Some(c) => {
                c[self.len] = e;
                self.len += 1;
                if self.len == CHUNK_ENTRIES {
                    self.hand_off();
                }
            }
            None => {
                // Writer behind: take a chunk if one came back, else drop.
                if let Ok(c) = self.from_writer.try_recv() {
                    self.chunk = Some(c);
                    self.len = 0;
                    self.push(e);
                } else {
                    self.dropped += 1;
                }
            }
        }
    }

    fn hand_off(&mut self) {
        if let Some(c) = self.chunk.take() {
            let n = self.len;
            self.len = 0;
            // try_send: a full queue means the writer is behind; keep the chunk and drop.
            match self.to_writer.try_send(Msg::Chunk(c, n)) {
                Ok(()) => self.chunk = self.from_writer.try_recv().ok(),
                Err(std::sync::mpsc::TrySendError::Full(Msg::Chunk(c, n))) => {
                    self.dropped += n as u64;
                    self.chunk = Some(c);
                }
                Err(_) => {}
            }
        }
    }

    fn hist(&mut self, t_ms: u64, ddir: u8, bs: u32, bins: Vec<u64>) {
        if self
            .to_writer
            .try_send(Msg::Hist(t_ms, ddir, bs, bins))
            .is_err()
        {
            self.dropped += 1;
        }
    }

    /// Flush what is left and wait for the writer.
    pub fn close(mut self) -> std::io::Result<(PathBuf, u64)> {
        if let Some(c) = self.chunk.take() {
            let _ = self.to_writer.send(Msg::Chunk(c, self.len));
        }
        let Log {
            to_writer,
            writer,
            dropped,
            path,
            ..
        } = self;
        drop(to_writer);
        if let Some(w) = writer {
            match w.join() {
                Ok(r) => {
                    r?;
                }
                Err(_) => return Err(std::io::Error::other("log writer panicked")),
            }
        }
        Ok((path, dropped))
    }
}

fn write_loop(
    file: File,
    rx: Receiver<Msg>,
    back: SyncSender<Chunk>,
    fmt: Format,
) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut lines = 0u64;
    let mut line = String::with_capacity(128);
    for msg in rx {
        match msg {
            Msg::Chunk(c, n) => {
                for e in &c[..n] {
                    line.clear();
                    format_entry(&mut line, e, fmt);
                    w.write_all(line.as_bytes())?;
                }
                lines += n as u64;
                let _ = back.try_send(c);
            }
            Msg::Hist(t, d, bs, bins) => {
                use std::fmt::Write as _;
                line.clear();
                let _ = write!(line, "{t}, {d}, {bs}");
                for b in &bins {
                    let _ = write!(line, ", {b}");
                }
                line.push('\n');
                w.write_all(line.as_bytes())?;
                lines += 1;
            }
        }
    }
    w.flush()?;
    Ok(lines)
}

fn format_entry(s: &mut String, e: &Entry, fmt: Format) {
    use std::fmt::Write as _;
    let _ = write!(s, "{}, {}", e.t_ms, e.value);
    if fmt.both {
        let _ = write!(s, ", {}", e.value2);
    }
    let _ = write!(s, ", {}, {}", e.ddir, e.bs);
    if fmt.offset {
        let _ = write!(s, ", {}", e.offset);
    }
    if fmt.prio_hex {
        let _ = writeln!(s, ", 0x{:04x}", e.prio);
    } else {
        let _ = writeln!(s, ", {}", u8::from(e.prio >> 13 == 1));
    }
}

/// Averaging window for one log and direction.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u128,
    n: u64,
    max: u64,
}

/// Which per-I/O values a log records.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
}

struct KindLog {
    kind: Kind,
    log: Log,
    win: [Window; 3],
}

/// The histogram log with the current and last-logged fio-geometry counts per direction.
type HistLog = (Log, [Vec<u64>; 3], [Vec<u64>; 3]);

/// All logs of one job.
pub struct JobLogs {
    logs: Vec<KindLog>,
    hist: Option<HistLog>,
    hist_coarse: u32,
    hist_every_ms: u64,
    next_hist_ms: u64,
    avg_ms: u64,
    next_window_ms: u64,
    value: LogWindowValue,
    epoch: Ticks,
    unix_epoch_ms: u64,
    use_unix: bool,
    bytes_win: [u64; 3],
    ios_win: [u64; 3],
    clock: &'static Clock,
}

/// Log file name: PREFIX_TYPE[.N].log (fio's naming; N = global job number).
pub fn log_path(prefix: &str, job_name: &str, kind: &str, number: u32, per_job: bool) -> PathBuf {
    let base = if prefix.is_empty() { job_name } else { prefix };
    if per_job {
        PathBuf::from(format!("{base}_{kind}.{number}.log"))
    } else {
        PathBuf::from(format!("{base}_{kind}.log"))
    }
}

impl JobLogs {
    /// Open the logs a job asks for; None if it asks for none.
    pub fn open(
        o: &JobOptions,
        number: u32,
        sync_engine: bool,
    ) -> std::io::Result<Option<JobLogs>> {
        let fmt = Format {
            offset: o.log_offset,
            prio_hex: o.log_prio,
            both: o.log_avg_msec > 0 && o.log_window_value == LogWindowValue::Both,
        };
        let append = !o.per_job_logs;
        let mut logs = Vec::new();
        let mut add = |prefix: &Option<String>, kind: Kind, name: &str| -> std::io::Result<()> {
            if let Some(p) = prefix {
                let path = log_path(p, &o.name, name, number, o.per_job_logs);
                logs.push(KindLog {
                    kind,
                    log: Log::open(path, fmt, append)?,
                    win: [Window::default(); 3],
                });
            }
            Ok(())
        };
        if !o.disable_lat {
            add(&o.write_lat_log, Kind::Lat, "lat")?;
        }
        // fio creates the slat log for sync engines too; it stays empty.
        if !o.disable_slat || sync_engine {
            add(&o.write_lat_log, Kind::Slat, "slat")?;
        }
        if !o.disable_clat {
            add(&o.write_lat_log, Kind::Clat, "clat")?;
        }
        add(&o.write_bw_log, Kind::Bw, "bw")?;
        add(&o.write_iops_log, Kind::Iops, "iops")?;
        let hist = match &o.write_hist_log {
            Some(p) => {
                let path = log_path(p, &o.name, "clat_hist", number, o.per_job_logs);
                let plain = Format {
                    offset: false,
                    prio_hex: false,
                    both: false,
                };
                let bins = ioscope_stats::hist::FIO_BUCKETS;
                Some((
                    Log::open(path, plain, append)?,
                    std::array::from_fn(|_| vec![0; bins]),
                    std::array::from_fn(|_| vec![0; bins]),
                ))
            }
            None => None,
        };
        if logs.is_empty() && hist.is_none() {
            return Ok(None);
        }
        let clock = Clock::get();
        Ok(Some(JobLogs {
            logs,
            hist,
            hist_coarse: o.log_hist_coarseness,
            hist_every_ms: if o.log_hist_msec > 0 {
                o.log_hist_msec
            } else {
                1000
            },
            next_hist_ms: if o.log_hist_msec > 0 {
                o.log_hist_msec
            } else {
                1000
            },
            avg_ms: o.log_avg_msec,
            next_window_ms: o.log_avg_msec,
            value: o.log_window_value,
            epoch: clock.now(),
            unix_epoch_ms: crate::clock::unix_ms(),
            use_unix: o.log_unix_epoch,
            bytes_win: [0; 3],
            ios_win: [0; 3],
            clock,
        }))
    }

    /// Timestamps restart at 0 when measurement starts (after ramp_time).
    pub fn restart(&mut self, now: Ticks) {
        self.epoch = now;
        self.unix_epoch_ms = crate::clock::unix_ms();
        self.next_window_ms = self.avg_ms;
        self.next_hist_ms = self.hist_every_ms;
        for l in &mut self.logs {
            l.win = [Window::default(); 3];
        }
        self.bytes_win = [0; 3];
        self.ios_win = [0; 3];
    }

    #[inline(always)]
    fn ms(&self, t: Ticks) -> u64 {
        self.clock.delta_ns(self.epoch, t) / 1_000_000
    }

    #[inline(always)]
    fn stamp(&self, ms: u64) -> u64 {
        if self.use_unix {
            self.unix_epoch_ms + ms
        } else {
            ms
        }
    }

    /// slat of a submitted unit.
    #[inline]
    pub fn slat(&mut self, t: Ticks, u: &IoUnit, slat: u64) {
        self.record(t, u, |k| (k == Kind::Slat).then_some(slat), 0);
    }

    /// A completed unit: lat, clat, bw, iops entries.
    #[inline]
    pub fn completion(&mut self, t: Ticks, u: &IoUnit, clat: u64, lat: u64, bytes: u64) {
        let bw = (bytes * 1_000_000).checked_div(clat).unwrap_or(0);
        self.record(
            t,
            u,
            |k| match k {
                Kind::Lat => Some(lat),
                Kind::Clat => Some(clat),
                Kind::Bw => Some(bw),
                Kind::Iops => Some(1),
                Kind::Slat => None,
            },
            bytes,
        );
        if let Some((_, cur, _)) = &mut self.hist {
            cur[u.ddir.index()][ioscope_stats::hist::fio_index(clat)] += 1;
        }
        let ms = self.ms(t);
        if self.hist.is_some() && ms >= self.next_hist_ms {
            self.flush_hist(ms, u.len);
        }
    }

    #[inline(always)]
    fn record(&mut self, t: Ticks, u: &IoUnit, value: impl Fn(Kind) -> Option<u64>, bytes: u64) {
        let ms = self.ms(t);
        let d = u.ddir.index().min(2);
        if self.avg_ms == 0 {
            let stamp = self.stamp(ms);
            for l in &mut self.logs {
                if let Some(v) = value(l.kind) {
                    l.log.push(Entry {
                        t_ms: stamp,
                        value: v,
                        value2: 0,
                        offset: u.offset,
                        bs: u.len,
                        ddir: d as u8,
                        prio: u.ioprio,
                    });
                }
            }
            return;
        }
        if ms >= self.next_window_ms {
            self.flush_windows();
        }
        for l in &mut self.logs {
            if let Some(v) = value(l.kind) {
                let w = &mut l.win[d];
                w.sum += v as u128;
                w.n += 1;
                w.max = w.max.max(v);
            }
        }
        if value(Kind::Iops).is_some() {
            self.bytes_win[d] += bytes;
            self.ios_win[d] += 1;
        }
    }

    /// Emit one averaged row per direction with samples, stamped at the window end.
    fn flush_windows(&mut self) {
        let end = self.next_window_ms;
        let stamp = self.stamp(end);
        let secs = self.avg_ms as f64 / 1000.0;
        for l in &mut self.logs {
            for d in 0..3 {
                let w = l.win[d];
                let (avg, max) = match l.kind {
                    Kind::Bw => {
                        let v = (self.bytes_win[d] as f64 / 1024.0 / secs) as u64;
                        (v, v)
                    }
                    Kind::Iops => {
                        let v = (self.ios_win[d] as f64 / secs) as u64;
                        (v, v)
                    }
                    _ if w.n == 0 => continue,
                    _ => ((w.sum / w.n as u128) as u64, w.max),
                };
                if w.n == 0 {
                    continue;
                }
                let (value, value2) = match self.value {
                    LogWindowValue::Avg => (avg, 0),
                    LogWindowValue::Max => (max, 0),
                    LogWindowValue::Both => (avg, max),
                };
                l.log.push(Entry {
                    t_ms: stamp,
                    value,
                    value2,
                    offset: 0,
                    bs: 0,
                    ddir: d as u8,
                    prio: 0,
                });
                l.win[d] = Window::default();
            }
        }
        self.bytes_win = [0; 3];
        self.ios_win = [0; 3];
        self.next_window_ms += self.avg_ms;
    }

    fn flush_hist(&mut self, ms: u64, bs: u32) {
        let coarse = self.hist_coarse;
        let stamp = self.stamp(ms);
        if let Some((log, cur, prev)) = &mut self.hist {
            for d in 0..3 {
                if cur[d] == prev[d] {
                    continue;
                }
                let group = 1usize << coarse;
                let bins: Vec<u64> = cur[d]
                    .chunks(group)
                    .zip(prev[d].chunks(group))
                    .map(|(c, p)| c.iter().sum::<u64>() - p.iter().sum::<u64>())
                    .collect();
                prev[d].copy_from_slice(&cur[d]);
                log.hist(stamp, d as u8, bs, bins);
            }
        }
        self.next_hist_ms = ms + self.hist_every_ms;
    }

    /// Flush partial windows and close every log; returns (path, dropped entries).
    pub fn close(mut self, end: Ticks) -> Vec<(PathBuf, u64)> {
        if self.avg_ms > 0 && self.logs.iter().any(|l| l.win.iter().any(|w| w.n > 0)) {
            let ms = self.ms(end);
            // fio stamps the final partial window at the end of the run.
            self.next_window_ms = self.next_window_ms.min(ms.max(1));
            self.flush_windows();
        }
        if self.hist.is_some() {
            let ms = self.ms(end);
            self.flush_hist(ms, 0);
        }
        let mut out = Vec::new();
        for l in self.logs {
            if let Ok(r) = l.log.close() {
                out.push(r);
            }
        }
        if let Some((log, _, _)) = self.hist {
            if let Ok(r) = log.close() {
                out.push(r);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_format_matches_fio() {
        let mut s = String::new();
        let e = Entry {
            t_ms: 2,
            value: 2081844,
            value2: 0,
            offset: 61440,
            bs: 131072,
            ddir: 0,
            prio: 0x2000,
        };
        format_entry(
            &mut s,
            &e,
            Format {
                offset: false,
                prio_hex: true,
                both: false,
            },
        );
        assert_eq!(s, "2, 2081844, 0, 131072, 0x2000\n");
        s.clear();
        format_entry(
            &mut s,
            &e,
            Format {
                offset: true,
                prio_hex: false,
                both: false,
            },
        );
        assert_eq!(s, "2, 2081844, 0, 131072, 61440, 1\n");
    }

    #[test]
    fn log_streams_and_bounds_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_lat.1.log");
        let mut log = Log::open(
            path.clone(),
            Format {
                offset: false,
                prio_hex: false,
                both: false,
            },
            false,
        )
        .unwrap();
        let n = CHUNK_ENTRIES * 10 + 5;
        for i in 0..n {
            log.push(Entry {
                t_ms: i as u64,
                value: 7,
                ..Default::default()
            });
            if i % CHUNK_ENTRIES == 0 {
                // Debug builds format slowly; give the writer time per chunk.
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
        let (_, dropped) = log.close().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count() as u64 + dropped, n as u64);
        assert_eq!(dropped, 0, "a writer on tmp keeps up with 250 ms per chunk");
    }
}
