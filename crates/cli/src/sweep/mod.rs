//! `ioscope sweep plan|run|status|import`: parameter sweeps from a TOML sweep file,
//! run through the runner as a library (crates/sweep), reported by `ioscope report`.

mod progress;

use crate::command::{self, Context as Cx, Flag, Hosts};
use crate::live::{self, LiveArgs};
use crate::recording::flags::{self as history, HistoryArgs};
use anyhow::{anyhow, bail, Context, Result};
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_runner::RunOptions;
use ioscope_sweep::campaign::{self, Status};
use ioscope_sweep::execute::nominal_seconds;
use ioscope_sweep::{Campaign, Settings, SweepFile};
use progress::{duration_text, SweepProgress};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use FlagValue::{None as NoVal, Required as ReqVal};

/// `ioscope sweep`'s arguments.
#[derive(Default)]
pub struct Args {
    output: Option<String>,
    retry_failed: bool,
    allow_destructive: bool,
    emit: Option<String>,
    check: bool,
    json: bool,
    live: LiveArgs,
    history: HistoryArgs,
    operands: Vec<String>,
}

impl live::HasLive for Args {
    fn live_args(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl history::HasHistory for Args {
    fn history_args(&mut self) -> &mut HistoryArgs {
        &mut self.history
    }
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
        def: FlagDef {
            aliases: &["o"],
            ..flag("output", ReqVal, "DIR", "run: the run directory (results, journal, report); running again on it resumes; import: where the imported results go")
        },
        verbs: &["run", "import"],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("retry-failed", NoVal, "", "run: run points that failed in an earlier run again (they are skipped otherwise)"),
        verbs: &["run"],
        set: |a, _| {
            a.retry_failed = true;
            Ok(())
        },
    },
    Flag {
        def: flag("allow-destructive", NoVal, "", "run: allow writes to devices the safety checks refuse, and purge=discard"),
        verbs: &["run"],
        set: |a, _| {
            a.allow_destructive = true;
            Ok(())
        },
    },
    Flag {
        def: live::LIVE,
        verbs: &["run"],
        set: live::set_live::<Args>,
    },
    Flag {
        def: live::LIVE_INTERVAL,
        verbs: &["run"],
        set: live::set_interval::<Args>,
    },
    Flag {
        def: live::METRICS,
        verbs: &["run"],
        set: live::set_metrics::<Args>,
    },
    Flag {
        def: live::METRICS_LINGER,
        verbs: &["run"],
        set: live::set_linger::<Args>,
    },
    Flag {
        def: history::HISTORY,
        verbs: &["run"],
        set: history::set_history::<Args>,
    },
    Flag {
        def: history::LABEL,
        verbs: &["run"],
        set: history::set_label::<Args>,
    },
    Flag {
        def: flag("emit", ReqVal, "DIR", "plan: write each point as a fio job file DIR/<point>.fio"),
        verbs: &["plan"],
        set: |a, v| {
            a.emit = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("check", NoVal, "", "plan: check every point as a run would (options, unsupported values, limits); nothing runs, nothing is written"),
        verbs: &["plan"],
        set: |a, _| {
            a.check = true;
            Ok(())
        },
    },
    Flag {
        def: flag("json", NoVal, "", "plan, status: print JSON instead of text"),
        verbs: &["plan", "status"],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let hosts = cx.hosts;
    let (verb, rest) = match p.operands.split_first() {
        Some((v, rest)) => (v.as_str(), rest),
        None => bail!("sweep: give a verb: plan, run, status or import (see ioscope sweep --help)"),
    };
    if !["plan", "run", "status", "import"].contains(&verb) {
        bail!("sweep: unknown verb '{verb}': plan, run, status or import");
    }
    let [operand] = rest else {
        bail!(
            "sweep {verb}: give one {}",
            if verb == "status" {
                "run directory"
            } else if verb == "import" {
                "fio-tests directory"
            } else {
                "sweep file"
            }
        );
    };
    let operand = Path::new(operand);
    match verb {
        "plan" => plan(operand, &p, hosts),
        "run" => run(operand, &p, hosts),
        "status" => status(operand, p.json),
        _ => import(operand, p.output.as_deref()),
    }
}

/// `sweep import TREE -o DIR`: a fio-tests tree re-read as sweep points, and its report.
fn import(src: &Path, output: Option<&str>) -> Result<ExitCode> {
    let out = PathBuf::from(
        output.ok_or_else(|| anyhow!("sweep import: name the directory to write with -o DIR"))?,
    );
    let i = ioscope_sweep::import::import(src, &out)?;
    for f in &i.failed {
        eprintln!("ioscope sweep import: {f}");
    }
    println!(
        "imported {} point(s) from {} into {} ({} failed in fio-tests and left out, {} never run)",
        i.points,
        src.display(),
        out.display(),
        i.failed.len(),
        i.not_run
    );
    println!("report: {}", i.report.html.display());
    Ok(ExitCode::SUCCESS)
}

fn load(path: &Path) -> Result<Campaign> {
    let f = SweepFile::read(path)?;
    Ok(Campaign::new(f)?)
}

/// Points' planned time: the time-bounded ones' sum, and how many are size-bounded.
fn planned(c: &Campaign) -> Result<(f64, usize)> {
    let mut secs = 0.0;
    let mut unknown = 0;
    for p in &c.points {
        match nominal_seconds(&p.job_set()?) {
            Some(s) => secs += s,
            None => unknown += 1,
        }
    }
    Ok((secs, unknown))
}

fn plan(path: &Path, p: &Args, hosts: &dyn Hosts) -> Result<ExitCode> {
    let c = load(path)?;
    if p.check {
        c.check(&*hosts.exec(RunOptions::default()))?;
    }
    if let Some(dir) = p.emit.as_deref() {
        std::fs::create_dir_all(dir).with_context(|| dir.to_string())?;
        for pt in &c.points {
            let f = Path::new(dir).join(format!("{}.fio", pt.id));
            std::fs::write(&f, pt.job_text()).with_context(|| f.display().to_string())?;
        }
    }
    let (secs, unknown) = planned(&c)?;
    let pre = precondition_text(&c.file);
    if p.json {
        let doc = serde_json::json!({
            "sweep_file": path.display().to_string(),
            "target": c.identity,
            "points": c.points.len(),
            "planned_seconds": secs,
            "size_bounded_points": unknown,
            "precondition": pre,
            "ids": c.points.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
            "first": c.points.iter().take(3).map(|p| p.job_text()).collect::<Vec<_>>(),
            "checked": p.check,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("sweep file: {}", path.display());
    println!("target: {}", c.identity.text());
    for s in &c.file.sweeps {
        let n = c.points.iter().filter(|p| p.sweep == s.name).count();
        let axes: Vec<String> = s
            .axes
            .iter()
            .map(|a| format!("{} ({})", a.name, a.values.len()))
            .collect();
        println!(
            "sweep {}: {n} points = {} profile(s) x {}",
            s.name,
            s.profiles.len().max(1),
            axes.join(" x ")
        );
    }
    let unknown_text = match unknown {
        0 => String::new(),
        n => format!(" + {n} size-bounded point(s) of unknown duration"),
    };
    println!(
        "points: {}, planned time: {}{unknown_text}",
        c.points.len(),
        seconds_text(secs)
    );
    if let Some(t) = pre {
        println!("before the points: {t}");
    }
    if p.check {
        println!("check: every point passes the checks a run makes (nothing ran)");
    }
    if let Some(dir) = p.emit.as_deref() {
        println!("job files: {} written to {dir}", c.points.len());
    }
    for pt in c.points.iter().take(3) {
        println!("\n{}", pt.job_text().trim_end());
    }
    if c.points.len() > 3 {
        println!(
            "\n... and {} more (--emit DIR writes them all)",
            c.points.len() - 3
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What runs before the points, in words, with its duration where known.
fn precondition_text(f: &SweepFile) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(p) = &f.precondition {
        if p.purge == ioscope_sweep::file::Purge::Discard {
            parts.push("purge (discard)".to_string());
        }
        if p.passes > 0 {
            parts.push(format!(
                "{} sequential write pass(es) of {} blocks",
                p.passes, p.bs
            ));
        }
    }
    if let Some(s) = &f.steady {
        let round = ioscope_sweep::precondition::job_sets(f)
            .ok()
            .and_then(|sets| sets.last().and_then(nominal_seconds));
        let c = &s.criteria;
        parts.push(match (&s.fio_ss, round) {
            (Some(ss), _) => format!("steady state by fio's ss={ss} (one run)"),
            (None, Some(r)) => format!(
                "steady state: rounds of {}, {}..{} rounds ({}..{})",
                seconds_text(r),
                c.window,
                c.max_rounds,
                seconds_text(r * c.window as f64),
                seconds_text(r * c.max_rounds as f64)
            ),
            (None, None) => format!("steady state: {}..{} rounds", c.window, c.max_rounds),
        });
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `s` seconds as a duration ("1h 2m"), whatever the value.
fn seconds_text(s: f64) -> String {
    match Duration::try_from_secs_f64(s) {
        // Below a second: milliseconds (a 300 ms round is not "0s").
        Ok(d) if d < Duration::from_secs(1) => format!("{}ms", d.as_millis()),
        Ok(d) => duration_text(d),
        Err(_) => format!("{s:e} s"),
    }
}

fn run(path: &Path, p: &Args, hosts: &dyn Hosts) -> Result<ExitCode> {
    let dir = PathBuf::from(
        p.output
            .as_deref()
            .ok_or_else(|| anyhow!("sweep run: name the run directory with -o DIR"))?,
    );
    let c = load(path)?;
    crate::term::signals::install();
    let settings = Settings {
        allow_destructive: p.allow_destructive,
        retry_failed: p.retry_failed,
    };
    eprintln!(
        "ioscope sweep: {} points on {} into {}",
        c.points.len(),
        c.identity.text(),
        dir.display()
    );
    let exec = hosts.exec(RunOptions {
        allow_destructive: settings.allow_destructive,
        live_interval: p.live.runner_interval(),
        ..RunOptions::default()
    });
    let live = crate::live::Live::open(&p.live, true)?;
    let history = crate::recording::capture::Capture::from_args(&p.history)?;
    if exec.ranks() > 1 {
        eprintln!(
            "ioscope sweep: every point runs on all {} ranks; each point's result is their \
             merged report",
            exec.ranks()
        );
    }
    let devices = serde_json::to_value([&c.identity]).unwrap_or_default();
    let mut progress = SweepProgress::new(
        c.points.len(),
        live,
        history.map(|h| (h, dir.clone(), devices)),
    );
    let summary = c.run(&dir, &settings, &*exec, &mut progress);
    let live = progress.finish();
    let interrupted =
        summary.as_ref().is_ok_and(|s| s.interrupted) || crate::term::signals::received().is_some();
    let code = report_run(&dir, summary);
    // The report is out: then the stream's end line and the metrics' last scrapes.
    live.finish(None, interrupted);
    code
}

/// The sweep's report of `dir`, its summary line, and its exit status.
fn report_run(
    dir: &Path,
    summary: Result<ioscope_sweep::Summary, ioscope_sweep::SweepError>,
) -> Result<ExitCode> {
    let summary = summary?;
    // The report covers what finished, interrupted or not.
    let written = ioscope_sweep::report::write_dir(dir, dir, Default::default());
    println!(
        "{} points: {} run, {} finished before, {} failed, {} pruned, {} not run",
        summary.total, summary.done, summary.skipped, summary.failed, summary.pruned, summary.left
    );
    let reported = match written {
        Ok(w) => {
            for s in &w.skipped {
                eprintln!("ioscope sweep: {s}");
            }
            println!("report: {}", w.html.display());
            true
        }
        Err(e) => {
            eprintln!("ioscope sweep: no report: {e:#}");
            false
        }
    };
    if summary.interrupted {
        eprintln!(
            "ioscope sweep: interrupted; finished points are saved: run the same command again to resume"
        );
        return Ok(crate::term::signals::exit_code(false));
    }
    Ok(if summary.failed > 0 || !reported {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn status(dir: &Path, json: bool) -> Result<ExitCode> {
    let l = campaign::load(dir, false)?;
    for s in &l.skipped {
        eprintln!("ioscope sweep: {s}");
    }
    if !l.is_sweep {
        bail!(
            "{}: not a sweep run directory (no journal.jsonl and sweep.toml)",
            dir.display()
        );
    }
    let count = |f: fn(&Status) -> bool| l.records.iter().filter(|r| f(&r.status)).count();
    let done = count(|s| *s == Status::Done);
    let failed = count(|s| matches!(s, Status::Failed(_)));
    let pruned = count(|s| matches!(s, Status::Pruned(_)));
    let left = count(|s| *s == Status::Left);
    let spent: f64 = l.records.iter().filter_map(|r| r.seconds).sum();
    let mean = (done > 0).then(|| spent / done as f64);
    let eta: Option<f64> = l
        .records
        .iter()
        .filter(|r| r.status == Status::Left)
        .map(|r| r.nominal_s.map(|n| n + 0.2).or(mean))
        .sum();
    if json {
        let doc = serde_json::json!({
            "dir": dir.display().to_string(),
            "points": l.records.len(), "done": done, "failed": failed, "pruned": pruned,
            "left": left, "seconds_spent": spent, "eta_seconds": eta,
            "failures": l.records.iter().filter_map(|r| match &r.status {
                Status::Failed(e) => Some(serde_json::json!({"point": r.id, "error": e})), _ => None
            }).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: {} points: {done} done, {failed} failed, {pruned} pruned, {left} left",
        dir.display(),
        l.records.len()
    );
    println!(
        "time spent: {} on {done} point(s); left: {}",
        seconds_text(spent),
        match eta {
            Some(e) if left > 0 => format!("~{}", seconds_text(e)),
            Some(_) => "nothing".into(),
            None => "unknown".into(),
        }
    );
    for r in &l.records {
        match &r.status {
            Status::Failed(e) => println!("failed: {}: {e}", r.id),
            Status::Pruned(why) => println!("pruned: {}: {why}", r.id),
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}
