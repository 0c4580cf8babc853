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
mod target;

use anyhow::{bail, Context as _, Result};
use ioscope_report::OutputFormat;
use ioscope_stats::hosts::{merge_hosts, HostRun};
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use target::targets;

/// Run the job files on every server; print the report.
pub fn main(argv: &[OsString]) -> Result<ExitCode> {
    let (local, targets) = targets(argv)?;
    // Flags before --client would be the client's own: none but the report's format
    // is taken yet, and none is ignored.
    if let Some(a) = local.iter().find(|a| !a.starts_with("--output-format=")) {
        bail!("--client: {a} before --client is not supported by ioscope --client yet (after --client it is sent to the server)");
    }
    let args = || local.iter().chain(targets.iter().flat_map(|t| &t.args));
    let formats = output_formats(args())?;
    let terse_version = args()
        .filter_map(|a| a.strip_prefix("--terse-version="))
        .next_back()
        .map_or(Ok(3), str::parse)
        .context("--terse-version")?;
    let normal = formats.contains(&OutputFormat::Normal);
    let mut jobs = Vec::new();
    for t in &targets {
        let mut texts = Vec::new();
        for f in &t.job_files {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("--client: job file {f}"))?;
            texts.push(text);
        }
        jobs.push(texts);
    }
    let runs: Vec<host::Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(&jobs)
            .map(|(t, texts)| s.spawn(move || host::run(t, texts, normal)))
            .collect();
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
    let cluster = merge_hosts(hosts);
    let report = ioscope_report::render_cluster(&cluster, &formats, terse_version);
    let mut out = std::io::stdout().lock();
    out.write_all(report.as_bytes())?;
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The last `--output-format` given (locally or for a server); normal when none.
fn output_formats<'a>(args: impl Iterator<Item = &'a String>) -> Result<Vec<OutputFormat>> {
    let v = args
        .filter_map(|a| a.strip_prefix("--output-format="))
        .last()
        .unwrap_or("normal");
    ioscope_report::parse_formats(v).map_err(|e| anyhow::anyhow!("--output-format: {e}"))
}
