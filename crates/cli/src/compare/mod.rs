//! `ioscope compare A B` and `ioscope compare --run A.fio B.fio`: A/B comparison of
//! repeated runs with a confidence interval, a p-value and a verdict per job, direction
//! and metric (the statistics: `ioscope_analysis::compare`).

mod chart;
pub mod inputs;
pub mod output;
mod run;
mod shape;

use crate::command::{self, Context, Flag};
use crate::live::{self, Live, LiveArgs};
use crate::recording::capture::Capture;
use crate::recording::flags::{self as history, HistoryArgs};
use anyhow::{bail, Context as _, Result};
use ioscope_analysis::compare::Verdict;
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use FlagValue::{None as NoVal, Required as ReqVal};

/// `ioscope compare`'s arguments.
#[derive(Default)]
pub struct Args {
    json: bool,
    markdown: bool,
    svg: Option<String>,
    html: Option<String>,
    run: bool,
    vary: Option<String>,
    repeat: Option<usize>,
    output: Option<String>,
    include_interrupted: bool,
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
        def: flag("json", NoVal, "", "Print the rows as a JSON array (job, direction, metric, a, b, delta_pct, CI, p_value, verdict, n_a, n_b)"),
        verbs: &[],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: flag("markdown", NoVal, "", "Print the table as GitHub markdown (for a patch mail)"),
        verbs: &[],
        set: |a, _| {
            a.markdown = true;
            Ok(())
        },
    },
    Flag {
        def: flag("svg", ReqVal, "FILE", "Also write the charts (change of B against A per metric with 95% whiskers, every repetition, latency CDFs) as SVG to FILE"),
        verbs: &[],
        set: |a, v| {
            a.svg = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("html", ReqVal, "FILE", "Also write a self-contained HTML report (differences, table, chart) to FILE"),
        verbs: &[],
        set: |a, v| {
            a.html = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("run", NoVal, "", "Run the job files A.fio and B.fio interleaved (A B A B ...) and compare the results"),
        verbs: &[],
        set: |a, _| {
            a.run = true;
            Ok(())
        },
    },
    Flag {
        def: flag("vary", ReqVal, "OPT=A,B", "Run one job file twice, with job option OPT set to A and to B in every job (e.g. ioscheduler=none,mq-deadline); implies --run"),
        verbs: &[],
        set: |a, v| {
            a.vary = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("repeat", ReqVal, "N", "--run: runs of each job file (default 5; at least 4 can show a significant change)"),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let n = v
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=1000).contains(&n))
                .ok_or_else(|| format!("--repeat={v}: give a number of runs from 1 to 1000"))?;
            a.repeat = Some(n);
            Ok(())
        },
    },
    Flag {
        def: flag("include-interrupted", NoVal, "", "Count results of runs a signal cut short (left out by default, and named)"),
        verbs: &[],
        set: |a, _| {
            a.include_interrupted = true;
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            aliases: &["o"],
            ..flag("output", ReqVal, "DIR", "--run: keep the results as DIR/a-1.json, DIR/b-1.json, ... (default: a new temporary directory)")
        },
        verbs: &[],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: live::LIVE,
        verbs: &[],
        set: live::set_live::<Args>,
    },
    Flag {
        def: live::LIVE_INTERVAL,
        verbs: &[],
        set: live::set_interval::<Args>,
    },
    Flag {
        def: live::METRICS,
        verbs: &[],
        set: live::set_metrics::<Args>,
    },
    Flag {
        def: live::METRICS_LINGER,
        verbs: &[],
        set: live::set_linger::<Args>,
    },
    Flag {
        def: history::HISTORY,
        verbs: &[],
        set: history::set_history::<Args>,
    },
    Flag {
        def: history::LABEL,
        verbs: &[],
        set: history::set_label::<Args>,
    },
];

pub fn main(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    // Chart files are created before any run, so a bad path fails at once.
    let svg_out = crate::term::out_file(p.svg.as_deref())?;
    let html_out = crate::term::out_file(p.html.as_deref())?;
    let (sa, sb, interrupted) = sides(cx, &p)?;
    for (name, side) in [("A", &sa), ("B", &sb)] {
        for s in &side.skipped {
            eprintln!("ioscope compare: {name}: {s}");
        }
    }
    if interrupted {
        eprintln!(
            "ioscope compare: interrupted; comparing the {} and {} runs that finished",
            sa.reps.len(),
            sb.reps.len()
        );
        if sa.reps.is_empty() || sb.reps.is_empty() {
            return Ok(crate::term::signals::exit_code(false));
        }
    }
    let out = Present {
        json: p.json,
        markdown: p.markdown,
        svg_out,
        html_out,
    };
    present(out, &sa, &sb, interrupted)
}

