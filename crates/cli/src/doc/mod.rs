//! Everything written about the commands, from the command table: `--help` text and
//! the command-line reference docs/cli.md here; the completion scripts ([`complete`])
//! and the man page ([`man`]).

pub mod complete;
pub mod man;

use crate::command::{Command, FIO};
use ioscope_options::flags::{FlagDef, FlagValue, Support};
use std::fmt::Write;

/// `--name`, `--name=VALUE` or `--name[=VALUE]`.
pub fn flag_synopsis(f: &FlagDef) -> String {
    match f.value {
        FlagValue::None => format!("--{}", f.name),
        FlagValue::Required => format!("--{}={}", f.name, f.value_name),
        FlagValue::Optional => format!("--{}[={}]", f.name, f.value_name),
    }
}

pub(crate) fn help_line(f: &FlagDef) -> String {
    match f.support {
        Support::Supported => f.help.to_string(),
        Support::NotYet(_) => format!("{} [not supported yet]", f.help),
        Support::NoEffect(_) => format!("{} [no effect in ioscope]", f.help),
    }
}

fn flag_lines(s: &mut String, cmd: &Command) {
    for f in (cmd.flags)() {
        let mut syn = flag_synopsis(f);
        for a in f.aliases {
            let _ = write!(syn, ", -{a}");
        }
        let help = wrap(&help_line(f), 88 - 29).replace('\n', &format!("\n{:29}", ""));
        if syn.len() > 26 {
            let _ = writeln!(s, "  {syn}\n{:29}{help}", "");
        } else {
            let _ = writeln!(s, "  {syn:<26} {help}");
        }
    }
}

pub(crate) fn fio_face(commands: &[Command]) -> &Command {
    commands
        .iter()
        .find(|c| c.name == FIO)
        .unwrap_or(&commands[0])
}

/// `ioscope --help`: every subcommand in one line, then the fio face's flags.
pub fn main_help(commands: &[Command]) -> String {
    let mut s = String::new();
    for (i, c) in commands.iter().enumerate() {
        let _ = writeln!(
            s,
            "{} {}",
            if i == 0 { "usage:" } else { "      " },
            c.usage
        );
    }
    s.push_str("\nSubcommands:\n");
    for c in commands {
        let name = if c.name == FIO { "(none)" } else { c.name };
        let _ = writeln!(s, "  {name:<12} {}", c.about);
    }
    let fio = fio_face(commands);
    let _ = writeln!(s, "\n{}\n\nProgram flags:", wrap(fio.details, 88));
    flag_lines(&mut s, fio);
    examples(&mut s, fio);
    exits(&mut s, fio);
    s.push_str(
        "\nJob options: ioscope --cmdhelp[=OPTION]; engines: ioscope --enghelp[=ENGINE]\n\
         Subcommand flags: ioscope SUBCOMMAND --help (or ioscope help SUBCOMMAND)\n",
    );
    s
}

fn examples(s: &mut String, cmd: &Command) {
    if cmd.examples.is_empty() {
        return;
    }
    s.push_str("\nExamples:\n");
    for e in cmd.examples {
        let _ = writeln!(s, "  {e}");
    }
}

/// `ioscope SUBCOMMAND --help` (the fio face's is [`main_help`]).
pub fn command_help(commands: &[Command], cmd: &Command) -> String {
    if cmd.name == FIO {
        return main_help(commands);
    }
    let mut s = String::new();
    let _ = writeln!(s, "usage: {}\n\n{}", cmd.usage, cmd.about);
    if !cmd.details.is_empty() {
        let _ = writeln!(s, "\n{}", wrap(cmd.details, 88));
    }
    let _ = writeln!(s, "\nOperands: {}\n\nFlags:", cmd.operands);
    flag_lines(&mut s, cmd);
    examples(&mut s, cmd);
    exits(&mut s, cmd);
    s
}

fn exits(s: &mut String, cmd: &Command) {
    s.push_str("\nExit status:\n");
    for e in cmd.exits {
        let when = wrap(e.when, 88 - 8).replace('\n', &format!("\n{:8}", ""));
        let _ = writeln!(s, "  {:<5} {when}", e.code);
    }
}

pub(crate) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    out.push_str(&line);
    out
}

fn status_md(s: Support) -> String {
    match s {
        Support::Supported => "supported".into(),
        Support::NotYet(why) => format!("**not yet** (refused): {why}"),
        Support::NoEffect(why) => format!("no effect (warns): {why}"),
    }
}

/// The command-line reference (docs/cli.md), generated from the command table.
pub fn markdown_reference(commands: &[Command]) -> String {
    let mut s = String::new();
    s.push_str("# ioscope command-line reference\n\n");
    s.push_str(
        "Generated from the command table (`crates/cli/src/commands.rs`; each subcommand's\n",
    );
    s.push_str("flags are declared beside its code) by\n");
    s.push_str("`UPDATE_DOCS=1 cargo test -p ioscope --test tests flags::`; a test fails when it is stale.\n");
    s.push_str("fio's job options are in [options.md](options.md).\n\n");
    s.push_str(
        "Flags are written `--flag`, `--flag=VALUE` or, when the value is required, \
         `--flag VALUE`. Status: **supported**; **not yet** (the flag is refused with \
         \"--X is not supported yet\" and exit status 1, also by `--parse-only`); **no effect** \
         (accepted with a warning on stderr; fatal with `--warnings-fatal`). No flag is \
         silently ignored.\n\n",
    );
    s.push_str("| subcommand | what it does |\n|---|---|\n");
    for c in commands {
        let _ = writeln!(s, "| `{}` | {} |", c.invocation(), esc(c.about));
    }
    s.push('\n');
    for c in commands {
        command_md(&mut s, c);
    }
    s
}

fn command_md(s: &mut String, c: &Command) {
    let _ = writeln!(s, "## `{}`\n", c.invocation());
    let _ = writeln!(s, "    {}\n", c.usage);
    let _ = writeln!(s, "{}\n", c.about);
    if !c.details.is_empty() {
        let _ = writeln!(s, "{}\n", c.details);
    }
    let _ = writeln!(s, "Operands: {}.\n", c.operands);
    s.push_str("| flag | value | status | description |\n|---|---|---|---|\n");
    for f in (c.flags)() {
        let mut name = format!("`--{}`", f.name);
        for a in f.aliases {
            let _ = write!(name, ", `-{a}`");
        }
        let value = match f.value {
            FlagValue::None => String::new(),
            FlagValue::Required => format!("`{}` (required)", f.value_name),
            FlagValue::Optional => format!("`{}` (optional, `=` only)", f.value_name),
        };
        let _ = writeln!(
            s,
            "| {name} | {value} | {} | {} |",
            esc(&status_md(f.support)),
            esc(f.help)
        );
    }
    s.push('\n');
    if !c.examples.is_empty() {
        s.push_str("Examples:\n\n");
        for e in c.examples {
            let _ = writeln!(s, "    {e}");
        }
        s.push('\n');
    }
    s.push_str("Exit status:\n\n| status | when |\n|---|---|\n");
    for e in c.exits {
        let _ = writeln!(s, "| {} | {} |", e.code, esc(e.when));
    }
    s.push('\n');
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}
