//! The sweep's pictures: per sweep and axis, bandwidth, IOPS, mean clat and p99/p99.9
//! clat against the axis (one line per profile, direction and value of the other axes),
//! each line labelled at its best bandwidth, best IOPS and lowest latency — each taken
//! from its own column — and, on bandwidth and IOPS charts, at its knee; failed points
//! marked. Plus the QD × numjobs heatmap and the steady-state convergence chart.

use super::table::{axis_number, Row};
use crate::campaign::{Loaded, Status};
use ioscope_analysis::steady::snia_check;
use ioscope_analysis::sweep::{best_points, knee, SeriesPoint};
use ioscope_plot::{rgb, Band, Figure, Heatmap, LineSeries, Lines, Panel, PointLabel, XScale};

/// One SVG file: its name in graphs/, a caption, the figure.
pub struct Chart {
    pub file: String,
    pub caption: String,
    pub figure: Figure,
}

/// Axes drawn with log2 x: powers of two are the natural steps of these.
const LOG2_AXES: &[&str] = &[
    "iodepth",
    "numjobs",
    "bs",
    "blocksize",
    "iodepth_batch_submit",
    "iodepth_batch",
    "size",
];

/// What a line of a chart is made of.
struct Series {
    /// The small multiple it is drawn in: profile and direction.
    facet: String,
    name: String,
    points: Vec<SeriesPoint>,
    /// p99 and p99.9 clat per point (ns), aligned with `points`.
    tails: Vec<Tail>,
}

/// p99 and p99.9 completion latency of a point, ns.
type Tail = (Option<f64>, Option<f64>);

/// The metric a chart shows.
#[derive(Clone, Copy)]
enum Metric {
    Bw,
    Iops,
    ClatMean,
    ClatTail,
}

impl Metric {
    const ALL: [Metric; 4] = [Metric::Bw, Metric::Iops, Metric::ClatMean, Metric::ClatTail];

    fn slug(self) -> &'static str {
        match self {
            Metric::Bw => "bw",
            Metric::Iops => "iops",
            Metric::ClatMean => "clat-mean",
            Metric::ClatTail => "clat-p99",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Metric::Bw => "Bandwidth",
            Metric::Iops => "IOPS",
            Metric::ClatMean => "Mean completion latency",
            Metric::ClatTail => "p99 and p99.9 completion latency",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::Bw => "MiB/s",
            Metric::Iops => "IOPS",
            _ => "us",
        }
    }

    fn value(self, p: &SeriesPoint) -> Option<f64> {
        match self {
            Metric::Bw => p.bw.map(|b| b / 1024.0),
            Metric::Iops => p.iops,
            Metric::ClatMean | Metric::ClatTail => p.lat.map(|ns| ns / 1000.0),
        }
    }
}

/// The distinct sweeps of the records, in order ("" for a plain directory).
fn sweeps(l: &Loaded) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &l.records {
        if !out.contains(&r.sweep) {
            out.push(r.sweep.clone());
        }
    }
    out
}

/// Axes of a sweep that take more than one value there.
fn varying_axes(l: &Loaded, rows: &[Row], sweep: &str) -> Vec<String> {
    l.axes
        .iter()
        .filter(|a| {
            let mut vals: Vec<&str> = rows
                .iter()
                .filter(|r| r.rec.sweep == sweep)
                .filter_map(|r| {
                    r.rec
                        .axes
                        .iter()
                        .find(|(k, _)| k == *a)
                        .map(|(_, v)| v.as_str())
                })
                .collect();
            vals.sort_unstable();
            vals.dedup();
            vals.len() > 1
        })
        .cloned()
        .collect()
}

