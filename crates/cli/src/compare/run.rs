//! `--run`: run two job files interleaved (A B A B ...) through the runner, keep every
//! result as a JSON file, and hand back the two sides. Interleaving spreads slow drift
//! (thermal, background work, page cache) over both sides instead of one.

use super::inputs::{self, Side};
use crate::status::{Eta, Status};
use anyhow::{bail, Context, Result};
use ioscope_options::cli;
use ioscope_report::OutputFormat;
use std::path::{Path, PathBuf};

/// Run `a` and `b` `repeat` times each into `dir` (a-1.json, b-1.json, ...).
pub fn run(a: &Path, b: &Path, repeat: usize, dir: &Path) -> Result<(Side, Side)> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    crate::signals::install();
    let mut files: [Vec<PathBuf>; 2] = Default::default();
    for i in 1..=repeat {
        for (s, (label, job)) in [("a", a), ("b", b)].into_iter().enumerate() {
            if ioscope_runner::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                bail!(
                    "interrupted after {} runs; results so far in {}",
                    files[0].len() + files[1].len(),
                    dir.display()
                );
            }
            eprintln!(
                "ioscope compare: run {i}/{repeat} of {label}: {}",
                job.display()
            );
            let out = dir.join(format!("{label}-{i}.json"));
            run_one(job, &out)?;
            files[s].push(out);
        }
    }
    let [fa, fb] = files;
    Ok((
        inputs::from_files(a.display().to_string(), fa)?,
        inputs::from_files(b.display().to_string(), fb)?,
    ))
}

/// One run of a job file, its JSON document written to `out`.
fn run_one(job: &Path, out: &Path) -> Result<()> {
    let Some(arg) = job.to_str() else {
        bail!("{}: job file name is not valid UTF-8", job.display());
    };
    let c = cli::parse_args(&[arg.to_string()]).with_context(|| job.display().to_string())?;
    let set = crate::fio::load_jobs(&c).with_context(|| job.display().to_string())?;
    let mut status = Status::new(false, Eta::Auto, None);
    let runner = ioscope_runner::Runner::new(Default::default());
    let result = runner
        .run_set(&set, &mut status)
        .with_context(|| job.display().to_string())?;
    status.finish();
    let doc = ioscope_report::render(&result, &[OutputFormat::Json], 3);
    std::fs::write(out, doc).with_context(|| out.display().to_string())?;
    Ok(())
}
