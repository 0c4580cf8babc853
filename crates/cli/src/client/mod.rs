//! `ioscope --client=HOST job.fio`: fio 3.42's client side of its wire format. Each
//! server (a fio 3.42 server or an ioscope one) gets its job files and arguments, runs
//! them and sends back its statistics, from which the report is printed per host and
//! over all of them ("All clients", from summed histograms: exact percentiles), in fio's
//! client shape, in every output format.
//!
//! The command line reads as fio's: `[local flags] --client=HOST[,PORT] [remote
//! flags] [job files] --client=…`; a host's job files and flags follow its
//! `--client`, and `--client=FILE` names a file of hosts that all get what follows.

mod eta;
mod host;
mod lineup;
mod logs;
mod quit;
mod target;
mod trigger;

use crate::command::defs;
use crate::fio::args::FioArgs;
use crate::term::status::{Status, DEFAULT_INTERVAL};
use anyhow::{anyhow, bail, Context as _, Result};
use host::Sink;
use ioscope_report::{Endpoint, OutputFormat};
use ioscope_stats::hosts::{merge_hosts, HostRun};
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;
use target::targets;

/// The flags the client itself takes (before the first `--client`); every other
/// program flag there is refused by name (fio's client ignores most of them).
const CLIENT_FLAGS: [&str; 13] = [
    "output-format",
    "output",
    "terse-version",
    "minimal",
    "append-terse",
    "eta",
    "eta-newline",
    "eta-interval",
    "server-token",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
];

/// Run the job files on every server; print the report.
pub fn main(argv: &[OsString]) -> Result<ExitCode> {
    let (local, targets) = targets(argv)?;
    let a = local_flags(&local)?;
    let args = || targets.iter().flat_map(|t| &t.args);
    let mut formats = crate::fio::report::formats(&a);
    if a.output_format.is_none() && !a.minimal {
        // fio also reads an --output-format given for a server.
        if let Some(v) = last_value(args(), "--output-format=") {
            formats = ioscope_report::parse_formats(v)
                .map_err(|e| anyhow::anyhow!("--output-format: {e}"))?;
            if a.append_terse && !formats.contains(&OutputFormat::Terse) {
                formats.push(OutputFormat::Terse);
            }
        }
    }
    let terse_version = match last_value(args(), "--terse-version=") {
        Some(v) => v.parse().context("--terse-version")?,
        None => a.terse_version,
    };
    let sink: Sink = Mutex::new(match &a.output {
        Some(p) => Box::new(
            ioscope_fs::open_output(p, false)
                .with_context(|| format!("--output={}", p.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    });
    let normal = formats.contains(&OutputFormat::Normal);
    let mut jobs = Vec::new();
    for t in &targets {
        let mut texts: Vec<String> = t.inline_job.iter().cloned().collect();
        for f in &t.job_files {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("--client: job file {f}"))?;
            texts.push(text);
        }
        jobs.push(texts);
    }
    let token = a
        .server_token
        .as_deref()
        .map(|f| ioscope_wire::ext::read_token(Path::new(f)))
        .transpose()
        .map_err(|e| anyhow!("--server-token={e}"))?;
    let shared = host::Shared {
        token,
        lineup: lineup::Lineup::new(targets.len()),
        quit: quit::Quit::default(),
        trigger: trigger::Trigger::of(&a),
        eta: eta::Board::new(
            targets.len(),
            Status::new(false, a.eta, a.eta_newline),
            a.eta_interval.unwrap_or(DEFAULT_INTERVAL),
        ),
    };
    crate::term::signals::install();
    let (shared, sink) = (&shared, &sink);
    let runs: Vec<host::Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(&jobs)
            .enumerate()
            .map(|(i, (t, texts))| {
                s.spawn(move || host::run(i, t, texts, normal.then_some(sink), shared))
            })
            .collect();
        s.spawn(|| shared.eta.watch(&shared.quit, targets.len()));
        s.spawn(|| shared.quit.watch(targets.len()));
        if let Some(t) = &shared.trigger {
            s.spawn(|| t.watch(&shared.quit, targets.len()));
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| host::Outcome::failed("its thread panicked"))
            })
            .collect()
    });
    shared.eta.clear();
    let failed = runs.iter().any(|o| o.status != 0 || o.run.error.is_some());
    let hosts: Vec<HostRun> = runs
        .into_iter()
        .enumerate()
        .map(|(i, o)| HostRun {
            rank: i as u32,
            ..o.run
        })
        .collect();
    let mut cluster = merge_hosts(hosts);
    crate::term::signals::mark(&mut cluster.all);
    for h in &mut cluster.hosts {
        if let Some(r) = h.result.as_mut() {
            crate::term::signals::mark(r);
        }
    }
    let at: Vec<Endpoint> = targets.iter().map(|t| t.at.clone()).collect();
    let report = ioscope_report::render_clients(&cluster, &at, &formats, terse_version);
    let mut out = sink.lock().map_err(|_| anyhow!("--client: output lost"))?;
    out.write_all(report.as_bytes())?;
    out.flush()?;
    if cluster.all.meta.interrupted {
        eprintln!(
            "{}",
            ioscope_report::interrupted_line(&cluster.all).trim_end()
        );
    }
    Ok(crate::term::signals::exit_code(failed))
}

/// The value of the last `PREFIXvalue` among `args`.
fn last_value<'a>(args: impl Iterator<Item = &'a String>, prefix: &str) -> Option<&'a str> {
    args.filter_map(|a| a.strip_prefix(prefix)).last()
}

/// The flags before the first `--client`, read with the program's flag table: those
/// the client takes, or an error naming the first it does not.
fn local_flags(local: &[String]) -> Result<FioArgs> {
    let argv: Vec<OsString> = local.iter().map(OsString::from).collect();
    let c = ioscope_options::cli::parse_args_os(&argv, &defs::<FioArgs>())?;
    if let Some(f) = c.job_files.first() {
        bail!(
            "--client: the job file {} comes before any --client: give it after the --client it is for",
            f.display()
        );
    }
    if let Some((n, v, _)) = c
        .flags
        .iter()
        .find(|(n, _, _)| !CLIENT_FLAGS.contains(&n.as_str()))
    {
        let given = v
            .as_ref()
            .map_or(format!("--{n}"), |v| format!("--{n}={v}"));
        bail!("--client: {given} before --client is not taken by ioscope --client (after --client=HOST it is sent to that server)");
    }
    FioArgs::from_flags(c.flags.iter().map(|(n, v, _)| (n.as_str(), v.as_deref())))
        .map_err(|e| anyhow!(e))
}
