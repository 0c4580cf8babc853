//! I/O logs (write_lat_log, write_bw_log, write_iops_log, write_hist_log) in fio's
//! formats — every I/O logged, the measurement undisturbed, memory bounded.
//!
//! Per-I/O logs are captured, not formatted: the job thread stores one 40-byte record
//! per I/O ([`binary::Rec`]) into a pre-faulted chunk — a few stores, no allocation,
//! lock or system call. A full chunk goes to the job's writer thread, which encodes it
//! compactly (a few bytes per I/O), hands the chunk back and writes the bytes to the
//! job's binary log. Nothing is ever dropped: if the writer cannot keep up (the
//! disk under the log is slower than the I/O being measured), the job waits for a
//! chunk between two I/Os — never inside one — and the waits are reported. Memory is
//! CHUNKS × CHUNK_RECORDS × 40 bytes = 20 MiB per job, whatever the run length.
//!
//! After the I/O ends, the records are turned into fio's text logs in one streaming
//! pass ([`text::convert`]); with `--log-format=binary` the binary log is kept instead
//! (`ioscope log convert` makes the text later), with `both`, both.
//!
//! Window rows (log_avg_msec) and histogram rows (write_hist_log) are few: the writer
//! thread formats them as they come, and per-I/O work for them is a few adds.

use crate::clock::{Clock, Ticks};
use ioscope_engine::IoUnit;
use ioscope_iolog::binary::{self, Meta, Rec};
use ioscope_iolog::fz;
use ioscope_iolog::kind::{binary_path, log_path, LogFormat, LogKind};
use ioscope_iolog::text::{self, format_line, Format, Line, BW, CLAT, IOPS, LAT, SLAT};
use ioscope_options::{JobOptions, LogWindowValue};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Records per chunk (2.5 MiB) and chunks per job.
pub const CHUNK_RECORDS: usize = 65_536;
pub const CHUNKS: usize = 8;

type Chunk = Box<[Rec]>;

enum Msg {
    Records(Chunk, usize),
    /// A window row for text log `kind`.
    Row(usize, Line),
    Hist(u64, u8, u32, Vec<u64>),
    /// The log's new time zero (ticks); sent before any record measured from it.
    Epoch(Ticks),
}

fn new_chunk() -> Chunk {
    let mut c = vec![Rec::default(); CHUNK_RECORDS].into_boxed_slice();
    // Touch every page now so appends never page-fault on the I/O path.
    for i in (0..c.len()).step_by(4096 / binary::RECORD_SIZE) {
        // SAFETY: in bounds; volatile so the write is not elided.
        unsafe { std::ptr::write_volatile(&mut c[i], Rec::default()) };
    }
    c
}

/// What the writer thread owns and hands back when it ends.
struct Writer {
    /// Records carry raw clock ticks; the writer makes them ns since the log's time
    /// zero, `epoch` (moved by `Msg::Epoch` when measurement starts after ramp_time).
    clock: &'static Clock,
    epoch: Ticks,
    spill: Option<File>,
    rows: Vec<Option<BufWriter<File>>>,
    hist: Option<BufWriter<File>>,
    fmt: Format,
    records: u64,
}

/// The record stream of one job with its writer thread.
struct Stream {
    chunk: Option<Chunk>,
    len: usize,
    to_writer: SyncSender<Msg>,
    from_writer: Receiver<Chunk>,
    writer: Option<JoinHandle<std::io::Result<Writer>>>,
    stalls: u64,
    stall: Duration,
}

impl Stream {
    fn start(w: Writer) -> std::io::Result<Stream> {
        let (to_writer, rx) = sync_channel::<Msg>(CHUNKS + 256);
        let (back, from_writer) = sync_channel::<Chunk>(CHUNKS);
        let with_records = w.spill.is_some();
        if with_records {
            for _ in 1..CHUNKS {
                // The channel has room for every chunk: this cannot block.
                let _ = back.send(new_chunk());
            }
        }
        let writer = std::thread::Builder::new()
            .name("ioscope-log".into())
            .spawn(move || write_loop(w, rx, back))?;
        Ok(Stream {
            chunk: with_records.then(new_chunk),
            len: 0,
            to_writer,
            from_writer,
            writer: Some(writer),
            stalls: 0,
            stall: Duration::ZERO,
        })
    }

