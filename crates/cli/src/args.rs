//! Parsing a subcommand's words into its typed arguments: `--name`, `--name=value`,
//! `--name value` (required values) or an alias (`-h`); `--` ends the flags; every
//! other word is an operand. `--help` prints the subcommand's help instead.

use crate::command::{Args, Command, Completes, Context, Flag};
use anyhow::{anyhow, bail, Result};
use ioscope_options::flags::{check_support, split_flag, take_value, FlagDef};
use ioscope_options::suggest::closest;
use std::ffi::OsString;

/// The parse of a subcommand whose arguments are `A`, for `Command::parse`.
pub fn parses<A: Args>(cx: &Context, args: &[OsString]) -> Result<()> {
    parse::<A>(cx, args).map(|_| ())
}

/// The subcommand's arguments, or None when `--help` was asked for (and printed).
pub fn parse<A: Args>(cx: &Context, args: &[OsString]) -> Result<Option<A>> {
    let words = utf8(args)?;
    let cmd = cx.this;
    let flags = A::flags();
    let mut given: Vec<(usize, Option<String>)> = Vec::new();
    let mut operands = Vec::new();
    let mut help = false;
    let mut i = 0;
    while i < words.len() {
        let arg = &words[i];
        i += 1;
        if arg == "--" {
            operands.extend(words[i..].iter().cloned());
            break;
        }
        let Some((name, inline)) = split_flag(arg, false) else {
            operands.push(arg.clone());
            continue;
        };
        if ioscope_options::flags::HELP.matches(name) {
            help = true;
            continue;
        }
        if ioscope_options::flags::COLOR.matches(name) {
            let v = take_value(&ioscope_options::flags::COLOR, arg, inline, &words, &mut i)
                .map_err(|e| anyhow!("{}: {e}", cmd.name))?;
            crate::term::colour::set(
                crate::term::colour::parse(v.as_deref()).map_err(|e| anyhow!(e))?,
            );
            continue;
        }
        let Some(k) = flags.iter().position(|f| f.def.matches(name)) else {
            let names = flags.iter().map(|f| f.def.name);
            let hint = match closest(name, names) {
                Some(n) => format!("; did you mean '--{n}'?"),
                None => String::new(),
            };
            bail!(
                "{}: unknown flag '{arg}'{hint} (see {} --help)",
                cmd.name,
                cmd.invocation()
            );
        };
        let def: &FlagDef = &flags[k].def;
        if let Some(w) = check_support(def).map_err(|e| anyhow!("{}: {e}", cmd.name))? {
            eprintln!("ioscope: {w}");
        }
        let value = take_value(def, arg, inline, &words, &mut i)
            .map_err(|e| anyhow!("{}: {e}", cmd.name))?;
        given.push((k, value));
    }
    if help {
        print!("{}", crate::doc::command_help(cx.commands, cmd));
        return Ok(None);
    }
    check_verbs(cmd, flags, &given, operands.first())?;
    let mut a = A::default();
    for (k, v) in given {
        (flags[k].set)(&mut a, v.as_deref()).map_err(|e| anyhow!(e))?;
    }
    for w in operands {
        a.operand(w).map_err(|e| anyhow!(e))?;
    }
    a.check().map_err(|e| anyhow!(e))?;
    Ok(Some(a))
}

/// A command with verbs: every flag given goes with the verb (an unknown or missing
/// verb is the command's to report).
fn check_verbs<A>(
    cmd: &Command,
    flags: &[Flag<A>],
    given: &[(usize, Option<String>)],
    first: Option<&String>,
) -> Result<()> {
    let Completes::Verbs(verbs) = cmd.completes else {
        return Ok(());
    };
    let Some(verb) = first.filter(|v| verbs.contains(&v.as_str())) else {
        return Ok(());
    };
    for (k, _) in given {
        let f = &flags[*k];
        if !f.verbs.is_empty() && !f.verbs.contains(&verb.as_str()) {
            let with = f.verbs.join(&format!(" or {} ", cmd.name));
            bail!(
                "--{} goes with {} {with}, not {} {verb}",
                f.def.name,
                cmd.name,
                cmd.name
            );
        }
    }
    Ok(())
}

/// A subcommand's arguments as text; one that is not UTF-8 is named in the error.
fn utf8(args: &[OsString]) -> Result<Vec<String>> {
    args.iter()
        .enumerate()
        .map(|(i, a)| match a.to_str() {
            Some(s) => Ok(s.to_string()),
            None => bail!(
                "argument {} ('{}') is not valid UTF-8",
                i + 2,
                a.to_string_lossy()
            ),
        })
        .collect()
}
