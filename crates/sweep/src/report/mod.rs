//! The tables and pictures of a sweep's run directory or of any directory of fio or
//! ioscope JSON results: results.csv, results.json, graphs/*.svg and one
//! self-contained report.html. `ioscope report` and `ioscope sweep run` write them.

pub mod charts;
pub mod table;

use crate::campaign::{self, Loaded, Status};
use crate::error::{At, SweepError};
use ioscope_plot::html::Page;
use std::path::{Path, PathBuf};

/// What a report wrote, and the files it left out (each with why).
pub struct Written {
    pub html: PathBuf,
    pub csv: PathBuf,
    pub svgs: Vec<PathBuf>,
    pub skipped: Vec<ioscope_results::Skipped>,
}

/// What a report includes besides the tables and charts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Include {
    /// fio-tests' space-separated columns.
    pub ssv: bool,
    /// Results of interrupted runs.
    pub interrupted: bool,
}

/// Report files replace what is there (a planted link included) whole, never write
/// through it.
fn write(path: &Path, text: &str) -> Result<(), SweepError> {
    crate::ready::write_text(path, text)
}

/// Read `dir` and write the report files into `out`.
pub fn write_dir(dir: &Path, out: &Path, inc: Include) -> Result<Written, SweepError> {
    let l = campaign::load(dir, inc.interrupted)?;
    let rows = table::rows(&l);
    let graphs = out.join("graphs");
    crate::ready::own_dir(&graphs)?;
    let csv = out.join("results.csv");
    write(&csv, &table::csv(&l, &rows))?;
    let json = serde_json::to_string_pretty(&table::json(&l, &rows)).at(out.join("results.json"))?;
    write(&out.join("results.json"), &(json + "\n"))?;
    if inc.ssv {
        let d = out.join("ssv");
        crate::ready::own_dir(&d)?;
        for (name, text) in table::ssv(&l) {
            write(&d.join(name), &text)?;
        }
    }
    let mut charts = Vec::new();
    charts.extend(charts::steady_state(&l));
    charts.extend(charts::line_charts(&l, &rows));
    charts.extend(charts::heatmaps(&l, &rows));
    let mut svgs = Vec::new();
    let mut drawn = Vec::new();
    for c in &charts {
        let svg = c.figure.svg().at(&c.file)?;
        let path = graphs.join(&c.file);
        write(&path, &svg)?;
        svgs.push(path);
        drawn.push((c, svg));
    }
    let html = out.join("report.html");
    write(&html, &page(&l, &rows, &drawn))?;
    Ok(Written {
        html,
        csv,
        svgs,
        skipped: l.skipped,
    })
}

/// The self-contained page: what ran where, steady state, best points, the charts, the
/// table of every row, failures.
fn page(l: &Loaded, rows: &[table::Row], charts: &[(&charts::Chart, String)]) -> String {
    let title = match l.is_sweep {
        true => "ioscope sweep report",
        false => "ioscope report",
    };
    let mut p = Page::new(title);
    p.meta("directory", l.dir.display().to_string());
    if let Some(f) = &l.sweep_file {
        p.meta("sweep file", f.path.display().to_string());
        let names: Vec<&str> = f.sweeps.iter().map(|s| s.name.as_str()).collect();
        p.meta("sweeps", names.join(", "));
    }
    let meta = l
        .records
        .iter()
        .find_map(|r| r.result.as_ref().and_then(|x| x.meta.clone()));
    if let Some(m) = &meta {
        p.meta("kernel", m.kernel.clone().unwrap_or_default());
        p.meta("host", m.hostname.clone().unwrap_or_default());
        p.meta("cpu", m.cpu_model.clone().unwrap_or_default());
        p.meta("ioscope", m.ioscope_version.clone().unwrap_or_default());
    } else if let Some(v) = l
        .records
        .iter()
        .find_map(|r| r.result.as_ref().and_then(|x| x.version.clone()))
    {
        p.meta("program", v);
    }
    if let Some(target) = target_text(l) {
        p.meta("target", target);
    }
    let count = |f: fn(&Status) -> bool| l.records.iter().filter(|r| f(&r.status)).count();
    p.meta(
        "points",
        format!(
            "{} in all: {} done, {} failed, {} pruned, {} not run",
            l.records.len(),
            count(|s| *s == Status::Done),
            count(|s| matches!(s, Status::Failed(_))),
            count(|s| matches!(s, Status::Pruned(_))),
            count(|s| *s == Status::Left)
        ),
    );
    if !l.rounds.is_empty() {
        steady_section(&mut p, l);
    }
    let mut best = charts::best_table(l, rows);
    if !best.is_empty() {
        p.heading("Best points");
        let sweeps = best.iter().any(|r| !r[0].is_empty());
        if !sweeps {
            best.iter_mut().for_each(|r| {
                r.remove(0);
            });
        }
        let head = [
            "sweep",
            "axis",
            "line",
            "best bandwidth",
            "best IOPS",
            "lowest mean clat",
            "IOPS knee",
        ];
        p.table(&head[usize::from(!sweeps)..], &best);
    }
    p.heading("Graphs");
    let sub = subtitle(l);
    for (c, _) in charts.iter().filter(|(c, _)| c.file != "steady-state.svg") {
        let caption = format!("{} (static SVG: graphs/{})", c.caption, c.file);
        p.figure(&c.figure, &sub, &caption);
    }
    p.heading("Results");
    let (head, cells) = table::readable(l, rows);
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    p.table(&head, &cells);
    let mut notes: Vec<String> = l
        .records
        .iter()
        .filter(|r| r.aggregation != ioscope_results::Aggregation::Single)
        .map(|r| format!("{}: {}", r.id, r.aggregation.note()))
        .collect();
    notes.dedup();
    if !notes.is_empty() {
        p.para("How points were aggregated (job clones of numjobs > 1 without group_reporting are one point, as fio's group reporting makes them):");
        p.pre(&notes.join("\n"));
    }
    p.para("Every figure, unrounded, is in results.csv and results.json beside this page.");
    let problems: Vec<String> = l
        .records
        .iter()
        .filter_map(|r| match &r.status {
            Status::Failed(e) => Some(format!("failed: {}: {e}", r.id)),
            Status::Pruned(e) => Some(format!("pruned: {}: {e}", r.id)),
            _ => None,
        })
        .collect();
    if !problems.is_empty() {
        p.heading("Failed and pruned points");
        p.pre(&problems.join("\n"));
    }
    if let Some((c, _)) = charts.iter().find(|(c, _)| c.file == "steady-state.svg") {
        p.heading("Steady-state convergence");
        p.figure(&c.figure, &sub, &c.caption);
    }
    p.render()
}

