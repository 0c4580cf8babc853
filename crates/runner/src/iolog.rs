//! I/O logs (write_lat_log, write_bw_log, write_iops_log, write_hist_log) in fio's
//! formats, written *during* the run without disturbing it.
//!
//! The job thread appends one compact entry per I/O (or per averaging window) to a
//! pre-faulted chunk: a few stores, no allocation, lock or syscall. A full chunk goes to
//! the job's log-writer thread, which formats it into every log file that wants it
//! (lat, slat, clat, bw, iops) and hands the chunk back for reuse. Memory is bounded —
//! CHUNKS × CHUNK_ENTRIES × 64 bytes = 16 MiB per job, whatever the run length. If the
//! writer falls so far behind that no empty chunk is left, entries are dropped (never
//! waited for) and the count is reported.

use crate::clock::{Clock, Ticks};
use ioscope_engine::IoUnit;
use ioscope_options::{JobOptions, LogWindowValue};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// Entries per chunk and chunks per job.
pub const CHUNK_ENTRIES: usize = 65_536;
pub const CHUNKS: usize = 4;

/// The log files a job can write, in the order of `Entry::v`.
const KINDS: [&str; 5] = ["lat", "slat", "clat", "bw", "iops"];
const LAT: usize = 0;
const SLAT: usize = 1;
const CLAT: usize = 2;
const BW: usize = 3;
const IOPS: usize = 4;

/// One I/O (mask: every enabled log) or one window row (mask: one log).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Entry {
    /// Completion (or window end) time, ms.
    pub t_ms: u64,
    /// Values per kind: lat, slat, clat (ns), bw (KiB/s), iops.
    pub v: [u64; 5],
    /// Milliseconds from submission back to `t_ms`: the slat log's timestamp is
    /// `t_ms - issue_ago_ms`. A difference (not the submission time itself) so that it
    /// fits 32 bits with `log_unix_epoch=1` too, where the times are epoch ms.
    pub issue_ago_ms: u32,
    pub bs: u32,
    pub offset: u64,
    /// Second value of a window row (log_window_value=both: the maximum).
    pub v2: u64,
    pub prio: u16,
    pub ddir: u8,
    /// Bit k set: this entry goes to log KINDS[k].
    pub mask: u8,
}

// The entry is copied once per I/O: keep it at 80 bytes.
const _: () = assert!(std::mem::size_of::<Entry>() == 80);

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
    // Touch every page now so appends never page-fault on the I/O path.
    for i in (0..c.len()).step_by(4096 / std::mem::size_of::<Entry>()) {
        // SAFETY: in bounds; volatile so the write is not elided.
        unsafe { std::ptr::write_volatile(&mut c[i], Entry::default()) };
    }
    c
}

/// The entry stream of one job with its writer thread.
struct Stream {
    chunk: Option<Chunk>,
    len: usize,
    to_writer: SyncSender<Msg>,
    from_writer: Receiver<Chunk>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
    dropped: u64,
}

impl Stream {
    fn start(
        outputs: Vec<Option<File>>,
        hist: Option<File>,
        fmt: Format,
    ) -> std::io::Result<Stream> {
        let (to_writer, rx) = sync_channel::<Msg>(CHUNKS + 8);
        let (back, from_writer) = sync_channel::<Chunk>(CHUNKS);
        for _ in 1..CHUNKS {
            // The channel has room for every chunk: this cannot block.
            let _ = back.send(new_chunk());
        }
        let writer = std::thread::Builder::new()
            .name("ioscope-log".into())
            .spawn(move || write_loop(outputs, hist, rx, back, fmt))?;
        Ok(Stream {
            chunk: Some(new_chunk()),
            len: 0,
            to_writer,
            from_writer,
            writer: Some(writer),
            dropped: 0,
        })
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if let Some(c) = &mut self.chunk {
            c[self.len] = e;
            self.len += 1;
            if self.len == CHUNK_ENTRIES {
                self.hand_off();
            }
            return;
        }
        // The writer is behind: drop, and look for a returned chunk only now and then
        // (polling the channel on every I/O would slow the I/O thread down).
        self.dropped += 1;
        if self.dropped % 256 == 1 {
            if let Ok(c) = self.from_writer.try_recv() {
                self.chunk = Some(c);
                self.len = 0;
            }
        }
    }

