//! A job's statistics (TS) and a group's (GS) as fio 3.42's server sends them, written
//! from ioscope's results. fio's client computes everything it prints (bandwidth,
//! percentiles, percentages) from these raw counts, as from its own.

use crate::msg::{put_f64, put_str, put_u32, put_u64};
use ioscope_report::calc;
use ioscope_stats::hist::FIO_BUCKETS;
use ioscope_stats::{GroupResult, Histogram, JobResult, LatStat, LatTrack, SampleStat};

/// The fixed part of a TS payload.
pub const TS_LEN: usize = 184_072;
pub const GS_LEN: usize = 164;
/// One latency histogram: fio's 1856 buckets of u64.
const HIST_LEN: usize = FIO_BUCKETS * 8;
/// A priority's entry in the tail: histogram, stat record, ioprio, padding.
const PRIO_LEN: usize = HIST_LEN + STAT_LEN + 8;
const STAT_LEN: usize = 56;

// Offsets in the TS payload.
const STATS: usize = 552; // sync, clat×3, slat×3, lat×3, bw×3, iops×3
const CPU: usize = 1448;
const PCT_FLAGS: usize = 1488;
const PCT_PRECISION: usize = 1504;
const PCT_LIST: usize = 1512;
const DEPTH: usize = 1832;
const SUBMIT: usize = 1888;
const COMPLETE: usize = 1944;
const LAT_NS: usize = 2000;
const LAT_US: usize = 2080;
const LAT_MS: usize = 2160;
const HISTS: usize = 2256; // [slat, clat, lat] × [read, write, trim], then sync
const SYNC_HIST: usize = 135_888;
const TOTALS: usize = 150_736;
const KB_BASE: usize = 183_680;
const LATENCY: usize = 183_700;
const SIG_FIGS: usize = 183_736;
const PRIO_OFFSETS: usize = 183_848;
const PRIO_COUNTS: usize = 183_872;
const GROUP_COPY: usize = 183_904;

/// fio's code for the unit of bandwidth: bytes (4) or bits (5, unit_base=1).
fn unit_code(unit_base: u32) -> u32 {
    if unit_base == 1 {
        5
    } else {
        4
    }
}

/// A stat record: max, min, samples, mean, sum of squared deviations.
fn put_record(b: &mut [u8], off: usize, max: u64, min: u64, n: u64, mean: f64, s: f64) {
    put_u64(b, off, max);
    put_u64(b, off + 8, if n == 0 { u64::MAX } else { min });
    put_u64(b, off + 16, n);
    put_f64(b, off + 24, if n == 0 { 0.0 } else { mean });
    put_f64(b, off + 40, if s.is_finite() { s.max(0.0) } else { 0.0 });
}

fn put_lat(b: &mut [u8], off: usize, s: &LatStat) {
    let sq = if s.n == 0 {
        0.0
    } else {
        s.sumsq as f64 - (s.sum as f64) * (s.sum as f64) / s.n as f64
    };
    put_record(b, off, s.max, s.min, s.n, s.mean(), sq);
}

fn put_sample(b: &mut [u8], off: usize, s: &SampleStat) {
    let sd = s.stddev();
    let sq = sd * sd * s.n.saturating_sub(1) as f64;
    let round = |v: f64| {
        if v.is_finite() {
            v.round().max(0.0) as u64
        } else {
            0
        }
    };
    put_record(b, off, round(s.max), round(s.min), s.n, s.mean, sq);
}

fn put_hist(b: &mut [u8], off: usize, h: Option<&Histogram>) {
    let Some(h) = h else { return };
    for (i, c) in h.fio_counts().into_iter().enumerate() {
        put_u64(b, off + 8 * i, c);
    }
}

fn put_u64s(b: &mut [u8], off: usize, v: &[u64]) {
    for (i, x) in v.iter().enumerate() {
        put_u64(b, off + 8 * i, *x);
    }
}

/// Decimal places fio prints percentile names with: the most any entry needs.
fn precision(list: &[f64]) -> u64 {
    let places = |p: f64| (0..6u64).find(|&k| ((p * 10f64.powi(k as i32)).fract()).abs() < 1e-9);
    list.iter().filter_map(|&p| places(p)).max().unwrap_or(0)
}

/// The TS payload of job `j` (1-based `thread`), its group's statistics copied in.
pub fn ts(j: &JobResult, thread: u32, group: Option<&GroupResult>) -> Vec<u8> {
    let mut b = vec![0u8; TS_LEN];
    identity(&mut b, j, thread);
    latencies(&mut b, j);
    counters(&mut b, j);
    totals(&mut b, j);
    if let Some(g) = group {
        b[GROUP_COPY..GROUP_COPY + GS_LEN].copy_from_slice(&gs_fields(
            g,
            j.info.significant_figures,
            0,
        ));
    }
    crate::steady::put(&mut b, j);
    prio_tail(&mut b, j);
    b
}