    #[inline(always)]
    fn push(&mut self, r: Rec) {
        if let Some(c) = &mut self.chunk {
            // SAFETY: len < CHUNK_RECORDS == c.len(): hand_off takes the chunk away the
            // moment len reaches its end.
            unsafe { *c.get_unchecked_mut(self.len) = r };
            self.len += 1;
            if self.len == CHUNK_RECORDS {
                self.hand_off();
            }
        }
    }

    /// Send the full chunk to the writer and take an empty one, waiting for it if the
    /// writer is behind (never dropping).
    #[cold]
    fn hand_off(&mut self) {
        let Some(c) = self.chunk.take() else { return };
        let n = std::mem::take(&mut self.len);
        if self.to_writer.send(Msg::Records(c, n)).is_err() {
            // The writer is gone (it failed): keep recording into a fresh chunk; the
            // error is reported when the logs close.
            self.chunk = Some(new_chunk());
            return;
        }
        self.chunk = match self.from_writer.try_recv() {
            Ok(c) => Some(c),
            Err(_) => {
                let t = Instant::now();
                let c = self.from_writer.recv().ok();
                self.stalls += 1;
                self.stall += t.elapsed();
                c.or_else(|| Some(new_chunk()))
            }
        };
    }

    /// Records from now on count their time from `t`. Ramp-time completions are not
    /// recorded, so no record of the old epoch is waiting in the current chunk.
    fn epoch(&mut self, t: Ticks) {
        let _ = self.to_writer.send(Msg::Epoch(t));
    }

    fn row(&mut self, kind: usize, l: Line) {
        let _ = self.to_writer.send(Msg::Row(kind, l));
    }

    fn hist(&mut self, t_ms: u64, ddir: u8, bs: u32, bins: Vec<u64>) {
        let _ = self.to_writer.send(Msg::Hist(t_ms, ddir, bs, bins));
    }

    /// Flush the partial chunk and wait for the writer.
    fn close(mut self) -> std::io::Result<Writer> {
        if let Some(c) = self.chunk.take() {
            if self.len > 0 {
                let _ = self.to_writer.send(Msg::Records(c, self.len));
            }
        }
        let Stream {
            to_writer, writer, ..
        } = self;
        drop(to_writer);
        match writer {
            Some(w) => w
                .join()
                .map_err(|_| std::io::Error::other("log writer panicked"))?,
            None => Err(std::io::Error::other("no log writer")),
        }
    }
}

fn write_loop(
    mut w: Writer,
    rx: Receiver<Msg>,
    back: SyncSender<Chunk>,
) -> std::io::Result<Writer> {
    // The writer must not take the CPU from an I/O thread: it runs on otherwise idle
    // CPU time (SCHED_IDLE needs no privilege). The job waits for it only when all
    // chunks are full, between I/Os.
    // SAFETY: sched_param is plain data; pid 0 is the calling thread.
    unsafe {
        let p = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &p);
    }
    // Nor disk time from measured I/O when the logs sit on the device under test.
    let _ = crate::sys::prio::set_thread_ioprio(crate::sys::prio::ioprio_value(3, 0));
    let mut spill = w.spill.take().map(|f| BufWriter::with_capacity(1 << 21, f));
    let mut enc = binary::Encoder::new(w.fmt.offset);
    let mut bytes: Vec<u8> = Vec::with_capacity(CHUNK_RECORDS * 12);
    let mut line: Vec<u8> = Vec::with_capacity(128);
    let mut num = itoa::Buffer::new();
    let mut result = Ok(());
    for msg in rx {
        match msg {
            Msg::Records(c, n) => {
                bytes.clear();
                for r in &c[..n] {
                    let mut r = *r;
                    r.t_ns = w.clock.ns(r.t_ns.saturating_sub(w.epoch));
                    enc.push(&mut bytes, &r);
                }
                // The chunk is free again before its bytes reach the disk.
                let _ = back.try_send(c);
                if let (Some(s), Ok(())) = (&mut spill, &result) {
                    result = s.write_all(&bytes);
                    w.records += n as u64;
                }
            }
            Msg::Row(k, l) => {
                if let Some(out) = w.rows.get_mut(k).and_then(Option::as_mut) {
                    line.clear();
                    format_line(&mut line, &mut num, &l, w.fmt);
                    if result.is_ok() {
                        result = out.write_all(&line);
                    }
                }
            }
            Msg::Epoch(t) => w.epoch = t,
            Msg::Hist(t, d, bs, bins) => {
                if let Some(h) = &mut w.hist {
                    line.clear();
                    for v in [t, d as u64, bs as u64].iter().chain(bins.iter()) {
                        if !line.is_empty() {
                            line.extend_from_slice(b", ");
                        }
                        line.extend_from_slice(num.format(*v).as_bytes());
                    }
                    line.push(b'\n');
                    if result.is_ok() {
                        result = h.write_all(&line);
                    }
                }
            }
        }
    }
    result?;
    if let Some(s) = spill {
        w.spill = Some(s.into_inner().map_err(|e| e.into_error())?);
    }
    for r in w.rows.iter_mut().flatten() {
        r.flush()?;
    }
    if let Some(h) = &mut w.hist {
        h.flush()?;
    }
    Ok(w)
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
    /// Bit k: log k (text::LAT …) is written.
    mask: u8,
    /// Per-I/O records are captured (no log_avg_msec).
    per_io: bool,
    /// Per-I/O records and nothing else per I/O: the whole completion is one store.
    fast: bool,
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
    /// log_alternate_epoch_clock_id: the clock whose epoch stamps the logs.
    epoch_clock: i32,
    use_unix: bool,
    clock: &'static Clock,
    paths: Vec<PathBuf>,
    /// log_store_compressed: the chunk size of the .fz files, the lines' columns, and
    /// the CPUs the compression runs on (log_compression_cpus; empty: any).
    compress: Option<(usize, fz::Columns, Vec<usize>)>,
    meta: Meta,
    spill_path: Option<PathBuf>,
    format: LogFormat,
    /// The per-I/O text logs, opened (truncated) before the run, written after it.
    texts: Vec<Option<File>>,
}

