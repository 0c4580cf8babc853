//! `ioscope plot`: the graphs of one run — what fio2gnuplot, fio_generate_plots and
//! fio-plot draw — from fio/ioscope logs and JSON results, as one SVG (and HTML page):
//! bandwidth and IOPS over time, latency over time (per-I/O entries averaged per
//! window, per priority with log_prio), latency-over-time heatmaps from hist logs and
//! per-I/O logs, completion-latency percentiles per hist-log row and per job on log
//! axes, latency histograms and CDFs from json+ bins, and per-interval bandwidth and
//! IOPS from interim JSON reports.

mod buckets;
mod json;
pub use json::cdf;
mod logs;
mod panels;

use crate::command::{self, Context as Cx, Flag};
use anyhow::{bail, Context, Result};
use ioscope_iolog::LogKind;
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_plot::html::Page;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use FlagValue::Required as ReqVal;

/// `ioscope plot`'s arguments.
#[derive(Default)]
pub struct Args {
    output: Option<String>,
    html: Option<String>,
    window: Option<String>,
    operands: Vec<String>,
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
            ..flag("output", ReqVal, "FILE.svg", "Write the graphs to this SVG file (required)")
        },
        verbs: &[],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("html", ReqVal, "FILE", "Also write a self-contained HTML page with the graphs"),
        verbs: &[],
        set: |a, v| {
            a.html = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("window", ReqVal, "TIME", "Average per-I/O log entries over windows this long (default: the run cut into 300 windows)"),
        verbs: &[],
        set: |a, v| {
            a.window = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some(out) = p.output.as_deref() else {
        bail!("plot: name the SVG to write with -o FILE.svg");
    };
    if p.operands.is_empty() {
        bail!("plot: give log files or JSON results (see ioscope plot --help)");
    }
    let window_ms = match p.window.as_deref() {
        Some(v) => Some(
            (ioscope_options::units::parse_time_us(v, 1_000_000)
                .map_err(|e| anyhow::anyhow!("--window: {e}"))?
                / 1000)
                .max(1),
        ),
        None => None,
    };
    // Created first: a bad path fails before the inputs are read.
    let (svg_path, mut svg_file) = crate::term::out_file(Some(out))?
        .ok_or_else(|| anyhow::anyhow!("plot: name the SVG to write with -o FILE.svg"))?;
    let html = crate::term::out_file(p.html.as_deref())?;
    let mut panels = panels::Panels::default();
    let names = panels::input_names(&p.operands);
    for (f, name) in p.operands.iter().zip(&names) {
        let path = Path::new(f);
        match LogKind::of(path) {
            Some(LogKind::ClatHist) => logs::hist(&mut panels, path, name)?,
            Some(kind) => logs::log(&mut panels, path, name, kind, window_ms)?,
            None => json::json(&mut panels, path, name)?,
        }
    }
    let figure = panels.figure()?;
    let svg = figure.svg()?;
    svg_file
        .write_all(svg.as_bytes())
        .with_context(|| svg_path.clone())?;
    if let Some((path, mut f)) = html {
        let mut page = Page::new("ioscope plot");
        page.meta("inputs", p.operands.join(", "));
        page.figure(
            &figure,
            &p.operands.join(", "),
            "One panel per kind of input; a line per file, job, direction and priority; heatmaps and histograms per input",
        );
        f.write_all(page.render().as_bytes())
            .with_context(|| path.clone())?;
    }
    println!("{svg_path}");
    Ok(ExitCode::SUCCESS)
}
