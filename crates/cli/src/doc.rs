//! Everything written about the commands, from the command table: `--help` text, the
//! command-line reference docs/cli.md, and the bash completion script.

use crate::command::{Command, Completes, FIO};
use ioscope_options::flags::{FlagDef, FlagValue, Support};
use ioscope_options::OPTIONS;
use std::fmt::Write;

/// `--name`, `--name=VALUE` or `--name[=VALUE]`.
pub fn flag_synopsis(f: &FlagDef) -> String {
    match f.value {
        FlagValue::None => format!("--{}", f.name),
        FlagValue::Required => format!("--{}={}", f.name, f.value_name),
        FlagValue::Optional => format!("--{}[={}]", f.name, f.value_name),
    }
}

fn help_line(f: &FlagDef) -> String {
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

fn fio_face(commands: &[Command]) -> &Command {
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
    s
}

fn wrap(text: &str, width: usize) -> String {
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
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Completion words for a command's flags: `--name=` when a value is required,
/// `--name` otherwise.
fn flag_words(cmd: &Command) -> String {
    (cmd.flags)()
        .iter()
        .map(|f| match f.value {
            FlagValue::Required => format!("--{}=", f.name),
            _ => format!("--{}", f.name),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a command's operands complete to, as bash's `compgen` arguments.
fn operand_words(c: &Command, subcommands: &[&str]) -> String {
    match c.completes {
        Completes::Files => "COMPREPLY=($(compgen -f -- \"$cur\"))".to_string(),
        Completes::Dirs => "COMPREPLY=($(compgen -d -- \"$cur\"))".to_string(),
        Completes::Words(w) => format!("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))", w.join(" ")),
        Completes::Verbs(w) => format!(
            "if [[ $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); \
             else COMPREPLY=($(compgen -f -- \"$cur\")); fi",
            w.join(" ")
        ),
        Completes::Commands => format!(
            "COMPREPLY=($(compgen -W \"fio {}\" -- \"$cur\"))",
            subcommands.join(" ")
        ),
    }
}

/// `ioscope completions bash`: subcommands, each subcommand's flags, and (for the fio
/// face) fio's job options as `--name=`.
pub fn bash_completion(commands: &[Command]) -> String {
    let subs: Vec<&Command> = commands.iter().filter(|c| c.name != FIO).collect();
    let names: Vec<&str> = subs.iter().map(|c| c.name).collect();
    let mut cases = String::new();
    for c in &subs {
        let _ = write!(
            cases,
            "        {name})\n            if [[ $cur == -* ]]; then\n                \
             COMPREPLY=($(compgen -W \"{flags}\" -- \"$cur\"))\n            else\n                \
             {operands}\n            fi\n            ;;\n",
            name = c.name,
            flags = flag_words(c),
            operands = operand_words(c, &names),
        );
    }
    let job_options: Vec<String> = OPTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .map(|n| format!("--{n}="))
        .collect();
    format!(
        r#"# bash completion for ioscope, generated from its command table.
# Load with: source <(ioscope completions bash)

_ioscope_fio_flags="{fio_flags}"
_ioscope_job_options="{job_options}"

_ioscope() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}"
    # Completing a value after "--flag=": bash splits the word at '='.
    if [[ $cur == "=" || ( $COMP_CWORD -ge 2 && ${{COMP_WORDS[COMP_CWORD-1]}} == "=" ) ]]; then
        [[ $cur == "=" ]] && cur=""
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    local cmd="{fio}"
    if [[ $COMP_CWORD -ge 2 ]]; then
        case "${{COMP_WORDS[1]}}" in
            {alts}) cmd="${{COMP_WORDS[1]}}" ;;
        esac
    fi
    COMPREPLY=()
    case "$cmd" in
{cases}        *)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$_ioscope_fio_flags $_ioscope_job_options" -- "$cur"))
            elif [[ $COMP_CWORD -eq 1 ]]; then
                COMPREPLY=($(compgen -W "{subs}" -- "$cur") $(compgen -f -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            ;;
    esac
    # "--name=" waits for its value: no space after it.
    if [[ ${{#COMPREPLY[@]}} -eq 1 && ${{COMPREPLY[0]}} == *= ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}}
complete -F _ioscope ioscope
"#,
        fio_flags = flag_words(fio_face(commands)),
        job_options = job_options.join(" "),
        fio = FIO,
        alts = names.join("|"),
        subs = names.join(" "),
    )
}
