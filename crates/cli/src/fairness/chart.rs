//! The fairness report as pictures: ideal against transferred bytes per job, each
//! job's latency (mean, p50, p99, p99.9 on a log axis: what a priority bought), and with
//! bandwidth logs each job's share of every window and Jain's index over time.

use super::output::Report;
use super::timeline;
use ioscope_analysis::Table;
use ioscope_plot::html::Page;
use ioscope_plot::{rgb, BarSeries, Bars, Figure, LineSeries, Lines, Panel, Rgb, XScale, PALETTE};

/// The ideal share shared by several jobs: no one job's colour.
const SHARED: Rgb = rgb(110, 110, 110);

/// The binary unit that keeps the largest of `max` bytes between 1 and 1024.
fn unit(max: u64) -> (f64, &'static str) {
    let mut u = (1.0, "bytes");
    for (i, name) in ["KiB", "MiB", "GiB", "TiB"].into_iter().enumerate() {
        let size = 1024f64.powi(i as i32 + 1);
        if max as f64 >= size {
            u = (size, name);
        }
    }
    u
}

/// The unit of the table's bytes: its largest, ideal or transferred.
fn table_unit(t: &Table) -> (f64, &'static str) {
    unit(
        t.rows
            .iter()
            .map(|x| x.ideal.max(x.xferred))
            .max()
            .unwrap_or(0),
    )
}

/// Bars per job; a shares panel and a Jain panel when the report has a timeline.
pub fn figure(r: &Report) -> Figure {
    let t = r.table;
    let names = timeline::labels(t);
    let (size, unit) = table_unit(t);
    let mib = |v: u64| Some(v as f64 / size);
    let mut panels = vec![Panel::Bars(Bars {
        title: format!(
            "Transferred against the ideal share ({} model)",
            r.model.name()
        ),
        y_label: unit.into(),
        categories: names.clone(),
        series: vec![
            BarSeries::new("ideal", t.rows.iter().map(|x| mib(x.ideal)).collect()),
            BarSeries::new("xferred", t.rows.iter().map(|x| mib(x.xferred)).collect()),
        ],
    })];
    panels.extend(latency(r, &names).map(Panel::Lines));
    if let Some(tl) = r.timeline.filter(|tl| !tl.windows.is_empty()) {
        let secs = |ms: u64| ms as f64 / 1000.0;
        let shares = (0..t.rows.len())
            .map(|j| {
                let pts = tl
                    .windows
                    .iter()
                    .map(|w| (secs(w.t_ms), w.share_pct[j]))
                    .collect();
                LineSeries::new(names[j].clone(), pts)
            })
            .chain(ideal_shares(
                t,
                &names,
                tl.windows.iter().map(|w| secs(w.t_ms)),
            ))
            .collect();
        panels.push(Panel::Lines(lines(
            format!(
                "Share of each window's bytes ({} s windows)",
                secs(tl.window_ms)
            ),
            "share, %",
            shares,
        )));
        let jain: Vec<(f64, f64)> = tl
            .windows
            .iter()
            .filter_map(|w| Some((secs(w.t_ms), w.jain?)))
            .collect();
        let mut s = LineSeries::new("Jain's index", jain);
        s.dots = true;
        panels.push(Panel::Lines(lines(
            "Jain's index per window (1 = shared by weight)".into(),
            "index",
            vec![s],
        )));
    }
    Figure::new(panels)
}