/// How a comparison is shown: JSON, markdown or a table on stdout, and charts.
pub struct Present {
    pub json: bool,
    pub markdown: bool,
    pub svg_out: Option<(String, std::fs::File)>,
    pub html_out: Option<(String, std::fs::File)>,
}

/// Compare two sides and show it; exit 2 ([`command::REGRESSION`]) when a row is worse.
pub fn present(
    p: Present,
    sa: &inputs::Side,
    sb: &inputs::Side,
    interrupted: bool,
) -> Result<ExitCode> {
    let (svg_out, html_out) = (p.svg_out, p.html_out);
    let rows = inputs::rows(sa, sb);
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
    head.extend(inputs::differences(sa, sb));
    let shapes = shape::shapes(sa, sb, &rows);
    let mut notes: Vec<String> = shapes.iter().map(shape::Shape::text).collect();
    if rows.iter().any(|r| r.ci_from_bins) {
        notes.push(
            "* within-run interval from the json+ latency bins (one run per side: the \
             run-to-run noise is unknown)"
                .into(),
        );
    }
    if svg_out.is_some() || html_out.is_some() {
        let fig = chart::figure(&rows, sa, sb);
        let svg = fig.svg()?;
        if let Some((path, mut f)) = svg_out {
            f.write_all(svg.as_bytes()).with_context(|| path.clone())?;
        }
        if let Some((path, mut f)) = html_out {
            let page = chart::html(&head, &rows, &notes, &fig);
            f.write_all(page.as_bytes()).with_context(|| path.clone())?;
        }
    }
    if p.json {
        // stdout is the JSON document alone; the context goes to stderr.
        for l in &head {
            eprintln!("{l}");
        }
        let doc = output::json(&rows, &shapes);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if p.markdown {
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
        print!("{}", output::table(&rows, crate::term::colour::stdout()));
        if !notes.is_empty() {
            println!();
        }
        for n in &notes {
            println!("{n}");
        }
    }
    Ok(if interrupted {
        crate::term::signals::exit_code(false)
    } else if rows.iter().any(|r| r.cmp.verdict == Verdict::Worse) {
        ExitCode::from(command::REGRESSION)
    } else {
        ExitCode::SUCCESS
    })
}

/// The two sides: result files given, or runs made now (`--run`, `--vary`); and
/// whether a signal cut the runs short.
fn sides(cx: &Context, p: &Args) -> Result<(inputs::Side, inputs::Side, bool)> {
    if p.run || p.vary.is_some() {
        let repeat = p.repeat.unwrap_or(5);
        let arms = match (p.vary.as_deref(), p.operands.as_slice()) {
            (Some(v), [job]) => run::varied(Path::new(job), v)?,
            (Some(_), _) => bail!("compare --vary: give one job file (see ioscope compare --help)"),
            (None, [a, b]) => [run::from_file(Path::new(a))?, run::from_file(Path::new(b))?],
            (None, _) => bail!("compare --run: give two job files, A.fio and B.fio"),
        };
        let dir = match p.output.as_deref() {
            Some(d) => PathBuf::from(d),
            None => temp_dir()?,
        };
        eprintln!("ioscope compare: results in {}", dir.display());
        let exec = cx.hosts.exec(ioscope_runner::RunOptions {
            live_interval: p.live.runner_interval(),
            ..Default::default()
        });
        let history = Capture::from_args(&p.history)?;
        let live = Live::open(&p.live, true)?;
        let ran = run::run(&arms, repeat, &dir, (&*exec, history, live))?;
        return Ok((ran.a, ran.b, ran.interrupted));
    }
    let given = [
        ("repeat", p.repeat.is_some()),
        ("output", p.output.is_some()),
        ("history", p.history.db.is_some()),
        ("label", p.history.label.is_some()),
        ("live", p.live.live.is_some()),
        ("live-interval", p.live.interval.is_some()),
        ("metrics", p.live.metrics.is_some()),
        ("metrics-linger", p.live.linger.is_some()),
    ];
    if let Some((f, _)) = given.iter().find(|(_, g)| *g) {
        bail!("--{f} goes with --run or --vary (A and B are results here)");
    }
    let [a, b] = p.operands.as_slice() else {
        bail!("compare: give two operands, A and B (see ioscope compare --help)");
    };
    let inc = p.include_interrupted;
    Ok((
        inputs::load(Path::new(a), inc)?,
        inputs::load(Path::new(b), inc)?,
        false,
    ))
}

/// A new directory for --run's results when no -o is given (kept: the user may want
/// to look at the runs, so its name is printed).
fn temp_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    ioscope_fs::create_temp_dir(&base, "ioscope-compare").with_context(|| {
        format!(
            "{}: cannot make a directory for the results",
            base.display()
        )
    })
}
