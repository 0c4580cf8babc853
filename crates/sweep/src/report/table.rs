//! The results as rows: one per point and direction (a row of empty figures for a point
//! that failed, was pruned or did not run), written as CSV, JSON and fio-tests' SSV.

use crate::campaign::{Loaded, Record, Status};
use ioscope_analysis::shape;
use ioscope_results::{Aggregation, Dir, Prio, DIR_NAMES};
use serde_json::{json, Value};

/// An axis value as a number: plain numbers, sizes (4k, 1m), percentages.
pub fn axis_number(v: &str) -> Option<f64> {
    let t = v.trim().trim_end_matches('%');
    t.parse::<f64>().ok().or_else(|| {
        ioscope_options::units::parse_size(t, 1024)
            .ok()
            .map(|n| n as f64)
    })
}

/// The figures of one direction of one point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub iops: f64,
    /// `None` for one priority's I/Os: fio counts their I/Os, not their bytes.
    pub bw_kib_s: Option<f64>,
    pub clat_mean_ns: Option<f64>,
    pub clat_p50_ns: Option<f64>,
    pub clat_p99_ns: Option<f64>,
    pub clat_p999_ns: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    /// `None` for one priority's I/Os, as bandwidth.
    pub io_kib: Option<u64>,
    pub runtime_ms: u64,
}

pub struct Row<'a> {
    pub rec: &'a Record,
    /// `read`, `write`, `trim`, or empty for a point without results.
    pub direction: &'static str,
    /// The I/O priority (`rt/0`) of a row of one priority's I/Os (fio's `prios`, when a
    /// direction has several); `None`: every I/O of the direction.
    pub prio: Option<String>,
    pub figures: Option<Figures>,
}

/// The CSV columns after the axes (units in the names).
const FIGURE_COLUMNS: [&str; 9] = [
    "iops",
    "bw_kib_s",
    "clat_mean_ns",
    "clat_p50_ns",
    "clat_p99_ns",
    "clat_p99.9_ns",
    "lat_mean_ns",
    "io_kib",
    "runtime_ms",
];

/// The directions of a record that moved data, with their figures.
pub fn rows(l: &Loaded) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for rec in &l.records {
        let job = rec.result.as_ref().and_then(|r| r.jobs.get(rec.job));
        let dirs: Vec<usize> = match (&rec.status, job) {
            (Status::Done, Some(j)) => (0..3)
                .filter(|&d| j.dirs[d].total_ios > 0 || j.dirs[d].io_bytes > 0)
                .collect(),
            _ => Vec::new(),
        };
        if dirs.is_empty() {
            out.push(Row {
                rec,
                direction: "",
                prio: None,
                figures: None,
            });
        }
        for d in dirs {
            let Some(j) = job else { continue };
            let x = &j.dirs[d];
            out.push(Row {
                rec,
                direction: DIR_NAMES[d],
                prio: None,
                figures: Some(Figures {
                    iops: x.iops,
                    bw_kib_s: Some(x.bw_bytes as f64 / 1024.0),
                    clat_mean_ns: x.clat_mean_ns,
                    clat_p50_ns: x.metric("clat_p50"),
                    clat_p99_ns: x.metric("clat_p99"),
                    clat_p999_ns: x.metric("clat_p99.9"),
                    lat_mean_ns: x.lat_mean_ns,
                    io_kib: Some(x.io_bytes / 1024),
                    runtime_ms: x.runtime_ms,
                }),
            });
            if x.prios.len() > 1 {
                out.extend(x.prios.iter().map(|p| Row {
                    rec,
                    direction: DIR_NAMES[d],
                    prio: Some(p.name()),
                    figures: Some(prio_figures(x, p)),
                }));
            }
        }
    }
    out
}

