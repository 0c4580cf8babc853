//! What every writer shares about a report's output: the formats `--output-format`
//! names, the version string in place of fio's, and the line that marks a report of a
//! run cut short.

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
