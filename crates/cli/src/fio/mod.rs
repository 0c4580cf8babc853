//! The fio-compatible face: `ioscope [fio options] [job files]`. [`front`] reads the
//! command line and answers what needs no run (help, version, --cmdhelp, --showcmd,
//! --parse-only, …); what is left is a run, on this host ([`run::run`]) or — decided
//! by the command table — on every rank of an MPI job (`crate::cluster`).

pub mod args;
mod bwlog;
mod crctest;
pub mod jobs;
pub mod report;
pub mod run;

use crate::command::{defs, Context};
use anyhow::{anyhow, bail, Context as _, Result};
use args::{FioArgs, Invocation};
use ioscope_options::{cli, help};
use ioscope_runner::Runner;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// What the command line asks for once read.
pub enum Front {
    /// Answered (help, version, parse-only, …).
    Done(ExitCode),
    /// A run: on this host ([`run_here`]) or on every MPI rank.
    Run(Box<Invocation>),
    /// `--server[=ADDR]`: serve fio clients (`crate::server`).
    Serve(Serve),
    /// `--client=HOST …`: drive servers (`crate::client`), with the whole command
    /// line (each server's flags and job files follow its `--client`).
    Client(Vec<OsString>),
}

/// How to serve (`crate::server`): `--server[=ADDR]` and `--daemonize=PIDFILE`.
pub struct Serve {
    pub addr: Option<String>,
    pub pidfile: Option<String>,
    /// `--server-token=FILE`: jobs only for clients that give the token in FILE.
    pub token: Option<String>,
}

/// Parse the fio face's command line alone (flags and job options), nothing run.
pub fn parse_only(_cx: &Context, args: &[OsString]) -> Result<()> {
    let c = cli::parse_args_os(args, &defs::<FioArgs>())?;
    FioArgs::from_flags(c.flags.iter().map(|(n, v, _)| (n.as_str(), v.as_deref())))
        .map_err(|e| anyhow!(e))?;
    Ok(())
}

/// Read the command line; answer what needs no run.
pub fn front(cx: &Context, args: &[OsString]) -> Result<Front> {
    let flags = defs::<FioArgs>();
    let c = cli::parse_args_os(args, &flags)?;
    for w in &c.warnings {
        eprintln!("ioscope: {w}");
    }
    let a = FioArgs::from_flags(c.flags.iter().map(|(n, v, _)| (n.as_str(), v.as_deref())))
        .map_err(|e| anyhow!(e))?;
    if a.warnings_fatal && !c.warnings.is_empty() {
        bail!("warnings are fatal (--warnings-fatal)");
    }
    let inv = Invocation { cli: c, args: a };
    if let Some(addr) = &inv.args.server {
        // As fio: the jobs come from the clients.
        let i = &inv;
        if !i.cli.job_files.is_empty() || !i.cli.jobs.is_empty() || i.args.parse_only {
            bail!("--server takes no jobs (nor --parse-only): fio clients send them (fio --client=HOST job.fio)");
        }
        return Ok(Front::Serve(Serve {
            addr: addr.clone(),
            pidfile: inv.args.daemonize.clone(),
            token: inv.args.server_token.clone(),
        }));
    }
    if inv.args.daemonize.is_some() {
        bail!("--daemonize: only a server detaches (--server --daemonize=PIDFILE)");
    }
    if !inv.args.client.is_empty() {
        if inv.args.parse_only {
            bail!("--client with --parse-only: the servers read the job files; check one with ioscope --parse-only job.fio");
        }
        return Ok(Front::Client(args.to_vec()));
    }
    if inv.args.trigger_remote.is_some() {
        bail!("--trigger-remote: a remote trigger is for the servers of a client: give it before --client=HOST");
    }
    if inv.args.server_token.is_some() {
        bail!(
            "--server-token: only a server (--server) or a client (before --client) takes a token"
        );
    }
    if let Some(f) = inv.args.remote_config.first() {
        bail!("--remote-config={f}: a server loads it; give it after --client=HOST");
    }
    if let Some(code) = answer(cx, &inv, args.is_empty())? {
        return Ok(Front::Done(code));
    }
    Ok(Front::Run(Box::new(inv)))
}

