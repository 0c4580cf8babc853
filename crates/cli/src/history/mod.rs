//! `ioscope history list|show|export|compare|check`: the runs recorded with
//! `--history` (an SQLite database; see `ioscope_history`), listed, exported, and
//! compared with `compare`'s statistics — `check` is the gate for CI pipelines.

mod args;
mod verbs;

use crate::command::Context as Cx;
use anyhow::{bail, Result};
pub use args::Args;
use ioscope_history::History;
use std::ffi::OsString;
use std::process::ExitCode;

/// The verbs, in the order help lists them.
pub const VERBS: &[&str] = &["list", "show", "export", "compare", "check"];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some((verb, rest)) = a.operands.split_first() else {
        bail!(
            "history: give a verb: {} (see ioscope history --help)",
            VERBS.join(", ")
        );
    };
    let path = match &a.db {
        Some(p) => p.clone(),
        None => ioscope_history::default_path()?,
    };
    if !path.exists() {
        bail!(
            "{}: no history here (runs are recorded with --history[=DB])",
            path.display()
        );
    }
    let db = History::open(&path, false)?;
    match verb.as_str() {
        "list" => verbs::list(&db, rest, a.json),
        "show" => verbs::show(&db, rest, a.json),
        "export" => verbs::export(&db, rest, a.format.as_deref()),
        "compare" => verbs::compare(&db, rest, &a),
        "check" => verbs::check(&db, rest, &a),
        v => bail!("history: no verb '{v}': {}", VERBS.join(", ")),
    }
}
