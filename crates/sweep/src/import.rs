//! `ioscope sweep import TREE -o DIR`: a fio-tests results tree re-read as sweep points,
//! so old campaigns can be re-plotted by `ioscope report` and compared with new ones.
//!
//! fio-tests keeps each result beside its job file: `tests/<test>/<profile>/[<group>/]
//! NNNN-bs4k-[Niobs-]Nj-Nqd-<rw>.ini` with `.out` (fio's terse v3 line), `.res` (six
//! numbers: read bw KiB/s, IOPS, clat mean; the same for writes), `.json` (json+, for
//! steady-state runs), `.BAD` when fio failed. Per point: the job file gives the options
//! (the file name when it is missing); the result comes from `.json`, else `.out`, else
//! `.res`. Every point becomes `DIR/points/<id>.json` (fio's JSON shape) tagged with
//! its sweep (the test), profile and axes, then the report is written.

use crate::error::{At, SweepError};
use ioscope_options::jobfile;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options that can be axes of a fio-tests campaign, in column order.
const AXES: &[&str] = &["iodepth", "numjobs", "bs", "iodepth_batch_submit"];

struct Point {
    sweep: String,
    profile: String,
    values: BTreeMap<String, String>,
    doc: Option<Value>,
    failed: Option<String>,
    source: PathBuf,
}

/// What an import did.
pub struct Imported {
    /// Points imported.
    pub points: usize,
    /// Points that failed in fio-tests, each said why (left out).
    pub failed: Vec<String>,
    /// Points fio-tests never ran.
    pub not_run: usize,
    /// The report written.
    pub report: crate::report::Written,
}

/// Import the fio-tests tree `src` into the run directory `out`, and write its report.
pub fn import(src: &Path, out: &Path) -> Result<Imported, SweepError> {
    if !src.is_dir() {
        return Err(SweepError::Run(format!(
            "{}: not a directory (give a fio-tests tree, e.g. fio-tests/tests)",
            src.display()
        )));
    }
    let mut res = Vec::new();
    collect(src, &mut res)?;
    res.sort();
    let mut points = Vec::new();
    let mut not_run = 0;
    for r in &res {
        match point(src, r)? {
            Some(pt) => points.push(pt),
            None => not_run += 1,
        }
    }
    if points.is_empty() {
        return Err(SweepError::Run(format!(
            "{}: no fio-tests results (*.ini.res) that ran",
            src.display()
        )));
    }
    let dir = out.join(crate::execute::POINTS_DIR);
    std::fs::create_dir_all(&dir).at(&dir)?;
    // Per sweep (test), the options that vary are its axes.
    let mut failed = Vec::new();
    for pt in &points {
        let axes: Vec<(String, String)> = AXES
            .iter()
            .filter(|a| varies(&points, &pt.sweep, a))
            .map(|a| {
                (
                    a.to_string(),
                    pt.values.get(*a).cloned().unwrap_or_default(),
                )
            })
            .collect();
        let id = crate::matrix::point_id(&pt.sweep, &pt.profile, &axes);
        let Some(mut doc) = pt.doc.clone() else {
            failed.push(format!(
                "{}: failed in fio-tests ({}): no result to import",
                pt.source.display(),
                pt.failed.as_deref().unwrap_or("")
            ));
            continue;
        };
        let axes_obj: serde_json::Map<String, Value> =
            axes.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let options: serde_json::Map<String, Value> = pt
            .values
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        if let Some(j) = doc["jobs"].get_mut(0).and_then(Value::as_object_mut) {
            j.entry("job options").or_insert(Value::Object(options));
        }
        doc["ioscope"] = json!({"sweep": {
            "sweep": pt.sweep, "profile": pt.profile, "point": id, "axes": axes_obj,
            "imported_from": pt.source.display().to_string(),
        }});
        let f = dir.join(format!("{id}.json"));
        let mut text = String::new();
        ioscope_report::json::print_value(&doc, 0, &mut text);
        std::fs::write(&f, text + "\n").at(&f)?;
    }
    let report = crate::report::write_dir(out, out, Default::default())?;
    Ok(Imported {
        points: points.len() - failed.len(),
        failed,
        not_run,
        report,
    })
}

