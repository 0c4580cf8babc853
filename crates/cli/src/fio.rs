//! The fio-compatible face: `ioscope [fio options] [job files]`.

use crate::status::{Eta, Status};
use anyhow::{anyhow, bail, Context, Result};
use ioscope_iolog::LogFormat;
use ioscope_options::{cli, flagdoc, help, jobfile, spec, JobSet};
use ioscope_report::OutputFormat;
use ioscope_runner::{JobProgress, Observer, Plan, RunOptions, Runner};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub fn version() -> String {
    format!("ioscope-{}", env!("CARGO_PKG_VERSION"))
}

fn print_help() {
    print!("{}", flagdoc::main_help());
}

/// Job files and command-line jobs → validated job set.
pub fn load_jobs(c: &cli::Cli) -> Result<JobSet> {
    load_jobs_with(c, &keywords(c)?)
}

/// The keywords job files see, and how their values read (`--compat`).
pub fn keywords(c: &cli::Cli) -> Result<jobfile::Keywords> {
    Ok(jobfile::Keywords::probe().with_compat_fio(compat_fio(c)?))
}

/// fio's lenient values: `--compat=fio`, else `IOSCOPE_COMPAT=fio`, else when this
/// program runs under the name `fio` (a symlink that harnesses call).
fn compat_fio(c: &cli::Cli) -> Result<bool> {
    let env = std::env::var("IOSCOPE_COMPAT").ok();
    let (v, from) = match c.flag("compat").flatten() {
        Some(v) => (Some(v.to_string()), "--compat"),
        None => (env, "IOSCOPE_COMPAT"),
    };
    match v.as_deref() {
        None => Ok(invoked_as_fio()),
        Some("fio") => Ok(true),
        Some("none") => Ok(false),
        Some(o) => {
            bail!("{from}={o}: the modes are 'fio' (read values as fio 3.33 does) and 'none'")
        }
    }
}

/// True when argv[0] is named `fio`: ioscope then behaves as fio would from the name
/// alone (no subcommands, fio's lenient values, `--version` says which fio it follows).
pub fn invoked_as_fio() -> bool {
    std::env::args_os()
        .next()
        .is_some_and(|a| std::path::Path::new(&a).file_name() == Some(std::ffi::OsStr::new("fio")))
}