    fn hand_off(&mut self) {
        let Some(c) = self.chunk.take() else { return };
        let n = std::mem::take(&mut self.len);
        match self.to_writer.try_send(Msg::Chunk(c, n)) {
            Ok(()) => self.chunk = self.from_writer.try_recv().ok(),
            Err(TrySendError::Full(Msg::Chunk(c, n))) => {
                self.dropped += n as u64;
                self.chunk = Some(c);
            }
            Err(_) => {}
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

    /// Flush the partial chunk, wait for the writer; returns dropped entries.
    fn close(mut self) -> std::io::Result<u64> {
        if let Some(c) = self.chunk.take() {
            let _ = self.to_writer.send(Msg::Chunk(c, self.len));
        }
        let Stream {
            to_writer,
            writer,
            dropped,
            ..
        } = self;
        drop(to_writer);
        if let Some(w) = writer {
            w.join()
                .map_err(|_| std::io::Error::other("log writer panicked"))??;
        }
        Ok(dropped)
    }
}

fn write_loop(
    outputs: Vec<Option<File>>,
    hist: Option<File>,
    rx: Receiver<Msg>,
    back: SyncSender<Chunk>,
    fmt: Format,
) -> std::io::Result<()> {
    // The writer must never take the CPU from an I/O thread: it runs only on
    // otherwise idle CPU time (SCHED_IDLE needs no privilege).
    // SAFETY: sched_param is plain data; pid 0 is the calling thread.
    unsafe {
        let p = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &p);
    }
    // Nor disk time from measured I/O when the logs sit on the device under test:
    // the idle I/O priority class (no privilege needed either). Failure only means
    // the writer keeps the default priority.
    let _ = crate::prio::set_thread_ioprio(crate::prio::ioprio_value(3, 0));
    let mut outs: Vec<Option<BufWriter<File>>> = outputs
        .into_iter()
        .map(|f| f.map(|f| BufWriter::with_capacity(1 << 20, f)))
        .collect();
    let mut hist = hist.map(|f| BufWriter::with_capacity(1 << 16, f));
    let mut line: Vec<u8> = Vec::with_capacity(128);
    let mut num = itoa::Buffer::new();
    for msg in rx {
        match msg {
            Msg::Chunk(c, n) => {
                for e in &c[..n] {
                    for (k, out) in outs.iter_mut().enumerate() {
                        let Some(w) = out else { continue };
                        if e.mask & (1 << k) == 0 {
                            continue;
                        }
                        line.clear();
                        format_line(&mut line, &mut num, e, k, fmt);
                        w.write_all(&line)?;
                    }
                }
                let _ = back.try_send(c);
            }
            Msg::Hist(t, d, bs, bins) => {
                if let Some(w) = &mut hist {
                    line.clear();
                    for v in [t, d as u64, bs as u64].iter().chain(bins.iter()) {
                        if !line.is_empty() {
                            line.extend_from_slice(b", ");
                        }
                        line.extend_from_slice(num.format(*v).as_bytes());
                    }
                    line.push(b'\n');
                    w.write_all(&line)?;
                }
            }
        }
    }
    for w in outs.iter_mut().flatten() {
        w.flush()?;
    }
    if let Some(w) = &mut hist {
        w.flush()?;
    }
    Ok(())
}

/// `time, value[, value2], ddir, bs[, offset], prio` as fio writes it.
fn format_line(line: &mut Vec<u8>, num: &mut itoa::Buffer, e: &Entry, kind: usize, fmt: Format) {
    let t = if kind == SLAT {
        e.t_ms.saturating_sub(u64::from(e.issue_ago_ms))
    } else {
        e.t_ms
    };
    let mut field = |line: &mut Vec<u8>, v: u64, first: bool| {
        if !first {
            line.extend_from_slice(b", ");
        }
        line.extend_from_slice(num.format(v).as_bytes());
    };
    field(line, t, true);
    field(line, e.v[kind], false);
    if fmt.both {
        field(line, e.v2, false);
    }
    field(line, e.ddir as u64, false);
    field(line, e.bs as u64, false);
    if fmt.offset {
        field(line, e.offset, false);
    }
    if fmt.prio_hex {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        line.extend_from_slice(b", 0x");
        for shift in [12, 8, 4, 0] {
            line.push(HEX[((e.prio >> shift) & 0xf) as usize]);
        }
        line.push(b'\n');
    } else {
        line.extend_from_slice(if e.prio >> 13 == 1 {
            b", 1\n"
        } else {
            b", 0\n"
        });
    }
}

/// Averaging window for one log and direction.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u128,
    n: u64,
    max: u64,
}