fn varies(points: &[Point], sweep: &str, axis: &str) -> bool {
    let mut vals: Vec<&str> = points
        .iter()
        .filter(|p| p.sweep == sweep)
        .filter_map(|p| p.values.get(axis).map(String::as_str))
        .collect();
    vals.sort_unstable();
    vals.dedup();
    vals.len() > 1
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SweepError> {
    for e in std::fs::read_dir(dir).at(dir)? {
        let p = e.at(dir)?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.to_string_lossy().ends_with(".ini.res") {
            out.push(p);
        }
    }
    Ok(())
}

/// One `.ini.res` and its siblings; `None` for a dry run (all zeros).
fn point(root: &Path, res: &Path) -> Result<Option<Point>, SweepError> {
    let text = std::fs::read_to_string(res).at(res)?;
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let nums: Vec<f64> = cleaned.split(',').filter_map(|v| v.parse().ok()).collect();
    let ini = res.with_extension("");
    let sibling = |ext: &str| PathBuf::from(format!("{}.{ext}", ini.display()));
    let bad = std::fs::read_to_string(sibling("BAD")).ok();
    if bad.is_none() && nums.iter().all(|&v| v == 0.0) {
        return Ok(None);
    }
    let values = match ini.is_file() {
        true => ini_values(&ini)?,
        false => name_values(&ini),
    };
    let rel = res.strip_prefix(root).unwrap_or(res);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let strip = |s: &str| {
        s.split_once('-')
            .filter(|(n, _)| n.len() == 4 && n.chars().all(|c| c.is_ascii_digit()))
            .map_or(s.to_string(), |(_, r)| r.to_string())
    };
    let sweep = parts
        .first()
        .filter(|_| parts.len() > 2)
        .map_or("fio-tests".to_string(), |s| strip(s));
    let profile = profile(&values, parts.get(1).map(|s| strip(s)));
    let doc = match bad {
        Some(_) => None,
        None => Some(result(&ini, &nums, &sibling)?),
    };
    Ok(Some(Point {
        sweep,
        profile,
        values,
        doc,
        failed: bad.map(|b| format!("fio exited {}", b.trim())),
        source: res.to_path_buf(),
    }))
}

/// The job file's options (later sections and lines win, as fio applies them).
fn ini_values(ini: &Path) -> Result<BTreeMap<String, String>, SweepError> {
    let sections = jobfile::read_job_file(ini).at(ini)?;
    let mut m = BTreeMap::new();
    for e in sections.iter().flat_map(|s| &s.entries) {
        m.insert(e.key.clone(), e.value.clone().unwrap_or_else(|| "1".into()));
    }
    Ok(m)
}

/// NNNN-bs4k-[32iobs-]2j-16qd-randrw.ini: the values the name carries.
fn name_values(ini: &Path) -> BTreeMap<String, String> {
    let name = ini
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut m = BTreeMap::new();
    for part in name.split('-').skip(1) {
        if let Some(bs) = part.strip_prefix("bs") {
            m.insert("bs".to_string(), bs.to_string());
        } else if let Some(v) = part.strip_suffix("iobs") {
            m.insert("iodepth_batch_submit".into(), v.into());
        } else if let Some(v) = part.strip_suffix("qd") {
            m.insert("iodepth".into(), v.into());
        } else if let Some(v) = part
            .strip_suffix('j')
            .filter(|v| v.chars().all(|c| c.is_ascii_digit()))
        {
            m.insert("numjobs".into(), v.into());
        } else if ["read", "write", "randread", "randwrite", "randrw", "rw"].contains(&part) {
            m.insert("rw".into(), part.into());
        }
    }
    m
}

/// The profile: rw and mix from the options (fio-tests' "randwrite-70-30" directories
/// hold rw=randrw with rwmixread=70), else the profile directory's name.
fn profile(values: &BTreeMap<String, String>, dir: Option<String>) -> String {
    match (
        values.get("rw").map(String::as_str),
        values.get("rwmixread"),
    ) {
        (Some(rw @ ("randrw" | "rw" | "readwrite")), Some(mix)) => {
            let r: u32 = mix.parse().unwrap_or(50);
            format!("{rw}-{r}-{}", 100u32.saturating_sub(r))
        }
        (Some("read"), _) => "seqread".into(),
        (Some("write"), _) => "seqwrite".into(),
        (Some(rw), _) => rw.into(),
        (None, _) => dir.unwrap_or_else(|| "unknown".into()),
    }
}

/// The result document: json+ if fio-tests kept it, else the terse line, else the six
/// numbers of the `.res` file (bw KiB/s, IOPS, clat mean µs per direction).
fn result(
    ini: &Path,
    nums: &[f64],
    sibling: &dyn Fn(&str) -> PathBuf,
) -> Result<Value, SweepError> {
    let json_path = sibling("json");
    if let Ok(text) = std::fs::read_to_string(&json_path) {
        let start = text.find('{').unwrap_or(0);
        return serde_json::from_str(&text[start..]).at(&json_path);
    }
    let out = sibling("out");
    if let Ok(text) = std::fs::read_to_string(&out) {
        if let Some(line) = text.lines().find(|l| l.starts_with("3;")) {
            return ioscope_results::terse::terse_v3_to_value(line).at(&out);
        }
    }
    let [rbw, riops, rclat, wbw, wiops, wclat] = nums else {
        return Err(SweepError::Run(format!(
            "{}: a .res line has 6 numbers (read bw, IOPS, clat; write bw, IOPS, clat)",
            ini.display()
        )));
    };
    let dir = |bw: f64, iops: f64, clat_us: f64| {
        json!({"bw_bytes": (bw * 1024.0) as u64, "bw": bw as u64, "iops": iops,
               "total_ios": if iops > 0.0 { 1 } else { 0 },
               "clat_ns": {"mean": clat_us * 1000.0}})
    };
    Ok(
        json!({"jobs": [{"jobname": "fio-tests", "read": dir(*rbw, *riops, *rclat), "write": dir(*wbw, *wiops, *wclat)}]}),
    )
}