/// Lines of `axis` in `sweep`: keyed by profile, direction and the other axes' values.
fn series(rows: &[Row], sweep: &str, axis: &str) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    let mut failed_x: Vec<(String, String, f64)> = Vec::new();
    for r in rows.iter().filter(|r| r.rec.sweep == sweep) {
        let Some(x) = r
            .rec
            .axes
            .iter()
            .find(|(k, _)| k == axis)
            .and_then(|(_, v)| axis_number(v))
        else {
            continue;
        };
        let others: Vec<String> = r
            .rec
            .axes
            .iter()
            .filter(|(k, _)| k != axis)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if matches!(r.rec.status, Status::Failed(_)) {
            failed_x.push((r.rec.profile.clone(), others.join(" "), x));
            continue;
        }
        let Some(f) = &r.figures else { continue };
        let prio = r.prio.as_ref().map(|p| format!("prio {p}"));
        let facet = format!(
            "{} {} {}",
            r.rec.profile,
            r.direction,
            prio.unwrap_or_default()
        )
        .trim()
        .to_string();
        let name = others.join(" ");
        let name = if name.is_empty() { facet.clone() } else { name };
        let point = SeriesPoint {
            x,
            bw: f.bw_kib_s,
            iops: Some(f.iops),
            lat: f.clat_mean_ns,
            failed: false,
        };
        let tail = (f.clat_p99_ns, f.clat_p999_ns);
        match out.iter_mut().find(|s| s.name == name && s.facet == facet) {
            Some(s) => {
                s.points.push(point);
                s.tails.push(tail);
            }
            None => out.push(Series {
                facet,
                name,
                points: vec![point],
                tails: vec![tail],
            }),
        }
    }
    for s in &mut out {
        let mut idx: Vec<usize> = (0..s.points.len()).collect();
        idx.sort_by(|&a, &b| s.points[a].x.total_cmp(&s.points[b].x));
        s.points = idx.iter().map(|&i| s.points[i].clone()).collect();
        s.tails = idx.iter().map(|&i| s.tails[i]).collect();
        // A failed point of this profile and axis line: a marker, never a best point.
        for (profile, others, x) in &failed_x {
            let same_profile = s.facet == *profile || s.facet.starts_with(&format!("{profile} "));
            if same_profile && (s.name == *others || (others.is_empty() && s.name == s.facet)) {
                s.points.push(SeriesPoint {
                    x: *x,
                    failed: true,
                    ..SeriesPoint::default()
                });
            }
        }
    }
    out
}

/// The labels of one line on a chart of `metric`: best bw, best IOPS, lowest latency
/// (each from its own column, the y this chart's value at that x), and the knee.
fn labels(s: &Series, metric: Metric, short: &str) -> Vec<PointLabel> {
    let b = best_points(&s.points);
    let mut marks: Vec<(usize, &str)> = Vec::new();
    marks.extend(b.bw.map(|i| (i, "best bw")));
    marks.extend(b.iops.map(|i| (i, "best IOPS")));
    marks.extend(b.lat.map(|i| (i, "best lat")));
    if matches!(metric, Metric::Bw | Metric::Iops) {
        let ys: Vec<(f64, Option<f64>, bool)> = s
            .points
            .iter()
            .map(|p| (p.x, metric.value(p), p.failed))
            .collect();
        marks.extend(knee(&ys, 0.95).map(|i| (i, "knee")));
    }
    // Marks on the same point become one label.
    let mut out: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, text) in marks {
        match out.iter_mut().find(|(j, _)| *j == i) {
            Some(e) => e.1.push(text),
            None => out.push((i, vec![text])),
        }
    }
    out.into_iter()
        .filter_map(|(i, texts)| {
            let p = &s.points[i];
            let y = match metric {
                Metric::ClatTail => s.tails.get(i)?.0.map(|ns| ns / 1000.0)?,
                m => m.value(p)?,
            };
            Some(PointLabel {
                x: p.x,
                y,
                text: format!("{short}: {}", texts.join(", ")),
            })
        })
        .collect()
}

