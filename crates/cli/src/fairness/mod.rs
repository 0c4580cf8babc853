//! `ioscope fairness`: is the disk shared by I/O priority? Reads a JSON result (ioscope's
//! or fio's), runs a fio job file, or runs a scenario of 8 readers, and prints each job's transferred bytes
//! against its weighted share in the table format of the CFQ fairness reports.

mod chart;
mod output;
mod scenario;
mod timeline;

use anyhow::{anyhow, bail, Context, Result};
use ioscope_analysis::fairness::Entry;
use ioscope_analysis::{Model, Priority};
use ioscope_results::{ResultFile, READ, WRITE};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Which bytes count as "transferred".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    All,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::All => "all",
        }
    }
}

enum Source {
    File(PathBuf),
    Scenario(scenario::Scenario),
}

struct Args {
    source: Source,
    model: Model,
    dir: Dir,
    json: bool,
    /// --bw-log: the logs' prefix (with --scenario: where to write them, kept).
    bw_log: Option<String>,
    window_ms: u64,
    /// --svg and --html: the path and the file, created while parsing (before any run).
    svg: Option<(String, File)>,
    html: Option<(String, File)>,
}

/// The arguments, parsed through the flag table; `None` after `--help`.
fn parse(args: &[String]) -> Result<Option<Args>> {
    let Some(p) = crate::parse_flags("fairness", args)? else {
        return Ok(None);
    };
    let model = p
        .value("model")
        .map(|m| Model::parse(m).map_err(|e| anyhow!("--model: {e}")))
        .transpose()?;
    let dir = match p.value("dir") {
        None | Some("all") => Dir::All,
        Some("read") => Dir::Read,
        Some("write") => Dir::Write,
        Some(d) => bail!("--dir={d}: use read, write or all"),
    };
    let operand = match p.operands.as_slice() {
        [one] => PathBuf::from(one),
        [] if p.value("scenario").is_some() => bail!("fairness: name the file or device to read"),
        [] => bail!("fairness: name a JSON result file (see ioscope fairness --help)"),
        _ => bail!("fairness: give one operand (see ioscope fairness --help)"),
    };
    let window_ms = match p.value("window") {
        Some(v) => {
            let us = ioscope_options::units::parse_time_us(v, 1_000_000)
                .map_err(|e| anyhow!("--window: {e}"))?;
            if us < 1000 {
                bail!("--window={v}: at least 1ms");
            }
            us / 1000
        }
        None => 1000,
    };
    if p.value("window").is_some() && p.value("bw-log").is_none() && p.value("scenario").is_none() {
        bail!("--window needs --bw-log (or --scenario): the windows are cut from bandwidth logs");
    }
    let source = match p.value("scenario") {
        Some(name) => Source::Scenario(scenario::Scenario::from_flags(name, operand, &p)?),
        None => {
            for f in ["size", "runtime", "ioscheduler"] {
                if p.value(f).is_some() {
                    bail!("--{f} needs --scenario: a result file was already run");
                }
            }
            Source::File(operand)
        }
    };
    let model = match (model, &source) {
        (Some(m), _) => m,
        (None, Source::Scenario(s)) => s.default_model().unwrap_or(Model::Cfq),
        (None, Source::File(_)) => Model::Cfq,
    };
    Ok(Some(Args {
        source,
        model,
        dir,
        json: p.has("json"),
        bw_log: p.value("bw-log").map(str::to_string),
        window_ms,
        svg: crate::out_file(p.value("svg"))?,
        html: crate::out_file(p.value("html"))?,
    }))
}

