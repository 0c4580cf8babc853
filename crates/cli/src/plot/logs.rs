//! Logs as panels: bandwidth, IOPS and latency over time from bw/iops/lat logs (a line
//! per direction and, with log_prio, per priority), completion-latency percentiles per
//! hist-log row, and latency-over-time heatmaps from hist logs and per-I/O latency logs.

use super::buckets::Grid;
use super::panels::{Axes, Panels};
use anyhow::Result;
use ioscope_analysis::shape;
use ioscope_iolog::read as logs;
use ioscope_iolog::LogKind;
use ioscope_plot::LineSeries;
use ioscope_results::DIR_NAMES;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Per-I/O logs are averaged into about this many windows by default.
const WINDOWS: u64 = 300;
/// A heatmap has at most this many time columns.
const HEAT_COLUMNS: u64 = 120;
/// Percentiles drawn from hist logs.
const HIST_PCTS: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// One log entry: time (ms), value, direction, block size, priority.
struct E {
    t: u64,
    v: u64,
    d: u8,
    bs: u64,
    prio: u32,
}

/// A bw/iops/latency log, per direction (and priority) and window. Entries of averaged
/// logs (log_avg_msec; fio writes their bs as 0) are rates or means already: their
/// mean is drawn. Per-I/O entries (bs > 0) are I/Os: a window's IOPS is their count
/// and its bandwidth their bytes over the window's length; latencies are averaged, and
/// drawn as a heatmap too.
pub fn log(
    p: &mut Panels,
    path: &Path,
    name: &str,
    kind: LogKind,
    window_ms: Option<u64>,
) -> Result<()> {
    let mut entries: Vec<E> = Vec::new();
    logs::for_each(path, logs::parse_entry, |e| {
        entries.push(E {
            t: e.t_ms,
            v: e.value,
            d: e.ddir,
            bs: e.bs,
            prio: e.prio,
        })
    })?;
    let last = entries.iter().map(|e| e.t).max().unwrap_or(0);
    let w = window_ms.unwrap_or((last / WINDOWS).max(1));
    let per_io = entries.iter().any(|e| e.bs > 0);
    let latency = !matches!(kind, LogKind::Bw | LogKind::Iops);
    for d in 0..3u8 {
        let prios: BTreeSet<u32> = entries
            .iter()
            .filter(|e| e.d == d)
            .map(|e| e.prio)
            .collect();
        for &prio in &prios {
            let mine = entries.iter().filter(|e| e.d == d && e.prio == prio);
            let points = windows(mine, w, last, kind, per_io);
            let mut label = format!("{name} {}", DIR_NAMES[d as usize]);
            if latency {
                label = format!("{label} {}", kind.name());
            }
            if prios.len() > 1 {
                label = format!("{label} prio {}", logs::prio_name(prio));
            }
            let axes = match kind {
                LogKind::Bw => Axes::time("Bandwidth over time", "MiB/s"),
                LogKind::Iops => Axes::time("IOPS over time", "IOPS"),
                _ => Axes::time("Latency over time (mean per window)", "us"),
            };
            p.line(&axes, LineSeries::new(label, points));
        }
        if latency && per_io {
            let heat = last.div_ceil(HEAT_COLUMNS).max(w);
            let mut g = Grid::default();
            for e in entries.iter().filter(|e| e.d == d) {
                g.add(e.t / heat, e.v, 1);
            }
            let what = format!("{name} {} {}", DIR_NAMES[d as usize], kind.name());
            heatmap(p, &g, &what, heat);
        }
    }
    Ok(())
}

/// The points of one line: per window, its mean, rate or count.
fn windows<'a>(
    entries: impl Iterator<Item = &'a E>,
    w: u64,
    last: u64,
    kind: LogKind,
    per_io: bool,
) -> Vec<(f64, f64)> {
    // Window → (sum of values, sum of bytes, count).
    let mut acc: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new();
    for e in entries {
        let slot = acc.entry(e.t / w).or_default();
        slot.0 += e.v as f64;
        slot.1 += e.bs as f64;
        slot.2 += 1;
    }
    // The last window ends with the log, not after a full window.
    let secs = |k: u64| (w.min(last + 1 - k * w)) as f64 / 1000.0;
    let y = |k: u64, &(sum, bytes, n): &(f64, f64, u64)| match (kind, per_io) {
        (LogKind::Bw, true) => bytes / secs(k) / 1048576.0,
        (LogKind::Bw, false) => sum / n as f64 / 1024.0,
        (LogKind::Iops, true) => n as f64 / secs(k),
        (LogKind::Iops, false) => sum / n as f64,
        _ => sum / n as f64 / 1000.0,
    };
    acc.iter()
        .map(|(&k, a)| ((k * w + w / 2) as f64 / 1000.0, y(k, a)))
        .collect()
}