fn lines_panel(sweep: &str, axis: &str, metric: Metric, series: &[&Series], facet: &str) -> Lines {
    let log2 = LOG2_AXES.contains(&axis)
        || series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.x > 0.0 && (p.x as u64).is_power_of_two() && p.x.fract() == 0.0);
    let mut lines = Vec::new();
    let mut labels_out = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let short = format!("#{}", k + 1);
        let ok = s.points.iter().zip(&s.tails).filter(|(p, _)| !p.failed);
        let failed: Vec<f64> = s.points.iter().filter(|p| p.failed).map(|p| p.x).collect();
        match metric {
            Metric::ClatTail => {
                let pts = |pick: fn(&Tail) -> Option<f64>| {
                    s.points
                        .iter()
                        .zip(&s.tails)
                        .filter(|(p, _)| !p.failed)
                        .filter_map(|(p, t)| Some((p.x, pick(t)? / 1000.0)))
                        .collect::<Vec<_>>()
                };
                let mut a = LineSeries::new(format!("{short} {} p99", s.name), pts(|t| t.0));
                a.dots = true;
                a.failed = failed.clone();
                let mut b = LineSeries::new(format!("{short} {} p99.9", s.name), pts(|t| t.1));
                b.dots = true;
                lines.push(a);
                if !b.points.is_empty() {
                    lines.push(b);
                }
            }
            m => {
                let pts: Vec<(f64, f64)> =
                    ok.filter_map(|(p, _)| Some((p.x, m.value(p)?))).collect();
                let mut l = LineSeries::new(format!("{short} {}", s.name), pts);
                l.dots = true;
                l.failed = failed;
                lines.push(l);
            }
        }
        labels_out.extend(labels(s, metric, &short));
    }
    // Latency grows by decades with depth: the tail stays in view on a log axis (unless
    // a point is 0, which it cannot place: fio-tests trees carry 0 for "not measured").
    let y_log = matches!(metric, Metric::ClatTail)
        && lines.iter().flat_map(|l| &l.points).all(|p| p.1 > 0.0);
    let scope = if sweep.is_empty() {
        String::new()
    } else {
        format!("{sweep}: ")
    };
    let facet = if facet.is_empty() {
        String::new()
    } else {
        format!(": {facet}")
    };
    Lines {
        title: format!("{scope}{} against {axis}{facet}", metric.title()),
        x_label: if log2 {
            format!("{axis} (log2)")
        } else {
            axis.to_string()
        },
        y_label: metric.unit().into(),
        x_scale: if log2 { XScale::Log2 } else { XScale::Linear },
        y_log,
        x_names: Vec::new(),
        series: lines,
        labels: labels_out,
        bands: Vec::new(),
    }
}

/// Every line chart of the results, one SVG each.
pub fn line_charts(l: &Loaded, rows: &[Row]) -> Vec<Chart> {
    let mut out = Vec::new();
    for sweep in sweeps(l) {
        for axis in varying_axes(l, rows, &sweep) {
            let series = series(rows, &sweep, &axis);
            if series.iter().all(|s| s.points.iter().all(|p| p.failed)) {
                continue;
            }
            let mut facets: Vec<&str> = Vec::new();
            for s in &series {
                if !facets.contains(&s.facet.as_str()) {
                    facets.push(&s.facet);
                }
            }
            for metric in Metric::ALL {
                // Small multiples: a panel per profile and direction, never one chart
                // with every line of the sweep.
                let panels: Vec<Panel> = facets
                    .iter()
                    .map(|f| {
                        let of: Vec<&Series> = series.iter().filter(|s| s.facet == *f).collect();
                        lines_panel(
                            &sweep,
                            &axis,
                            metric,
                            &of,
                            if facets.len() > 1 { f } else { "" },
                        )
                    })
                    .filter(|l| l.series.iter().any(|s| !s.points.is_empty()))
                    .map(Panel::Lines)
                    .collect();
                if panels.is_empty() {
                    continue;
                }
                let prefix = if sweep.is_empty() {
                    String::new()
                } else {
                    format!("{sweep}-")
                };
                out.push(Chart {
                    file: crate::matrix::file_safe(&format!(
                        "{prefix}{}-vs-{axis}.svg",
                        metric.slug()
                    )),
                    caption: format!(
                        "{} against {axis}; labels: best bw, best IOPS, best lat (lowest mean \
                         clat) of each line, each from its own column, and the knee (first \
                         point at 95% of the line's best); x: failed points",
                        metric.title()
                    ),
                    figure: Figure {
                        width: 1200,
                        ..Figure::new(panels)
                    },
                });
            }
        }
    }
    out
}

