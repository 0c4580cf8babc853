//! What a fio server sends, read back into ioscope's results: a job's statistics
//! (TS), a group's (GS), the handshake's reply, text, options and disks.

use crate::stats::{GS_LEN, TS_LEN};
use crate::WireError;
use ioscope_stats::hist::{fio_value, FIO_BUCKETS};
use ioscope_stats::{
    DiskUtil, GroupDir, GroupResult, Histogram, JobResult, LatStat, LatTrack, PrioStat, SampleStat,
};

pub(crate) use crate::le::{u32_at, u64_at};

fn f64_at(p: &[u8], off: usize) -> f64 {
    f64::from_bits(u64_at(p, off))
}

pub(crate) use crate::le::str_at;

/// A client's PROBE asks for compressed logs (its zlib bit).
pub fn probe_wants_zlib(p: &[u8]) -> bool {
    u64_at(p, 0) & crate::msg::PROBE_ZLIB != 0
}

/// A client's PROBE: the server's name as the client connected to it (its prefix for
/// the verify states it keeps for the server).
pub fn probe_server(p: &[u8]) -> String {
    let f = p.get(8..p.len().min(136)).unwrap_or_default();
    let end = f.iter().position(|&c| c == 0).unwrap_or(f.len());
    String::from_utf8_lossy(&f[..end]).into_owned()
}

fn short(op: u16, len: usize, want: usize) -> WireError {
    WireError::Malformed {
        op,
        what: format!("{len} bytes, at least {want} expected"),
    }
}

/// The PROBE reply: (host name, fio version).
pub fn probe_reply(p: &[u8]) -> Result<(String, String), WireError> {
    if p.len() < 112 {
        return Err(short(crate::msg::op::PROBE, p.len(), 112));
    }
    Ok((str_at(p, 0, 64), str_at(p, 65, 32)))
}

/// An ETA reply (fio's `jobs_eta`, 168 bytes and the jobs' states, condensed as
/// `R(2),_(1)`): what the server's status line shows. An ETA beyond a year is fio's
/// "unknown".
pub fn eta(p: &[u8]) -> Result<crate::msg::Eta, WireError> {
    const FIXED: usize = 168;
    if p.len() < FIXED {
        return Err(short(crate::msg::op::ETA, p.len(), FIXED));
    }
    let states = p.get(FIXED..).unwrap_or_default();
    let end = states.iter().position(|&c| c == 0).unwrap_or(states.len());
    let eta_s = u64_at(p, 136);
    Ok(crate::msg::Eta {
        running: u32_at(p, 0),
        ramping: u32_at(p, 4),
        pending: u32_at(p, 8),
        kib_s: std::array::from_fn(|d| u64_at(p, 64 + 8 * d)),
        iops: std::array::from_fn(|d| u32_at(p, 112 + 4 * d)),
        elapsed_s: u64_at(p, 128),
        eta_s: (eta_s < 365 * 86400).then_some(eta_s),
        files_open: u32_at(p, 156),
        jobs: u32_at(p, 160),
        states: String::from_utf8_lossy(&states[..end]).into_owned(),
    })
}

/// A TEXT: (level, text).
pub fn text(p: &[u8]) -> (u32, String) {
    let n = u32_at(p, 4) as usize;
    let body = p
        .get(24..24 + n.min(p.len().saturating_sub(24)))
        .unwrap_or_default();
    (u32_at(p, 0), String::from_utf8_lossy(body).into_owned())
}

/// A JOB_OPT: (global, job index, name, value).
pub fn job_opt(p: &[u8]) -> (bool, u32, String, String) {
    (
        u32_at(p, 0) != 0,
        u32_at(p, 4),
        str_at(p, 8, 64),
        str_at(p, 72, 128),
    )
}

/// START: (jobs, reports).
pub fn start(p: &[u8]) -> (u32, u32) {
    (u32_at(p, 0), u32_at(p, 4))
}

/// STOP: the run's status.
pub fn stop(p: &[u8]) -> u32 {
    u32_at(p, 0)
}

/// A DISK_UTIL.
pub fn disk_util(p: &[u8]) -> DiskUtil {
    let period = u64_at(p, 144);
    let busy = u64_at(p, 128);
    DiskUtil {
        name: str_at(p, 0, 64),
        read_ios: u64_at(p, 64),
        write_ios: u64_at(p, 72),
        read_merges: u64_at(p, 80),
        write_merges: u64_at(p, 88),
        read_sectors: u64_at(p, 96),
        write_sectors: u64_at(p, 104),
        read_ticks: u64_at(p, 112),
        write_ticks: u64_at(p, 120),
        in_queue: u64_at(p, 136),
        util: if period > 0 {
            100.0 * busy as f64 / period as f64
        } else {
            0.0
        },
    }
}