pub fn main(args: &[String]) -> Result<ExitCode> {
    let Some(mut a) = parse(args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    // With --scenario, the jobs write bandwidth logs: under --bw-log's prefix (kept) or
    // in a temporary directory removed after reading.
    let mut temp: Option<PathBuf> = None;
    let (results, origin, bw_prefix) = match &a.source {
        Source::File(path) if scenario::is_job_file(path) => (
            scenario::run_job_file(path)?,
            path.clone(),
            a.bw_log.clone(),
        ),
        Source::File(path) => (
            ioscope_results::read_file(path)?,
            path.clone(),
            a.bw_log.clone(),
        ),
        Source::Scenario(s) => {
            let prefix = match &a.bw_log {
                Some(p) => p.clone(),
                None => {
                    let d = temp_dir()?;
                    let prefix = d.join("fairness").display().to_string();
                    temp = Some(d);
                    prefix
                }
            };
            let run = s.run(a.json, &prefix);
            if run.is_err() {
                if let Some(d) = &temp {
                    let _ = std::fs::remove_dir_all(d);
                }
            }
            (run?, s.target.clone(), Some(prefix))
        }
    };
    let logs = bw_prefix.map(|p| (p, temp.is_some()));
    let result = report(&mut a, &results, &origin, logs);
    if let Some(d) = &temp {
        let _ = std::fs::remove_dir_all(d);
    }
    result?;
    if let Some(sig) = crate::signals::received() {
        eprintln!("ioscope fairness: interrupted by {sig}: the table covers the run until then");
    }
    Ok(crate::signals::exit_code(false))
}

/// The table, the latencies and, with `logs` (prefix, whether in a temporary directory),
/// the windows, printed as text or JSON.
fn report(
    a: &mut Args,
    results: &ResultFile,
    origin: &Path,
    logs: Option<(String, bool)>,
) -> Result<()> {
    let entries = entries(results, a.dir, origin)?;
    if entries.len() < 2 && !a.json {
        eprintln!(
            "ioscope fairness: {} has {} job(s): fairness needs several (results written with \
             group_reporting merge the jobs of a group into one)",
            origin.display(),
            entries.len()
        );
    }
    let table = ioscope_analysis::fairness_table(&entries, &a.model)
        .with_context(|| format!("{}", origin.display()))?;
    let latency: Vec<output::Latency> = results
        .jobs
        .iter()
        .map(|j| output::Latency::of(j, a.dir))
        .collect();
    let timeline = match logs {
        Some((p, temp)) => {
            let mut tl = timeline::build(&p, &table, a.dir, a.window_ms)?;
            if temp {
                tl.source = "the run's bandwidth logs, 500 ms averages".into();
            }
            Some(tl)
        }
        None => None,
    };
    let report = output::Report {
        table: &table,
        model: &a.model,
        dir: a.dir,
        results,
        latency: &latency,
        timeline: timeline.as_ref(),
    };
    if a.svg.is_some() || a.html.is_some() {
        let svg = chart::figure(&report).svg()?;
        if let Some((path, f)) = &mut a.svg {
            f.write_all(svg.as_bytes()).with_context(|| path.clone())?;
        }
        if let Some((path, f)) = &mut a.html {
            let page = chart::html(&report, &origin.display().to_string(), &svg);
            f.write_all(page.as_bytes()).with_context(|| path.clone())?;
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        for line in report.text() {
            println!("{line}");
        }
    }
    Ok(())
}

/// A new private directory for the scenario's bandwidth logs.
fn temp_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let d = base.join(format!("ioscope-fairness-{}-{i}", std::process::id()));
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => bail!("{}: {e}", d.display()),
        }
    }
    bail!("{}: cannot make a directory for the logs", base.display())
}

/// One entry per job: its priority from the job options, its bytes in `dir`.
fn entries(r: &ResultFile, dir: Dir, origin: &Path) -> Result<Vec<Entry>> {
    r.jobs
        .iter()
        .map(|j| {
            let prio = Priority::from_options(j.option("prioclass", r), j.option("prio", r))
                .with_context(|| format!("{}: job '{}'", origin.display(), j.name))?;
            let xferred = match dir {
                Dir::Read => j.dirs[READ].io_bytes,
                Dir::Write => j.dirs[WRITE].io_bytes,
                Dir::All => j.io_bytes_all(),
            };
            let cgroup_weight = match j.option("cgroup_weight", r) {
                Some(w) => Some(w.trim().parse::<u64>().map_err(|_| {
                    anyhow!(
                        "{}: job '{}': cgroup_weight={w} is not a number",
                        origin.display(),
                        j.name
                    )
                })?),
                None => None,
            };
            Ok(Entry {
                name: j.name.clone(),
                prio,
                xferred,
                cgroup_weight,
            })
        })
        .collect()
}
