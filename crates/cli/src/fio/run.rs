//! A run of the fio face on this host: the header lines, the status line and
//! --bandwidth-log while it runs, then the report and fio's exit status.

use super::args::Invocation;
use super::bwlog::BwLog;
use super::report::{headers, with_act_table, Reporting};
use crate::term::signals;
use anyhow::{anyhow, Result};
use ioscope_runner::{JobProgress, Observer, Plan, Runner};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// The report's informational lines and status line and, with --bandwidth-log, the
/// aggregate bandwidth log.
struct Observers<'a> {
    rep: &'a mut Reporting,
    bw: Option<&'a mut BwLog>,
}

impl Observer for Observers<'_> {
    fn message(&mut self, line: &str) {
        if let Err(e) = self.rep.message(line) {
            eprintln!("ioscope: {e:#}");
        }
    }
    fn warning(&mut self, line: &str) {
        self.rep.status.warning(line);
    }
    fn progress(&mut self, jobs: &[JobProgress]) {
        if let Some(b) = self.bw.as_deref_mut() {
            b.progress(jobs);
        }
        self.rep.status.progress(jobs);
    }
    fn interim(&mut self, report: &ioscope_stats::RunResult) {
        self.rep.status.interim(report);
    }
}

/// Run the plan and report it.
pub fn run(inv: &Invocation, runner: &Runner, plan: &Plan, genesis: Instant) -> Result<ExitCode> {
    let mut rep = Reporting::new(&inv.args)?;
    let as_fio = super::jobs::compat_fio(&inv.args)?;
    rep.headers(headers(plan, as_fio))?;
    let mut bw = match &inv.args.bandwidth_log {
        Some(name) => Some(BwLog::create(name, genesis)?),
        None => None,
    };
    signals::install();
    let mut obs = Observers {
        rep: &mut rep,
        bw: bw.as_mut(),
    };
    let mut result = runner.run(plan, &mut obs)?;
    signals::mark(&mut result);
    if as_fio {
        result.meta.report_version = Some(crate::version::FIO_COMPAT.to_string());
    }
    rep.status.finish();
    if let Some(b) = bw {
        b.finish()?;
    }
    let report = ioscope_report::render(&result, &rep.formats, rep.terse_version);
    let report = with_act_table(&result, &rep.formats, report);
    rep.write(&report)?;
    if result.meta.interrupted {
        eprintln!("{}", ioscope_report::interrupted_line(&result).trim_end());
    }
    // A job that failed; errors it was told to go on after (continue_on_error,
    // ignore_error) are reported as its err but do not fail the run, as in fio.
    let failed = result
        .jobs
        .iter()
        .any(|j| j.error != 0 && !j.error_tolerated);
    Ok(signals::exit_code(failed))
}

/// `--merge-blktrace-only`: each job's merge_blktrace_file, and no I/O.
pub fn merge_blktraces(set: &ioscope_options::JobSet) -> Result<ExitCode> {
    let mut merged = 0;
    for j in &set.jobs {
        if let Some(out) = &j.opts.merge_blktrace_file {
            let n = ioscope_runner::merge_blktraces(&j.opts, Path::new(out))
                .map_err(|e| anyhow!("job '{}': {e}", j.name))?;
            eprintln!("ioscope: job '{}': merged {n} events into {out}", j.name);
            merged += 1;
        }
    }
    if merged == 0 {
        eprintln!("ioscope: --merge-blktrace-only: no job sets merge_blktrace_file");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--debug=parse`: what each job's options resolved to.
pub fn print_parse_debug(set: &ioscope_options::JobSet) -> Result<()> {
    for j in &set.jobs {
        eprintln!(
            "parse: job '{}' ({}): explicit {:?}",
            j.name, j.loc, j.explicit
        );
        for f in &j.fixups {
            eprintln!("parse: job '{}': {f}", j.name);
        }
        eprintln!(
            "parse: job '{}': resolved {}",
            j.name,
            serde_json::to_string(&j.opts)?
        );
    }
    Ok(())
}