/// A heatmap of `g`, whose columns are `width_ms` long.
fn heatmap(p: &mut Panels, g: &Grid, what: &str, width_ms: u64) {
    let label = |c: u64| format!("{:.1}", (c * width_ms) as f64 / 1000.0);
    if let Some(s) = g.shares(label) {
        p.heatmap(
            format!("Latency over time: {what} (% of each window's I/Os)"),
            "time, s (window start)",
            s,
        );
    }
}

/// A clat_hist log: per row and direction, percentiles of that row's bins on a log
/// axis, and the rows as a heatmap.
pub fn hist(p: &mut Panels, path: &Path, name: &str) -> Result<()> {
    let mut rows = Vec::new();
    logs::for_each(path, logs::parse_hist_row, |r| rows.push(r))?;
    let last = rows.iter().map(|r| r.t_ms).max().unwrap_or(0);
    // A column per row interval (log_hist_msec) at least: none stands empty between rows.
    let times: BTreeSet<u64> = rows.iter().map(|r| r.t_ms).collect();
    let times: Vec<u64> = times.into_iter().collect();
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    // The median: the last row of a run comes early (at the end), not every interval.
    let interval = gaps.get(gaps.len() / 2).copied().unwrap_or(1);
    let heat = last.div_ceil(HEAT_COLUMNS).max(interval).max(1);
    let axes = Axes {
        y_log: true,
        ..Axes::time(
            "Completion latency percentiles over time (per hist-log row)",
            "us (log)",
        )
    };
    for d in 0..3u8 {
        // Per row: its time and its bins as (latency ns, I/Os).
        let mine: Vec<(u64, Vec<(u64, u64)>)> = rows
            .iter()
            .filter(|r| r.ddir == d)
            .map(|r| (r.t_ms, row_bins(&r.bins)))
            .collect();
        if mine.is_empty() {
            continue;
        }
        for pct in HIST_PCTS {
            let points = mine
                .iter()
                .filter_map(|(t, bins)| {
                    let ns = shape::percentile(bins, pct)?;
                    Some((*t as f64 / 1000.0, ns as f64 / 1000.0))
                })
                .collect();
            let label = format!("{name} {} p{pct}", DIR_NAMES[d as usize]);
            p.line(&axes, LineSeries::new(label, points));
        }
        let mut g = Grid::default();
        for (t, bins) in &mine {
            for &(ns, n) in bins {
                g.add(t / heat, ns, n);
            }
        }
        heatmap(
            p,
            &g,
            &format!("{name} {} clat", DIR_NAMES[d as usize]),
            heat,
        );
    }
    Ok(())
}

/// A hist-log row's bins as (latency ns, I/Os), the empty ones left out: fio's 1856
/// bins, or fewer with log_hist_coarseness, each then covering 2^c fio bins (valued at
/// the first).
fn row_bins(bins: &[u64]) -> Vec<(u64, u64)> {
    let coarse = (ioscope_stats::hist::FIO_BUCKETS / bins.len().max(1)).max(1);
    bins.iter()
        .enumerate()
        .filter(|b| *b.1 > 0)
        .map(|(i, &n)| (ioscope_stats::hist::fio_value(i * coarse), n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::row_bins;
    use ioscope_analysis::shape::percentile;

    #[test]
    fn percentiles_of_a_row() {
        let mut bins = vec![0u64; 1856];
        bins[10] = 90;
        bins[100] = 10;
        let row = row_bins(&bins);
        let v = ioscope_stats::hist::fio_value;
        assert_eq!(row, [(v(10), 90), (v(100), 10)]);
        assert_eq!(percentile(&row, 50.0), Some(v(10)));
        assert_eq!(percentile(&row, 90.0), Some(v(10)));
        assert_eq!(percentile(&row, 99.0), Some(v(100)));
        assert_eq!(percentile(&row_bins(&[0; 4]), 50.0), None);
        // log_hist_coarseness=2: each of 464 bins stands for 4 of fio's.
        assert_eq!(
            row_bins(&{
                let mut b = vec![0; 464];
                b[5] = 1;
                b
            })[0]
                .0,
            v(20)
        );
    }
}
