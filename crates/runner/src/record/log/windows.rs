//! Rows that are few: log_avg_msec's window averages and write_hist_log's histogram
//! rows. Per I/O they are a few adds; the rows go to the writer thread. Times are ms
//! since the logs' time zero; `base` is added when rows are stamped (the Unix time
//! of that zero with log_unix_epoch, else 0).

use super::stream::Stream;
use ioscope_iolog::text::{Line, BW, CLAT, IOPS, LAT, SLAT};
use ioscope_options::{JobOptions, LogWindowValue};

/// Where rows go: the stream, and what their ms are stamped from.
pub(super) struct Out<'a> {
    pub s: &'a mut Stream,
    pub base: u64,
}

/// One completion, for the windows: its direction, its lat, slat, clat, bw and 1 (per
/// log kind), whether it has a slat, and its bytes.
pub(super) struct Sample {
    pub d: usize,
    pub v: [u64; 5],
    pub has_slat: bool,
    pub bytes: u64,
}

/// Averaging window for one log and direction.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u128,
    n: u64,
    max: u64,
}

/// log_avg_msec: per kind and direction, the sums of the current window.
pub(super) struct Windows {
    /// Bit k: kind k gets rows.
    mask: u8,
    avg_ms: u64,
    next_ms: u64,
    value: LogWindowValue,
    win: [[Window; 3]; 5],
    bytes: [u64; 3],
    ios: [u64; 3],
}

impl Windows {
    pub fn new(o: &JobOptions, mask: u8) -> Windows {
        Windows {
            mask,
            avg_ms: o.log_avg_msec,
            next_ms: o.log_avg_msec,
            value: o.log_window_value,
            win: [[Window::default(); 3]; 5],
            bytes: [0; 3],
            ios: [0; 3],
        }
    }

    /// Measurement starts afresh (after ramp_time).
    pub fn restart(&mut self) {
        self.next_ms = self.avg_ms;
        self.clear();
    }

    fn clear(&mut self) {
        self.win = [[Window::default(); 3]; 5];
        self.bytes = [0; 3];
        self.ios = [0; 3];
    }

    /// An I/O completed at `ms`; windows that ended before it are flushed first.
    pub fn add(&mut self, out: &mut Out, ms: u64, x: &Sample) {
        while ms >= self.next_ms {
            self.flush(out.s, out.base, self.next_ms, 0xff);
            self.next_ms += self.avg_ms;
        }
        for k in [LAT, SLAT, CLAT] {
            if k == SLAT && !x.has_slat {
                continue;
            }
            let w = &mut self.win[k][x.d];
            w.sum += x.v[k] as u128;
            w.n += 1;
            w.max = w.max.max(x.v[k]);
        }
        self.bytes[x.d] += x.bytes;
        self.ios[x.d] += 1;
    }

    /// One row per log (of `kinds`) and direction with samples, stamped at the window end.
    fn flush(&mut self, s: &mut Stream, base: u64, end_ms: u64, kinds: u8) {
        let secs = self.avg_ms as f64 / 1000.0;
        for k in 0..5 {
            if self.mask & kinds & (1 << k) == 0 {
                continue;
            }
            for d in 0..3 {
                let Some((avg, max)) = self.figures(k, d, secs) else {
                    continue;
                };
                let (value, value2) = match self.value {
                    LogWindowValue::Avg => (avg, 0),
                    LogWindowValue::Max => (max, 0),
                    LogWindowValue::Both => (avg, max),
                };
                let row = Line {
                    t_ms: base + end_ms,
                    value,
                    value2,
                    ddir: d as u8,
                    ..Line::default()
                };
                s.row(k, row);
            }
        }
        self.clear();
    }

    /// A window's average and maximum of log kind `k`, direction `d`, if it has samples.
    fn figures(&self, k: usize, d: usize, secs: f64) -> Option<(u64, u64)> {
        match k {
            BW if self.ios[d] > 0 => {
                let v = (self.bytes[d] as f64 / 1024.0 / secs) as u64;
                Some((v, v))
            }
            IOPS if self.ios[d] > 0 => {
                let v = (self.ios[d] as f64 / secs) as u64;
                Some((v, v))
            }
            LAT | SLAT | CLAT if self.win[k][d].n > 0 => {
                let w = self.win[k][d];
                Some(((w.sum / w.n as u128) as u64, w.max))
            }
            _ => None,
        }
    }

    /// The I/O is over at `ms`. Like fio: the partial last window of latency logs is
    /// flushed, stamped at the last window boundary; bw and iops logs get no partial row.
    pub fn finish(&mut self, s: &mut Stream, base: u64, ms: u64) {
        if self.avg_ms > 0 && self.ios.iter().any(|&n| n > 0) {
            let last = self
                .next_ms
                .saturating_sub(self.avg_ms)
                .max(self.avg_ms.min(ms));
            self.flush(s, base, last, (1 << LAT) | (1 << SLAT) | (1 << CLAT));
        }
    }
}

/// write_hist_log: clat counts in fio's bins per direction, now and at the last row.
pub(super) struct HistRows {
    cur: [Vec<u64>; 3],
    prev: [Vec<u64>; 3],
    coarse: u32,
    every_ms: u64,
    next_ms: u64,
    /// The latest I/O's size: the last row's, written when the job ends.
    pub last_bs: u32,
}

impl HistRows {
    pub fn new(o: &JobOptions) -> HistRows {
        let bins = ioscope_stats::hist::FIO_BUCKETS;
        let every = if o.log_hist_msec > 0 {
            o.log_hist_msec
        } else {
            1000
        };
        HistRows {
            cur: std::array::from_fn(|_| vec![0; bins]),
            prev: std::array::from_fn(|_| vec![0; bins]),
            coarse: o.log_hist_coarseness,
            every_ms: every,
            next_ms: every,
            last_bs: 0,
        }
    }

    /// Measurement starts afresh (after ramp_time).
    pub fn restart(&mut self) {
        self.next_ms = self.every_ms;
        for d in 0..3 {
            self.cur[d].iter_mut().for_each(|c| *c = 0);
            self.prev[d].iter_mut().for_each(|c| *c = 0);
        }
    }

    /// An I/O of direction `d` completed at `ms` with `clat` ns; rows are due every
    /// log_hist_msec.
    pub fn add(&mut self, s: &mut Stream, base: u64, ms: u64, d: usize, clat: u64, bs: u32) {
        self.cur[d][ioscope_stats::hist::fio_index(clat)] += 1;
        self.last_bs = bs;
        if ms >= self.next_ms {
            self.flush(s, base, ms, bs);
        }
    }

    /// A row per direction whose counts moved since the last.
    pub fn flush(&mut self, s: &mut Stream, base: u64, ms: u64, bs: u32) {
        let group = 1usize << self.coarse;
        for d in 0..3 {
            if self.cur[d] == self.prev[d] {
                continue;
            }
            let bins: Vec<u64> = self.cur[d]
                .chunks(group)
                .zip(self.prev[d].chunks(group))
                .map(|(c, p)| c.iter().sum::<u64>() - p.iter().sum::<u64>())
                .collect();
            self.prev[d].copy_from_slice(&self.cur[d]);
            s.hist(base + ms, d as u8, bs, bins);
        }
        self.next_ms = ms + self.every_ms;
    }
}
