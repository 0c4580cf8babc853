//! The comparison as a picture: per job and direction, a bar per metric of B's change
//! against A in percent, its 95% interval as a whisker, coloured by verdict; every
//! repetition of both sides as a dot (the spread the verdict weighs); and A's and B's
//! latency distributions overlaid where both have json+ bins. The same with the
//! tables in one HTML page.

use super::inputs::{self, Row, Side};
use super::output;
use ioscope_analysis::Verdict;
use ioscope_plot::html::Page;
use ioscope_plot::{rgb, BarSeries, Bars, Figure, LineSeries, Lines, Panel, Rgb, XScale};
use ioscope_results::DIR_NAMES;

/// The sides' colours wherever both are drawn.
const A_COLOUR: Rgb = rgb(0, 114, 178);
const B_COLOUR: Rgb = rgb(230, 159, 0);
/// A's dots left of the metric's place, B's right of it.
const SPREAD: f64 = 0.12;

/// Verdict colours: green better, red worse, amber not enough repetitions, grey no change.
fn colour(v: Verdict) -> Rgb {
    match v {
        Verdict::Better => rgb(0, 158, 115),
        Verdict::Worse => rgb(213, 94, 0),
        Verdict::NotEnough => rgb(230, 159, 0),
        Verdict::NoChange => rgb(150, 150, 150),
    }
}

/// Per job and direction, in row order: the change, the repetitions, the overlay.
pub fn figure(rows: &[Row], a: &Side, b: &Side) -> Figure {
    let mut groups: Vec<(String, &'static str, Vec<&Row>)> = Vec::new();
    for r in rows {
        let label = r.label();
        match groups
            .iter_mut()
            .find(|(j, d, _)| *j == label && *d == r.dir)
        {
            Some(g) => g.2.push(r),
            None => groups.push((label, r.dir, vec![r])),
        }
    }
    let mut panels = Vec::new();
    for (job, dir, rows) in groups {
        let mut s = BarSeries::new("B vs A", rows.iter().map(|r| r.cmp.delta_pct).collect());
        s.whiskers = rows.iter().map(|r| r.cmp.ci_pct).collect();
        s.colors = rows.iter().map(|r| Some(colour(r.cmp.verdict))).collect();
        panels.push(Panel::Bars(Bars {
            title: format!("{job} {dir}: B against A (95% interval; green better, red worse)"),
            y_label: "change, %".into(),
            categories: rows.iter().map(|r| r.metric.to_string()).collect(),
            series: vec![s],
        }));
        panels.push(Panel::Lines(repetitions(&job, dir, &rows)));
        let d = DIR_NAMES.iter().position(|n| *n == dir).unwrap_or(0);
        if let Some(l) = overlay(&job, dir, a, b, rows[0], d) {
            panels.push(Panel::Lines(l));
        }
    }
    Figure::new(panels)
}

/// Every repetition of each metric as a dot, as % of A's mean (so that IOPS and
/// latency share an axis): two tight clusters apart are a change, two clouds that
/// overlap are noise.
fn repetitions(job: &str, dir: &str, rows: &[&Row]) -> Lines {
    let side = |name: &str, colour: Rgb, dx: f64, pick: fn(&Row) -> &[f64]| {
        let points = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cmp.a != 0.0)
            .flat_map(|(i, r)| {
                pick(r)
                    .iter()
                    .map(move |v| (i as f64 + dx, v / r.cmp.a * 100.0))
            })
            .collect();
        LineSeries {
            color: Some(colour),
            line: false,
            ..LineSeries::new(name, points)
        }
    };
    Lines {
        title: format!("{job} {dir}: every repetition, as % of A's mean"),
        x_label: "metric".into(),
        y_label: "% of A's mean".into(),
        x_scale: XScale::Linear,
        y_log: false,
        x_names: rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, r.metric.to_string()))
            .collect(),
        series: vec![
            side("A", A_COLOUR, -SPREAD, |r| &r.reps.0),
            side("B", B_COLOUR, SPREAD, |r| &r.reps.1),
        ],
        labels: Vec::new(),
        bands: Vec::new(),
    }
}

/// A's and B's completion-latency CDFs over each other (json+ bins summed over the
/// repetitions), on a log latency axis where the tail shows.
fn overlay(job: &str, dir: &str, a: &Side, b: &Side, row: &Row, d: usize) -> Option<Lines> {
    let key = &row.job;
    let (ha, hb) = match &row.prio {
        Some(p) => (
            inputs::prio_bins(a, key, d, p),
            inputs::prio_bins(b, key, d, p),
        ),
        None => (inputs::bins(a, key, d), inputs::bins(b, key, d)),
    };
    if ha.iter().all(|x| x.1 == 0) || hb.iter().all(|x| x.1 == 0) {
        return None;
    }
    let cdf = |name: &str, colour: Rgb, bins: &[(u64, u64)]| LineSeries {
        color: Some(colour),
        ..LineSeries::new(name, crate::plot::cdf(bins))
    };
    Some(Lines {
        title: format!("{job} {dir}: completion latency, A and B (json+ bins)"),
        x_label: "latency, us (log2)".into(),
        y_label: "% of I/Os at or below".into(),
        x_scale: XScale::Log2,
        y_log: false,
        x_names: Vec::new(),
        series: vec![cdf("A", A_COLOUR, &ha), cdf("B", B_COLOUR, &hb)],
        labels: Vec::new(),
        bands: Vec::new(),
    })
}

/// A self-contained page: what was compared, what differs, the table and the chart.
pub fn html(head: &[String], rows: &[Row], notes: &[String], fig: &Figure) -> String {
    let mut p = Page::new("ioscope compare");
    if let Some((first, rest)) = head.split_first() {
        p.para(first);
        if !rest.is_empty() {
            p.heading("Differences besides the results");
            p.pre(&rest.join("\n"));
        }
    }
    p.heading("Results");
    let cells: Vec<Vec<String>> = rows.iter().map(|r| output::cells(r).to_vec()).collect();
    p.table(&output::HEADER, &cells);
    if !notes.is_empty() {
        p.pre(&notes.join("\n"));
    }
    let sub = head.first().map_or("", String::as_str);
    p.figure(
        fig,
        sub,
        "Per job and direction: the change of B against A per metric (whiskers: its 95% interval); every repetition of A and B as a dot; A's and B's latency distributions where json+ bins exist",
    );
    p.render()
}