/// The flags answered without jobs: help, version, option and engine help,
/// --inflate-log, --showcmd.
fn answer(cx: &Context, inv: &Invocation, no_args: bool) -> Result<Option<ExitCode>> {
    let a = &inv.args;
    if a.help || no_args {
        print!("{}", crate::doc::main_help(cx.commands));
        if a.help {
            return Ok(Some(ExitCode::SUCCESS));
        }
        // As fio: no arguments is no job, an error (a script that lost its job file
        // must not pass).
        eprintln!("ioscope: no job(s) defined");
        return Ok(Some(ExitCode::from(1)));
    }
    if a.version {
        // Harnesses that call `fio` gate features on its version: say which fio we follow.
        if a.json {
            println!("{}", serde_json::to_string_pretty(&crate::version::json())?);
        } else if jobs::compat_fio(a)? {
            println!("{}", crate::version::FIO_COMPAT);
        } else {
            println!("{}", crate::version::line());
        }
        return Ok(Some(ExitCode::SUCCESS));
    }
    if a.json {
        bail!("--json goes with --version (--output-format=json is the report's JSON)");
    }
    if let Some(v) = &a.cmdhelp {
        print!("{}", cmdhelp(inv, v.as_deref())?);
        return Ok(Some(ExitCode::SUCCESS));
    }
    if let Some(v) = &a.enghelp {
        print!(
            "{}",
            help::engine_help(v.as_deref()).map_err(|e| anyhow!(e))?
        );
        return Ok(Some(ExitCode::SUCCESS));
    }
    if let Some(f) = &a.inflate_log {
        let mut out = std::io::stdout().lock();
        ioscope_iolog::fz::inflate(f, &mut out)
            .with_context(|| format!("--inflate-log={}", f.display()))?;
        out.flush()?;
        return Ok(Some(ExitCode::SUCCESS));
    }
    if let Some(types) = &a.crctest {
        return Ok(Some(crctest::run(types.as_deref())));
    }
    if a.showcmd {
        print!("{}", jobs::showcmd(&inv.cli)?);
        return Ok(Some(ExitCode::SUCCESS));
    }
    Ok(None)
}

/// `--cmdhelp[=OPTION]`; with --profile, the profile's own options, as fio lists them.
fn cmdhelp(inv: &Invocation, v: Option<&str>) -> Result<String> {
    let profile = inv.cli.global.iter().rev().find(|e| e.key == "profile");
    if let Some(p) = profile.and_then(|e| ioscope_options::profile::find(e.value.as_deref()?)) {
        return Ok(ioscope_options::profile::options_help(p));
    }
    match v {
        None | Some("all") | Some("") => Ok(help::all_options_help()),
        Some(name) => help::option_help(name).map_err(|e| anyhow!(e)),
    }
}

/// A run on this host: the jobs read, every check short of I/O (also for
/// --parse-only), then the run, or --merge-blktrace-only's merge.
pub fn run_here(inv: Invocation, genesis: Instant) -> Result<ExitCode> {
    if inv.args.gather_logs {
        bail!(
            "--gather-logs copies every rank's logs to rank 0 in a run under mpirun (or srun); \
             this run is not under MPI"
        );
    }
    // As fio: --parse-only with no job at all has nothing wrong to say.
    if inv.args.parse_only && inv.cli.job_files.is_empty() && inv.cli.jobs.is_empty() {
        if inv.args.debug.parse {
            run::print_parse_debug(&inv.cli.global, None)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let set = jobs::load(&inv)?;
    for n in &set.notes {
        eprintln!("{n}");
    }
    if inv.args.warnings_fatal && !set.notes.is_empty() {
        bail!("warnings are fatal (--warnings-fatal)");
    }
    if inv.args.debug.parse {
        run::print_parse_debug(&inv.cli.global, Some(&set))?;
    }
    if inv.args.dump_jobs {
        println!("{}", serde_json::to_string_pretty(&set)?);
        return Ok(ExitCode::SUCCESS);
    }
    let runner = Runner::new(jobs::run_options(&inv.args));
    let plan = match runner.plan(&set) {
        // The job file is sound; this machine could not run it (fio's --parse-only
        // checks syntax only): a warning, and a run still fails on it.
        Err(ioscope_runner::RunError::Environment(e)) if inv.args.parse_only => {
            eprintln!("ioscope: warning: {e} (a run here would fail)");
            return Ok(ExitCode::SUCCESS);
        }
        p => p?,
    };
    if inv.args.parse_only {
        return Ok(ExitCode::SUCCESS);
    }
    if inv.args.merge_blktrace_only {
        return run::merge_blktraces(&set);
    }
    run::run(&inv, &runner, &plan, genesis)
}
