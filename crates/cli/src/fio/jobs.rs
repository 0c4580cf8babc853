//! The fio face's jobs: job files and command-line jobs read into a validated
//! [`JobSet`] with the keywords job files see (`--compat`, `${IOSCOPE_RANK}`), and the
//! run-wide settings its flags give the runner.

use super::args::Invocation;
use super::args::{compat, FioArgs};
use anyhow::{bail, Result};
use ioscope_options::{cli, jobfile, spec, JobSet};
use ioscope_runner::RunOptions;

/// Job files and command-line jobs → validated job set.
pub fn load(inv: &Invocation) -> Result<JobSet> {
    load_with(inv, &keywords(&inv.args)?)
}

/// Jobs given as fio command-line options alone (what `quick`, `peak` and
/// `fairness --scenario` build), with the keywords of this program's name and
/// environment.
pub fn from_argv(argv: &[String]) -> Result<JobSet> {
    let inv = Invocation {
        cli: cli::parse_args(argv, &[])?,
        args: FioArgs::default(),
    };
    load(&inv)
}

/// The keywords job files see, and how their values read (`--compat`).
pub fn keywords(a: &FioArgs) -> Result<jobfile::Keywords> {
    Ok(jobfile::Keywords::probe().with_compat_fio(compat_fio(a)?))
}

/// fio's lenient values: `--compat=fio`, else `IOSCOPE_COMPAT=fio`, else when this
/// program runs under the name `fio` (a symlink that harnesses call).
pub fn compat_fio(a: &FioArgs) -> Result<bool> {
    if let Some(c) = a.compat {
        return Ok(c);
    }
    match std::env::var("IOSCOPE_COMPAT") {
        Ok(v) => compat("IOSCOPE_COMPAT", &v).map_err(anyhow::Error::msg),
        Err(_) => Ok(invoked_as_fio()),
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
pub fn load_with(inv: &Invocation, kw: &jobfile::Keywords) -> Result<JobSet> {
    let c = &inv.cli;
    let mut files = c
        .job_files
        .iter()
        .map(|p| jobfile::read_job_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    // --profile: its jobs come after the command line's and the job files'.
    let mut global = c.global.clone();
    if let Some(profile) = ioscope_options::profile::take(&mut global, kw)? {
        files.push(profile);
    }
    let sections: Vec<&str> = inv.args.sections.iter().map(String::as_str).collect();
    let set = spec::build(&global, &c.jobs, &files, &sections, kw)?;
    if set.jobs.is_empty() {
        bail!("no jobs defined: give a job file or --name=JOB");
    }
    Ok(set)
}

/// The command line equivalent of job files (`--showcmd`).
pub fn showcmd(c: &cli::Cli) -> Result<String> {
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

/// The run-wide settings the flags give.
pub fn run_options(a: &FioArgs) -> RunOptions {
    RunOptions {
        allow_destructive: a.allow_destructive,
        readonly: a.readonly,
        nop: false,
        nop_file: false,
        combine_submit_wait: false,
        engine_loop: false,
        status_interval: a.status_interval,
        live_interval: a.live.runner_interval(),
        log_format: a.log_format,
        max_jobs: a.max_jobs,
        aux_path: a.aux_path.clone(),
        trigger: a.trigger.clone(),
        debug: ioscope_runner::DebugOptions {
            random: a.debug.random,
            io: a.debug.io,
            out: None,
        },
    }
}
