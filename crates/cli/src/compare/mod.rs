//! `ioscope compare A B` and `ioscope compare --run A.fio B.fio`: A/B comparison of
//! repeated runs with a confidence interval, a p-value and a verdict per job, direction
//! and metric (the statistics: `ioscope_analysis::compare`).

mod chart;
mod inputs;
mod output;
mod run;
mod shape;

use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn main(args: &[String], hosts: &crate::cluster::Hosts) -> Result<ExitCode> {
    let Some(p) = crate::parse_flags("compare", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    // Chart files are created before any run, so a bad path fails at once.
    let svg_out = crate::out_file(p.value("svg"))?;
    let html_out = crate::out_file(p.value("html"))?;
    let (sa, sb) = if p.has("run") || p.has("vary") {
        let repeat = match p.value("repeat") {
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=1000).contains(&n))
                .ok_or_else(|| anyhow!("--repeat={v}: give a number of runs from 1 to 1000"))?,
            None => 5,
        };
        let arms = match (p.value("vary"), p.operands.as_slice()) {
            (Some(v), [job]) => run::varied(Path::new(job), v)?,
            (Some(_), _) => bail!("compare --vary: give one job file (see ioscope compare --help)"),
            (None, [a, b]) => [run::from_file(Path::new(a))?, run::from_file(Path::new(b))?],
            (None, _) => bail!("compare --run: give two job files, A.fio and B.fio"),
        };
        let dir = match p.value("output") {
            Some(d) => PathBuf::from(d),
            None => temp_dir()?,
        };
        eprintln!("ioscope compare: results in {}", dir.display());
        run::run(&arms, repeat, &dir, &*hosts.exec(Default::default()))?
    } else {
        for f in ["repeat", "output"] {
            if p.has(f) {
                bail!("--{f} goes with --run or --vary (A and B are results here)");
            }
        }
        let [a, b] = p.operands.as_slice() else {
            bail!("compare: give two operands, A and B (see ioscope compare --help)");
        };
        (inputs::load(Path::new(a))?, inputs::load(Path::new(b))?)
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
    let shapes = shape::shapes(&sa, &sb, &rows);
    let mut notes: Vec<String> = shapes.iter().map(shape::Shape::text).collect();
    if rows.iter().any(|r| r.ci_from_bins) {
        notes.push(
            "* within-run interval from the json+ latency bins (one run per side: the \
             run-to-run noise is unknown)"
                .into(),
        );
    }
    if svg_out.is_some() || html_out.is_some() {
        let svg = chart::figure(&rows).svg()?;
        if let Some((path, mut f)) = svg_out {
            f.write_all(svg.as_bytes()).with_context(|| path.clone())?;
        }
        if let Some((path, mut f)) = html_out {
            let page = chart::html(&head, &rows, &notes, &svg);
            f.write_all(page.as_bytes()).with_context(|| path.clone())?;
        }
    }
    if p.has("json") {
        // stdout is the JSON document alone; the context goes to stderr.
        for l in &head {
            eprintln!("{l}");
        }
        let doc = output::json(&rows, &shapes);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if p.has("markdown") {
        for l in &head {
            println!("- {l}");
        }
        println!();
        print!("{}", output::markdown(&rows));
        if !notes.is_empty() {
            println!();
        }
        for n in &notes {
            println!("{n}");
        }
    } else {
        for l in &head {
            println!("{l}");
        }
        println!();
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(libc::STDOUT_FILENO) } == 1;
        print!("{}", output::table(&rows, tty));
        if !notes.is_empty() {
            println!();
        }
        for n in &notes {
            println!("{n}");
        }
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
