//! ioscope: argv → subcommand. Nothing else lives here: the subcommands and their
//! flags are one table, `ioscope_options::flags::COMMANDS`.

mod bwlog;
mod cluster;
mod compare;
mod fairness;
mod fio;
mod logcmd;
mod peak;
mod plot;
mod quick;
mod report;
mod signals;
mod status;
mod sweep;

use anyhow::{bail, Result};
use ioscope_options::{flagdoc, flags};
use std::ffi::OsString;
use std::process::ExitCode;

/// A subcommand's arguments as text; one that is not UTF-8 is named in the error.
fn utf8(args: &[OsString]) -> Result<Vec<String>> {
    args.iter()
        .enumerate()
        .map(|(i, a)| match a.to_str() {
            Some(s) => Ok(s.to_string()),
            None => bail!(
                "argument {} ('{}') is not valid UTF-8",
                i + 2,
                a.to_string_lossy()
            ),
        })
        .collect()
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    // argv as the OS gives it: job files may have any name (fio.rs sorts them out).
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // Under the name `fio` there are no subcommands: `fio quick` runs a job file.
    let sub = args
        .first()
        .and_then(|a| a.to_str())
        .filter(|_| !fio::invoked_as_fio());
    if let Some(e) = sub.and_then(cluster::refuse_subcommand) {
        eprintln!("ioscope: {e}");
        return ExitCode::from(1);
    }
    let result = match sub {
        Some("quick") => utf8(&args[1..]).and_then(|a| quick::main(&a)),
        Some("fairness") => utf8(&args[1..]).and_then(|a| fairness::main(&a)),
        Some("peak") => utf8(&args[1..]).and_then(|a| peak::main(&a)),
        Some(name @ ("compare" | "sweep")) => utf8(&args[1..]).and_then(|a| {
            let run = |h: &cluster::Hosts| match name {
                "compare" => compare::main(&a, h),
                _ => sweep::main(&a, h),
            };
            cluster::workflow(name, &run).unwrap_or_else(|| run(&cluster::Hosts::Local))
        }),
        Some("report") => utf8(&args[1..]).and_then(|a| report::main(&a)),
        Some("plot") => utf8(&args[1..]).and_then(|a| plot::main(&a)),
        Some("log") => utf8(&args[1..]).and_then(|a| logcmd::main(&a)),
        Some("completions") => utf8(&args[1..]).and_then(|a| completions(&a)),
        Some("help") => utf8(&args[1..]).and_then(|a| help(&a)),
        _ => fio::main(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ioscope: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `ioscope --dump-jobs | head` ends quietly, as fio and every Unix filter do, instead of
/// panicking on the closed pipe (Rust ignores SIGPIPE). Not under an MPI launch: there
/// the launcher's pipe may close mid-report and the rank must go on to save its results.
fn quiet_on_closed_pipe() {
    if ioscope_cluster::launch::detect().is_none() {
        // SAFETY: restoring the default disposition of a signal has no preconditions.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
}

/// Parse a subcommand's arguments through the flag table and print the warnings of
/// flags without effect; `None` when `--help` was asked for (and printed).
pub fn parse_flags(name: &str, args: &[String]) -> Result<Option<flags::Parsed>> {
    let cmd = flags::command(name).expect("subcommand is in the flag table");
    let p = flags::parse_command(cmd, args)?;
    for w in &p.warnings {
        eprintln!("ioscope: {w}");
    }
    if p.has("help") {
        print!("{}", flagdoc::command_help(cmd));
        return Ok(None);
    }
    Ok(Some(p))
}

/// A report file named by a flag (`--svg`, `--html`), created now: before any run, so
/// that a bad path fails at once rather than after the I/O.
pub fn out_file(path: Option<&str>) -> Result<Option<(String, std::fs::File)>> {
    path.map(|p| {
        let f = std::fs::File::create(p).map_err(|e| anyhow::anyhow!("{p}: {e}"))?;
        Ok((p.to_string(), f))
    })
    .transpose()
}

/// `ioscope completions SHELL`.
fn completions(args: &[String]) -> Result<ExitCode> {
    let Some(p) = parse_flags("completions", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    match p.operands.as_slice() {
        [s] if s == "bash" => print!("{}", flagdoc::bash_completion()),
        [s] => bail!("completions: no completions for '{s}' yet (only bash)"),
        _ => bail!("completions: name one shell: ioscope completions bash"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `ioscope help [SUBCOMMAND]`.
fn help(args: &[String]) -> Result<ExitCode> {
    let Some(p) = parse_flags("help", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    match p.operands.as_slice() {
        [] => print!("{}", flagdoc::main_help()),
        [name] => match flags::command(name) {
            Some(cmd) => print!("{}", flagdoc::command_help(cmd)),
            None => bail!("help: no subcommand '{name}' (see ioscope --help)"),
        },
        _ => bail!("help: name one subcommand"),
    }
    Ok(ExitCode::SUCCESS)
}
