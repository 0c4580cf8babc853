//! JSON results as panels: per job and direction (and priority, with cmdprio),
//! completion-latency percentiles on a log axis (p50 to the deepest reported), a latency
//! histogram and CDFs from json+ bins;
//! with several documents (interim reports), bandwidth and IOPS per interval.

use super::buckets;
use super::panels::{job_names, Axes, Panels};
use anyhow::{bail, Context, Result};
use ioscope_plot::{BarSeries, Bars, LineSeries, XScale};
use ioscope_results::{ResultFile, DIR_NAMES};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub fn json(p: &mut Panels, path: &Path, name: &str) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let docs = ioscope_results::parse_all(&text, path)?;
    let Some(last) = docs.last() else {
        bail!("{}: no result in it", path.display());
    };
    let jobs = job_names(last.jobs.iter().map(|j| j.name.as_str()));
    let mut drew = percentiles(p, last, &jobs, name);
    let mut hists: Vec<(String, Vec<(u64, u64)>)> = Vec::new();
    for (job, label) in last.jobs.iter().zip(&jobs) {
        for (d, dir) in job.dirs.iter().enumerate() {
            if dir.clat_bins.iter().all(|b| b.1 == 0) {
                continue;
            }
            let series = format!("{name} {label} {}", DIR_NAMES[d]);
            p.line(
                &cdf_axes(),
                LineSeries::new(series.clone(), cdf(&dir.clat_bins)),
            );
            hists.push((series.clone(), dir.clat_bins.clone()));
            for prio in prios(dir).filter(|x| !x.bins.is_empty()) {
                let s = format!("{series} prio {}", prio.name());
                p.line(&cdf_axes(), LineSeries::new(s, cdf(&prio.bins)));
            }
        }
    }
    if !hists.is_empty() {
        p.bars(histogram(name, &hists));
        drew = true;
    }
    if docs.len() > 1 {
        interim(p, &docs, name);
        drew = true;
    }
    if !drew {
        bail!(
            "{}: nothing to draw: no latency percentiles or json+ bins (--output-format=json+), and only one report (several come with --status-interval)",
            path.display()
        );
    }
    Ok(())
}

fn cdf_axes() -> Axes<'static> {
    Axes {
        title: "Completion latency CDF (json+ bins)",
        x_label: "latency, us (log2)",
        y_label: "% of I/Os at or below",
        x_scale: XScale::Log2,
        y_log: false,
        x_names: &[],
    }
}

/// The CDF of json+ bins to draw: (latency us, % of I/Os at or below). I/Os of 0 ns (the
/// null engine) count, though a log axis has no place to draw them.
pub fn cdf(bins: &[(u64, u64)]) -> Vec<(f64, f64)> {
    ioscope_analysis::shape::cdf(bins)
        .into_iter()
        .filter(|p| p.0 > 0)
        .map(|(ns, pct)| (ns as f64 / 1000.0, pct))
        .collect()
}

/// Completion-latency percentiles from p50 on, evenly spaced by rank so that p99.99
/// stands as far from p99.9 as p99 from p90, on a log latency axis.
fn percentiles(p: &mut Panels, doc: &ResultFile, jobs: &[String], name: &str) -> bool {
    let tail = |pcts: &[(f64, u64)]| -> Vec<(f64, u64)> {
        pcts.iter().copied().filter(|x| x.0 >= 50.0).collect()
    };
    let ranks: BTreeSet<u64> = doc
        .jobs
        .iter()
        .flat_map(|j| j.dirs.iter().filter(|d| d.total_ios > 0))
        .flat_map(|d| {
            tail(&d.clat_pct)
                .into_iter()
                .chain(prios(d).flat_map(|x| tail(&x.pct)))
        })
        .map(|(pct, _)| (pct * 1e6).round() as u64)
        .collect();
    let names: Vec<(f64, String)> = ranks
        .iter()
        .enumerate()
        .map(|(i, &r)| (i as f64, format!("p{}", r as f64 / 1e6)))
        .collect();
    let axes = Axes {
        title: "Completion latency percentiles (log)",
        x_label: "percentile",
        y_label: "us (log)",
        x_scale: XScale::Linear,
        y_log: true,
        x_names: &names,
    };
    let at = |pct: f64| ranks.iter().position(|&r| r == (pct * 1e6).round() as u64);
    let mut drew = false;
    for (job, label) in doc.jobs.iter().zip(jobs) {
        for (d, dir) in job.dirs.iter().enumerate().filter(|(_, d)| d.total_ios > 0) {
            let series = format!("{name} {label} {}", DIR_NAMES[d]);
            let each = std::iter::once((series.clone(), &dir.clat_pct))
                .chain(prios(dir).map(|x| (format!("{series} prio {}", x.name()), &x.pct)));
            for (s, pcts) in each {
                let pts: Vec<(f64, f64)> = tail(pcts)
                    .iter()
                    .filter_map(|&(pct, ns)| Some((at(pct)? as f64, ns as f64 / 1000.0)))
                    .collect();
                if !pts.is_empty() {
                    p.line(
                        &axes,
                        LineSeries {
                            dots: true,
                            ..LineSeries::new(s, pts)
                        },
                    );
                    drew = true;
                }
            }
        }
    }
    drew
}