/// IOPS over iodepth × numjobs, a panel per profile, direction and other axes' values.
pub fn heatmaps(l: &Loaded, rows: &[Row]) -> Vec<Chart> {
    let mut out = Vec::new();
    for sweep in sweeps(l) {
        let axes = varying_axes(l, rows, &sweep);
        if !(axes.iter().any(|a| a == "iodepth") && axes.iter().any(|a| a == "numjobs")) {
            continue;
        }
        let value = |r: &Row, a: &str| {
            r.rec
                .axes
                .iter()
                .find(|(k, _)| k == a)
                .map(|(_, v)| v.clone())
        };
        let sorted = |a: &str| {
            let mut v: Vec<String> = rows
                .iter()
                .filter(|r| r.rec.sweep == sweep)
                .filter_map(|r| value(r, a))
                .collect();
            v.sort_by(|x, y| {
                axis_number(x)
                    .unwrap_or(0.0)
                    .total_cmp(&axis_number(y).unwrap_or(0.0))
            });
            v.dedup();
            v
        };
        let (xs, ys) = (sorted("iodepth"), sorted("numjobs"));
        let mut keys: Vec<String> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.rec.sweep == sweep && r.figures.is_some())
        {
            let k = panel_key(r);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        let panels: Vec<Panel> = keys
            .iter()
            .map(|k| {
                let values = ys
                    .iter()
                    .map(|y| {
                        xs.iter()
                            .map(|x| {
                                rows.iter()
                                    .find(|r| {
                                        r.rec.sweep == sweep
                                            && panel_key(r) == *k
                                            && value(r, "iodepth").as_deref() == Some(x)
                                            && value(r, "numjobs").as_deref() == Some(y)
                                    })
                                    .and_then(|r| r.figures.as_ref().map(|f| f.iops))
                            })
                            .collect()
                    })
                    .collect();
                Panel::Heatmap(Heatmap {
                    title: format!("IOPS: {k}"),
                    x_label: "iodepth".into(),
                    y_label: "numjobs".into(),
                    xs: xs.clone(),
                    ys: ys.clone(),
                    values,
                    log_colour: false,
                })
            })
            .collect();
        if panels.is_empty() {
            continue;
        }
        let prefix = if sweep.is_empty() {
            String::new()
        } else {
            format!("{sweep}-")
        };
        out.push(Chart {
            file: crate::matrix::file_safe(&format!("{prefix}heatmap-iodepth-numjobs.svg")),
            caption: "IOPS for each iodepth and numjobs (grey: failed, pruned or not run)".into(),
            figure: Figure::new(panels),
        });
    }
    out
}

/// Profile, direction and the values of axes other than iodepth and numjobs.
fn panel_key(r: &Row) -> String {
    let others: Vec<String> = r
        .rec
        .axes
        .iter()
        .filter(|(k, _)| k != "iodepth" && k != "numjobs")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let prio = r.prio.as_ref().map(|p| format!("prio {p}"));
    format!(
        "{} {} {} {}",
        r.rec.profile,
        r.direction,
        prio.unwrap_or_default(),
        others.join(" ")
    )
    .split_whitespace()
    .collect::<Vec<_>>()
    .join(" ")
}