fn identity(b: &mut [u8], j: &JobResult, thread: u32) {
    put_str(b, 0, 128, &j.name);
    put_str(b, 128, 128, j.error_text.as_deref().unwrap_or(""));
    put_u32(b, 256, j.error.unsigned_abs());
    put_u32(b, 260, thread);
    put_u32(b, 264, j.groupid);
    let start = if j.job_start_ms > 0 {
        j.job_start_ms
    } else {
        j.start_unix_ms
    };
    put_u64(b, 268, start);
    put_u32(b, 276, j.pid);
    put_str(b, 280, 256, j.info.description.as_deref().unwrap_or(""));
    put_u32(b, 536, j.jobs.max(1));
    put_u32(b, 540, calc::unified(j));
    let prios = j.dirs.iter().any(|d| !d.prios.is_empty());
    put_u32(b, 544, u32::from(!prios));
}

fn latencies(b: &mut [u8], j: &JobResult) {
    put_lat(b, STATS, &j.sync.lat.stat);
    let kinds: [fn(&ioscope_stats::DirStats) -> &LatTrack; 3] =
        [|d| &d.clat, |d| &d.slat, |d| &d.lat];
    for (k, pick) in kinds.iter().enumerate() {
        for (d, dir) in j.dirs.iter().enumerate() {
            put_lat(b, STATS + STAT_LEN * (1 + 3 * k + d), &pick(dir).stat);
        }
    }
    for (d, dir) in j.dirs.iter().enumerate() {
        put_sample(b, STATS + STAT_LEN * (10 + d), &dir.bw);
        put_sample(b, STATS + STAT_LEN * (13 + d), &dir.iops);
    }
    // Histograms: slat, clat, lat per direction, as fio keeps them (slat and lat only
    // with their percentiles on).
    let i = &j.info;
    for (d, dir) in j.dirs.iter().enumerate() {
        let tracks = [
            (i.slat_percentiles, &dir.slat),
            (i.clat_percentiles || !i.lat_percentiles, &dir.clat),
            (i.lat_percentiles, &dir.lat),
        ];
        for (k, (on, t)) in tracks.into_iter().enumerate() {
            if on && !i.fake_io {
                put_hist(b, HISTS + HIST_LEN * (3 * k + d), t.hist.as_ref());
            }
        }
    }
    put_hist(b, SYNC_HIST, j.sync.lat.hist.as_ref());
}

fn counters(b: &mut [u8], j: &JobResult) {
    put_u64(b, CPU, (j.cpu.usr_s * 1000.0).round() as u64);
    put_u64(b, CPU + 8, (j.cpu.sys_s * 1000.0).round() as u64);
    put_u64(b, CPU + 16, j.cpu.ctx);
    put_u64(b, CPU + 24, j.cpu.minf);
    put_u64(b, CPU + 32, j.cpu.majf);
    let i = &j.info;
    put_u32(b, PCT_FLAGS, u32::from(i.clat_percentiles));
    put_u32(b, PCT_FLAGS + 4, u32::from(i.lat_percentiles));
    put_u32(b, PCT_FLAGS + 8, u32::from(i.slat_percentiles));
    let list = calc::percentile_list(i);
    put_u64(b, PCT_PRECISION, precision(&list));
    for (k, p) in list.iter().enumerate() {
        put_f64(b, PCT_LIST + 16 * k, *p);
    }
    put_u64s(b, DEPTH, &j.io_depth);
    put_u64s(b, SUBMIT, &j.submit);
    put_u64s(b, COMPLETE, &j.complete);
    let lb = calc::lat_buckets(&j.clat_all());
    put_u64s(b, LAT_NS, &lb.counts_ns);
    put_u64s(b, LAT_US, &lb.counts_us);
    put_u64s(b, LAT_MS, &lb.counts_ms);
}

fn totals(b: &mut [u8], j: &JobResult) {
    for (d, dir) in j.dirs.iter().enumerate() {
        put_u64(b, TOTALS + 8 * d, dir.total_ios);
        put_u64(b, TOTALS + 32 + 8 * d, dir.short_ios);
        put_u64(b, TOTALS + 56 + 8 * d, dir.drop_ios);
        put_u64(b, TOTALS + 96 + 8 * d, dir.io_bytes);
        put_u64(b, TOTALS + 120 + 8 * d, calc::runtime(dir));
    }
    put_u64(b, TOTALS + 24, j.sync.total_ios);
    put_u64(b, TOTALS + 80, j.submit.iter().sum());
    put_u64(b, TOTALS + 88, j.complete.iter().sum());
    put_u64(b, TOTALS + 144, j.runtime_ms);
    put_u32(b, TOTALS + 152, u32::from(j.info.continue_on_error));
    put_u32(b, TOTALS + 156, j.first_error.unsigned_abs());
    put_u64(b, TOTALS + 160, j.total_err);
    put_u32(b, KB_BASE, j.info.kb_base);
    put_u32(b, KB_BASE + 4, unit_code(j.info.unit_base));
    if let Some(n) = j.zone_resets {
        put_u64(b, KB_BASE + 8, n);
        put_u32(b, KB_BASE + 16, 1);
    }
    put_u32(b, LATENCY, j.info.iodepth);
    if let Some(t) = &j.info.latency_target {
        put_u32(b, LATENCY, t.depth);
        put_u64(b, LATENCY + 4, t.target_ns);
        put_f64(b, LATENCY + 12, t.percentile);
        put_u64(b, LATENCY + 28, t.window_us);
    } else {
        put_f64(b, LATENCY + 12, 100.0);
    }
    put_u32(b, SIG_FIGS, j.info.significant_figures);
}

