//! A run of the fio face on this host: the header lines, the status line and
//! --bandwidth-log while it runs, then the report and fio's exit status.

use super::args::Invocation;
use super::bwlog::BwLog;
use super::report::{headers, with_act_table, Reporting};
use crate::live::{Feed, Live};
use crate::recording::capture::Capture;
use crate::term::signals;
use anyhow::{anyhow, Context, Result};
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
    let runner = &with_debug_out(runner, &rep)?;
    let as_fio = super::jobs::compat_fio(&inv.args)?;
    rep.headers(headers(plan, as_fio))?;
    let mut bw = match &inv.args.bandwidth_log {
        Some(name) => Some(BwLog::create(name, genesis)?),
        None => None,
    };
    let mut live = Live::open(&inv.args.live, rep.output.is_none())?;
    let history = Capture::from_args(&inv.args.history)?;
    signals::install();
    let mut obs = Observers {
        rep: &mut rep,
        bw: bw.as_mut(),
    };
    let mut feed = Feed {
        inner: &mut obs,
        live: &mut live,
    };
    let mut result = runner.run(plan, &mut feed)?;
    signals::mark(&mut result);
    // The run is over: its exit status is settled now (a Ctrl-C from here on, in the
    // metrics' linger say, does not fail a finished run), and the metrics say so.
    // A job that failed; errors it was told to go on after (continue_on_error,
    // ignore_error) are reported as its err but do not fail the run, as in fio.
    let failed = result
        .jobs
        .iter()
        .any(|j| j.error != 0 && !j.error_tolerated);
    let code = signals::exit_code(failed);
    live.run_ended();
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
    if let Some(h) = history {
        h.record(plan.set, &result, inv.args.output.as_deref());
    }
    // The report is out: then the stream's end line, and the endpoint's last scrapes.
    live.finish(Some(&result), result.meta.interrupted);
    Ok(code)
}

/// `--debug=random|io` with --output: the traces go into the file, as fio's do (the
/// runner writes them to standard output otherwise).
fn with_debug_out(runner: &Runner, rep: &Reporting) -> Result<Runner> {
    let mut opts = runner.options().clone();
    if let (Some((p, f)), true) = (&rep.output, opts.debug.random || opts.debug.io) {
        let f = f
            .try_clone()
            .with_context(|| format!("--output={}", p.display()))?;
        opts.debug.out = Some(ioscope_runner::DebugOut(std::sync::Arc::new(
            std::sync::Mutex::new(f),
        )));
    }
    Ok(runner.with_options(opts))
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

/// `--debug=parse`, on stdout as fio prints it: each option as it is handled
/// (`handle_option=NAME, ptr=VALUE`, with fio's line for a steady-state threshold),
/// then ioscope's own: each job's fixups and resolved options. With no job (a bare
/// `--parse-only`), the options given.
pub fn print_parse_debug(
    global: &[ioscope_options::jobfile::RawEntry],
    set: Option<&ioscope_options::JobSet>,
) -> Result<()> {
    use std::io::Write;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let mut out = String::new();
    let mut line = |s: &str| out.push_str(&format!("parse    {pid:5} {s}\n"));
    let handled = |line: &mut dyn FnMut(&str), name: &str, value: &str| {
        let def = ioscope_options::table::find(name);
        let canonical = def.map_or(name, |d| d.name);
        line(&format!("handle_option={canonical}, ptr={value}"));
        if let Some(ss) = def
            .filter(|d| d.name == "steadystate")
            .and_then(|d| steady(d, value))
        {
            line(&ss.debug_line());
        }
    };
    match set {
        None => {
            for e in global {
                handled(&mut line, &e.key, e.value.as_deref().unwrap_or(""));
            }
        }
        Some(set) => {
            for j in &set.jobs {
                for (k, v) in &j.explicit {
                    handled(&mut line, k, v);
                }
                for f in &j.fixups {
                    line(&format!("job '{}': {f}", j.name));
                }
                line(&format!(
                    "job '{}': resolved {}",
                    j.name,
                    serde_json::to_string(&j.opts)?
                ));
            }
        }
    }
    let mut o = std::io::stdout().lock();
    o.write_all(out.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// A steady-state criterion as written, read as the job's would be.
fn steady(
    def: &'static ioscope_options::OptionDef,
    v: &str,
) -> Option<ioscope_options::SteadySpec> {
    let cx = ioscope_options::ValueCx { def, kb_base: 1024 };
    <ioscope_options::SteadySpec as ioscope_options::types::OptValue>::parse(
        v,
        &cx,
        &Default::default(),
    )
    .ok()
}
