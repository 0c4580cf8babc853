//! `ioscope fairness`: is the disk shared by I/O priority? Reads a JSON result (ioscope's
//! or fio's), runs a fio job file, or runs a scenario of 8 readers, and prints each job's transferred bytes
//! against its weighted share in the table format of the CFQ fairness reports.

mod chart;
mod dir;
mod output;
mod scenario;
mod timeline;

use crate::command::{self, Context, Flag};
use anyhow::{anyhow, bail, Context as _, Result};
use dir::Dir;
use ioscope_analysis::fairness::Entry;
use ioscope_analysis::{Model, Priority};
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_results::{ResultFile, READ, WRITE};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use FlagValue::{None as NoVal, Required as ReqVal};

enum Source {
    File(PathBuf),
    Scenario(scenario::Scenario),
}

/// `ioscope fairness`'s arguments as given.
#[derive(Default)]
pub struct Args {
    model: Option<Model>,
    tolerance_pct: Option<f64>,
    dir: Dir,
    json: bool,
    operands: Vec<String>,
    scenario: Option<String>,
    bw_log: Option<String>,
    window_ms: Option<u64>,
    svg: Option<String>,
    html: Option<String>,
    size: Option<String>,
    runtime: Option<String>,
    ioscheduler: Option<String>,
    include_interrupted: bool,
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.operands.push(word);
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: flag("include-interrupted", NoVal, "", "Read a result whose run a signal cut short (refused by default: its shares cover part of the run)"),
        verbs: &[],
        set: |a, _| {
            a.include_interrupted = true;
            Ok(())
        },
    },
    Flag {
        def: flag("tolerance", ReqVal, "PCT", "A lower-priority job counts as a violation only when it transferred more than PCT% above a higher one (default 1: run-to-run noise is no violation; 0: any excess)"),
        verbs: &[],
        set: |a, v| {
            let t: f64 = v
                .unwrap_or("")
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|t: &f64| t.is_finite() && *t >= 0.0)
                .ok_or_else(|| format!("--tolerance: '{}' is not a percentage >= 0", v.unwrap_or("")))?;
            a.tolerance_pct = Some(t);
            Ok(())
        },
    },
    Flag {
        def: flag("model", ReqVal, "MODEL", "Weights: cfq (180-20*prio, default), bfq ((8-prio)*10), equal, io.weight or cgroup (each job's cgroup_weight, 100 when unset; the default of --scenario=cgroup-weights), or w1,w2,... one per job"),
        verbs: &[],
        set: |a, v| {
            a.model = Some(Model::parse(v.unwrap_or("")).map_err(|e| format!("--model: {e}"))?);
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            choices: &["read", "write", "all"],
            ..flag("dir", ReqVal, "DIR", "Bytes that count: read, write or all (default all: read+write+trim)")
        },
        verbs: &[],
        set: |a, v| {
            a.dir = match v.unwrap_or("") {
                "all" => Dir::All,
                "read" => Dir::Read,
                "write" => Dir::Write,
                d => return Err(format!("--dir={d}: use read, write or all")),
            };
            Ok(())
        },
    },
    Flag {
        def: flag("json", NoVal, "", "Print the table and figures as one JSON document on stdout"),
        verbs: &[],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            choices: &["prio-ladder", "equal", "cgroup-weights"],
            ..flag("scenario", ReqVal, "NAME", "Run 8 random readers on TARGET instead of reading a result: prio-ladder (be 0..7), equal (all be 4) or cgroup-weights (a blkio cgroup each, weights 800..100; cgroup v1, root)")
        },
        verbs: &[],
        set: |a, v| {
            a.scenario = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("svg", ReqVal, "FILE", "Also write the charts (ideal and transferred per job; shares and Jain's index per window) as SVG to FILE"),
        verbs: &[],
        set: |a, v| {
            a.svg = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("html", ReqVal, "FILE", "Also write a self-contained HTML report (tables and charts) to FILE"),
        verbs: &[],
        set: |a, v| {
            a.html = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("size", ReqVal, "SIZE", "--scenario: size of the region read (default: the file's size; 1g for a new file)"),
        verbs: &[],
        set: |a, v| {
            a.size = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("runtime", ReqVal, "TIME", "--scenario: run time (default 10s, seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            a.runtime = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("ioscheduler", ReqVal, "NAME", "--scenario: switch the device to this I/O scheduler for the run (restored afterwards)"),
        verbs: &[],
        set: |a, v| {
            a.ioscheduler = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("bw-log", ReqVal, "PREFIX", "Fairness over time from bandwidth logs PREFIX_bw.N.log (N = job number; write_bw_log's format); with --scenario: keep the run's logs under PREFIX"),
        verbs: &[],
        set: |a, v| {
            a.bw_log = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("window", ReqVal, "TIME", "--bw-log, --scenario: window length for fairness over time (default 1s, seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let us = ioscope_options::units::parse_time_us(v, 1_000_000)
                .map_err(|e| format!("--window: {e}"))?;
            if us < 1000 {
                return Err(format!("--window={v}: at least 1ms"));
            }
            a.window_ms = Some(us / 1000);
            Ok(())
        },
    },
];

/// What to do, from the arguments.
struct Run {
    source: Source,
    model: Model,
    /// --tolerance, percent.
    tolerance_pct: f64,
    dir: Dir,
    json: bool,
    /// --bw-log: the logs' prefix (with --scenario: where to write them, kept).
    bw_log: Option<String>,
    window_ms: u64,
    /// --svg and --html: the path and the file, created before any run.
    svg: Option<(String, File)>,
    html: Option<(String, File)>,
    include_interrupted: bool,
}

/// The run the arguments describe; the flags that do not go together are refused.
fn run_of(a: Args) -> Result<Run> {
    let operand = match a.operands.as_slice() {
        [one] => PathBuf::from(one),
        [] if a.scenario.is_some() => bail!("fairness: name the file or device to read"),
        [] => bail!("fairness: name a JSON result file (see ioscope fairness --help)"),
        _ => bail!("fairness: give one operand (see ioscope fairness --help)"),
    };
    if a.window_ms.is_some() && a.bw_log.is_none() && a.scenario.is_none() {
        bail!("--window needs --bw-log (or --scenario): the windows are cut from bandwidth logs");
    }
    let source = match &a.scenario {
        Some(name) => Source::Scenario(scenario::Scenario::from_flags(
            name,
            operand,
            a.size.as_deref(),
            a.runtime.as_deref(),
            a.ioscheduler.clone(),
        )?),
        None => {
            let given = [
                ("size", &a.size),
                ("runtime", &a.runtime),
                ("ioscheduler", &a.ioscheduler),
            ];
            if let Some((f, _)) = given.iter().find(|(_, v)| v.is_some()) {
                bail!("--{f} needs --scenario: a result file was already run");
            }
            Source::File(operand)
        }
    };
    let model = match (a.model, &source) {
        (Some(m), _) => m,
        (None, Source::Scenario(s)) => s.default_model().unwrap_or(Model::Cfq),
        (None, Source::File(_)) => Model::Cfq,
    };
    Ok(Run {
        source,
        model,
        tolerance_pct: a.tolerance_pct.unwrap_or(1.0),
        dir: a.dir,
        json: a.json,
        bw_log: a.bw_log,
        window_ms: a.window_ms.unwrap_or(1000),
        svg: crate::term::out_file(a.svg.as_deref())?,
        html: crate::term::out_file(a.html.as_deref())?,
        include_interrupted: a.include_interrupted,
    })
}

/// The result file `path`; one whose run was interrupted only when asked for.
fn read_result(path: &Path, include_interrupted: bool) -> Result<ResultFile> {
    if path.is_dir() {
        bail!("{}: a directory; name one result file", path.display());
    }
    let o = ioscope_results::gather::Options {
        recursive: false,
        include_interrupted,
    };
    let g = ioscope_results::gather(path, o)?;
    if let Some(s) = g.skipped.first() {
        bail!("{s}");
    }
    let (_, r) = g
        .results
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("{}: no result", path.display()))?;
    Ok(r)
}

pub fn main(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut a = run_of(a)?;
    // With --scenario, the jobs write bandwidth logs: under --bw-log's prefix (kept) or
    // in a temporary directory removed after reading.
    let mut temp: Option<PathBuf> = None;
    let mut warnings = Vec::new();
    let (results, origin, bw_prefix) = match &a.source {
        Source::File(path) if scenario::is_job_file(path) => (
            scenario::run_job_file(path, &mut warnings)?,
            path.clone(),
            a.bw_log.clone(),
        ),
        Source::File(path) => (
            read_result(path, a.include_interrupted)?,
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
            let run = s.run(a.json, &prefix, &mut warnings);
            if run.is_err() {
                if let Some(d) = &temp {
                    let _ = std::fs::remove_dir_all(d);
                }
            }
            (run?, s.target.clone(), Some(prefix))
        }
    };
    let logs = bw_prefix.map(|p| (p, temp.is_some()));
    let result = report(&mut a, &results, &origin, logs, &warnings);
    if let Some(d) = &temp {
        let _ = std::fs::remove_dir_all(d);
    }
    result?;
    if let Some(sig) = crate::term::signals::received() {
        eprintln!("ioscope fairness: interrupted by {sig}: the table covers the run until then");
    }
    Ok(crate::term::signals::exit_code(false))
}

/// The table, the latencies and, with `logs` (prefix, whether in a temporary directory),
/// the windows, printed as text or JSON.
fn report(
    a: &mut Run,
    results: &ResultFile,
    origin: &Path,
    logs: Option<(String, bool)>,
    warnings: &[String],
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
        tolerance_pct: a.tolerance_pct,
        dir: a.dir,
        results,
        latency: &latency,
        timeline: timeline.as_ref(),
    };
    if a.svg.is_some() || a.html.is_some() {
        let fig = chart::figure(&report);
        let svg = fig.svg()?;
        if let Some((path, f)) = &mut a.svg {
            f.write_all(svg.as_bytes()).with_context(|| path.clone())?;
        }
        if let Some((path, f)) = &mut a.html {
            let page = chart::html(&report, &origin.display().to_string(), &fig, warnings);
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
    ioscope_fs::create_temp_dir(&base, "ioscope-fairness")
        .with_context(|| format!("{}: cannot make a directory for the logs", base.display()))
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
