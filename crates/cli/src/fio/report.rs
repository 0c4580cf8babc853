//! Where the fio face's report goes: its formats, the `--output` file (opened before
//! any I/O), the status line, fio's header lines, and the report written whole.

use super::args::FioArgs;
use crate::term::status::Status;
use anyhow::{Context, Result};
use ioscope_report::OutputFormat;
use ioscope_runner::Plan;
use std::io::Write;
use std::path::PathBuf;

pub fn version() -> String {
    format!("ioscope-{}", env!("CARGO_PKG_VERSION"))
}

/// The version the report names: the fio version followed when ioscope runs as fio
/// (harnesses and wrappers gate on it), else ioscope's.
pub fn report_version(as_fio: bool) -> String {
    if as_fio {
        crate::version::FIO_COMPAT.to_string()
    } else {
        version()
    }
}

/// The formats asked for: --output-format, --minimal, --append-terse.
pub(crate) fn formats(a: &FioArgs) -> Vec<OutputFormat> {
    let mut f = a
        .output_format
        .clone()
        .unwrap_or_else(|| vec![OutputFormat::Normal]);
    if a.minimal {
        f = vec![OutputFormat::Terse];
    }
    if a.append_terse && !f.contains(&OutputFormat::Terse) {
        f.push(OutputFormat::Terse);
    }
    f
}

/// `--output`: opened and truncated before any I/O, so a bad path fails at once and
/// a run that is killed leaves no stale result behind.
fn open_output(a: &FioArgs) -> Result<Option<(PathBuf, std::fs::File)>> {
    let Some(p) = a.output.clone() else {
        return Ok(None);
    };
    let f = ioscope_fs::create_output(&p).with_context(|| format!("--output={}", p.display()))?;
    Ok(Some((p, f)))
}

/// What a run reports into, set up before any I/O: formats, the --output file (opened
/// now, so a bad path fails at once), the status line and the header lines not yet
/// printed (they go into --output with the report).
pub struct Reporting {
    pub formats: Vec<OutputFormat>,
    pub terse_version: u32,
    pub output: Option<(PathBuf, std::fs::File)>,
    pub status: Status,
    pub head: String,
    /// --status-interval or --debug=random|io: lines go into --output as they come.
    pub interim: bool,
}

impl Reporting {
    pub fn new(a: &FioArgs) -> Result<Reporting> {
        let formats = formats(a);
        let output = open_output(a)?;
        // Informational lines go through Reporting::message, not the status line.
        let mut status = Status::new(false, a.eta, a.eta_newline);
        if let Some(i) = a.eta_interval {
            status.set_interval(i);
        }
        if a.status_interval.is_some() {
            let file = match &output {
                Some((p, f)) => Some(
                    f.try_clone()
                        .with_context(|| format!("--output={}", p.display()))?,
                ),
                None => None,
            };
            status.interim_reports(formats.clone(), a.terse_version, file);
        }
        Ok(Reporting {
            formats,
            terse_version: a.terse_version,
            output,
            status,
            head: String::new(),
            // Interim reports and debug traces are written into --output as they come,
            // the header lines and informational lines before them.
            interim: a.status_interval.is_some() || a.debug.traces_run(),
        })
    }

    /// The header lines: printed now when the normal report goes to stdout; written
    /// now at the top of --output when interim reports follow them there, else kept
    /// for it.
    pub fn headers(&mut self, text: String) -> Result<()> {
        if !self.formats.contains(&OutputFormat::Normal) {
            return Ok(());
        }
        match &mut self.output {
            // As fio: with normal among the formats, on stdout at once (before a JSON
            // report that comes first, too).
            None => {
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            Some((p, f)) if self.interim => f
                .write_all(text.as_bytes())
                .with_context(|| format!("--output={}", p.display()))?,
            _ => self.head = text,
        }
        Ok(())
    }

    /// An informational line ("x: Laying out IO file (1 file / 1MiB)"): where fio
    /// writes it, with the normal report (on stdout, or into --output before the
    /// report); with JSON or terse output nowhere, so stdout stays one document and
    /// stderr stays empty.
    pub fn message(&mut self, line: &str) -> Result<()> {
        self.status.finish();
        if !self.formats.contains(&OutputFormat::Normal) {
            return Ok(());
        }
        match &mut self.output {
            None => {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            Some((p, f)) if self.interim => {
                writeln!(f, "{line}").with_context(|| format!("--output={}", p.display()))?
            }
            Some(_) => {
                self.head.push_str(line);
                self.head.push('\n');
            }
        }
        Ok(())
    }

    /// The report, into --output (complete and synced) or onto stdout.
    pub fn write(&mut self, report: &str) -> Result<()> {
        match &mut self.output {
            Some((p, f)) => write_output(f, &format!("{}{report}", self.head))
                .with_context(|| format!("--output={}", p.display())),
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(report.as_bytes())?;
                out.flush()?;
                Ok(())
            }
        }
    }
}

/// `--profile=act`'s table, before the normal report as fio prints it; on stderr when
/// the report is JSON or terse (which stays one clean document).
pub fn with_act_table(
    result: &ioscope_stats::RunResult,
    formats: &[OutputFormat],
    report: String,
) -> String {
    let Some(table) = ioscope_report::profiles::act_table(result) else {
        return report;
    };
    if formats == [OutputFormat::Normal] {
        return format!("{table}{report}");
    }
    eprint!("{table}");
    report
}

/// Write the whole report and make it durable: once this returns, the file is complete.
fn write_output(f: &mut std::fs::File, text: &str) -> std::io::Result<()> {
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Job lines, version and "Starting N processes", as fio prints them before a run
/// (jobs with thread=1 are counted as threads, as fio does).
pub fn headers(plan: &Plan, as_fio: bool) -> String {
    let mut s = String::new();
    // As fio: the version follows the jobs of the command line and job files, before
    // a --profile's (and is left out when there are none).
    let profile =
        |j: &ioscope_options::JobSpec| matches!(j.loc.source, ioscope_options::Source::Profile(_));
    let own = plan.set.jobs.iter().filter(|j| !profile(j)).count();
    for (i, (j, gid, info)) in plan.spec_infos().into_iter().enumerate() {
        if i == own && own > 0 {
            s.push_str(&report_version(as_fio));
            s.push('\n');
        }
        s.push_str(&ioscope_report::normal::job_header_line(
            &info, &j.name, gid,
        ));
        s.push('\n');
        if j.opts.numjobs > 1 {
            s.push_str("...\n");
        }
    }
    if own == plan.set.jobs.len() {
        s.push_str(&report_version(as_fio));
        s.push('\n');
    }
    s.push_str(&starting_line(plan));
    s
}

/// "Starting 2 threads", "Starting 1 thread and 3 processes".
fn starting_line(plan: &Plan) -> String {
    let threads = plan.clones().filter(|c| c.spec.opts.thread).count();
    let processes = plan.clones().count() - threads;
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let line = match (threads, processes) {
        (0, p) => n(p, "process", "processes"),
        (t, 0) => n(t, "thread", "threads"),
        (t, p) => format!(
            "{} and {}",
            n(t, "thread", "threads"),
            n(p, "process", "processes")
        ),
    };
    format!("Starting {line}\n")
}
