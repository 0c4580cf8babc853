//! The record stream of one job: pre-faulted chunks of records filled by the job
//! thread and handed to a writer thread, which encodes them into the binary log and
//! writes window and histogram rows as they come.

use crate::clock::{Clock, Ticks};
use ioscope_iolog::binary::{self, Rec};
use ioscope_iolog::text::{format_line, Format, Line};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Records per chunk (2.5 MiB) and chunks per job.
pub const CHUNK_RECORDS: usize = 65_536;
pub const CHUNKS: usize = 8;
/// The fewest records per chunk the plan chooses when memory is short (160 KiB).
pub const MIN_CHUNK_RECORDS: usize = 4_096;

type Chunk = Box<[Rec]>;

enum Msg {
    Records(Chunk, usize),
    /// A window row for text log `kind`.
    Row(usize, Line),
    Hist(u64, u8, u32, Vec<u64>),
    /// The log's new time zero (ticks); sent before any record measured from it.
    Epoch(Ticks),
}

fn new_chunk(records: usize) -> Chunk {
    let mut c = vec![Rec::default(); records.max(1)].into_boxed_slice();
    // Touch every page now so appends never page-fault on the I/O path.
    for i in (0..c.len()).step_by(4096 / binary::RECORD_SIZE) {
        // SAFETY: in bounds; volatile so the write is not elided.
        unsafe { std::ptr::write_volatile(&mut c[i], Rec::default()) };
    }
    c
}

/// What the writer thread owns and hands back when it ends.
pub(super) struct Writer {
    /// Records carry raw clock ticks; the writer makes them ns since the log's time
    /// zero, `epoch` (moved by `Msg::Epoch` when measurement starts after ramp_time).
    pub clock: &'static Clock,
    pub epoch: Ticks,
    pub spill: Option<File>,
    pub rows: Vec<Option<BufWriter<File>>>,
    pub hist: Option<BufWriter<File>>,
    pub fmt: Format,
    pub records: u64,
}

/// The record stream of one job with its writer thread.
pub(super) struct Stream {
    chunk: Option<Chunk>,
    len: usize,
    to_writer: SyncSender<Msg>,
    from_writer: Receiver<Chunk>,
    writer: Option<JoinHandle<std::io::Result<Writer>>>,
    pub stalls: u64,
    pub stall: Duration,
}

impl Stream {
    pub fn start(w: Writer, records: usize) -> std::io::Result<Stream> {
        let (to_writer, rx) = sync_channel::<Msg>(CHUNKS + 256);
        let (back, from_writer) = sync_channel::<Chunk>(CHUNKS);
        let with_records = w.spill.is_some();
        if with_records {
            for _ in 1..CHUNKS {
                // The channel has room for every chunk: this cannot block.
                let _ = back.send(new_chunk(records));
            }
        }
        let writer = std::thread::Builder::new()
            .name("ioscope-log".into())
            .spawn(move || write_loop(w, rx, back))?;
        Ok(Stream {
            chunk: with_records.then(|| new_chunk(records)),
            len: 0,
            to_writer,
            from_writer,
            writer: Some(writer),
            stalls: 0,
            stall: Duration::ZERO,
        })
    }

    #[inline(always)]
    pub fn push(&mut self, r: Rec) {
        if let Some(c) = &mut self.chunk {
            // SAFETY: len < c.len(): hand_off takes the chunk away the moment len
            // reaches its end.
            unsafe { *c.get_unchecked_mut(self.len) = r };
            self.len += 1;
            if self.len == c.len() {
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
            self.chunk = Some(new_chunk(n));
            return;
        }
        self.chunk = match self.from_writer.try_recv() {
            Ok(c) => Some(c),
            Err(_) => {
                let t = Instant::now();
                let c = self.from_writer.recv().ok();
                self.stalls += 1;
                self.stall += t.elapsed();
                c.or_else(|| Some(new_chunk(n)))
            }
        };
    }

    /// Records from now on count their time from `t`. Ramp-time completions are not
    /// recorded, so no record of the old epoch is waiting in the current chunk.
    pub fn epoch(&mut self, t: Ticks) {
        let _ = self.to_writer.send(Msg::Epoch(t));
    }

    pub fn row(&mut self, kind: usize, l: Line) {
        let _ = self.to_writer.send(Msg::Row(kind, l));
    }

    pub fn hist(&mut self, t_ms: u64, ddir: u8, bs: u32, bins: Vec<u64>) {
        let _ = self.to_writer.send(Msg::Hist(t_ms, ddir, bs, bins));
    }

    /// Flush the partial chunk and wait for the writer.
    pub fn close(mut self) -> std::io::Result<Writer> {
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