/// Per-priority latency after the fixed part: per direction, its entries' offsets and
/// count, each entry a histogram, a stat record and the ioprio (class << 13 | level).
fn prio_tail(b: &mut Vec<u8>, j: &JobResult) {
    for (d, dir) in j.dirs.iter().enumerate() {
        if dir.prios.is_empty() {
            continue;
        }
        let here = b.len() as u64;
        put_u64(b, PRIO_OFFSETS + 8 * d, here);
        put_u32(b, PRIO_COUNTS + 4 * d, dir.prios.len() as u32);
        for p in &dir.prios {
            let at = b.len();
            b.resize(at + PRIO_LEN, 0);
            put_hist(b, at, Some(&p.hist));
            put_lat(b, at + HIST_LEN, &p.stat);
            put_u32(b, at + HIST_LEN + STAT_LEN, u32::from(p.ioprio));
        }
    }
}

/// A group's GS payload.
pub fn gs(g: &GroupResult, significant_figures: u32, unified: u32) -> Vec<u8> {
    let mut b = gs_fields(g, significant_figures, unified);
    put_u32(&mut b, 156, g.groupid);
    b
}

/// The GS fields but the group id (0 in a TS's copy).
fn gs_fields(g: &GroupResult, significant_figures: u32, unified: u32) -> Vec<u8> {
    let mut b = vec![0u8; GS_LEN];
    for (d, x) in g.dirs.iter().enumerate() {
        let used = x.io_bytes > 0 || x.max_run_ms > 0;
        put_u64(&mut b, 8 * d, x.max_run_ms);
        put_u64(
            &mut b,
            24 + 8 * d,
            if used { x.min_run_ms } else { u64::MAX },
        );
        put_u64(&mut b, 48 + 8 * d, x.max_bw);
        put_u64(&mut b, 72 + 8 * d, if used { x.min_bw } else { u64::MAX });
        put_u64(&mut b, 96 + 8 * d, x.io_bytes);
        put_u64(&mut b, 120 + 8 * d, x.agg_bw);
    }
    put_u32(&mut b, 144, g.kb_base);
    put_u32(&mut b, 148, unit_code(g.unit_base));
    put_u32(&mut b, 152, significant_figures);
    put_u32(&mut b, 160, unified);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le64(b: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
    }

    #[test]
    fn a_job_lands_where_fio_reads_it() {
        let mut j = JobResult {
            name: "seqread".into(),
            groupid: 1,
            runtime_ms: 1000,
            ..JobResult::default()
        };
        j.info.clat_percentiles = true;
        j.dirs[0].io_bytes = 1 << 20;
        j.dirs[0].total_ios = 256;
        j.dirs[0].runtime_ms = 1000;
        let mut clat = LatTrack::new(true);
        for v in [1000, 2000, 3000] {
            clat.add(v);
        }
        j.dirs[0].clat = clat;
        let b = ts(&j, 1, None);
        assert_eq!(b.len(), TS_LEN);
        assert_eq!(&b[..8], b"seqread\0");
        assert_eq!(u32::from_le_bytes(b[264..268].try_into().unwrap()), 1);
        // clat read: max, min, N, mean, S (= 2·10⁶).
        assert_eq!(
            (le64(&b, 608), le64(&b, 616), le64(&b, 624)),
            (3000, 1000, 3)
        );
        assert_eq!(f64::from_le_bytes(b[632..640].try_into().unwrap()), 2000.0);
        assert_eq!(
            f64::from_le_bytes(b[648..656].try_into().unwrap()),
            2_000_000.0
        );
        // The clat read histogram holds the three I/Os.
        let h: u64 = (0..FIO_BUCKETS).map(|i| le64(&b, 46_800 + 8 * i)).sum();
        assert_eq!(h, 3);
        assert_eq!(le64(&b, TOTALS), 256);
        assert_eq!(le64(&b, TOTALS + 96), 1 << 20);
        // No samples: min is all ones.
        assert_eq!(le64(&b, 664 + 8), u64::MAX);
    }

    #[test]
    fn percentile_precision_is_the_most_places_needed() {
        assert_eq!(precision(&[1.0, 99.5, 99.95]), 2);
        assert_eq!(precision(&[50.0, 99.0, 12.5]), 1);
    }
}