/// The convergence of the steady-state rounds: the value per round, the last window
/// (shaded), its least-squares line, and SNIA's allowed range (20% of the window mean,
/// drawn as mean ± 10%).
pub fn steady_state(l: &Loaded) -> Option<Chart> {
    if l.rounds.is_empty() {
        return None;
    }
    let values: Vec<f64> = l.rounds.iter().map(|r| r.value).collect();
    let pts: Vec<(f64, f64)> = l.rounds.iter().map(|r| (r.round as f64, r.value)).collect();
    let mut main = LineSeries::new(format!("{} per round", l.steady_metric), pts);
    main.dots = true;
    let mut series = vec![main];
    let mut bands = Vec::new();
    let mut labels = Vec::new();
    if let Some(c) = snia_check(&values, &l.criteria) {
        let (a, b) = (c.first_round as f64, c.last_round as f64);
        let mut fit = LineSeries::new(
            format!(
                "fit over rounds {}-{} (slope excursion {:.1}%)",
                c.first_round,
                c.last_round,
                c.slope_pct()
            ),
            vec![
                (a, c.intercept + c.slope * a),
                (b, c.intercept + c.slope * b),
            ],
        );
        fit.color = Some(rgb(0, 0, 0));
        series.push(fit);
        let half = c.mean * l.criteria.range_pct / 200.0;
        bands.push(Band {
            name: format!(
                "window, mean ± {:.0}% (range limit {:.0}%)",
                l.criteria.range_pct / 2.0,
                l.criteria.range_pct
            ),
            x: (a, b),
            y: (c.mean - half, c.mean + half),
            color: rgb(0, 158, 115),
        });
    }
    if let Some(r) = l.rounds.iter().find(|r| r.steady) {
        labels.push(PointLabel {
            x: r.round as f64,
            y: r.value,
            text: format!("steady at round {}", r.round),
        });
    }
    let title = match l.steady_mode.as_str() {
        "fio" => "Steady state (fio ss=)".to_string(),
        _ => format!(
            "Steady state (SNIA: window {}, range <= {:.0}%, slope <= {:.0}%)",
            l.criteria.window, l.criteria.range_pct, l.criteria.slope_pct
        ),
    };
    Some(Chart {
        file: "steady-state.svg".into(),
        caption: "Tracking value per round; the shaded window is the last measurement window with \
                  its allowed range, the black line its least-squares fit"
            .into(),
        figure: Figure::new(vec![Panel::Lines(Lines {
            title,
            x_label: "round".into(),
            y_label: l.steady_metric.clone(),
            x_scale: XScale::Linear,
            y_log: false,
            x_names: Vec::new(),
            series,
            labels,
            bands,
        })]),
    })
}

/// The best points as a table: per sweep, axis and line, where its best bandwidth,
/// best IOPS, lowest mean latency and IOPS knee are.
pub fn best_table(l: &Loaded, rows: &[Row]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for sweep in sweeps(l) {
        for axis in varying_axes(l, rows, &sweep) {
            for s in series(rows, &sweep, &axis) {
                let b = best_points(&s.points);
                let at = |i: Option<usize>, v: fn(&SeriesPoint) -> Option<f64>, unit: &str| {
                    i.and_then(|i| {
                        let p = &s.points[i];
                        Some(format!(
                            "{axis}={} ({} {unit})",
                            ioscope_plot_num(p.x),
                            readable(v(p)?)
                        ))
                    })
                    .unwrap_or_else(|| "-".into())
                };
                let ys: Vec<(f64, Option<f64>, bool)> =
                    s.points.iter().map(|p| (p.x, p.iops, p.failed)).collect();
                out.push(vec![
                    sweep.clone(),
                    axis.clone(),
                    if s.name == s.facet {
                        s.name.clone()
                    } else {
                        format!("{} {}", s.facet, s.name)
                    },
                    at(b.bw, |p| p.bw.map(|k| k / 1024.0), "MiB/s"),
                    at(b.iops, |p| p.iops, "IOPS"),
                    at(b.lat, |p| p.lat.map(|n| n / 1000.0), "us"),
                    at(knee(&ys, 0.95), |p| p.iops, "IOPS"),
                ]);
            }
        }
    }
    out
}

/// A figure for people: whole numbers with thousands separators from 100 up, two or
/// three significant digits below.
pub fn readable(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() < 10.0 {
        return format!("{v:.2}");
    }
    if v.abs() < 100.0 {
        return format!("{v:.1}");
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

fn ioscope_plot_num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}
