//! Rows that are few: log_avg_msec's window averages and write_hist_log's histogram
//! rows. Per I/O they are a few adds; the rows go to the writer thread.

use super::JobLogs;
use crate::clock::Ticks;
use ioscope_engine::IoUnit;
use ioscope_iolog::binary::Rec;
use ioscope_iolog::text::{Line, BW, CLAT, IOPS, LAT, SLAT};
use ioscope_options::LogWindowValue;

/// Averaging window for one log and direction.
#[derive(Clone, Copy, Default)]
pub(super) struct Window {
    sum: u128,
    n: u64,
    max: u64,
}

/// Current and last-logged fio-geometry clat counts per direction.
pub(super) type HistCounts = ([Vec<u64>; 3], [Vec<u64>; 3]);

impl JobLogs {
    #[inline(never)]
    pub(super) fn completion_slow(
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
    pub(super) fn flush_windows(&mut self, end_ms: u64, kinds: u8) {
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

    pub(super) fn flush_hist(&mut self, ms: u64, bs: u32) {
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
}