/// A stat record as exact moments: the sum from the mean, the sum of squares from
/// the squared deviations.
fn lat_stat(p: &[u8], off: usize) -> LatStat {
    let n = u64_at(p, off + 16);
    if n == 0 {
        return LatStat::default();
    }
    let mean = f64_at(p, off + 24);
    let s = f64_at(p, off + 40).max(0.0);
    let sum = mean * n as f64;
    LatStat {
        n,
        min: u64_at(p, off + 8),
        max: u64_at(p, off),
        sum: sum.round().max(0.0) as u128,
        sumsq: (s + sum * sum / n as f64).round().max(0.0) as u128,
    }
}

fn sample(p: &[u8], off: usize) -> SampleStat {
    let n = u64_at(p, off + 16);
    if n == 0 {
        return SampleStat::default();
    }
    let s = f64_at(p, off + 40).max(0.0);
    let sd = if n > 1 {
        (s / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    SampleStat::from_figures(
        n,
        u64_at(p, off + 8) as f64,
        u64_at(p, off) as f64,
        f64_at(p, off + 24),
        sd,
    )
}

/// fio's 1856 buckets, each count placed at its bucket's value.
fn hist(p: &[u8], off: usize) -> Option<Histogram> {
    let mut h = Histogram::new();
    for i in 0..FIO_BUCKETS {
        let c = u64_at(p, off + 8 * i);
        if c > 0 {
            h.add_n(fio_value(i), c);
        }
    }
    (!h.is_empty()).then_some(h)
}

fn track(p: &[u8], stat: usize, hist_at: usize) -> LatTrack {
    LatTrack {
        stat: lat_stat(p, stat),
        hist: hist(p, hist_at),
    }
}

const HIST_LEN: usize = FIO_BUCKETS * 8;

/// A TS payload as a job's results. Its options (JOB_OPT) come separately.
pub fn ts(p: &[u8]) -> Result<JobResult, WireError> {
    if p.len() < TS_LEN {
        return Err(short(crate::msg::op::TS, p.len(), TS_LEN));
    }
    let mut j = JobResult {
        name: str_at(p, 0, 128),
        error_text: Some(str_at(p, 128, 128)).filter(|s| !s.is_empty()),
        error: u32_at(p, 256) as i32,
        groupid: u32_at(p, 264),
        start_unix_ms: u64_at(p, 268),
        job_start_ms: u64_at(p, 268),
        pid: u32_at(p, 276),
        jobs: u32_at(p, 536).max(1),
        runtime_ms: u64_at(p, 150_880),
        first_error: u32_at(p, 150_892) as i32,
        total_err: u64_at(p, 150_896),
        ..JobResult::default()
    };
    let description = str_at(p, 280, 256);
    j.info.description = Some(description).filter(|s| !s.is_empty());
    for (d, dir) in j.dirs.iter_mut().enumerate() {
        dir.clat = track(p, 608 + 56 * d, 2256 + HIST_LEN * (3 + d));
        dir.slat = track(p, 776 + 56 * d, 2256 + HIST_LEN * d);
        dir.lat = track(p, 944 + 56 * d, 2256 + HIST_LEN * (6 + d));
        dir.bw = sample(p, 1112 + 56 * d);
        dir.iops = sample(p, 1280 + 56 * d);
        dir.total_ios = u64_at(p, 150_736 + 8 * d);
        dir.short_ios = u64_at(p, 150_768 + 8 * d);
        dir.drop_ios = u64_at(p, 150_792 + 8 * d);
        dir.io_bytes = u64_at(p, 150_832 + 8 * d);
        dir.runtime_ms = u64_at(p, 150_856 + 8 * d);
        dir.prios = prios(p, d);
    }
    j.sync.lat = track(p, 552, 135_888);
    j.sync.total_ios = u64_at(p, 150_760);
    j.cpu.usr_s = u64_at(p, 1448) as f64 / 1000.0;
    j.cpu.sys_s = u64_at(p, 1456) as f64 / 1000.0;
    j.cpu.ctx = u64_at(p, 1464);
    j.cpu.minf = u64_at(p, 1472);
    j.cpu.majf = u64_at(p, 1480);
    for k in 0..7 {
        j.io_depth[k] = u64_at(p, 1832 + 8 * k);
        j.submit[k] = u64_at(p, 1888 + 8 * k);
        j.complete[k] = u64_at(p, 1944 + 8 * k);
    }
    info(p, &mut j);
    j.steadystate = crate::steady::read(p);
    Ok(j)
}

/// What the report needs to print the job as fio's client does.
fn info(p: &[u8], j: &mut JobResult) {
    let i = &mut j.info;
    i.clat_percentiles = u32_at(p, 1488) != 0;
    i.lat_percentiles = u32_at(p, 1492) != 0;
    i.slat_percentiles = u32_at(p, 1496) != 0;
    i.percentile_list = (0..20)
        .map(|k| f64_at(p, 1512 + 16 * k))
        .filter(|v| *v > 0.0)
        .collect();
    i.kb_base = u32_at(p, 183_680);
    i.unit_base = if u32_at(p, 183_684) == 5 { 1 } else { 0 };
    i.significant_figures = u32_at(p, 183_736);
    i.unified_rw_reporting = u32_at(p, 540);
    i.iodepth = u32_at(p, 183_700);
    i.continue_on_error = u32_at(p, 150_888) != 0;
    let slat = j.dirs.iter().any(|d| d.slat.stat.n > 0);
    i.slat_enabled = slat;
    i.sync_engine = !slat;
    i.clat_enabled = true;
    i.lat_enabled = true;
    if u32_at(p, 183_696) != 0 {
        j.zone_resets = Some(u64_at(p, 183_688));
    }
}

/// A direction's per-priority entries, from the tail the fixed part points to.
fn prios(p: &[u8], d: usize) -> Vec<PrioStat> {
    let entry = HIST_LEN + 56 + 8;
    let at = usize::try_from(u64_at(p, 183_848 + 8 * d)).unwrap_or(usize::MAX);
    // No more entries than the payload holds, whatever the count says.
    let fits = p.len().saturating_sub(at) / entry;
    let n = (u32_at(p, 183_872 + 4 * d) as usize).min(fits);
    (0..n)
        .map(|k| at + k * entry)
        .map(|o| PrioStat {
            ioprio: u32_at(p, o + HIST_LEN + 56) as u16,
            stat: lat_stat(p, o + HIST_LEN),
            hist: hist(p, o).unwrap_or_default(),
        })
        .collect()
}

/// A GS payload.
pub fn gs(p: &[u8]) -> Result<GroupResult, WireError> {
    if p.len() < GS_LEN {
        return Err(short(crate::msg::op::GS, p.len(), GS_LEN));
    }
    let unset = |v: u64| if v == u64::MAX { 0 } else { v };
    let mut g = GroupResult {
        groupid: u32_at(p, 156),
        kb_base: u32_at(p, 144),
        unit_base: if u32_at(p, 148) == 5 { 1 } else { 0 },
        ..GroupResult::default()
    };
    for (d, x) in g.dirs.iter_mut().enumerate() {
        *x = GroupDir {
            max_run_ms: u64_at(p, 8 * d),
            min_run_ms: unset(u64_at(p, 24 + 8 * d)),
            max_bw: u64_at(p, 48 + 8 * d),
            min_bw: unset(u64_at(p, 72 + 8 * d)),
            io_bytes: u64_at(p, 96 + 8 * d),
            agg_bw: u64_at(p, 120 + 8 * d),
        };
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eta_written_reads_back() {
        let e = crate::msg::Eta {
            running: 2,
            pending: 1,
            kib_s: [4000, 0, 12],
            iops: [1000, 0, 3],
            elapsed_s: 7,
            eta_s: Some(5),
            files_open: 2,
            jobs: 3,
            states: "R(2),P(1)".into(),
            ..crate::msg::Eta::default()
        };
        let back = eta(&crate::msg::eta(&e)).unwrap();
        assert_eq!((back.running, back.pending, back.jobs), (2, 1, 3));
        assert_eq!((back.kib_s, back.iops), ([4000, 0, 12], [1000, 0, 3]));
        assert_eq!((back.elapsed_s, back.eta_s), (7, Some(5)));
        assert_eq!(back.states, "R(2),P(1)");
        let unknown = crate::msg::Eta::default();
        assert_eq!(eta(&crate::msg::eta(&unknown)).unwrap().eta_s, None);
        assert!(eta(&[0u8; 100]).is_err());
    }

    #[test]
    fn a_job_written_reads_back() {
        let mut j = JobResult {
            name: "rr".into(),
            groupid: 2,
            runtime_ms: 500,
            ..JobResult::default()
        };
        j.info.clat_percentiles = true;
        j.info.kb_base = 1024;
        j.info.significant_figures = 4;
        j.dirs[1].io_bytes = 4 << 20;
        j.dirs[1].total_ios = 1024;
        j.dirs[1].runtime_ms = 500;
        let mut clat = LatTrack::new(true);
        for v in [100, 200, 300, 5000] {
            clat.add(v);
        }
        j.dirs[1].clat = clat;
        let back = ts(&crate::stats::ts(&j, 1, None)).unwrap();
        assert_eq!((back.name.as_str(), back.groupid), ("rr", 2));
        let c = &back.dirs[1].clat.stat;
        assert_eq!((c.n, c.min, c.max, c.sum), (4, 100, 5000, 5600));
        assert!((c.stddev() - j.dirs[1].clat.stat.stddev()).abs() < 1e-6);
        assert_eq!(
            back.dirs[1].clat.hist.as_ref().map(Histogram::count),
            Some(4)
        );
        assert_eq!(back.dirs[1].io_bytes, 4 << 20);
        assert_eq!(back.info.kb_base, 1024);
        assert!(ts(&[0u8; 10]).is_err());
    }
}