/// The line under every chart's title: what ran (the options no axis varies), where
/// and on which kernel.
fn subtitle(l: &Loaded) -> String {
    const SHOWN: [&str; 7] = [
        "ioengine", "bs", "iodepth", "numjobs", "direct", "size", "runtime",
    ];
    let Some((r, job)) = l.records.iter().find_map(|x| {
        x.result
            .as_ref()
            .and_then(|r| r.jobs.get(x.job).map(|j| (r, j)))
    }) else {
        return String::new();
    };
    let mut parts: Vec<String> = SHOWN
        .iter()
        .filter(|k| !l.axes.iter().any(|a| a == *k))
        .filter_map(|k| job.option(k, r).map(|v| format!("{k}={v}")))
        .collect();
    let target = target_text(l).or_else(|| job.option("filename", r).map(str::to_string));
    parts.extend(target);
    if let Some(k) = r.meta.as_ref().and_then(|m| m.kernel.clone()) {
        parts.push(format!("kernel {k}"));
    }
    match r.meta.as_ref().and_then(|m| m.ioscope_version.clone()) {
        Some(v) => parts.push(format!("ioscope {v}")),
        None => parts.extend(r.version.clone()),
    }
    parts.join(" · ")
}

/// The target as the points' results recorded it.
fn target_text(l: &Loaded) -> Option<String> {
    let f = l.records.iter().find_map(|r| r.file.clone())?;
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).ok()?).ok()?;
    let t = &v["ioscope"]["sweep"]["target"];
    let s = |k: &str| t[k].as_str().map(str::to_string);
    let mut parts = vec![s("kind")?];
    parts.extend(s("disk").map(|d| format!("disk {d}")));
    parts.extend(s("model").map(|m| format!("model {m}")));
    parts.extend(s("serial").map(|x| format!("serial {x}")));
    Some(format!("{} ({})", s("path")?, parts.join(", ")))
}

/// The rounds with the SNIA check of each window: the evidence of steady state.
fn steady_section(p: &mut Page, l: &Loaded) {
    p.heading("Steady state");
    let values: Vec<f64> = l.rounds.iter().map(|r| r.value).collect();
    let rows: Vec<Vec<String>> = l
        .rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let c = ioscope_analysis::steady::snia_check(&values[..=i], &l.criteria);
            let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
            vec![
                r.round.to_string(),
                format!("{:.0}", r.value),
                f(c.as_ref().map(|c| c.mean)),
                f(c.as_ref().map(|c| c.range_pct())),
                f(c.as_ref().map(|c| c.slope_pct())),
                if r.steady { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    let verdict = match l.rounds.iter().find(|r| r.steady) {
        Some(r) => format!("steady at round {}", r.round),
        None => format!("not steady after {} round(s)", l.rounds.len()),
    };
    p.para(&format!(
        "{verdict}; tracking value: {} per round; criteria: {} (window {} rounds, range <= {}% and slope excursion <= {}% of the window mean)",
        l.steady_metric,
        if l.steady_mode == "fio" { "fio's ss=" } else { "SNIA PTS" },
        l.criteria.window,
        l.criteria.range_pct,
        l.criteria.slope_pct
    ));
    p.table(
        &[
            "round",
            "value",
            "window mean",
            "range %",
            "slope excursion %",
            "steady",
        ],
        &rows,
    );
}