/// The figures of one priority's I/Os in a direction: its rate, its latency from fio's
/// percentiles (or its json+ bins), no bandwidth or bytes (fio reports only I/Os).
fn prio_figures(x: &Dir, p: &Prio) -> Figures {
    let pct = |q: f64| p.percentile(q).map(|v| v as f64);
    let secs = x.runtime_ms as f64 / 1000.0;
    Figures {
        iops: if secs > 0.0 {
            p.total_ios as f64 / secs
        } else {
            0.0
        },
        bw_kib_s: None,
        clat_mean_ns: shape::mean_var(&p.bins).map(|(mean, _)| mean),
        clat_p50_ns: pct(50.0),
        clat_p99_ns: pct(99.0),
        clat_p999_ns: pct(99.9),
        lat_mean_ns: None,
        io_kib: None,
        runtime_ms: x.runtime_ms,
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() && (x - x.round()).abs() < 1e-9 => format!("{}", x.round() as i64),
        Some(x) if x.is_finite() => format!("{x:.3}"),
        _ => String::new(),
    }
}

impl Figures {
    fn cells(&self) -> [String; 9] {
        [
            num(Some(self.iops)),
            num(self.bw_kib_s),
            num(self.clat_mean_ns),
            num(self.clat_p50_ns),
            num(self.clat_p99_ns),
            num(self.clat_p999_ns),
            num(self.lat_mean_ns),
            self.io_kib.map_or(String::new(), |k| k.to_string()),
            self.runtime_ms.to_string(),
        ]
    }
}

pub fn header(l: &Loaded) -> Vec<String> {
    let mut h = vec!["sweep".to_string(), "profile".into()];
    h.extend(l.axes.iter().cloned());
    h.extend(["direction", "prio", "status"].map(String::from));
    h.extend(FIGURE_COLUMNS.map(String::from));
    h.extend(["point", "file", "aggregation", "note"].map(String::from));
    h
}

