//! Shell completion scripts for bash, zsh and fish, from the command table (subcommands,
//! their verbs, flags and operands) and the job-option table (`--name=` for every job
//! option, and the values of those with a fixed set). Each script completes the names
//! `ioscope` and `fio` (ioscope installed as fio: the fio face alone, no subcommands).
//!
//! The three scripts share one model ([`Model`]) and differ only in the shell's words.

use crate::command::{Command, Completes, FIO};
use ioscope_options::flags::{FlagDef, FlagValue};
use ioscope_options::{Kind, OptionDef, OPTIONS};
use std::fmt::Write;

/// The shells there are scripts for.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish"];

/// The completion script for `shell`, or None for a shell without one.
pub fn script(shell: &str, commands: &[Command]) -> Option<String> {
    let m = Model::new(commands);
    match shell {
        "bash" => Some(bash(&m)),
        "zsh" => Some(zsh(&m)),
        "fish" => Some(fish(&m)),
        _ => None,
    }
}

/// What a flag's or option's value completes to.
#[derive(Clone, Debug, PartialEq)]
enum Values {
    Words(Vec<&'static str>),
    Files,
    Dirs,
    /// Nothing to offer (a number, a size).
    Free,
}

impl Values {
    /// How the shell functions name it: `words a b c`, `files`, `dirs` or nothing.
    fn spec(&self) -> String {
        match self {
            Values::Words(w) => format!("words {}", w.join(" ")),
            Values::Files => "files".into(),
            Values::Dirs => "dirs".into(),
            Values::Free => String::new(),
        }
    }
}

/// One flag or job option as completion sees it.
struct Word {
    name: &'static str,
    /// Other spellings (`o` for `-o`): their values complete as the name's.
    aliases: &'static [&'static str],
    takes_value: bool,
    help: String,
    values: Values,
    /// For a command with verbs: the verbs it goes with (empty: all).
    verbs: Vec<&'static str>,
}

impl Word {
    fn flag(f: &FlagDef) -> Word {
        let values = if !f.choices.is_empty() {
            Values::Words(f.choices.to_vec())
        } else if f.value_name.contains("DIR") {
            Values::Dirs
        } else if ["FILE", "PREFIX", "LOG", "PATH"]
            .iter()
            .any(|k| f.value_name.contains(k))
        {
            Values::Files
        } else {
            Values::Free
        };
        Word {
            name: f.name,
            aliases: f.aliases,
            takes_value: f.value == FlagValue::Required,
            help: super::help_line(f),
            values,
            verbs: Vec::new(),
        }
    }

    fn option(d: &OptionDef, name: &'static str) -> Word {
        let values = match d.kind {
            Kind::Choice(c) => Values::Words(c.iter().map(|(v, _)| *v).collect()),
            Kind::Bool => Values::Words(vec!["0", "1"]),
            Kind::Str
                if ["file", "directory", "iolog", "opendir", "aux_path"]
                    .iter()
                    .any(|k| name.contains(k)) =>
            {
                Values::Files
            }
            _ => Values::Free,
        };
        Word {
            name,
            aliases: &[],
            takes_value: true,
            help: d.help.to_string(),
            values,
            verbs: Vec::new(),
        }
    }

    /// `--name=` when a value must follow, `--name` otherwise.
    fn typed(&self) -> String {
        if self.takes_value {
            format!("--{}=", self.name)
        } else {
            format!("--{}", self.name)
        }
    }
}

/// A subcommand as completion sees it.
struct Sub {
    name: &'static str,
    about: &'static str,
    flags: Vec<Word>,
    operands: Completes,
}

impl Sub {
    fn verbs(&self) -> &'static [&'static str] {
        match self.operands {
            Completes::Verbs(v) => v,
            _ => &[],
        }
    }

    /// The flags that go with `verb` ("" before the verb: all of them).
    fn flags_for(&self, verb: &str) -> Vec<&Word> {
        self.flags
            .iter()
            .filter(|w| verb.is_empty() || w.verbs.is_empty() || w.verbs.contains(&verb))
            .collect()
    }
}

struct Model {
    subs: Vec<Sub>,
    /// The fio face: its program flags, then every job option and alias.
    fio: Vec<Word>,
}

impl Model {
    fn new(commands: &[Command]) -> Model {
        let subs = commands
            .iter()
            .filter(|c| c.name != FIO)
            .map(|c| Sub {
                name: c.name,
                about: c.about,
                flags: flag_words(c),
                operands: c.completes,
            })
            .collect();
        let mut fio: Vec<Word> = (super::fio_face(commands).flags)()
            .into_iter()
            .map(Word::flag)
            .collect();
        for d in OPTIONS.iter() {
            for name in std::iter::once(d.name).chain(d.aliases.iter().copied()) {
                fio.push(Word::option(d, name));
            }
        }
        Model { subs, fio }
    }

