//! One run's report in the formats asked for, in fio's order.

use crate::formats::{interrupted_line, OutputFormat};
use crate::json::write_json;
use crate::normal::write_normal;
use crate::terse::write_terse;
use ioscope_stats::RunResult;

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
}