/// Current and last-logged fio-geometry clat counts per direction.
type HistCounts = ([Vec<u64>; 3], [Vec<u64>; 3]);

/// All logs of one job.
pub struct JobLogs {
    stream: Stream,
    /// Bit k: log KINDS[k] is written.
    mask: u8,
    /// Histogram log: current and last-logged fio-geometry counts per direction.
    hist: Option<HistCounts>,
    hist_coarse: u32,
    hist_every_ms: u64,
    next_hist_ms: u64,
    avg_ms: u64,
    next_window_ms: u64,
    value: LogWindowValue,
    win: [[Window; 3]; 5],
    bytes_win: [u64; 3],
    ios_win: [u64; 3],
    epoch: Ticks,
    unix_epoch_ms: u64,
    use_unix: bool,
    clock: &'static Clock,
    paths: Vec<PathBuf>,
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

/// The log files a job writes, opened (truncated, or appended with per_job_logs=0):
/// one per kind in `KINDS` order, the histogram log, the entry mask and the paths.
type Opened = (Vec<Option<File>>, Option<File>, u8, Vec<PathBuf>);

fn open_files(o: &JobOptions, number: u32, sync_engine: bool) -> std::io::Result<Opened> {
    let append = !o.per_job_logs;
    let open = |p: &PathBuf| {
        OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(p)
    };
    let wanted: [(Option<&String>, bool); 5] = [
        (o.write_lat_log.as_ref(), !o.disable_lat),
        // fio creates the slat log for sync engines too; it stays empty.
        (o.write_lat_log.as_ref(), !o.disable_slat || sync_engine),
        (o.write_lat_log.as_ref(), !o.disable_clat),
        (o.write_bw_log.as_ref(), true),
        (o.write_iops_log.as_ref(), true),
    ];
    let mut outputs = Vec::new();
    let mut paths = Vec::new();
    let mut mask = 0u8;
    for (k, (prefix, on)) in wanted.iter().enumerate() {
        match prefix.filter(|_| *on) {
            Some(p) => {
                let path = log_path(p, &o.name, KINDS[k], number, o.per_job_logs);
                outputs.push(Some(open(&path)?));
                paths.push(path);
                // Sync engines have no slat: the file exists and stays empty.
                if k != SLAT || !sync_engine {
                    mask |= 1 << k;
                }
            }
            None => outputs.push(None),
        }
    }
    let hist_file = match &o.write_hist_log {
        Some(p) => {
            let path = log_path(p, &o.name, "clat_hist", number, o.per_job_logs);
            let f = open(&path)?;
            paths.push(path);
            Some(f)
        }
        None => None,
    };
    Ok((outputs, hist_file, mask, paths))
}

impl JobLogs {
    /// Open the logs a job asks for; None if it asks for none.
    pub fn open(
        o: &JobOptions,
        number: u32,
        sync_engine: bool,
        clock: &'static Clock,
    ) -> std::io::Result<Option<JobLogs>> {
        let fmt = Format {
            offset: o.log_offset,
            prio_hex: o.log_prio,
            both: o.log_avg_msec > 0 && o.log_window_value == LogWindowValue::Both,
        };
        let (outputs, hist_file, mask, paths) = open_files(o, number, sync_engine)?;
        if mask == 0 && hist_file.is_none() && paths.is_empty() {
            return Ok(None);
        }
        let bins = ioscope_stats::hist::FIO_BUCKETS;
        let hist = hist_file.is_some().then(|| {
            (
                std::array::from_fn(|_| vec![0; bins]),
                std::array::from_fn(|_| vec![0; bins]),
            )
        });
        let every = if o.log_hist_msec > 0 {
            o.log_hist_msec
        } else {
            1000
        };
        Ok(Some(JobLogs {
            stream: Stream::start(outputs, hist_file, fmt)?,
            mask,
            hist,
            hist_coarse: o.log_hist_coarseness,
            hist_every_ms: every,
            next_hist_ms: every,
            avg_ms: o.log_avg_msec,
            next_window_ms: o.log_avg_msec,
            value: o.log_window_value,
            win: [[Window::default(); 3]; 5],
            bytes_win: [0; 3],
            ios_win: [0; 3],
            epoch: clock.now(),
            unix_epoch_ms: crate::clock::unix_ms(),
            use_unix: o.log_unix_epoch,
            clock,
            paths,
        }))
    }

