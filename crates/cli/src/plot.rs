//! `ioscope plot`: the graphs of one run — what fio2gnuplot, fio_generate_plots and
//! fio-plot draw — from fio/ioscope logs and JSON results, as one SVG (and HTML page):
//! bandwidth and IOPS over time, latency over time (per-I/O entries averaged per
//! window), completion-latency percentiles per hist-log row, latency CDFs from json+
//! bins, and per-interval bandwidth and IOPS from interim JSON reports.

use crate::command::{self, Context as Cx, Flag};
use anyhow::{bail, Context, Result};
use ioscope_iolog::read as logs;
use ioscope_iolog::LogKind;
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_plot::html::Page;
use ioscope_plot::{Figure, LineSeries, Lines, Panel, XScale};
use ioscope_results::DIR_NAMES;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use FlagValue::Required as ReqVal;

/// Per-I/O logs are averaged into about this many windows by default.
const WINDOWS: u64 = 300;
/// Percentiles drawn from hist logs.
const HIST_PCTS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// `ioscope plot`'s arguments.
#[derive(Default)]
pub struct Args {
    output: Option<String>,
    html: Option<String>,
    window: Option<String>,
    operands: Vec<String>,
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.operands.push(word);
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: FlagDef {
            aliases: &["o"],
            ..flag("output", ReqVal, "FILE.svg", "Write the graphs to this SVG file (required)")
        },
        verbs: &[],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("html", ReqVal, "FILE", "Also write a self-contained HTML page with the graphs"),
        verbs: &[],
        set: |a, v| {
            a.html = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("window", ReqVal, "TIME", "Average per-I/O log entries over windows this long (default: the run cut into 300 windows)"),
        verbs: &[],
        set: |a, v| {
            a.window = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some(out) = p.output.as_deref() else {
        bail!("plot: name the SVG to write with -o FILE.svg");
    };
    if p.operands.is_empty() {
        bail!("plot: give log files or JSON results (see ioscope plot --help)");
    }
    let window_ms = match p.window.as_deref() {
        Some(v) => Some(
            (ioscope_options::units::parse_time_us(v, 1_000_000)
                .map_err(|e| anyhow::anyhow!("--window: {e}"))?
                / 1000)
                .max(1),
        ),
        None => None,
    };
    // Created first: a bad path fails before the inputs are read.
    let (svg_path, mut svg_file) = crate::term::out_file(Some(out))?
        .ok_or_else(|| anyhow::anyhow!("plot: name the SVG to write with -o FILE.svg"))?;
    let html = crate::term::out_file(p.html.as_deref())?;
    let mut panels = Panels::default();
    for f in &p.operands {
        let path = Path::new(f);
        match LogKind::of(path) {
            Some(LogKind::ClatHist) => panels.hist(path)?,
            Some(kind) => panels.log(path, kind, window_ms)?,
            None => panels.json(path)?,
        }
    }
    let figure = panels.figure()?;
    let svg = figure.svg()?;
    svg_file
        .write_all(svg.as_bytes())
        .with_context(|| svg_path.clone())?;
    if let Some((path, mut f)) = html {
        let mut page = Page::new("ioscope plot");
        page.meta("inputs", p.operands.join(", "));
        page.figure(
            &figure,
            &p.operands.join(", "),
            "One panel per kind of input; a line per file and direction",
        );
        f.write_all(page.render().as_bytes())
            .with_context(|| path.clone())?;
    }
    println!("{svg_path}");
    Ok(ExitCode::SUCCESS)
}

/// The panels being filled, by title, in the order they first appear.
#[derive(Default)]
struct Panels {
    order: Vec<String>,
    panels: BTreeMap<String, Lines>,
}

impl Panels {
    fn add(&mut self, title: &str, y_label: &str, x_label: &str, scale: XScale, s: LineSeries) {
        if !self.panels.contains_key(title) {
            self.order.push(title.to_string());
        }
        let l = self
            .panels
            .entry(title.to_string())
            .or_insert_with(|| Lines {
                title: title.to_string(),
                x_label: x_label.into(),
                y_label: y_label.into(),
                x_scale: scale,
                series: Vec::new(),
                labels: Vec::new(),
                bands: Vec::new(),
            });
        l.series.push(s);
    }

    fn figure(mut self) -> Result<Figure> {
        let panels: Vec<Panel> = self
            .order
            .iter()
            .filter_map(|t| self.panels.remove(t))
            .filter(|l| l.series.iter().any(|s| !s.points.is_empty()))
            .map(Panel::Lines)
            .collect();
        if panels.is_empty() {
            bail!("plot: the inputs hold nothing to draw");
        }
        Ok(Figure {
            width: 1100,
            ..Figure::new(panels)
        })
    }

    /// A bw/iops/latency log, per direction and window. Entries of averaged logs
    /// (log_avg_msec; fio writes their bs as 0) are rates or means already: their mean
    /// is drawn. Per-I/O entries (bs > 0) are I/Os: a window's IOPS is their count and
    /// its bandwidth their bytes over the window's length; latencies are averaged.
    fn log(&mut self, path: &Path, kind: LogKind, window_ms: Option<u64>) -> Result<()> {
        let mut entries: Vec<(u64, u64, u8, u64)> = Vec::new();
        logs::for_each(path, logs::parse_entry, |e| {
            entries.push((e.t_ms, e.value, e.ddir, e.bs))
        })?;
        let last = entries.iter().map(|e| e.0).max().unwrap_or(0);
        let w = window_ms.unwrap_or((last / WINDOWS).max(1));
        let per_io = entries.iter().any(|e| e.3 > 0);
        let name = file_name(path);
        for d in 0..3u8 {
            // Window → (sum of values, sum of bytes, count).
            let mut acc: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new();
            for &(t, v, _, bs) in entries.iter().filter(|e| e.2 == d) {
                let slot = acc.entry(t / w).or_default();
                slot.0 += v as f64;
                slot.1 += bs as f64;
                slot.2 += 1;
            }
            if acc.is_empty() {
                continue;
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
            let points = acc
                .iter()
                .map(|(&k, a)| ((k * w + w / 2) as f64 / 1000.0, y(k, a)))
                .collect();
            let dir = DIR_NAMES[d as usize];
            let (title, unit, label) = match kind {
                LogKind::Bw => ("Bandwidth over time", "MiB/s", format!("{name} {dir}")),
                LogKind::Iops => ("IOPS over time", "IOPS", format!("{name} {dir}")),
                _ => (
                    "Latency over time (mean per window)",
                    "us",
                    format!("{name} {dir} {}", kind.name()),
                ),
            };
            self.add(
                title,
                unit,
                "time, s",
                XScale::Linear,
                LineSeries::new(label, points),
            );
        }
        Ok(())
    }

    /// A clat_hist log: per row and direction, percentiles of that row's bins.
    fn hist(&mut self, path: &Path) -> Result<()> {
        let mut rows = Vec::new();
        logs::for_each(path, logs::parse_hist_row, |r| rows.push(r))?;
        let name = file_name(path);
        for d in 0..3u8 {
            let mine: Vec<&logs::HistRow> = rows.iter().filter(|r| r.ddir == d).collect();
            if mine.is_empty() {
                continue;
            }
            for p in HIST_PCTS {
                let points = mine
                    .iter()
                    .filter_map(|r| {
                        Some((r.t_ms as f64 / 1000.0, bin_percentile(&r.bins, p)? / 1000.0))
                    })
                    .collect();
                let s = LineSeries::new(format!("{name} {} p{p}", DIR_NAMES[d as usize]), points);
                self.add(
                    "Completion latency percentiles over time (per hist-log row)",
                    "us",
                    "time, s",
                    XScale::Linear,
                    s,
                );
            }
        }
        Ok(())
    }

    /// A JSON result: CDFs from json+ bins; with several documents (interim reports),
    /// bandwidth and IOPS per interval.
    fn json(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
        let docs = ioscope_results::parse_all(&text, path)?;
        let name = file_name(path);
        let last = docs.last().expect("parse_all gives at least one");
        let mut drew = false;
        for job in &last.jobs {
            for (d, dir) in job.dirs.iter().enumerate() {
                let total: u64 = dir.clat_bins.iter().map(|b| b.1).sum();
                if total == 0 {
                    continue;
                }
                let mut cum = 0;
                let points = dir
                    .clat_bins
                    .iter()
                    .filter(|b| b.0 > 0)
                    .map(|&(ns, n)| {
                        cum += n;
                        (ns as f64 / 1000.0, cum as f64 * 100.0 / total as f64)
                    })
                    .collect();
                let s = LineSeries::new(format!("{name} {} {}", job.name, DIR_NAMES[d]), points);
                self.add(
                    "Completion latency CDF (json+ bins)",
                    "% of I/Os at or below",
                    "latency, us (log2)",
                    XScale::Log2,
                    s,
                );
                drew = true;
            }
        }
        if docs.len() > 1 {
            self.interim(&docs, &name);
            drew = true;
        }
        if !drew {
            bail!(
                "{}: nothing to draw: no json+ latency bins (--output-format=json+) and only one report (several come with --status-interval)",
                path.display()
            );
        }
        Ok(())
    }

    /// Bandwidth and IOPS between successive interim reports of each job.
    fn interim(&mut self, docs: &[ioscope_results::ResultFile], name: &str) {
        let jobs: Vec<String> = docs[0].jobs.iter().map(|j| j.name.clone()).collect();
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
                self.add(
                    "Bandwidth per interval (interim reports)",
                    "MiB/s",
                    "time, s",
                    XScale::Linear,
                    LineSeries::new(label.clone(), bw),
                );
                self.add(
                    "IOPS per interval (interim reports)",
                    "IOPS",
                    "time, s",
                    XScale::Linear,
                    LineSeries::new(label, iops),
                );
            }
        }
    }
}

/// The latency (ns) at percentile `p` of one hist-log row: fio's bins (1856, or fewer
/// with log_hist_coarseness, each then covering 2^c fio bins), by rank.
fn bin_percentile(bins: &[u64], p: f64) -> Option<f64> {
    let total: u64 = bins.iter().sum();
    if total == 0 {
        return None;
    }
    let coarse = (ioscope_stats::hist::FIO_BUCKETS / bins.len().max(1)).max(1);
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut cum = 0;
    for (i, &n) in bins.iter().enumerate() {
        cum += n;
        if cum >= rank {
            return Some(ioscope_stats::hist::fio_value(i * coarse) as f64);
        }
    }
    None
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::bin_percentile;

    #[test]
    fn percentiles_of_a_row() {
        let mut bins = vec![0u64; 1856];
        bins[10] = 90;
        bins[100] = 10;
        let v = |i: usize| ioscope_stats::hist::fio_value(i) as f64;
        assert_eq!(bin_percentile(&bins, 50.0), Some(v(10)));
        assert_eq!(bin_percentile(&bins, 90.0), Some(v(10)));
        assert_eq!(bin_percentile(&bins, 99.0), Some(v(100)));
        assert_eq!(bin_percentile(&[0; 4], 50.0), None);
    }
}