/// The table of the HTML report: units in the header, fixed precision, latencies in
/// microseconds; the raw figures stay in results.csv and results.json.
pub fn readable(l: &Loaded, rows: &[Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut h = Vec::new();
    let sweeps = rows.iter().any(|r| !r.rec.sweep.is_empty());
    if sweeps {
        h.push("sweep".to_string());
    }
    h.push("profile".into());
    h.extend(l.axes.iter().cloned());
    h.extend(
        [
            "direction",
            "prio",
            "status",
            "IOPS",
            "MiB/s",
            "mean clat µs",
            "p50 µs",
            "p99 µs",
            "p99.9 µs",
            "aggregation",
        ]
        .map(String::from),
    );
    let us = |v: Option<f64>| v.map_or(String::new(), |ns| format!("{:.1}", ns / 1000.0));
    let body = rows
        .iter()
        .map(|r| {
            let mut c = Vec::new();
            if sweeps {
                c.push(r.rec.sweep.clone());
            }
            c.push(r.rec.profile.clone());
            for a in &l.axes {
                let v = r.rec.axes.iter().find(|(k, _)| k == a);
                c.push(v.map(|(_, v)| v.clone()).unwrap_or_default());
            }
            c.push(r.direction.to_string());
            c.push(r.prio.clone().unwrap_or_default());
            c.push(r.rec.status.name().to_string());
            match &r.figures {
                Some(f) => c.extend([
                    format!("{:.0}", f.iops),
                    f.bw_kib_s
                        .map_or(String::new(), |k| format!("{:.1}", k / 1024.0)),
                    us(f.clat_mean_ns),
                    us(f.clat_p50_ns),
                    us(f.clat_p99_ns),
                    us(f.clat_p999_ns),
                ]),
                None => c.extend(std::iter::repeat(String::new()).take(6)),
            }
            c.push(match r.rec.aggregation {
                Aggregation::Single => String::new(),
                Aggregation::Clones { clones, .. } => format!("sum of {clones} clones"),
            });
            c
        })
        .collect();
    (h, body)
}

/// The cells of a row, in [`header`]'s order.
pub fn cells(l: &Loaded, r: &Row) -> Vec<String> {
    let mut c = vec![r.rec.sweep.clone(), r.rec.profile.clone()];
    for a in &l.axes {
        c.push(
            r.rec
                .axes
                .iter()
                .find(|(k, _)| k == a)
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
        );
    }
    c.push(r.direction.to_string());
    c.push(r.prio.clone().unwrap_or_default());
    c.push(r.rec.status.name().to_string());
    match &r.figures {
        Some(f) => c.extend(f.cells()),
        None => c.extend(std::iter::repeat(String::new()).take(FIGURE_COLUMNS.len())),
    }
    c.push(r.rec.id.clone());
    let file = r
        .rec
        .file
        .as_ref()
        .map(|f| f.strip_prefix(&l.dir).unwrap_or(f).display().to_string());
    c.push(file.unwrap_or_default());
    c.push(r.rec.aggregation.note());
    c.push(match &r.rec.status {
        Status::Failed(e) | Status::Pruned(e) => e.clone(),
        _ => String::new(),
    });
    c
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv(l: &Loaded, rows: &[Row]) -> String {
    let mut out = header(l)
        .iter()
        .map(|h| csv_cell(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in rows {
        let line: Vec<String> = cells(l, r).iter().map(|c| csv_cell(c)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// The rows as JSON objects (numbers as numbers), with the units spelled out.
pub fn json(l: &Loaded, rows: &[Row]) -> Value {
    let head = header(l);
    let objs: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            for (h, c) in head.iter().zip(cells(l, r)) {
                let numeric = FIGURE_COLUMNS.contains(&h.as_str()) && !c.is_empty();
                let v = match c.parse::<f64>() {
                    Ok(x) if numeric => json!(x),
                    _ => json!(c),
                };
                m.insert(h.clone(), v);
            }
            Value::Object(m)
        })
        .collect();
    json!({
        // Marks the document as a report output, never read back as a result.
        ioscope_results::gather::REPORT_KEY: "results table",
        "units": {"iops": "I/O per second", "bw_kib_s": "KiB/s", "*_ns": "nanoseconds",
                  "io_kib": "KiB", "runtime_ms": "milliseconds"},
        "axes": l.axes,
        "columns": head,
        "rows": objs,
    })
}

/// fio-tests' `make ssv` columns, one file per series: x (the sweep's first axis), then
/// read bw (KiB/s), read IOPS, read clat mean (us), write bw, write IOPS, write clat
/// mean; no header, rows in x order. Returns (file name, text).
pub fn ssv(l: &Loaded) -> Vec<(String, String)> {
    let Some(x_axis) = l.axes.first() else {
        return Vec::new();
    };
    let mut series: Vec<(String, Vec<(f64, String)>)> = Vec::new();
    for rec in l.records.iter().filter(|r| r.status == Status::Done) {
        let Some(job) = rec.result.as_ref().and_then(|r| r.jobs.get(rec.job)) else {
            continue;
        };
        let Some(xv) = rec
            .axes
            .iter()
            .find(|(k, _)| k == x_axis)
            .map(|(_, v)| v.clone())
        else {
            continue;
        };
        let others: Vec<String> = rec
            .axes
            .iter()
            .filter(|(k, _)| k != x_axis)
            .map(|(k, v)| format!("{k}-{v}"))
            .collect();
        let mut name = vec![rec.sweep.clone(), rec.profile.clone()];
        name.extend(others);
        let joined = name
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(".");
        let name = crate::matrix::file_safe(&joined);
        let d = |i: usize| {
            let x = &job.dirs[i];
            format!(
                "{} {} {}",
                num(Some(x.bw_bytes as f64 / 1024.0)),
                num(Some(x.iops)),
                num(Some(x.clat_mean_ns.unwrap_or(0.0) / 1000.0))
            )
        };
        let line = format!("{xv} {} {}", d(0), d(1));
        let x = axis_number(&xv).unwrap_or(f64::NAN);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some(s) => s.1.push((x, line)),
            None => series.push((name, vec![(x, line)])),
        }
    }
    series
        .into_iter()
        .map(|(name, mut lines)| {
            lines.sort_by(|a, b| a.0.total_cmp(&b.0));
            let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
            (format!("{name}.ssv"), text)
        })
        .collect()
}
