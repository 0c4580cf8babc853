//! `ioscope report DIR`: the tables and pictures of a sweep's run directory or of any
//! directory of fio/ioscope JSON results — results.csv, results.json, graphs/*.svg and
//! one self-contained report.html. `ioscope sweep run` writes the same at its end.

use crate::command::{self, Context as Cx, Flag};
use anyhow::{bail, Result};
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_sweep::report::{write_dir, Include};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use FlagValue::{None as NoVal, Required as ReqVal};

/// `ioscope report`'s arguments.
#[derive(Default)]
pub struct Args {
    output: Option<String>,
    ssv: bool,
    include_interrupted: bool,
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
            ..flag("output", ReqVal, "DIR", "Write the report files here (default: the results directory itself)")
        },
        verbs: &[],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
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
        def: flag("ssv", NoVal, "", "Also write fio-tests' space-separated columns (x rbw riops rclat wbw wiops wclat) per series"),
        verbs: &[],
        set: |a, _| {
            a.ssv = true;
            Ok(())
        },
    },
];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let [dir] = p.operands.as_slice() else {
        bail!("report: give one directory (see ioscope report --help)");
    };
    let dir = Path::new(dir);
    let out = p.output.as_deref().map_or(dir.to_path_buf(), PathBuf::from);
    let inc = Include {
        ssv: p.ssv,
        interrupted: p.include_interrupted,
    };
    let w = write_dir(dir, &out, inc)?;
    for s in &w.skipped {
        eprintln!("ioscope report: {s}");
    }
    println!("{}", w.csv.display());
    for s in &w.svgs {
        println!("{}", s.display());
    }
    println!("{}", w.html.display());
    Ok(ExitCode::SUCCESS)
}
