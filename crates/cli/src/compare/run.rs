//! `--run` and `--vary`: run two job sets interleaved (A B A B ...) through the runner,
//! keep every result as a JSON file, and hand back the two sides. Interleaving spreads
//! slow drift (thermal, background work, page cache) over both sides instead of one.
//!
//! Both sets are built and planned (every check a run makes) before the first I/O, so a
//! typo in B does not surface after an hour of A.

use super::inputs::{self, Side};
use crate::live::{Feed, Live};
use crate::recording::capture::Capture;
use crate::term::status::{Eta, Status};
use anyhow::{anyhow, bail, Context, Result};
use ioscope_options::error::Loc;
use ioscope_options::jobfile::{self, RawEntry, RawSection};
use ioscope_options::{spec, JobSet};
use ioscope_report::OutputFormat;
use ioscope_runner::Execute;
use std::path::{Path, PathBuf};

/// One side to run: its name and its jobs.
pub struct Arm {
    pub label: String,
    pub set: JobSet,
}

/// A job file as it is.
pub fn from_file(job: &Path) -> Result<Arm> {
    let sections = read(job)?;
    Ok(Arm {
        label: job.display().to_string(),
        set: build(job, &sections)?,
    })
}

/// `--vary OPT=A,B`: the job file twice, with OPT=A and OPT=B set last in every job (so
/// it wins over the file's own setting, as a command-line option would).
pub fn varied(job: &Path, spec_text: &str) -> Result<[Arm; 2]> {
    let (opt, values) = spec_text.split_once('=').ok_or_else(|| {
        anyhow!("--vary={spec_text}: write OPT=A,B (e.g. ioscheduler=none,mq-deadline)")
    })?;
    let values: Vec<&str> = values.split(',').collect();
    let [a, b] = values.as_slice() else {
        bail!("--vary={spec_text}: give exactly two values, OPT=A,B");
    };
    if opt.is_empty() || a.is_empty() || b.is_empty() {
        bail!("--vary={spec_text}: write OPT=A,B with an option name and two values");
    }
    let sections = read(job)?;
    let arm = |v: &str| -> Result<Arm> {
        let mut s = sections.clone();
        for sec in s.iter_mut().filter(|s| !s.is_global()) {
            sec.entries.push(RawEntry {
                key: opt.to_string(),
                value: Some(v.to_string()),
                loc: Loc::cli(0),
            });
        }
        let set = build(job, &s).with_context(|| format!("--vary {opt}={v}"))?;
        Ok(Arm {
            label: format!("{} {opt}={v}", job.display()),
            set,
        })
    };
    Ok([arm(a)?, arm(b)?])
}

fn read(job: &Path) -> Result<Vec<RawSection>> {
    jobfile::read_job_file(job).with_context(|| job.display().to_string())
}

fn build(job: &Path, sections: &[RawSection]) -> Result<JobSet> {
    let set = spec::build(
        &[],
        &[],
        &[sections.to_vec()],
        &[],
        &jobfile::Keywords::probe(),
    )
    .with_context(|| job.display().to_string())?;
    if set.jobs.is_empty() {
        bail!("{}: no jobs defined", job.display());
    }
    Ok(set)
}

/// Run both arms `repeat` times each into `dir` (a-1.json, b-1.json, ...), through
/// `exec` (this host, or every MPI rank: then each result is their merged report). A
/// signal ends the runs: the sides then hold the repetitions that finished (the one
/// cut short is kept in `dir`, marked interrupted, and left out), and `interrupted`
/// is set.
pub fn run(
    arms: &[Arm; 2],
    repeat: usize,
    dir: &Path,
    (exec, mut history, mut live): (&dyn Execute, Option<Capture>, Live),
) -> Result<Ran> {
    for arm in arms {
        exec.check(&arm.set).with_context(|| arm.label.clone())?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    crate::term::signals::install();
    let stopped = || ioscope_runner::STOP.load(std::sync::atomic::Ordering::Relaxed);
    let mut files: [Vec<PathBuf>; 2] = Default::default();
    'runs: for i in 1..=repeat {
        for (s, (name, arm)) in ["a", "b"].into_iter().zip(arms).enumerate() {
            if stopped() {
                break 'runs;
            }
            eprintln!("ioscope compare: run {i}/{repeat} of {name}: {}", arm.label);
            let out = dir.join(format!("{name}-{i}.json"));
            live.point = Some(format!("{name}-{i}"));
            if let Err(e) = run_one(exec, arm, &out, &mut live) {
                live.finish(None, stopped());
                return Err(e);
            }
            if let Some(h) = &mut history {
                record(h, arm, &out);
            }
            files[s].push(out);
        }
    }
    // Every repetition is in (settled now: a Ctrl-C in the metrics' linger does not
    // cut the comparison short): the stream's end line and the last scrapes.
    let interrupted = stopped();
    live.finish(None, interrupted);
    let [fa, fb] = files;
    Ok(Ran {
        a: inputs::from_files(arms[0].label.clone(), fa)?,
        b: inputs::from_files(arms[1].label.clone(), fb)?,
        interrupted,
    })
}

/// --history: a repetition's result file becomes a row labelled LABEL/ARM.
fn record(h: &mut Capture, arm: &Arm, out: &Path) {
    let doc = std::fs::read_to_string(out)
        .map_err(anyhow::Error::from)
        .and_then(|t| Ok(serde_json::from_str(&t)?));
    match doc {
        Ok(doc) => {
            let devices = crate::recording::capture::devices(&arm.set);
            let job = serde_json::to_value(&arm.set).unwrap_or_default();
            h.record_document(("repetition", &arm.label), doc, out, (job, devices));
        }
        Err(e) => eprintln!(
            "ioscope compare: --history: {} not recorded: {e}",
            out.display()
        ),
    }
}

/// The two sides a `--run` made.
pub struct Ran {
    pub a: Side,
    pub b: Side,
    /// A signal ended the runs before every repetition.
    pub interrupted: bool,
}

/// One run of an arm, its JSON+ document (with the latency bins) written to `out`.
fn run_one(exec: &dyn Execute, arm: &Arm, out: &Path, live: &mut Live) -> Result<()> {
    // Made before the I/O (new, never through a planted link): an unwritable
    // directory fails now, not after the run.
    let (tmp, mut file) =
        ioscope_fs::create_temp(out).with_context(|| out.display().to_string())?;
    let mut status = Status::new(false, Eta::Auto, None);
    let mut feed = Feed {
        inner: &mut status,
        live,
    };
    let result = exec.execute(&arm.set, &mut feed);
    status.finish();
    let written = result
        .with_context(|| arm.label.clone())
        .and_then(|result| {
            let doc = ioscope_report::render_ran(&result, &[OutputFormat::JsonPlus], 3);
            std::io::Write::write_all(&mut file, doc.as_bytes())
                .and_then(|()| std::fs::rename(&tmp, out))
                .with_context(|| out.display().to_string())
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
