//! `ioscope fairness`: is the disk shared by I/O priority? Reads a JSON result (ioscope's
//! or fio's) or runs a scenario of 8 readers, and prints each job's transferred bytes
//! against its weighted share in the table format of the CFQ fairness reports.

mod output;
mod scenario;

use anyhow::{anyhow, bail, Context, Result};
use ioscope_analysis::fairness::Entry;
use ioscope_analysis::{Model, Priority};
use ioscope_results::{ResultFile, READ, WRITE};
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
}

/// The arguments, parsed through the flag table; `None` after `--help`.
fn parse(args: &[String]) -> Result<Option<Args>> {
    let Some(p) = crate::parse_flags("fairness", args)? else {
        return Ok(None);
    };
    let model = match p.value("model") {
        Some(m) => Model::parse(m).map_err(|e| anyhow!("--model: {e}"))?,
        None => Model::Cfq,
    };
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
    Ok(Some(Args {
        source,
        model,
        dir,
        json: p.has("json"),
    }))
}

pub fn main(args: &[String]) -> Result<ExitCode> {
    let Some(a) = parse(args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let (results, origin) = match &a.source {
        Source::File(path) => (ioscope_results::read_file(path)?, path.clone()),
        Source::Scenario(s) => (s.run(a.json)?, s.target.clone()),
    };
    let entries = entries(&results, a.dir, &origin)?;
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
    let report = output::Report {
        table: &table,
        model: &a.model,
        dir: a.dir,
        results: &results,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        for line in report.text() {
            println!("{line}");
        }
    }
    if let Some(sig) = crate::signals::received() {
        eprintln!("ioscope fairness: interrupted by {sig}: the table covers the run until then");
    }
    Ok(crate::signals::exit_code(false))
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
            Ok(Entry {
                name: j.name.clone(),
                prio,
                xferred,
            })
        })
        .collect()
}