/// The same, with these keywords (an MPI rank's `${IOSCOPE_RANK}`).
pub fn load_jobs_with(c: &cli::Cli, kw: &jobfile::Keywords) -> Result<JobSet> {
    let files = c
        .job_files
        .iter()
        .map(|p| jobfile::read_job_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let sections = c.flag_all("section");
    // --profile: its jobs come after the command line's and the job files'.
    let mut global = c.global.clone();
    let mut files = files;
    if let Some(profile) = ioscope_options::profile::take(&mut global, kw)? {
        files.push(profile);
    }
    let set = spec::build(&global, &c.jobs, &files, &sections, kw)?;
    if set.jobs.is_empty() {
        bail!("no jobs defined: give a job file or --name=JOB");
    }
    Ok(set)
}

/// The command line equivalent of job files (`--showcmd`).
fn showcmd(c: &cli::Cli) -> Result<String> {
    let mut out = String::new();
    for p in &c.job_files {
        let mut line = String::from("ioscope");
        for sec in jobfile::read_job_file(p)? {
            if !sec.is_global() {
                line.push_str(&format!(" --name={}", sec.name));
            }
            for e in &sec.entries {
                match &e.value {
                    Some(v) => line.push_str(&format!(" --{}={}", e.key, v)),
                    None => line.push_str(&format!(" --{}", e.key)),
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

fn formats(c: &cli::Cli) -> Result<Vec<OutputFormat>> {
    let mut f = match c.flag("output-format").flatten() {
        Some(s) => ioscope_report::parse_formats(s).map_err(|e| anyhow!("--output-format: {e}"))?,
        None => vec![OutputFormat::Normal],
    };
    if c.has("minimal") {
        f = vec![OutputFormat::Terse];
    }
    if c.has("append-terse") && !f.contains(&OutputFormat::Terse) {
        f.push(OutputFormat::Terse);
    }
    Ok(f)
}

fn terse_version(c: &cli::Cli) -> Result<u32> {
    match c.flag("terse-version").flatten() {
        None => Ok(3),
        Some(v) => match v.parse() {
            Ok(n @ 2..=5) => Ok(n),
            _ => bail!("--terse-version={v}: must be 2, 3, 4 or 5"),
        },
    }
}

fn seconds_flag(c: &cli::Cli, name: &str) -> Result<Option<Duration>> {
    c.flag(name)
        .flatten()
        .map(|v| {
            ioscope_options::units::parse_time_us(v, 1_000_000)
                .map(Duration::from_micros)
                .map_err(|e| anyhow!("--{name}: {e}"))
        })
        .transpose()
}

/// Flag values that are refused before anything else happens (also with --parse-only).
pub fn check_flags(c: &cli::Cli) -> Result<()> {
    if let Some(d) = c.flag("debug").flatten() {
        if d.split(',').any(|x| x != "parse") {
            bail!("--debug={d}: ioscope supports only --debug=parse");
        }
    }
    if let Some(i) = seconds_flag(c, "eta-interval")? {
        if i < crate::status::MIN_INTERVAL {
            bail!("--eta-interval: {i:?} is too short (at least 250ms)");
        }
    }
    Ok(())
}

pub fn main(args: &[std::ffi::OsString]) -> Result<ExitCode> {
    let genesis = Instant::now();
    let c = cli::parse_args_os(args)?;
    for w in &c.warnings {
        eprintln!("ioscope: {w}");
    }
    if c.has("warnings-fatal") && !c.warnings.is_empty() {
        bail!("warnings are fatal (--warnings-fatal)");
    }
    if c.has("help") || (args.is_empty()) {
        print_help();
        return Ok(ExitCode::SUCCESS);
    }
    if c.has("version") {
        // Harnesses that call `fio` gate features on its version: say which fio we follow.
        if invoked_as_fio() {
            println!("fio-3.33");
        } else {
            println!("{}", version());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(v) = c.flag("cmdhelp") {
        // With --profile: the profile's own options, as fio lists them.
        let profile = c.global.iter().rev().find(|e| e.key == "profile");
        if let Some(p) = profile.and_then(|e| ioscope_options::profile::find(e.value.as_deref()?)) {
            print!("{}", ioscope_options::profile::options_help(p));
            return Ok(ExitCode::SUCCESS);
        }
        match v {
            None | Some("all") | Some("") => print!("{}", help::all_options_help()),
            Some(name) => print!("{}", help::option_help(name).map_err(|e| anyhow!(e))?),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(v) = c.flag("enghelp") {
        print!("{}", help::engine_help(v).map_err(|e| anyhow!(e))?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(f) = c.flag("inflate-log").flatten() {
        let mut out = std::io::stdout().lock();
        ioscope_iolog::fz::inflate(std::path::Path::new(f), &mut out)
            .with_context(|| format!("--inflate-log={f}"))?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if c.has("showcmd") {
        print!("{}", showcmd(&c)?);
        return Ok(ExitCode::SUCCESS);
    }
    check_flags(&c)?;
    if let Some(l) = crate::cluster::launched()? {
        return crate::cluster::main(&c, l);
    }
    if c.has("gather-logs") {
        bail!(
            "--gather-logs copies every rank's logs to rank 0 in a run under mpirun (or srun); \
             this run is not under MPI"
        );
    }
    let set = load_jobs(&c)?;
    let fatal = c.has("warnings-fatal");
    for n in &set.notes {
        eprintln!("{n}");
    }
    if fatal && !set.notes.is_empty() {
        bail!("warnings are fatal (--warnings-fatal)");
    }
    if c.flag("debug").flatten().is_some() {
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
    }
    if c.has("dump-jobs") {
        println!("{}", serde_json::to_string_pretty(&set)?);
        return Ok(ExitCode::SUCCESS);
    }
    let runner = Runner::new(run_options(&c)?);
    // Every check a run makes short of I/O and device access: --parse-only too.
    let plan = runner.plan(&set)?;
    if c.has("parse-only") {
        return Ok(ExitCode::SUCCESS);
    }
    if c.has("merge-blktrace-only") {
        return merge_blktraces(&set);
    }
    run(&c, &runner, &plan, genesis)
}

/// `--merge-blktrace-only`: each job's merge_blktrace_file, and no I/O.
fn merge_blktraces(set: &ioscope_options::JobSet) -> Result<ExitCode> {
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

pub fn run_options(c: &cli::Cli) -> Result<RunOptions> {
    Ok(RunOptions {
        allow_destructive: c.has("allow-destructive"),
        readonly: c.has("readonly"),
        nop: false,
        combine_submit_wait: false,
        status_interval: seconds_flag(c, "status-interval")?,
        log_format: match c.flag("log-format").flatten() {
            None | Some("text") => LogFormat::Text,
            Some("binary") => LogFormat::Binary,
            Some("both") => LogFormat::Both,
            Some(v) => bail!("--log-format={v}: text, binary or both"),
        },
        max_jobs: c
            .flag("max-jobs")
            .flatten()
            .map(|v| {
                v.parse()
                    .map_err(|_| anyhow!("--max-jobs={v} is not a number"))
            })
            .transpose()?,
    })
}

/// `--output`: opened and truncated before any I/O, so a bad path fails at once and
/// a run that is killed leaves no stale result behind.
fn open_output(c: &cli::Cli) -> Result<Option<(PathBuf, std::fs::File)>> {
    let Some(p) = c.flag("output").flatten().map(PathBuf::from) else {
        return Ok(None);
    };
    let f = std::fs::File::create(&p).with_context(|| format!("--output={}", p.display()))?;
    Ok(Some((p, f)))
}

/// The status line and, with --bandwidth-log, the aggregate bandwidth log.
struct Observers<'a> {
    status: &'a mut Status,
    bw: Option<&'a mut crate::bwlog::BwLog>,
}

impl Observer for Observers<'_> {
    fn message(&mut self, line: &str) {
        self.status.message(line);
    }
    fn warning(&mut self, line: &str) {
        self.status.warning(line);
    }
    fn progress(&mut self, jobs: &[JobProgress]) {
        if let Some(b) = self.bw.as_deref_mut() {
            b.progress(jobs);
        }
        self.status.progress(jobs);
    }
    fn interim(&mut self, report: &ioscope_stats::RunResult) {
        self.status.interim(report);
    }
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
}

impl Reporting {
    pub fn new(c: &cli::Cli) -> Result<Reporting> {
        let formats = formats(c)?;
        let terse_version = terse_version(c)?;
        let output = open_output(c)?;
        let normal_on_stdout = output.is_none() && formats.first() == Some(&OutputFormat::Normal);
        let eta = match c.flag("eta").flatten() {
            None | Some("auto") => Eta::Auto,
            Some("always") => Eta::Always,
            Some("never") => Eta::Never,
            Some(v) => bail!("--eta={v}: use auto, always or never"),
        };
        let mut status = Status::new(normal_on_stdout, eta, seconds_flag(c, "eta-newline")?);
        if let Some(i) = seconds_flag(c, "eta-interval")? {
            status.set_interval(i);
        }
        status.interim_reports(formats.clone(), terse_version, output.is_none());
        Ok(Reporting {
            formats,
            terse_version,
            output,
            status,
            head: String::new(),
        })
    }

    /// The header lines: printed now when the normal report goes to stdout, else
    /// kept for --output.
    pub fn headers(&mut self, text: String) {
        if !self.formats.contains(&OutputFormat::Normal) {
            return;
        }
        if self.output.is_none() && self.formats.first() == Some(&OutputFormat::Normal) {
            print!("{text}");
            let _ = std::io::stdout().flush();
        } else {
            self.head = text;
        }
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

fn run(c: &cli::Cli, runner: &Runner, plan: &Plan, genesis: Instant) -> Result<ExitCode> {
    let mut rep = Reporting::new(c)?;
    rep.headers(headers(plan));
    let mut bw = match c.flag("bandwidth-log") {
        Some(name) => Some(crate::bwlog::BwLog::create(
            name.filter(|n| !n.is_empty()).unwrap_or("agg"),
            genesis,
        )?),
        None => None,
    };
    crate::signals::install();
    let mut obs = Observers {
        status: &mut rep.status,
        bw: bw.as_mut(),
    };
    let mut result = runner.run(plan, &mut obs)?;
    crate::signals::mark(&mut result);
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
    Ok(crate::signals::exit_code(failed))
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
pub fn headers(plan: &Plan) -> String {
    let mut s = String::new();
    // As fio: the version follows the jobs of the command line and job files, before
    // a --profile's (and is left out when there are none).
    let profile =
        |j: &ioscope_options::JobSpec| matches!(j.loc.source, ioscope_options::Source::Profile(_));
    let own = plan.set.jobs.iter().filter(|j| !profile(j)).count();
    for (i, (j, gid, info)) in plan.spec_infos().into_iter().enumerate() {
        if i == own && own > 0 {
            s.push_str(&version());
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
        s.push_str(&version());
        s.push('\n');
    }
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
    s.push_str(&format!("Starting {line}\n"));
    s
}