    fn sub_names(&self) -> Vec<&'static str> {
        self.subs.iter().map(|s| s.name).collect()
    }
}

/// A command's flags with the verbs each goes with.
fn flag_words(c: &Command) -> Vec<Word> {
    let verbs = (c.flag_verbs)();
    (c.flags)()
        .into_iter()
        .map(|f| {
            let mut w = Word::flag(f);
            w.verbs = verbs
                .iter()
                .find(|(n, _)| *n == f.name)
                .map(|(_, v)| v.to_vec())
                .unwrap_or_default();
            w
        })
        .collect()
}

// ------------------------------------------------------------------ shared shell code

/// The body of `_ioscope_flags CMD VERB`: a `case` printing the flag words.
fn flags_case(m: &Model, indent: &str) -> String {
    let mut s = String::new();
    let words = |ws: Vec<&Word>| ws.iter().map(|w| w.typed()).collect::<Vec<_>>().join(" ");
    for sub in &m.subs {
        for verb in sub.verbs() {
            let _ = writeln!(
                s,
                "{indent}\"{} {verb}\") echo \"{}\" ;;",
                sub.name,
                words(sub.flags_for(verb))
            );
        }
        let _ = writeln!(
            s,
            "{indent}\"{} \"*) echo \"{}\" ;;",
            sub.name,
            words(sub.flags_for(""))
        );
    }
    let _ = writeln!(
        s,
        "{indent}*) echo \"{}\" ;;",
        words(m.fio.iter().collect())
    );
    s
}

/// The body of `_ioscope_values CMD NAME`: a `case` printing what the value of flag or
/// option NAME completes to (see [`Values::spec`]).
fn values_case(m: &Model, indent: &str) -> String {
    let mut s = String::new();
    for sub in &m.subs {
        for w in sub.flags.iter().filter(|w| w.takes_value) {
            let spec = w.values.spec();
            if !spec.is_empty() {
                let names: Vec<String> = std::iter::once(w.name)
                    .chain(w.aliases.iter().copied())
                    .map(|n| format!("{}:{n}", sub.name))
                    .collect();
                let _ = writeln!(s, "{indent}{}) echo \"{spec}\" ;;", names.join("|"));
            }
        }
    }
    for w in m.fio.iter().filter(|w| w.takes_value) {
        let spec = w.values.spec();
        if !spec.is_empty() {
            let _ = writeln!(s, "{indent}fio:{}) echo \"{spec}\" ;;", w.name);
        }
    }
    s
}

/// What a subcommand's operands complete to, in the functions' words.
fn operand_spec(sub: &Sub, subs: &[&str]) -> String {
    match sub.operands {
        Completes::Files => "files".into(),
        Completes::Dirs => "dirs".into(),
        Completes::Words(w) => format!("words {}", w.join(" ")),
        Completes::Verbs(_) => "files".into(),
        Completes::Commands => format!("words fio {}", subs.join(" ")),
    }
}

fn operands_case(m: &Model, indent: &str) -> String {
    let names = m.sub_names();
    let mut s = String::new();
    for sub in &m.subs {
        let verbs = sub.verbs();
        if !verbs.is_empty() {
            let _ = writeln!(
                s,
                "{indent}{}:verb) echo \"words {}\" ;;",
                sub.name,
                verbs.join(" ")
            );
        }
        let _ = writeln!(
            s,
            "{indent}{}:x) echo \"{}\" ;;",
            sub.name,
            operand_spec(sub, &names)
        );
    }
    let _ = writeln!(s, "{indent}*:x) echo files ;;");
    s
}

// ------------------------------------------------------------------------------- bash

fn bash(m: &Model) -> String {
    format!(
        r#"# bash completion for ioscope (and for fio when fio is ioscope), generated from its
# command and job-option tables. Load with: source <(ioscope completions bash)

_ioscope_subcommands="{subs}"

# The flags of command $1 (fio: the fio face) after verb $2.
_ioscope_flags() {{
    case "$1 $2" in
{flags}    esac
}}

# What the value of flag or option $2 of command $1 completes to.
_ioscope_values() {{
    case "$1:$2" in
{values}    esac
}}

# What an operand of command $1 completes to: $2 = verb for a command's verb (nothing
# when it has none), x for any other operand.
_ioscope_operands() {{
    case "$1:$2" in
{operands}    esac
}}

_ioscope_reply() {{
    local spec="$1" cur="$2" prefix="$3"
    case "$spec" in
        words\ *) COMPREPLY=($(compgen -P "$prefix" -W "${{spec#words }}" -- "$cur")) ;;
        files) COMPREPLY=($(compgen -P "$prefix" -f -- "$cur")) ;;
        dirs) COMPREPLY=($(compgen -P "$prefix" -d -- "$cur")) ;;
        *) COMPREPLY=() ;;
    esac
}}

