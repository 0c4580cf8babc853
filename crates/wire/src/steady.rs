//! A job's steady-state detection (`steadystate=…`) in its TS payload, as observed
//! between fio 3.42's client and server: after the significant figures, the window's
//! duration in seconds (u64), the state flags (u32), the ring's head (u32), then the
//! limit, the slope, the largest deviation and the criterion (doubles in 16-byte
//! slots); the window's IOPS, bandwidth (bytes/s) and mean completion latency (ns)
//! follow the fixed part, `duration` u64s each, their offsets at [`DATA`].
//!
//! The client prints the window from the head, or from the slot before it when the
//! window filled and the criterion was not attained (the head has then moved past
//! the newest sample); the means are the window's sums over its duration.

use crate::le::{u32_at, u64_at};
use crate::msg::{put_f64, put_u32, put_u64};
use ioscope_stats::{JobResult, SteadyState};

const DUR: usize = 183_740;
const STATE: usize = 183_748;
const HEAD: usize = 183_752;
const LIMIT: usize = 183_756;
const SLOPE: usize = 183_772;
const DEVIATION: usize = 183_788;
const CRITERION: usize = 183_804;
/// The offsets of the IOPS, bandwidth and latency windows in the payload.
const DATA: usize = 183_824;

// The state flags.
const IOPS: u32 = 1;
const BW: u32 = 2;
const SLOPE_FLAG: u32 = 4;
const ATTAINED: u32 = 8;
const RAMP_OVER: u32 = 16;
const HAS_DATA: u32 = 32;
const PCT: u32 = 64;
const FULL: u32 = 128;
const LAT: u32 = 256;

fn f64_at(p: &[u8], off: usize) -> f64 {
    f64::from_bits(u64_at(p, off))
}

/// The criterion's flags, from its name (`iops`, `bw_slope`, `lat`, …).
fn metric_flags(metric: &str) -> u32 {
    let (base, slope) = match metric.strip_suffix("_slope") {
        Some(b) => (b, SLOPE_FLAG),
        None => (metric, 0),
    };
    slope
        | match base {
            "bw" => BW,
            "lat" => LAT,
            _ => IOPS,
        }
}

/// The criterion's name from its flags.
fn metric_name(state: u32) -> String {
    let base = match state {
        s if s & LAT != 0 => "lat",
        s if s & BW != 0 => "bw",
        _ => "iops",
    };
    match state & SLOPE_FLAG != 0 {
        true => format!("{base}_slope"),
        false => base.to_string(),
    }
}

/// `j`'s steady state into the TS payload `b` (its fixed part written; the windows
/// are appended).
pub(crate) fn put(b: &mut Vec<u8>, j: &JobResult) {
    let Some(ss) = &j.steadystate else { return };
    let dur = (ss.duration_s as usize).max(ss.iops.len()).max(1);
    let mut state = metric_flags(&ss.metric) | RAMP_OVER | HAS_DATA;
    state |= if ss.pct { PCT } else { 0 };
    state |= if ss.attained { ATTAINED } else { 0 };
    state |= if ss.full { FULL } else { 0 };
    // Ours are oldest first: a head from which the client prints them so.
    let head = match ss.full && !ss.attained {
        true => 1 % dur,
        false => 0,
    };
    put_u64(b, DUR, dur as u64);
    put_u32(b, STATE, state);
    put_u32(b, HEAD, head as u32);
    put_f64(b, LIMIT, limit(ss));
    put_f64(b, SLOPE, ss.slope);
    put_f64(b, DEVIATION, ss.max_deviation);
    put_f64(b, CRITERION, ss.criterion);
    for (k, v) in [&ss.iops, &ss.bw, &ss.lat].into_iter().enumerate() {
        let at = b.len();
        put_u64(b, DATA + 8 * k, at as u64);
        b.resize(at + 8 * dur, 0);
        for (i, x) in v.iter().take(dur).enumerate() {
            put_u64(b, at + 8 * i, *x);
        }
    }
}

/// The limit, from the criterion as printed (`iops:5.000000%`).
fn limit(ss: &SteadyState) -> f64 {
    ss.ss
        .rsplit(':')
        .next()
        .and_then(|l| l.trim_end_matches('%').parse().ok())
        .unwrap_or(0.0)
}