fn open(p: &PathBuf, append: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(p)
}

/// What a job logs: per kind the prefix (lat, slat, clat, bw, iops) if on.
fn wanted(o: &JobOptions, sync_engine: bool) -> [Option<&String>; 5] {
    let on = [
        !o.disable_lat,
        // fio creates the slat log for sync engines too; it stays empty.
        !o.disable_slat || sync_engine,
        !o.disable_clat,
        true,
        true,
    ];
    std::array::from_fn(|k| ioscope_iolog::KINDS[k].kind.prefix(o).filter(|_| on[k]))
}

impl JobLogs {
    /// Open the logs a job asks for (before any I/O); None if it asks for none.
    pub fn open(
        o: &JobOptions,
        number: u32,
        sync_engine: bool,
        clock: &'static Clock,
        format: LogFormat,
    ) -> std::io::Result<Option<JobLogs>> {
        let want = wanted(o, sync_engine);
        let per_io = o.log_avg_msec == 0;
        let append = !o.per_job_logs;
        let mut paths = Vec::new();
        let mut mask = 0u8;
        let mut meta = Meta {
            job: o.name.clone(),
            number,
            offset: o.log_offset,
            prio_hex: o.log_prio,
            ..Meta::default()
        };
        let mut rows: Vec<Option<BufWriter<File>>> = (0..5).map(|_| None).collect();
        let mut texts: Vec<Option<File>> = (0..5).map(|_| None).collect();
        for (k, prefix) in want.iter().enumerate() {
            let Some(p) = prefix else { continue };
            let path = log_path(
                p,
                &o.name,
                ioscope_iolog::KINDS[k].kind,
                number,
                o.per_job_logs,
            );
            // Sync engines have no slat: the file exists and stays empty.
            if k != SLAT || !sync_engine {
                mask |= 1 << k;
            }
            if per_io {
                meta.logs[k] = Some(path.clone());
                if format != LogFormat::Binary {
                    texts[k] = Some(open(&path, append)?);
                    paths.push(path);
                }
            } else {
                rows[k] = Some(BufWriter::with_capacity(1 << 16, open(&path, append)?));
                paths.push(path);
            }
        }
        let hist = match &o.write_hist_log {
            Some(p) => {
                let path = log_path(p, &o.name, LogKind::ClatHist, number, o.per_job_logs);
                let f = open(&path, append)?;
                paths.push(path);
                Some(BufWriter::with_capacity(1 << 16, f))
            }
            None => None,
        };
        if mask == 0 && hist.is_none() && paths.is_empty() {
            return Ok(None);
        }
        let spill_path = (per_io && mask != 0).then(|| {
            let prefix = want
                .iter()
                .flatten()
                .next()
                .map(|s| s.as_str())
                .unwrap_or("");
            binary_path(prefix, &o.name, number)
        });
        let spill = match &spill_path {
            Some(p) => {
                let mut f = File::create(p)?;
                meta.write_header(&mut f)?;
                Some(f)
            }
            None => None,
        };
        if format != LogFormat::Text {
            paths.extend(spill_path.iter().cloned());
        }
        let unix_epoch_ms =
            crate::clock::epoch_ms(o.log_alternate_epoch_clock_id).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "log_alternate_epoch_clock_id={}: clock_gettime: {e}",
                        o.log_alternate_epoch_clock_id
                    ),
                )
            })?;
        if o.log_store_compressed && (!o.per_job_logs || o.write_hist_log.is_some()) {
            return Err(std::io::Error::other(
                "log_store_compressed with per_job_logs=0 or write_hist_log is not supported yet",
            ));
        }
        let chunk = if o.log_compression > 0 {
            o.log_compression as usize
        } else {
            fz::DEFAULT_CHUNK
        };
        let columns = fz::Columns {
            offset: o.log_offset,
            prio_hex: o.log_prio,
        };
        let cpus = o
            .log_compression_cpus
            .as_ref()
            .map(|l| l.0.clone())
            .unwrap_or_default();
        let compress = o.log_store_compressed.then_some((chunk, columns, cpus));
        let bins = ioscope_stats::hist::FIO_BUCKETS;
        let hist_counts = hist.is_some().then(|| {
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
        let epoch = clock.now();
        let writer = Writer {
            clock,
            epoch,
            spill,
            rows,
            hist,
            fmt: Format {
                offset: o.log_offset,
                prio_hex: o.log_prio,
                both: o.log_avg_msec > 0 && o.log_window_value == LogWindowValue::Both,
            },
            records: 0,
        };
        Ok(Some(JobLogs {
            stream: Stream::start(writer)?,
            mask,
            per_io,
            fast: per_io && mask != 0 && hist_counts.is_none(),
            hist: hist_counts,
            hist_coarse: o.log_hist_coarseness,
            hist_every_ms: every,
            next_hist_ms: every,
            avg_ms: o.log_avg_msec,
            next_window_ms: o.log_avg_msec,
            value: o.log_window_value,
            win: [[Window::default(); 3]; 5],
            bytes_win: [0; 3],
            ios_win: [0; 3],
            epoch,
            unix_epoch_ms,
            epoch_clock: o.log_alternate_epoch_clock_id,
            use_unix: o.log_unix_epoch,
            clock,
            paths,
            compress,
            meta,
            spill_path,
            format,
            texts,
        }))
    }

    /// Timestamps restart at 0 when measurement starts (after ramp_time).
    pub fn restart(&mut self, now: Ticks) {
        self.epoch = now;
        self.stream.epoch(now);
        self.unix_epoch_ms = crate::clock::epoch_ms(self.epoch_clock).unwrap_or(self.unix_epoch_ms);
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

    /// A completed unit: its record (per-I/O logs), window sums, histogram counts.
    /// Per-I/O logs alone are one inlined store of a record holding clock ticks (the
    /// writer thread turns them into ns).
    #[inline(always)]
    pub fn completion(
        &mut self,
        t: Ticks,
        u: &IoUnit,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        bytes: u64,
    ) {
        if self.fast {
            // Raw ticks: the writer subtracts the epoch and converts to ns.
            let d = u.ddir.index() as u8;
            let r = Rec::new(t, u.offset, clat, slat, u.len as u64, u.ioprio, d);
            self.stream.push(r);
            return;
        }
        self.completion_slow(t, u, slat, clat, lat, bytes);
    }

    #[inline(never)]
    fn completion_slow(
        &mut self,
        t: Ticks,
        u: &IoUnit,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        bytes: u64,
    ) {
        let d = u.ddir.index().min(2);
        if self.per_io {
            if self.mask != 0 {
                let r = Rec::new(t, u.offset, clat, slat, u.len as u64, u.ioprio, d as u8);
                self.stream.push(r);
            }
        } else if self.mask != 0 {
            let ms = self.ms(t);
            let bw = (bytes * 1_000_000).checked_div(clat).unwrap_or(0);
            self.window_add(
                ms,
                d,
                &[lat, slat.unwrap_or(0), clat, bw, 1],
                slat.is_some(),
                bytes,
            );
        }
        if let Some((cur, _)) = &mut self.hist {
            cur[d][ioscope_stats::hist::fio_index(clat)] += 1;
            let ms = self.clock.delta_ns(self.epoch, t) / 1_000_000;
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
                let (value, value2) = match self.value {
                    LogWindowValue::Avg => (avg, 0),
                    LogWindowValue::Max => (max, 0),
                    LogWindowValue::Both => (avg, max),
                };
                let row = Line {
                    t_ms: stamp,
                    value,
                    value2,
                    ddir: d as u8,
                    ..Line::default()
                };
                self.stream.row(k, row);
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

    /// The I/O is over: flush partial windows, stop the writer. The per-I/O text logs
    /// are written by [`Closed::finish`], after every job of the phase has ended.
    pub fn close(mut self, end: Ticks) -> Closed {
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
        let (stalls, stall) = (self.stream.stalls, self.stream.stall);
        let writer = self.stream.close();
        let mut meta = self.meta;
        meta.unix_epoch_ms = self.use_unix.then_some(self.unix_epoch_ms);
        Closed {
            writer,
            meta,
            spill_path: self.spill_path,
            format: self.format,
            texts: self.texts,
            paths: self.paths,
            compress: self.compress,
            stalls,
            stall,
        }
    }
}

/// A job's logs after its I/O: the records still to turn into text.
pub struct Closed {
    writer: std::io::Result<Writer>,
    meta: Meta,
    spill_path: Option<PathBuf>,
    format: LogFormat,
    texts: Vec<Option<File>>,
    /// Every file the job's logs write.
    pub paths: Vec<PathBuf>,
    /// log_store_compressed: the chunk size of the .fz files, the lines' columns, and
    /// the CPUs the compression runs on (log_compression_cpus; empty: any).
    compress: Option<(usize, fz::Columns, Vec<usize>)>,
    /// Times the job waited for the writer, and for how long in all.
    pub stalls: u64,
    pub stall: Duration,
}

impl Closed {
    /// Records captured.
    pub fn records(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.records)
    }

    /// Write the per-I/O text logs from the binary log (and keep or remove it, as
    /// `--log-format` says); `progress` hears (records done, in all).
    pub fn finish(mut self, progress: &mut dyn FnMut(u64, u64)) -> std::io::Result<()> {
        let compress = self.compress.take();
        let texts: Vec<PathBuf> = self
            .paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .cloned()
            .collect();
        self.write_text(progress)?;
        // log_store_compressed: each text log becomes NAME.log.fz.
        if let Some((chunk, columns, cpus)) = compress {
            on_cpus(&cpus, || {
                for p in &texts {
                    fz::compress_file(p, chunk, columns)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    fn write_text(self, progress: &mut dyn FnMut(u64, u64)) -> std::io::Result<()> {
        let mut w = self.writer?;
        let (Some(path), Some(mut spill)) = (self.spill_path, w.spill.take()) else {
            return Ok(());
        };
        let mut meta = self.meta;
        meta.records = w.records;
        meta.write_header(&mut spill)?;
        if self.format == LogFormat::Binary {
            return spill.sync_all();
        }
        drop(spill);
        let outs: Vec<Option<BufWriter<File>>> = self
            .texts
            .into_iter()
            .map(|f| f.map(|f| BufWriter::with_capacity(1 << 20, f)))
            .collect();
        text::convert(&path, outs, progress)?;
        if self.format == LogFormat::Text {
            std::fs::remove_file(&path)?;
        }
        Ok(())
    }
}

/// Run `work` on a thread allowed only `cpus` (log_compression_cpus); with none given,
/// on the calling thread.
fn on_cpus(
    cpus: &[usize],
    work: impl FnOnce() -> std::io::Result<()> + Send,
) -> std::io::Result<()> {
    if cpus.is_empty() {
        return work();
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: cpu_set_t is plain data; CPU_SET stays inside it (ids < 1024 are
            // checked by parse_cpu_list) and the call affects this thread only.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in cpus {
                    libc::CPU_SET(c, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                    let e = std::io::Error::last_os_error();
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("log_compression_cpus: sched_setaffinity: {e}"),
                    ));
                }
            }
            work()
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("log compression thread panicked")))
    })
}