/// A direction's priorities when it has several (cmdprio): each gets a line of its own.
fn prios(d: &ioscope_results::Dir) -> impl Iterator<Item = &ioscope_results::Prio> {
    let several = d.prios.len() > 1;
    d.prios.iter().filter(move |_| several)
}

/// A latency histogram: the share of I/Os per power-of-two latency bucket, a bar per
/// job and direction.
fn histogram(name: &str, hists: &[(String, Vec<(u64, u64)>)]) -> Bars {
    let per: Vec<BTreeMap<u32, f64>> = hists.iter().map(|h| buckets::histogram(&h.1)).collect();
    let all = per.iter().flat_map(|m| m.keys().copied());
    let (lo, hi) = all.fold((u32::MAX, 0), |(a, b), k| (a.min(k), b.max(k)));
    let series = hists
        .iter()
        .zip(&per)
        .map(|((label, _), m)| {
            BarSeries::new(
                label.clone(),
                (lo..=hi)
                    .map(|b| Some(m.get(&b).copied().unwrap_or(0.0)))
                    .collect(),
            )
        })
        .collect();
    Bars {
        title: format!("Completion latency histogram: {name} (json+ bins, powers of two)"),
        y_label: "% of I/Os".into(),
        categories: (lo..=hi).map(buckets::name).collect(),
        series,
    }
}

/// Bandwidth and IOPS between successive interim reports of each job.
fn interim(p: &mut Panels, docs: &[ResultFile], name: &str) {
    let jobs = job_names(docs[0].jobs.iter().map(|j| j.name.as_str()));
    for (ji, job) in jobs.iter().enumerate() {
        for (d, dname) in DIR_NAMES.iter().enumerate() {
            let mut bw = Vec::new();
            let mut iops = Vec::new();
            for pair in docs.windows(2) {
                let (Some(a), Some(b)) = (pair[0].jobs.get(ji), pair[1].jobs.get(ji)) else {
                    continue;
                };
                let dt = b.job_runtime_ms.saturating_sub(a.job_runtime_ms) as f64 / 1000.0;
                if dt <= 0.0 {
                    continue;
                }
                let t = b.job_runtime_ms as f64 / 1000.0;
                let db = b.dirs[d].io_bytes.saturating_sub(a.dirs[d].io_bytes) as f64;
                let di = b.dirs[d].total_ios.saturating_sub(a.dirs[d].total_ios) as f64;
                bw.push((t, db / dt / 1048576.0));
                iops.push((t, di / dt));
            }
            if bw.iter().all(|p| p.1 == 0.0) {
                continue;
            }
            let label = format!("{name} {job} {dname}");
            let axes = Axes::time("Bandwidth per interval (interim reports)", "MiB/s");
            p.line(&axes, LineSeries::new(label.clone(), bw));
            let axes = Axes::time("IOPS per interval (interim reports)", "IOPS");
            p.line(&axes, LineSeries::new(label, iops));
        }
    }
}