/// A TS payload's steady state, if the job had one, as fio's client prints it.
pub(crate) fn read(p: &[u8]) -> Option<SteadyState> {
    let dur = u64_at(p, DUR);
    let state = u32_at(p, STATE);
    if dur == 0 || state & HAS_DATA == 0 {
        return None;
    }
    let n = usize::try_from(dur).ok()?;
    let (head, full, attained) = (
        u32_at(p, HEAD) as usize % n,
        state & FULL != 0,
        state & ATTAINED != 0,
    );
    let start = match full && !attained {
        true => (head + n - 1) % n,
        false => head,
    };
    let window = |k: usize| -> Option<Vec<u64>> {
        let at = usize::try_from(u64_at(p, DATA + 8 * k)).ok()?;
        let bytes = p.get(at..at.checked_add(8 * n)?)?;
        Some(
            (0..n)
                .map(|i| u64_at(bytes, 8 * ((start + i) % n)))
                .collect(),
        )
    };
    let (iops, bw) = (window(0)?, window(1)?);
    let lat = if state & LAT != 0 {
        window(2)?
    } else {
        Vec::new()
    };
    let mean = |v: &[u64]| v.iter().sum::<u64>() / dur;
    let pct = state & PCT != 0;
    let metric = metric_name(state);
    Some(SteadyState {
        ss: format!(
            "{metric}:{:.6}{}",
            f64_at(p, LIMIT),
            if pct { "%" } else { "" }
        ),
        metric,
        duration_s: dur,
        attained,
        full,
        criterion: f64_at(p, CRITERION),
        pct,
        max_deviation: f64_at(p, DEVIATION),
        slope: f64_at(p, SLOPE),
        iops_mean: mean(&iops),
        bw_mean: mean(&bw),
        lat_mean: (state & LAT != 0).then(|| mean(&lat)),
        iops,
        bw,
        lat,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TS_LEN;

    /// A steady state written and read back is what was written, in every state
    /// (attained, or the window full and not attained: the head moves), with the
    /// flags fio's server sends for it.
    #[test]
    fn steady_state_travels_oldest_first() {
        for (metric, attained, full, flags) in [
            ("iops", true, true, 249),
            ("iops_slope", false, true, 245),
            ("bw", true, true, 250),
            ("lat", true, true, 504),
            ("iops", false, false, 113),
        ] {
            let ss = SteadyState {
                ss: format!("{metric}:20.000000%"),
                metric: metric.into(),
                duration_s: 3,
                attained,
                full,
                criterion: 1.5,
                pct: true,
                max_deviation: 2.5,
                slope: -3.0,
                iops_mean: 2,
                bw_mean: 8192,
                lat_mean: (metric == "lat").then_some(20),
                iops: vec![1, 2, 3],
                bw: vec![4096, 8192, 12288],
                lat: if metric == "lat" {
                    vec![10, 20, 30]
                } else {
                    Vec::new()
                },
            };
            let j = JobResult {
                steadystate: Some(ss.clone()),
                ..JobResult::default()
            };
            let mut b = vec![0u8; TS_LEN];
            put(&mut b, &j);
            assert_eq!(b.len(), TS_LEN + 3 * 3 * 8);
            assert_eq!(u32_at(&b, STATE), flags, "{metric}");
            let back = read(&b).unwrap();
            assert_eq!(
                (back.ss.as_str(), &back.iops, &back.bw),
                (ss.ss.as_str(), &ss.iops, &ss.bw)
            );
            assert_eq!((back.lat, back.lat_mean), (ss.lat, ss.lat_mean));
            assert_eq!(
                (back.attained, back.full, back.iops_mean, back.bw_mean),
                (attained, full, 2, 8192)
            );
            assert_eq!(
                (back.criterion, back.max_deviation, back.slope),
                (1.5, 2.5, -3.0)
            );
        }
        assert!(read(&vec![0u8; TS_LEN]).is_none());
    }

    /// A window as fio's server sent it (iops:1, 3 s, full, not attained, head 0):
    /// fio's client printed its IOPS [2491139, 2496135, 3400740].
    #[test]
    fn a_fio_window_reads_as_fios_client_prints_it() {
        let mut b = vec![0u8; TS_LEN];
        put_u64(&mut b, DUR, 3);
        put_u32(&mut b, STATE, 177);
        put_f64(&mut b, LIMIT, 1.0);
        for (k, v) in [[2496135u64, 3400740, 2491139], [1, 2, 3], [47, 32, 47]]
            .iter()
            .enumerate()
        {
            let at = b.len();
            put_u64(&mut b, DATA + 8 * k, at as u64);
            for x in v {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        let ss = read(&b).unwrap();
        assert_eq!(ss.ss, "iops:1.000000");
        assert_eq!(ss.iops, [2491139, 2496135, 3400740]);
        assert_eq!(ss.iops_mean, 2796004);
        assert!(!ss.attained && ss.lat.is_empty());
        put_u64(&mut b, DATA, 1 << 40);
        assert!(read(&b).is_none(), "a window outside the payload");
    }
}
