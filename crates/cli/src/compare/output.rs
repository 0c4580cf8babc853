//! The comparison as a terminal table, a GitHub markdown table or a JSON array.

use super::inputs::Row;
use super::shape::Shape;
use ioscope_analysis::Verdict;
use serde_json::{json, Value};

/// The cells of a row, as text, in the order of [`HEADER`].
pub const HEADER: [&str; 9] = [
    "job", "dir", "metric", "A", "B", "delta %", "95% CI", "p", "verdict",
];

pub fn cells(r: &Row) -> [String; 9] {
    let c = &r.cmp;
    let pct = |v: f64| format!("{v:+.1}");
    [
        r.label(),
        r.dir.to_string(),
        r.metric.to_string(),
        value(r.metric, c.a),
        value(r.metric, c.b),
        c.delta_pct.map(pct).unwrap_or_else(|| "-".into()),
        c.ci_pct
            .map(|(lo, hi)| {
                let mark = if r.ci_from_bins { "*" } else { "" };
                format!("[{}, {}]{mark}", pct(lo), pct(hi))
            })
            .unwrap_or_else(|| "-".into()),
        c.p_value
            .map(|p| format!("{p:.3}"))
            .unwrap_or_else(|| "-".into()),
        verdict(r),
    ]
}

/// The verdict, with the hint how many repetitions would do.
fn verdict(r: &Row) -> String {
    match (r.cmp.verdict, r.cmp.reps_needed) {
        (Verdict::NotEnough, Some(n)) => format!("{} (need ~{n} per side)", r.cmp.verdict),
        // One run per side (the seed's case) shows no noise to size the need from.
        (Verdict::NotEnough, None) if r.cmp.n_a < 2 && r.cmp.n_b < 2 => {
            format!("{} (noise unknown: repeat each side)", r.cmp.verdict)
        }
        (v, _) => v.to_string(),
    }
}

/// A metric's value with its unit: bandwidth in MiB/s, latencies in us (ns below 1 us).
fn value(metric: &str, v: f64) -> String {
    match metric {
        "bw" => format!("{:.1} MiB/s", v / (1024.0 * 1024.0)),
        "iops" => format!("{v:.0}"),
        _ if v < 1000.0 => format!("{v:.0} ns"),
        _ => format!("{:.2} us", v / 1000.0),
    }
}

/// Aligned columns; the verdict coloured when `colour` (stdout is a terminal).
pub fn table(rows: &[Row], colour: bool) -> String {
    let all: Vec<[String; 9]> = rows.iter().map(cells).collect();
    let mut width = HEADER.map(str::len);
    for c in &all {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |c: &[String; 9], paint: Option<&str>| {
        let mut s = String::new();
        for (i, (cell, w)) in c.iter().zip(width).enumerate() {
            // Text columns left, numbers right.
            let cell = match i {
                0..=2 | 8 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            };
            match (i, paint) {
                (8, Some(code)) => s.push_str(&format!("\x1b[{code}m{}\x1b[0m", cell.trim_end())),
                _ => s.push_str(&cell),
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&HEADER.map(String::from), None);
    for (r, c) in rows.iter().zip(&all) {
        let paint = colour.then_some(match r.cmp.verdict {
            Verdict::Better => "32",
            Verdict::Worse => "31",
            Verdict::NotEnough => "33",
            Verdict::NoChange => "0",
        });
        out.push_str(&line(c, paint));
    }
    out
}

/// A GitHub markdown table ('|' in job names escaped).
pub fn markdown(rows: &[Row]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    out.push_str("|---|---|---|--:|--:|--:|--:|--:|---|\n");
    for r in rows {
        let c = cells(r).map(|s| esc(&s));
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    out
}

/// One object per row, then one per latency shape test (metric `clat_shape`).
pub fn json(rows: &[Row], shapes: &[Shape]) -> Value {
    let shape_rows = shapes.iter().map(|s| {
        json!({
            "job": s.job,
            "direction": s.dir,
            "metric": "clat_shape",
            "a": null, "b": null, "delta_pct": null, "ci_low_pct": null, "ci_high_pct": null,
            "p_value": s.ks.p,
            "verdict": s.verdict(),
            "ks_d": s.ks.d,
            "n_a": s.ks.n_a,
            "n_b": s.ks.n_b,
            "means_agree": s.means.agree(),
            "p99_delta_pct": s.p99_pct,
            "p99_9_delta_pct": s.p99_9_pct,
        })
    });
    Value::Array(
        rows.iter()
            .map(|r| {
                let c = &r.cmp;
                json!({
                    "job": r.job.label(),
                    "groupid": r.job.groupid,
                    "direction": r.dir,
                    "prio": r.prio,
                    "metric": r.metric,
                    "a": finite(c.a),
                    "b": finite(c.b),
                    "delta_pct": c.delta_pct,
                    "ci_low_pct": c.ci_pct.map(|x| x.0),
                    "ci_high_pct": c.ci_pct.map(|x| x.1),
                    "ci_source": c.ci_pct.map(|_| if r.ci_from_bins { "bins" } else { "bootstrap" }),
                    "p_value": c.p_value,
                    "verdict": c.verdict.to_string(),
                    "reps_needed": c.reps_needed,
                    "n_a": c.n_a,
                    "n_b": c.n_b,
                })
            })
            .chain(shape_rows)
            .collect(),
    )
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