    /// Timestamps restart at 0 when measurement starts (after ramp_time).
    pub fn restart(&mut self, now: Ticks) {
        self.epoch = now;
        self.unix_epoch_ms = crate::clock::unix_ms();
        self.next_window_ms = self.avg_ms;
        self.next_hist_ms = self.hist_every_ms;
        self.win = [[Window::default(); 3]; 5];
        self.bytes_win = [0; 3];
        self.ios_win = [0; 3];
        if let Some((cur, prev)) = &mut self.hist {
            for d in 0..3 {
                cur[d].iter_mut().for_each(|c| *c = 0);
                prev[d].iter_mut().for_each(|c| *c = 0);
            }
        }
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

    /// A completed unit: one entry feeding the lat, slat, clat, bw and iops logs.
    #[inline]
    pub fn completion(
        &mut self,
        t: Ticks,
        u: &IoUnit,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        bytes: u64,
    ) {
        let ms = self.ms(t);
        let d = u.ddir.index().min(2);
        let bw = (bytes * 1_000_000).checked_div(clat).unwrap_or(0);
        let v = [lat, slat.unwrap_or(0), clat, bw, 1];
        if self.mask != 0 {
            if self.avg_ms == 0 {
                let mask = if slat.is_some() {
                    self.mask
                } else {
                    self.mask & !(1 << SLAT)
                };
                // Both stamps carry the same offset: their difference is exact.
                let issue_ago_ms = ms.saturating_sub(self.ms(u.issue));
                self.stream.push(Entry {
                    t_ms: self.stamp(ms),
                    v,
                    issue_ago_ms: issue_ago_ms.min(u64::from(u32::MAX)) as u32,
                    bs: u.len,
                    offset: u.offset,
                    v2: 0,
                    prio: u.ioprio,
                    ddir: d as u8,
                    mask,
                });
            } else {
                self.window_add(ms, d, &v, slat.is_some(), bytes);
            }
        }
        if let Some((cur, _)) = &mut self.hist {
            cur[d][ioscope_stats::hist::fio_index(clat)] += 1;
            if ms >= self.next_hist_ms {
                self.flush_hist(ms, u.len);
            }
        }
    }

    fn window_add(&mut self, ms: u64, d: usize, v: &[u64; 5], has_slat: bool, bytes: u64) {
        while ms >= self.next_window_ms {
            self.flush_windows(self.next_window_ms, 0xff);
            self.next_window_ms += self.avg_ms;
        }
        for k in [LAT, SLAT, CLAT] {
            if k == SLAT && !has_slat {
                continue;
            }
            let w = &mut self.win[k][d];
            w.sum += v[k] as u128;
            w.n += 1;
            w.max = w.max.max(v[k]);
        }
        self.bytes_win[d] += bytes;
        self.ios_win[d] += 1;
    }

    /// One row per log (of `kinds`) and direction with samples, stamped at the window end.
    fn flush_windows(&mut self, end_ms: u64, kinds: u8) {
        let secs = self.avg_ms as f64 / 1000.0;
        let stamp = self.stamp(end_ms);
        for k in 0..5 {
            if self.mask & kinds & (1 << k) == 0 {
                continue;
            }
            for d in 0..3 {
                let (avg, max) = match k {
                    BW if self.ios_win[d] > 0 => {
                        let v = (self.bytes_win[d] as f64 / 1024.0 / secs) as u64;
                        (v, v)
                    }
                    IOPS if self.ios_win[d] > 0 => {
                        let v = (self.ios_win[d] as f64 / secs) as u64;
                        (v, v)
                    }
                    LAT | SLAT | CLAT if self.win[k][d].n > 0 => {
                        let w = self.win[k][d];
                        ((w.sum / w.n as u128) as u64, w.max)
                    }
                    _ => continue,
                };
                let (value, v2) = match self.value {
                    LogWindowValue::Avg => (avg, 0),
                    LogWindowValue::Max => (max, 0),
                    LogWindowValue::Both => (avg, max),
                };
                let mut v = [0u64; 5];
                v[k] = value;
                self.stream.push(Entry {
                    t_ms: stamp,
                    v,
                    issue_ago_ms: 0,
                    bs: 0,
                    offset: 0,
                    v2,
                    prio: 0,
                    ddir: d as u8,
                    mask: 1 << k,
                });
            }
        }
        self.win = [[Window::default(); 3]; 5];
        self.bytes_win = [0; 3];
        self.ios_win = [0; 3];
    }

    fn flush_hist(&mut self, ms: u64, bs: u32) {
        let group = 1usize << self.hist_coarse;
        let stamp = self.stamp(ms);
        if let Some((cur, prev)) = &mut self.hist {
            for d in 0..3 {
                if cur[d] == prev[d] {
                    continue;
                }
                let bins: Vec<u64> = cur[d]
                    .chunks(group)
                    .zip(prev[d].chunks(group))
                    .map(|(c, p)| c.iter().sum::<u64>() - p.iter().sum::<u64>())
                    .collect();
                prev[d].copy_from_slice(&cur[d]);
                self.stream.hist(stamp, d as u8, bs, bins);
            }
        }
        self.next_hist_ms = ms + self.hist_every_ms;
    }

    /// Flush partial windows and close the logs; returns (paths, dropped entries).
    pub fn close(mut self, end: Ticks) -> (Vec<PathBuf>, u64) {
        let ms = self.ms(end);
        if self.avg_ms > 0 && self.ios_win.iter().any(|&n| n > 0) {
            // Like fio: the partial last window of latency logs is flushed, stamped at
            // the last window boundary; bw and iops logs get no partial row.
            let last = self
                .next_window_ms
                .saturating_sub(self.avg_ms)
                .max(self.avg_ms.min(ms));
            self.flush_windows(last, (1 << LAT) | (1 << SLAT) | (1 << CLAT));
        }
        if self.hist.is_some() {
            self.flush_hist(ms, 0);
        }
        let dropped = self.stream.close().unwrap_or(0);
        (self.paths, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &Entry, k: usize, fmt: Format) -> String {
        let mut l = Vec::new();
        format_line(&mut l, &mut itoa::Buffer::new(), e, k, fmt);
        String::from_utf8(l).unwrap()
    }

    #[test]
    fn entry_format_matches_fio() {
        let e = Entry {
            t_ms: 2,
            v: [2081844, 5, 2081839, 62, 1],
            bs: 131072,
            offset: 61440,
            prio: 0x2000,
            ..Default::default()
        };
        assert_eq!(
            line(
                &e,
                CLAT,
                Format {
                    offset: false,
                    prio_hex: true,
                    both: false
                }
            ),
            "2, 2081839, 0, 131072, 0x2000\n"
        );
        assert_eq!(
            line(
                &e,
                LAT,
                Format {
                    offset: true,
                    prio_hex: false,
                    both: false
                }
            ),
            "2, 2081844, 0, 131072, 61440, 1\n"
        );
        assert_eq!(
            line(
                &e,
                IOPS,
                Format {
                    offset: true,
                    prio_hex: false,
                    both: false
                }
            ),
            "2, 1, 0, 131072, 61440, 1\n"
        );
    }

    #[test]
    fn slat_line_is_stamped_at_submission_in_epoch_ms() {
        // log_unix_epoch=1: epoch ms do not fit 32 bits; the submission time must survive.
        let e = Entry {
            t_ms: 1_700_000_000_123,
            issue_ago_ms: 7,
            v: [20, 5, 15, 62, 1],
            bs: 4096,
            ..Default::default()
        };
        let fmt = Format {
            offset: false,
            prio_hex: false,
            both: false,
        };
        assert_eq!(line(&e, SLAT, fmt), "1700000000116, 5, 0, 4096, 0\n");
        assert_eq!(line(&e, CLAT, fmt), "1700000000123, 15, 0, 4096, 0\n");
    }

    #[test]
    fn stream_writes_every_entry_to_every_log() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<Option<File>> = (0..5)
            .map(|k| {
                if k == SLAT {
                    None
                } else {
                    Some(File::create(dir.path().join(KINDS[k])).unwrap())
                }
            })
            .collect();
        let mut s = Stream::start(
            files,
            None,
            Format {
                offset: false,
                prio_hex: false,
                both: false,
            },
        )
        .unwrap();
        let n = CHUNK_ENTRIES * 6 + 5;
        for i in 0..n {
            // This checks what the writer writes, not how fast: wait for a free
            // chunk instead of dropping (a loaded machine formats slowly).
            if s.chunk.is_none() {
                s.chunk = Some(s.from_writer.recv().unwrap());
                s.len = 0;
            }
            s.push(Entry {
                t_ms: i as u64,
                v: [1, 2, 3, 4, 1],
                mask: 0b11101,
                ..Default::default()
            });
        }
        let dropped = s.close().unwrap();
        assert_eq!(dropped, 0);
        for k in [LAT, CLAT, BW, IOPS] {
            let text = std::fs::read_to_string(dir.path().join(KINDS[k])).unwrap();
            assert_eq!(text.lines().count(), n, "{}", KINDS[k]);
        }
    }
}
