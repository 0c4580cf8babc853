//! ioscope: argv → subcommand. Nothing else lives here: the subcommands and their
//! flags are one table, `ioscope_options::flags::COMMANDS`.

mod bwlog;
mod fio;
mod peak;
mod quick;
mod signals;
mod status;

use anyhow::{bail, Result};
use ioscope_options::{flagdoc, flags};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("quick") => quick::main(&args[1..]),
        Some("peak") => peak::main(&args[1..]),
        Some("completions") => completions(&args[1..]),
        Some("help") => help(&args[1..]),
        _ => fio::main(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ioscope: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Parse a subcommand's arguments through the flag table and print the warnings of
/// flags without effect; `None` when `--help` was asked for (and printed).
pub fn parse_flags(name: &str, args: &[String]) -> Result<Option<flags::Parsed>> {
    let cmd = flags::command(name).expect("subcommand is in the flag table");
    let p = flags::parse_command(cmd, args)?;
    for w in &p.warnings {
        eprintln!("ioscope: {w}");
    }
    if p.has("help") {
        print!("{}", flagdoc::command_help(cmd));
        return Ok(None);
    }
    Ok(Some(p))
}

/// `ioscope completions SHELL`.
fn completions(args: &[String]) -> Result<ExitCode> {
    let Some(p) = parse_flags("completions", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    match p.operands.as_slice() {
        [s] if s == "bash" => print!("{}", flagdoc::bash_completion()),
        [s] => bail!("completions: no completions for '{s}' yet (only bash)"),
        _ => bail!("completions: name one shell: ioscope completions bash"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `ioscope help [SUBCOMMAND]`.
fn help(args: &[String]) -> Result<ExitCode> {
    let Some(p) = parse_flags("help", args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    match p.operands.as_slice() {
        [] => print!("{}", flagdoc::main_help()),
        [name] => match flags::command(name) {
            Some(cmd) => print!("{}", flagdoc::command_help(cmd)),
            None => bail!("help: no subcommand '{name}' (see ioscope --help)"),
        },
        _ => bail!("help: name one subcommand"),
    }
    Ok(ExitCode::SUCCESS)
}