_ioscope() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prog="${{COMP_WORDS[0]##*/}}"
    local cmd=fio verb="" at=1
    if [[ $prog != fio && $COMP_CWORD -ge 2 && " $_ioscope_subcommands " == *" ${{COMP_WORDS[1]}} "* ]]; then
        cmd="${{COMP_WORDS[1]}}"
        at=2
        [[ $COMP_CWORD -gt 2 ]] && verb="${{COMP_WORDS[2]}}"
    fi
    COMPREPLY=()
    local name=""
    # A value after "--name=": bash splits the word at '=' (COMP_WORDBREAKS) ...
    if [[ $cur == "=" ]]; then
        name="${{COMP_WORDS[COMP_CWORD-1]}}"
        cur=""
    elif [[ $COMP_CWORD -ge 2 && ${{COMP_WORDS[COMP_CWORD-1]}} == "=" ]]; then
        name="${{COMP_WORDS[COMP_CWORD-2]}}"
    fi
    if [[ -n $name ]]; then
        name="${{name#-}}"
        _ioscope_reply "$(_ioscope_values "$cmd" "${{name#-}}")" "$cur" ""
        return 0
    fi
    # ... unless '=' is no word break here.
    if [[ $cur == -*=* ]]; then
        name="${{cur%%=*}}"
        name="${{name#-}}"
        _ioscope_reply "$(_ioscope_values "$cmd" "${{name#-}}")" "${{cur#*=}}" "${{cur%%=*}}="
        return 0
    fi
    # A value after "--name VALUE".
    local prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    if [[ $COMP_CWORD -gt $at && $prev == -* && $cur != -* ]]; then
        prev="${{prev#-}}"
        local spec
        spec="$(_ioscope_values "$cmd" "${{prev#-}}")"
        if [[ -n $spec ]]; then
            _ioscope_reply "$spec" "$cur" ""
            return 0
        fi
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_ioscope_flags "$cmd" "$verb")" -- "$cur"))
    elif [[ $cmd == fio ]]; then
        if [[ $prog != fio && $COMP_CWORD -eq 1 ]]; then
            COMPREPLY=($(compgen -W "$_ioscope_subcommands" -- "$cur"))
        fi
        COMPREPLY+=($(compgen -f -- "$cur"))
    elif [[ $COMP_CWORD -eq 2 && -n $(_ioscope_operands "$cmd" verb) ]]; then
        _ioscope_reply "$(_ioscope_operands "$cmd" verb)" "$cur" ""
    else
        _ioscope_reply "$(_ioscope_operands "$cmd" x)" "$cur" ""
    fi
    # "--name=" waits for its value: no space after it.
    if [[ ${{#COMPREPLY[@]}} -eq 1 && ${{COMPREPLY[0]}} == *= ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}}
complete -F _ioscope ioscope
complete -F _ioscope fio
"#,
        subs = m.sub_names().join(" "),
        flags = flags_case(m, "        "),
        values = values_case(m, "        "),
        operands = operands_case(m, "        "),
    )
}

// -------------------------------------------------------------------------------- zsh

fn zsh(m: &Model) -> String {
    format!(
        r#"#compdef ioscope fio
# zsh completion for ioscope (and for fio when fio is ioscope), generated from its
# command and job-option tables. Install as _ioscope in a directory of $fpath, or load
# with: source <(ioscope completions zsh)

_ioscope_subcommands=({subs})

_ioscope_flags() {{
    case "$1 $2" in
{flags}    esac
}}

_ioscope_values() {{
    case "$1:$2" in
{values}    esac
}}

_ioscope_operands() {{
    case "$1:$2" in
{operands}    esac
}}

# Offer what spec $1 names (words ..., files, dirs).
_ioscope_offer() {{
    local -a w
    case "$1" in
        (words\ *) w=(${{=${{1#words }}}}); compadd -a w ;;
        (files) _files ;;
        (dirs) _files -/ ;;
    esac
}}

_ioscope() {{
    local prog=${{words[1]:t}} cur=${{words[CURRENT]}} cmd=fio verb="" at=2 name spec
    if [[ $prog != fio && $CURRENT -gt 2 && ${{_ioscope_subcommands[(Ie)${{words[2]}}]}} -gt 0 ]]; then
        cmd=${{words[2]}}
        at=3
        (( CURRENT > 3 )) && verb=${{words[3]}}
    fi
    if [[ $cur == -*=* ]]; then
        name=${{${{cur%%=*}}#-}}
        compset -P '*='
        _ioscope_offer "$(_ioscope_values $cmd ${{name#-}})"
        return
    fi
    if (( CURRENT > at )) && [[ ${{words[CURRENT-1]}} == -* && ${{words[CURRENT-1]}} != *=* && $cur != -* ]]; then
        name=${{${{words[CURRENT-1]}}#-}}
        spec=$(_ioscope_values $cmd ${{name#-}})
        if [[ -n $spec ]]; then
            _ioscope_offer "$spec"
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        local -a f
        f=(${{=$(_ioscope_flags $cmd "$verb")}})
        compadd -S '' -- ${{(M)f:#*=}}
        compadd -- ${{f:#*=}}
    elif [[ $cmd == fio ]]; then
        if [[ $prog != fio && $CURRENT -eq 2 ]]; then
            compadd -a _ioscope_subcommands
        fi
        _files
    else
        spec=$(_ioscope_operands $cmd verb)
        if (( CURRENT == 3 )) && [[ -n $spec ]]; then
            _ioscope_offer "$spec"
        else
            _ioscope_offer "$(_ioscope_operands $cmd x)"
        fi
    fi
}}

if [[ $funcstack[1] == _ioscope ]]; then
    _ioscope "$@"
else
    compdef _ioscope ioscope fio
fi
"#,
        subs = m.sub_names().join(" "),
        flags = flags_case(m, "        "),
        values = values_case(m, "        "),
        operands = operands_case(m, "        "),
    )
}

// ------------------------------------------------------------------------------- fish

/// A fish string in single quotes.
fn fq(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The first sentence-ish part of a help text, short enough for fish's pager.
fn short(help: &str) -> String {
    let h = help;
    match h.char_indices().nth(70) {
        Some((i, _)) => format!("{}…", &h[..i]),
        None => h.to_string(),
    }
}

/// `complete` arguments for a word's value.
fn fish_value(w: &Word) -> String {
    if !w.takes_value {
        return String::new();
    }
    match &w.values {
        Values::Words(v) => format!(" -x -a {}", fq(&v.join(" "))),
        Values::Files => " -r -F".into(),
        Values::Dirs => " -x -a '(__fish_complete_directories)'".into(),
        Values::Free => " -x".into(),
    }
}

fn fish(m: &Model) -> String {
    let subs = m.sub_names().join(" ");
    let mut s = String::from(
        "# fish completion for ioscope (and for fio when fio is ioscope), generated from its\n\
         # command and job-option tables. Load with: ioscope completions fish | source\n\n",
    );
    let none = format!("not __fish_seen_subcommand_from {subs}");
    for sub in &m.subs {
        let _ = writeln!(
            s,
            "complete -c ioscope -n {} -f -a {} -d {}",
            fq(&none),
            sub.name,
            fq(&short(sub.about))
        );
    }
    for sub in &m.subs {
        let verbs = sub.verbs();
        let seen = format!("__fish_seen_subcommand_from {}", sub.name);
        if !verbs.is_empty() {
            let cond = format!(
                "{seen}; and not __fish_seen_subcommand_from {}",
                verbs.join(" ")
            );
            let _ = writeln!(
                s,
                "complete -c ioscope -n {} -f -a {}",
                fq(&cond),
                fq(&verbs.join(" "))
            );
        }
        if let Completes::Words(w) | Completes::Verbs(w) = sub.operands {
            if matches!(sub.operands, Completes::Words(_)) {
                let _ = writeln!(
                    s,
                    "complete -c ioscope -n {} -f -a {}",
                    fq(&seen),
                    fq(&w.join(" "))
                );
            }
        }
        if sub.operands == Completes::Commands {
            let _ = writeln!(
                s,
                "complete -c ioscope -n {} -f -a {}",
                fq(&seen),
                fq(&format!("fio {subs}"))
            );
        }
        for w in &sub.flags {
            let cond = match w.verbs.as_slice() {
                [] => seen.clone(),
                v => format!("{seen}; and __fish_seen_subcommand_from {}", v.join(" ")),
            };
            let _ = writeln!(
                s,
                "complete -c ioscope -n {} -l {}{} -d {}",
                fq(&cond),
                w.name,
                fish_value(w),
                fq(&short(&w.help))
            );
        }
    }
    for w in &m.fio {
        let _ = writeln!(
            s,
            "complete -c ioscope -n {} -l {}{} -d {}",
            fq(&none),
            w.name,
            fish_value(w),
            fq(&short(&w.help))
        );
        let _ = writeln!(
            s,
            "complete -c fio -l {}{} -d {}",
            w.name,
            fish_value(w),
            fq(&short(&w.help))
        );
    }
    s
}
