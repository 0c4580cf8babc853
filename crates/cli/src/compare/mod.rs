//! `ioscope compare A B` and `ioscope compare --run A.fio B.fio`: A/B comparison of
//! repeated runs with a confidence interval, a p-value and a verdict per job, direction
//! and metric (the statistics: `ioscope_analysis::compare`).

mod inputs;
mod output;
mod run;

use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn main(args: &[String]) -> Result<ExitCode> {
    let Some(p) = crate::parse_flags("compare", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let [a, b] = p.operands.as_slice() else {
        bail!("compare: give two operands, A and B (see ioscope compare --help)");
    };
    let (a, b) = (Path::new(a), Path::new(b));
    let (sa, sb) = if p.has("run") {
        let repeat = match p.value("repeat") {
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=1000).contains(&n))
                .ok_or_else(|| anyhow!("--repeat={v}: give a number of runs from 1 to 1000"))?,
            None => 5,
        };
        let dir = match p.value("output") {
            Some(d) => PathBuf::from(d),
            None => temp_dir()?,
        };
        eprintln!("ioscope compare: results in {}", dir.display());
        run::run(a, b, repeat, &dir)?
    } else {
        for f in ["repeat", "output"] {
            if p.has(f) {
                bail!("--{f} goes with --run (A and B are results here)");
            }
        }
        (inputs::load(a)?, inputs::load(b)?)
    };
    let rows = inputs::rows(&sa, &sb);
    if rows.is_empty() {
        bail!(
            "compare: no job of {} matches one of {} by name and group",
            sa.origin,
            sb.origin
        );
    }
    let mut head = vec![format!(
        "A: {} ({} result{}), B: {} ({} result{})",
        sa.origin,
        sa.reps.len(),
        if sa.reps.len() == 1 { "" } else { "s" },
        sb.origin,
        sb.reps.len(),
        if sb.reps.len() == 1 { "" } else { "s" },
    )];
    head.extend(inputs::differences(&sa, &sb));
    if p.has("json") {
        // stdout is the JSON document alone; the context goes to stderr.
        for l in &head {
            eprintln!("{l}");
        }
        println!("{}", serde_json::to_string_pretty(&output::json(&rows))?);
    } else if p.has("markdown") {
        for l in &head {
            println!("- {l}");
        }
        println!();
        print!("{}", output::markdown(&rows));
    } else {
        for l in &head {
            println!("{l}");
        }
        println!();
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(libc::STDOUT_FILENO) } == 1;
        print!("{}", output::table(&rows, tty));
    }
    Ok(ExitCode::SUCCESS)
}

/// A new directory for --run's results when no -o is given (kept: the user may want
/// to look at the runs, so its name is printed).
fn temp_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let d = base.join(format!("ioscope-compare-{}-{i}", std::process::id()));
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => bail!("{}: {e}", d.display()),
        }
    }
    bail!(
        "{}: cannot make a directory for the results",
        base.display()
    )
}
