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
//! CHUNKS × CHUNK_RECORDS × 40 bytes = 20 MiB per job, whatever the run length (less
//! when many logging jobs share little memory: the plan settles the chunk size).
//!
//! After the I/O ends, the records are turned into fio's text logs in one streaming
//! pass (`ioscope_iolog::text::convert`); with `--log-format=binary` the binary log is kept instead
//! (`ioscope log convert` makes the text later), with `both`, both.
//!
//! Window rows (log_avg_msec) and histogram rows (write_hist_log) are few: the writer
//! thread formats them as they come, and per-I/O work for them is a few adds.

mod closed;
mod staging;
pub(crate) use closed::Compress;
mod stream;
mod windows;

use crate::clock::{Clock, Ticks};
use ioscope_engine::IoUnit;
use ioscope_iolog::binary::{Meta, Rec};
use ioscope_iolog::fz;
use ioscope_iolog::kind::PER_IO;
use ioscope_iolog::set::LogSet;
use ioscope_iolog::text::Format;
use ioscope_iolog::LogFormat;
use ioscope_options::{JobOptions, LogWindowValue};
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use stream::{Stream, Writer};
use windows::{HistRows, Out, Sample, Windows};

pub(crate) use closed::Closed;
pub(crate) use stream::{CHUNKS, CHUNK_RECORDS, MIN_CHUNK_RECORDS};

/// All logs of one job.
pub struct JobLogs {
    stream: Stream,
    /// Bit k: log k (text::LAT …) is written.
    mask: u8,
    /// Per-I/O records and nothing else per I/O: the whole completion is one store.
    fast: bool,
    /// log_avg_msec's window averages (None: a line per I/O).
    windows: Option<Windows>,
    /// write_hist_log's rows.
    hist: Option<HistRows>,
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

fn open(p: &std::path::Path, append: bool) -> std::io::Result<File> {
    ioscope_fs::open_output(p, append)
}

/// The files of a job's logs, opened (truncated) before the run.
struct Files {
    /// Window rows (log_avg_msec) per kind, written as the run goes.
    rows: Vec<Option<BufWriter<File>>>,
    /// Per-I/O text logs per kind, written after the run from the binary log.
    texts: Vec<Option<File>>,
    hist: Option<BufWriter<File>>,
    /// The binary log of per-I/O records, its header written.
    spill: Option<File>,
    /// Every file the logs write.
    paths: Vec<PathBuf>,
}

impl Files {
    fn open(set: &LogSet, meta: &Meta, format: LogFormat) -> std::io::Result<Files> {
        let mut f = Files {
            rows: (0..PER_IO).map(|_| None).collect(),
            texts: (0..PER_IO).map(|_| None).collect(),
            hist: None,
            spill: None,
            paths: Vec::new(),
        };
        for (k, path) in set.files.iter().enumerate() {
            let Some(path) = path else { continue };
            if set.windows {
                f.rows[k] = Some(BufWriter::with_capacity(1 << 16, open(path, set.append)?));
            } else if format == LogFormat::Binary {
                continue;
            } else {
                f.texts[k] = Some(open(path, set.append)?);
            }
            f.paths.push(path.clone());
        }
        if let Some(path) = &set.hist {
            f.hist = Some(BufWriter::with_capacity(1 << 16, open(path, set.append)?));
            f.paths.push(path.clone());
        }
        if set.mask == 0 && f.hist.is_none() && f.paths.is_empty() {
            return Ok(f);
        }
        if let Some(p) = &set.binary {
            let mut spill = ioscope_fs::create_output(p)?;
            meta.write_header(&mut spill)?;
            f.spill = Some(spill);
            if format != LogFormat::Text {
                f.paths.push(p.clone());
            }
        }
        Ok(f)
    }

    fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.hist.is_none() && self.spill.is_none()
    }
}

/// The binary log's header: the job, its number, the text logs it makes.
fn meta_of(o: &JobOptions, set: &LogSet, number: u32) -> Meta {
    let mut meta = Meta {
        job: o.name.clone(),
        number,
        offset: o.log_offset,
        prio_hex: o.log_prio,
        issue_time: o.log_issue_time,
        both: window_both(o),
        ..Meta::default()
    };
    if !set.windows {
        meta.logs = set.files.clone();
    }
    meta
}

/// log_store_compressed: the chunk size of the .fz files, the lines' columns and the
/// CPUs the compression runs on.
fn compression(o: &JobOptions) -> Option<(usize, fz::Columns, Vec<usize>)> {
    let chunk = if o.log_compression > 0 {
        o.log_compression as usize
    } else {
        fz::DEFAULT_CHUNK
    };
    let columns = fz::Columns {
        offset: o.log_offset,
        prio_hex: o.log_prio,
        max: window_both(o),
        issue: o.log_issue_time,
    };
    let cpus = o
        .log_compression_cpus
        .as_ref()
        .map(|l| l.0.clone())
        .unwrap_or_default();
    o.log_store_compressed.then_some((chunk, columns, cpus))
}