/// Dashed lines at each job's ideal share of a window (its weight over the total) from
/// the first window to the last: one line per distinct share, in the job's colour when
/// it is one job's alone, in grey when several jobs share it.
fn ideal_shares(t: &Table, names: &[String], times: impl Iterator<Item = f64>) -> Vec<LineSeries> {
    let times: Vec<f64> = times.collect();
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return Vec::new();
    };
    if t.total_weight == 0 {
        return Vec::new();
    }
    // Shares in hundredths of a percent, so equal weights give one line.
    let mut shares: Vec<(u64, Vec<usize>)> = Vec::new();
    for (j, r) in t.rows.iter().enumerate().filter(|(_, r)| r.weight > 0) {
        let key = (r.weight as f64 * 10_000.0 / t.total_weight as f64).round() as u64;
        match shares.iter_mut().find(|(k, _)| *k == key) {
            Some((_, jobs)) => jobs.push(j),
            None => shares.push((key, vec![j])),
        }
    }
    shares
        .into_iter()
        .map(|(key, jobs)| {
            let pct = key as f64 / 100.0;
            let who = match jobs.len() {
                1 => names[jobs[0]].clone(),
                n => format!("{n} jobs"),
            };
            let mut s = LineSeries::new(
                format!("ideal {who}: {pct:.1}%"),
                vec![(first, pct), (last, pct)],
            );
            s.dashed = true;
            s.color = Some(match jobs[..] {
                [j] => PALETTE[j % PALETTE.len()],
                _ => SHARED,
            });
            s
        })
        .collect()
}

/// Per job, its latency figures as dots on a log axis; `None` without any.
fn latency(r: &Report, names: &[String]) -> Option<Lines> {
    type Pick = fn(&super::output::Latency) -> Option<f64>;
    let figures: [(&str, Pick); 4] = [
        ("mean", |l| l.mean_ns),
        ("p50", |l| l.p50_ns.map(|v| v as f64)),
        ("p99", |l| l.p99_ns.map(|v| v as f64)),
        ("p99.9", |l| l.p99_9_ns.map(|v| v as f64)),
    ];
    let series: Vec<LineSeries> = figures
        .iter()
        .map(|(name, pick)| {
            let pts = r
                .latency
                .iter()
                .enumerate()
                .filter_map(|(j, l)| Some((j as f64, pick(l)? / 1000.0)))
                .collect();
            LineSeries {
                line: false,
                ..LineSeries::new(*name, pts)
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let kind = r.latency.first()?.kind;
    (!series.is_empty()).then(|| Lines {
        title: format!("Latency per job ({kind}, log axis)"),
        x_label: "job".into(),
        y_label: "us (log)".into(),
        x_scale: XScale::Linear,
        y_log: true,
        x_names: names
            .iter()
            .enumerate()
            .map(|(j, n)| (j as f64, n.clone()))
            .collect(),
        series,
        labels: Vec::new(),
        bands: Vec::new(),
    })
}

fn lines(title: String, y: &str, series: Vec<LineSeries>) -> Lines {
    Lines {
        title,
        x_label: "time, s (window start)".into(),
        y_label: y.into(),
        x_scale: XScale::Linear,
        y_log: false,
        x_names: Vec::new(),
        series,
        labels: Vec::new(),
        bands: Vec::new(),
    }
}

/// The text report and the charts in one page.
pub fn html(r: &Report, origin: &str, fig: &Figure, warnings: &[String]) -> String {
    let mut p = Page::new("ioscope fairness");
    p.meta("result", origin);
    p.meta("model", r.model.name());
    if let Some(v) = &r.results.version {
        p.meta("written by", v.as_str());
    }
    for w in warnings {
        p.warning(w);
    }
    p.heading("Shares");
    let (size, unit) = table_unit(r.table);
    let (ideal, xferred) = (format!("ideal, {unit}"), format!("xferred, {unit}"));
    p.table(
        &["job", "class", "prio", "weight", &ideal, &xferred, "%diff"],
        &rows(r.table, size),
    );
    let sub = format!("{} · model {}", origin, r.model.name());
    p.figure(
        fig,
        &sub,
        "Per job: the bytes its weight entitles it to, what it transferred, and its latency",
    );
    p.heading("Report");
    p.pre(&r.text().join("\n"));
    p.render()
}

/// The table's rows, bytes in units of `size` to one decimal.
fn rows(t: &Table, size: f64) -> Vec<Vec<String>> {
    let bytes = |v: u64| format!("{:.1}", v as f64 / size);
    t.rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.prio.class.name().to_string(),
                r.prio.level.to_string(),
                r.weight.to_string(),
                bytes(r.ideal),
                bytes(r.xferred),
                r.diff_pct.map_or("-".into(), |d| d.to_string()),
            ]
        })
        .collect()
}
