//! Help text and the option reference, generated from the option table.

use crate::def::{Category, Kind, OptionDef, Status};
use crate::engines;
use crate::flags::did_you_mean;
use crate::table::{self, OPTIONS};
use std::fmt::Write;

fn status_text(s: Status) -> String {
    match s {
        Status::Supported => "supported".into(),
        Status::NoOp(why) => format!("accepted, no effect: {why}"),
        Status::NotYet => "not supported yet (a run that sets it fails)".into(),
    }
}

fn choices(kind: &Kind) -> Option<&'static [(&'static str, &'static str)]> {
    match kind {
        Kind::Choice(c) => Some(c),
        _ => None,
    }
}

/// `--cmdhelp=NAME`: everything about one option.
pub fn option_help(name: &str) -> Result<String, String> {
    let def = table::find(name)
        .ok_or_else(|| format!("no option '{name}'{}", did_you_mean(name, &[])))?;
    let mut s = String::new();
    let _ = writeln!(s, "{:<20}: {}", def.name, def.help);
    if !def.aliases.is_empty() {
        let _ = writeln!(s, "{:<20}: {}", "alias", def.aliases.join(", "));
    }
    let _ = writeln!(s, "{:<20}: {}", "type", def.kind.type_name());
    if !def.default.is_empty() {
        let _ = writeln!(s, "{:<20}: {}", "default", def.default);
    }
    if def.min.is_some() || def.max.is_some() {
        let lo = def.min.map(|v| v.to_string()).unwrap_or_default();
        let hi = def.max.map(|v| v.to_string()).unwrap_or_default();
        let _ = writeln!(s, "{:<20}: {lo}..{hi}", "range");
    }
    if let Some(c) = choices(&def.kind) {
        let _ = writeln!(s, "{:<20}:", "valid values");
        for (v, h) in c {
            let _ = writeln!(s, "{:>20}   {v:<14} {h}", "");
        }
    }
    if !def.engines.is_empty() {
        let _ = writeln!(s, "{:<20}: {}", "engines", def.engines.join(", "));
    }
    let _ = writeln!(s, "{:<20}: {}", "status", status_text(def.status));
    Ok(s)
}

/// `--cmdhelp` / `--cmdhelp=all`: one line per option, by category.
pub fn all_options_help() -> String {
    let mut s = String::new();
    for cat in categories() {
        let _ = writeln!(s, "{}:", cat.title());
        for def in OPTIONS.iter().filter(|d| d.category == cat) {
            let mark = match def.status {
                Status::Supported => "",
                Status::NoOp(_) => " [no effect]",
                Status::NotYet => " [not supported yet]",
            };
            let _ = writeln!(s, "  {:<30} {}{mark}", def.name, def.help);
        }
    }
    s
}

/// `--enghelp` lists engines; `--enghelp=ENGINE` lists that engine's options.
pub fn engine_help(engine: Option<&str>) -> Result<String, String> {
    let mut s = String::new();
    match engine {
        None | Some("") => {
            let _ = writeln!(s, "Available IO engines:");
            for name in engines::implemented() {
                let _ = writeln!(s, "\t{name}");
            }
        }
        Some(e) => {
            if engines::find(e).is_none() {
                return Err(format!("no I/O engine '{e}'"));
            }
            let opts: Vec<&OptionDef> = OPTIONS.iter().filter(|d| d.engines.contains(&e)).collect();
            if opts.is_empty() {
                let _ = writeln!(s, "engine {e} has no options");
            }
            for d in opts {
                let _ = writeln!(s, "{:<20}: {}", d.name, d.help);
            }
        }
    }
    Ok(s)
}

fn categories() -> Vec<Category> {
    let mut c: Vec<Category> = OPTIONS.iter().map(|d| d.category).collect();
    c.sort();
    c.dedup();
    c
}

/// The option reference (docs/options.md), generated from the table.
pub fn markdown_reference() -> String {
    let mut s = String::new();
    s.push_str("# ioscope option reference\n\n");
    s.push_str("Generated from the option table (`crates/options/src/table.rs`) by\n");
    s.push_str(
        "`UPDATE_DOCS=1 cargo test -p ioscope-options --test docs`; CI fails when it is stale.\n\n",
    );
    s.push_str("Options are written as in fio job files (`name=value`) or on the command line\n");
    s.push_str(
        "(`--name=value`, `-name=value`, `--name value`). Status: **supported**; **no effect**\n",
    );
    s.push_str("(accepted as fio accepts it); **not yet** (parsed and validated, but a run that sets it fails).\n\n");
    let counts = |st: fn(&Status) -> bool| OPTIONS.iter().filter(|d| st(&d.status)).count();
    let _ = writeln!(
        s,
        "{} options: {} supported, {} accepted without effect, {} not supported yet.\n",
        OPTIONS.len(),
        counts(|s| *s == Status::Supported),
        counts(|s| matches!(s, Status::NoOp(_))),
        counts(|s| *s == Status::NotYet)
    );
    for cat in categories() {
        let _ = writeln!(s, "## {}\n", cat.title());
        s.push_str("| option | type | default | status | description |\n|---|---|---|---|---|\n");
        for d in OPTIONS.iter().filter(|d| d.category == cat) {
            let mut name = format!("`{}`", d.name);
            if !d.aliases.is_empty() {
                let _ = write!(
                    name,
                    " (alias {})",
                    d.aliases
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let mut ty = d.kind.type_name();
            if let (Some(lo), Some(hi)) = (d.min, d.max) {
                let _ = write!(ty, ", {lo}..{hi}");
            }
            if let Some(c) = choices(&d.kind) {
                let vals: Vec<String> = c.iter().map(|(v, _)| format!("`{v}`")).collect();
                let _ = write!(ty, ": {}", vals.join(" "));
            }
            let status = match d.status {
                Status::Supported => "supported".to_string(),
                Status::NoOp(why) => format!("no effect: {why}"),
                Status::NotYet => "not yet".to_string(),
            };
            let mut help = d.help.to_string();
            if !d.engines.is_empty() {
                let _ = write!(help, " (engines: {})", d.engines.join(", "));
            }
            let default = if d.default.is_empty() {
                String::new()
            } else {
                format!("`{}`", d.default)
            };
            let _ = writeln!(
                s,
                "| {name} | {} | {default} | {status} | {} |",
                esc(&ty),
                esc(&help)
            );
        }
        s.push('\n');
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}
