//! ioscope report writers: fio 3.33-compatible normal, terse (v2–v5), JSON and JSON+
//! output from a [`RunResult`].
//!
//! [`render`] prints the requested formats in fio's order, whatever order they were
//! given in: terse lines first, then the JSON document, then the normal report (which
//! starts with a blank line). fio prints its header lines (one per job, `fio-3.33`,
//! `Starting N processes`) before the run only when the normal format is among the
//! requested ones; [`job_header_line`] formats the per-job one. [`render_cluster`]
//! reports a run on many hosts (MPI ranks) the way fio's client mode does.

pub mod calc;
pub mod clients;
pub mod cluster;
pub mod json;
pub mod normal;
pub mod num;
pub mod profiles;
pub mod terse;

#[cfg(test)]
mod testdata;

pub use clients::{render_clients, Endpoint};
pub use cluster::{ran_json_value, render_cluster, render_ran};
pub use json::write_json;
pub use normal::{job_header_line, write_normal};
pub use terse::write_terse;

use ioscope_stats::RunResult;

/// One output format of `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Terse,
    Json,
    JsonPlus,
}

/// Parse a comma-separated `--output-format` value (`normal`, `terse`, `minimal`,
/// `csv`, `json`, `json+`). Duplicates are dropped.
pub fn parse_formats(s: &str) -> Result<Vec<OutputFormat>, String> {
    let mut v = Vec::new();
    for tok in s.split(',') {
        let f = match tok.trim() {
            "normal" => OutputFormat::Normal,
            "terse" | "minimal" | "csv" => OutputFormat::Terse,
            "json" => OutputFormat::Json,
            "json+" => OutputFormat::JsonPlus,
            other => return Err(format!("unknown output format '{other}'")),
        };
        if !v.contains(&f) {
            v.push(f);
        }
    }
    Ok(v)
}

/// The version string ioscope prints where fio prints `fio-3.42`: the fio version
/// it answers to when run as fio, else `ioscope-<version>` from the run's metadata.
pub fn version_string(run: &RunResult) -> String {
    if let Some(v) = &run.meta.report_version {
        return v.clone();
    }
    let v = run.meta.ioscope_version.trim();
    if v.is_empty() {
        "ioscope".to_string()
    } else if v.starts_with("ioscope") {
        v.to_string()
    } else {
        format!("ioscope-{v}")
    }
}

/// Render the results in the given formats, in fio's order: terse, then JSON (JSON+
/// when both are asked for), then normal.
pub fn render(run: &RunResult, formats: &[OutputFormat], terse_version: u32) -> String {
    let mut out = String::new();
    if formats.contains(&OutputFormat::Terse) {
        write_terse(run, terse_version, &mut out);
    }
    if formats.contains(&OutputFormat::JsonPlus) {
        write_json(run, true, &mut out);
    } else if formats.contains(&OutputFormat::Json) {
        write_json(run, false, &mut out);
    }
    if formats.contains(&OutputFormat::Normal) {
        if run.meta.interrupted {
            out.push_str(&interrupted_line(run));
        }
        write_normal(run, &mut out);
    }
    out
}

/// The line that marks a normal report of a run that was cut short.
pub fn interrupted_line(run: &RunResult) -> String {
    let by = run
        .meta
        .signal
        .as_deref()
        .map(|s| format!(" by {s}"))
        .unwrap_or_default();
    format!("ioscope: run interrupted{by}: the results cover only the I/O done until then\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_runs_are_marked() {
        let mut run = crate::testdata::null_run();
        let clean = render(&run, &[OutputFormat::Normal, OutputFormat::Json], 3);
        assert!(!clean.contains("interrupted by"));
        run.meta.interrupted = true;
        run.meta.signal = Some("SIGTERM".into());
        let out = render(&run, &[OutputFormat::Json], 3);
        let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(v["ioscope"]["interrupted"], true);
        assert_eq!(v["ioscope"]["signal"], "SIGTERM");
        let out = render(&run, &[OutputFormat::Normal], 3);
        assert!(
            out.starts_with("ioscope: run interrupted by SIGTERM"),
            "{out}"
        );
    }

    #[test]
    fn zone_resets_are_reported_where_fio_reports_them() {
        let mut run = crate::testdata::null_run();
        let out = render(&run, &[OutputFormat::Normal], 3);
        assert!(
            out.contains("msec); 0 zone resets\n"),
            "every write line: {out}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render(&run, &[OutputFormat::Json], 3)).expect("JSON");
        assert!(
            v["jobs"][0].get("zone_resets").is_none(),
            "zonemode=zbd only"
        );
        run.jobs[0].zone_resets = Some(2);
        let out = render(&run, &[OutputFormat::Normal], 3);
        assert!(out.contains("msec); 2 zone resets\n"), "{out}");
        let v: serde_json::Value =
            serde_json::from_str(&render(&run, &[OutputFormat::Json], 3)).expect("JSON");
        let job = v["jobs"][0].as_object().expect("job object");
        assert_eq!(job["zone_resets"], 2);
        let last = job.keys().rfind(|k| *k != "verify");
        assert_eq!(
            last.map(String::as_str),
            Some("zone_resets"),
            "last, as in fio"
        );
    }

    #[test]
    fn formats() {
        use OutputFormat::*;
        assert_eq!(parse_formats("normal"), Ok(vec![Normal]));
        assert_eq!(
            parse_formats("json,normal,minimal,csv"),
            Ok(vec![Json, Normal, Terse])
        );
        assert_eq!(parse_formats("json+"), Ok(vec![JsonPlus]));
        let e = parse_formats("normal,xml").unwrap_err();
        assert!(e.contains("xml"), "{e}");
        assert!(parse_formats("").is_err());
    }
}