/// log_window_value=both: the text rows carry a second value, the window's maximum
/// (0 in per-I/O rows, as fio 3.42 writes them).
fn window_both(o: &JobOptions) -> bool {
    o.log_window_value == LogWindowValue::Both
}

/// The Unix time (ms) of the logs' time zero, by log_alternate_epoch_clock_id.
fn unix_epoch_ms(o: &JobOptions) -> std::io::Result<u64> {
    crate::clock::epoch_ms(o.log_alternate_epoch_clock_id).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "log_alternate_epoch_clock_id={}: clock_gettime: {e}",
                o.log_alternate_epoch_clock_id
            ),
        )
    })
}

impl JobLogs {
    /// Open the logs the plan settled for a job (before any I/O), its record stream in
    /// chunks of `records`; None if it has none.
    pub fn open(
        o: &JobOptions,
        set: &LogSet,
        records: usize,
        number: u32,
        clock: &'static Clock,
        format: LogFormat,
    ) -> std::io::Result<Option<JobLogs>> {
        let meta = meta_of(o, set, number);
        let staged;
        let set = match o.log_store_compressed {
            true => {
                staged = staging::staged_set(set);
                &staged
            }
            false => set,
        };
        let files = Files::open(set, &meta, format)?;
        if files.is_empty() {
            return Ok(None);
        }
        let unix_epoch_ms = unix_epoch_ms(o)?;
        let hist = files.hist.is_some().then(|| HistRows::new(o));
        let epoch = clock.now();
        let writer = Writer {
            clock,
            epoch,
            spill: files.spill,
            rows: files.rows,
            hist: files.hist,
            fmt: Format {
                offset: o.log_offset,
                prio_hex: o.log_prio,
                both: window_both(o),
                issue: o.log_issue_time,
            },
            records: 0,
        };
        let per_io = !set.windows;
        Ok(Some(JobLogs {
            stream: Stream::start(writer, records)?,
            mask: set.mask,
            fast: per_io && set.mask != 0 && hist.is_none(),
            windows: set.windows.then(|| Windows::new(o, set.mask)),
            hist,
            epoch,
            unix_epoch_ms,
            epoch_clock: o.log_alternate_epoch_clock_id,
            use_unix: o.log_unix_epoch,
            clock,
            paths: files.paths,
            compress: compression(o),
            meta,
            spill_path: set.binary.clone(),
            format,
            texts: files.texts,
        }))
    }

    /// Timestamps restart at 0 when measurement starts (after ramp_time).
    pub fn restart(&mut self, now: Ticks) {
        self.epoch = now;
        self.stream.epoch(now);
        self.unix_epoch_ms = crate::clock::epoch_ms(self.epoch_clock).unwrap_or(self.unix_epoch_ms);
        if let Some(w) = &mut self.windows {
            w.restart();
        }
        if let Some(h) = &mut self.hist {
            h.restart();
        }
    }

    #[inline(always)]
    fn ms(&self, t: Ticks) -> u64 {
        self.clock.delta_ns(self.epoch, t) / 1_000_000
    }

    /// What rows add to their ms: the Unix time of the logs' zero with
    /// log_unix_epoch, else 0.
    #[inline(always)]
    fn base(&self) -> u64 {
        if self.use_unix {
            self.unix_epoch_ms
        } else {
            0
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

    /// Everything but the per-I/O record alone: window sums, histogram counts.
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
        let (ms, base) = (self.ms(t), self.base());
        if self.mask != 0 {
            match &mut self.windows {
                None => {
                    let r = Rec::new(t, u.offset, clat, slat, u.len as u64, u.ioprio, d as u8);
                    self.stream.push(r);
                }
                Some(w) => {
                    let bw = (bytes * 1_000_000).checked_div(clat).unwrap_or(0);
                    let x = Sample {
                        d,
                        v: [lat, slat.unwrap_or(0), clat, bw, 1],
                        has_slat: slat.is_some(),
                        bytes,
                    };
                    let mut out = Out {
                        s: &mut self.stream,
                        base,
                    };
                    w.add(&mut out, ms, &x);
                }
            }
        }
        if let Some(h) = &mut self.hist {
            h.add(&mut self.stream, base, ms, d, clat, u.len);
        }
    }

    /// The I/O is over: flush partial windows, stop the writer. The per-I/O text logs
    /// are written by [`Closed::finish`], after every job of the phase has ended.
    pub fn close(mut self, end: Ticks) -> Closed {
        let (ms, base) = (self.ms(end), self.base());
        if let Some(w) = &mut self.windows {
            w.finish(&mut self.stream, base, ms);
        }
        if let Some(h) = &mut self.hist {
            let bs = h.last_bs;
            h.flush(&mut self.stream, base, ms, bs);
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
