//! `ioscope --client=HOST job.fio`: fio 3.42's client side of its wire format. Each
//! server (a fio 3.42 server or an ioscope one) gets its job files and arguments, runs
//! them and sends back its statistics, from which the report is printed per host and
//! over all of them ("All clients", from summed histograms: exact percentiles), in fio's
//! client shape, in every output format.
//!
//! The command line reads as fio's: `[local flags] --client=HOST[,PORT] [remote
//! flags] [job files] --client=…`; a host's job files and flags follow its
//! `--client`, and `--client=FILE` names a file of hosts that all get what follows.

mod host;
mod lineup;
mod logs;
mod quit;
mod target;
mod trigger;

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

/// The client's own flags: those before the first `--client`.
const LOCAL_FLAGS: [&str; 8] = [
    "--output-format=",
    "--output=",
    "--terse-version=",
    "--server-token=",
    "--trigger-file=",
    "--trigger-timeout=",
    "--trigger=",
    "--trigger-remote=",
];

/// Run the job files on every server; print the report.
pub fn main(argv: &[OsString]) -> Result<ExitCode> {
    let (local, targets) = targets(argv)?;
    // None of the client's own flags is ignored: those not taken yet are refused.
    if let Some(a) = local
        .iter()
        .find(|a| !LOCAL_FLAGS.iter().any(|f| a.starts_with(f)))
    {
        bail!("--client: {a} before --client is not supported by ioscope --client yet (after --client it is sent to the server)");
    }
    let args = || local.iter().chain(targets.iter().flat_map(|t| &t.args));
    let formats = output_formats(args())?;
    let terse_version = last_value(args(), "--terse-version=")
        .map_or(Ok(3), str::parse)
        .context("--terse-version")?;
    let sink: Sink = Mutex::new(match last_value(local.iter(), "--output=") {
        Some(p) => Box::new(
            ioscope_fs::open_output(Path::new(p), false)
                .with_context(|| format!("--output={p}"))?,
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
    let token = last_value(local.iter(), "--server-token=")
        .map(|f| ioscope_wire::ext::read_token(Path::new(f)))
        .transpose()
        .map_err(|e| anyhow!("--server-token={e}"))?;
    let shared = host::Shared {
        token,
        lineup: lineup::Lineup::new(targets.len()),
        quit: quit::Quit::default(),
        trigger: trigger::Trigger::of(&local)?,
    };
    crate::term::signals::install();
    let runs: Vec<host::Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(&jobs)
            .map(|(t, texts)| s.spawn(|| host::run(t, texts, normal.then_some(&sink), &shared)))
            .collect();
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

/// The last `--output-format` given (locally or for a server); normal when none.
fn output_formats<'a>(args: impl Iterator<Item = &'a String>) -> Result<Vec<OutputFormat>> {
    let v = last_value(args, "--output-format=").unwrap_or("normal");
    ioscope_report::parse_formats(v).map_err(|e| anyhow::anyhow!("--output-format: {e}"))
}
