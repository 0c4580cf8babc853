//! Program flags (not fio's job options): how one is described ([`FlagDef`]) and the
//! pieces of parsing every argv layer shares ([`split_flag`], [`take_value`],
//! [`check_support`]). The flags themselves are declared by the program's command
//! table, beside the code that uses them (`crates/cli`); the fio face's argv layer
//! ([`crate::cli`]) is given them to tell them from job options.
//!
//! Project rule: no flag is silently ignored. Each flag is [`Support::Supported`], or
//! [`Support::NotYet`] (refused by the parser, so `--parse-only` refuses it too), or
//! [`Support::NoEffect`] (accepted with a warning that says why it changes nothing).

use crate::suggest::closest;
use crate::table::OPTIONS;

/// One program flag of one subcommand.
#[derive(Debug)]
pub struct FlagDef {
    /// Long name, written `--name`.
    pub name: &'static str,
    /// Other spellings without dashes (`h` for `-h`).
    pub aliases: &'static [&'static str],
    pub value: FlagValue,
    /// Placeholder for the value in help and docs (`FILE`, `N`); empty when none.
    pub value_name: &'static str,
    pub help: &'static str,
    pub support: Support,
    /// The words its value may be, where they are a fixed set (shell completion offers
    /// them); empty when the value is free.
    pub choices: &'static [&'static str],
}

/// Whether a flag takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// `--flag`; `--flag=x` is an error.
    None,
    /// `--flag=x` or `--flag x`.
    Required,
    /// `--flag` or `--flag=x` (never the next argument).
    Optional,
}

/// What ioscope does with a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Supported,
    /// Refused with "--X is not supported yet: reason" (exit 1), also by `--parse-only`.
    NotYet(&'static str),
    /// Accepted; a warning says it has no effect and why.
    NoEffect(&'static str),
}

impl FlagDef {
    /// Whether `name` (as written, without dashes) is this flag or one of its aliases.
    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

use FlagValue::{None as NoVal, Required as ReqVal};
use Support::{NoEffect, NotYet, Supported};

pub const fn flag(
    name: &'static str,
    value: FlagValue,
    value_name: &'static str,
    help: &'static str,
) -> FlagDef {
    FlagDef {
        name,
        aliases: &[],
        value,
        value_name,
        help,
        support: Supported,
        choices: &[],
    }
}

pub const fn not_yet(
    name: &'static str,
    value: FlagValue,
    value_name: &'static str,
    help: &'static str,
    why: &'static str,
) -> FlagDef {
    FlagDef {
        name,
        aliases: &[],
        value,
        value_name,
        help,
        support: NotYet(why),
        choices: &[],
    }
}

pub const HELP: FlagDef = FlagDef {
    name: "help",
    aliases: &["h"],
    value: NoVal,
    value_name: "",
    help: "Print this help and exit",
    support: Supported,
    choices: &[],
};

/// `--color`, which every command takes (as `--help`): colour on a terminal (auto, the
/// default), always or never; `NO_COLOR` in the environment means never unless a
/// `--color` says otherwise.
pub const COLOR: FlagDef = FlagDef {
    name: "color",
    aliases: &["colour"],
    value: FlagValue::Required,
    value_name: "WHEN",
    help: "Colour: auto (on a terminal, unless NO_COLOR is set; the default), always or never",
    support: Supported,
    choices: &["auto", "always", "never"],
};

/// `"; did you mean 'X'?"` or "": X among the job options and `flags`.
pub fn did_you_mean(name: &str, flags: &[&FlagDef]) -> String {
    let names = OPTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .chain(flags.iter().map(|f| f.name));
    match closest(name, names) {
        Some(n) => format!("; did you mean '{n}'?"),
        None => String::new(),
    }
}

/// A flag word split into its name and inline value: `--x=1` → ("x", Some("1")).
/// `None` for words that are not flags (no dash, or only dashes).
pub fn split_flag(arg: &str, single_dash: bool) -> Option<(&str, Option<&str>)> {
    let body = match arg.strip_prefix("--") {
        Some(b) => b,
        None if single_dash || arg.len() == 2 => arg.strip_prefix('-')?,
        None => return None,
    };
    if body.is_empty() {
        return None;
    }
    Some(match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    })
}

/// The value of `def`, written `arg` at `args[*i - 1]`: inline, or (Required) the next
/// argument, which `*i` then skips.
pub fn take_value(
    def: &FlagDef,
    arg: &str,
    inline: Option<&str>,
    args: &[String],
    i: &mut usize,
) -> Result<Option<String>, String> {
    match (def.value, inline) {
        (NoVal, Some(_)) => Err(format!("{arg}: --{} takes no value", def.name)),
        (ReqVal, None) => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            None => Err(format!(
                "{arg}: --{} requires a value (--{}={})",
                def.name, def.name, def.value_name
            )),
        },
        (_, v) => Ok(v.map(str::to_string)),
    }
}

/// Refuse a NotYet flag; the warning for a NoEffect flag.
pub fn check_support(def: &FlagDef) -> Result<Option<String>, String> {
    match def.support {
        Supported => Ok(None),
        NotYet(why) => Err(format!("--{} is not supported yet: {why}", def.name)),
        NoEffect(why) => Ok(Some(format!(
            "warning: --{} has no effect: {why}",
            def.name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        assert!(did_you_mean("iodpeth", &[]).contains("iodepth"));
        assert!(did_you_mean("ramp_tme", &[]).contains("ramp_time"));
        assert!(
            did_you_mean("parse-onyl", &[&flag("parse-only", NoVal, "", "")])
                .contains("parse-only")
        );
        assert_eq!(did_you_mean("completelydifferent", &[]), "");
    }

    #[test]
    fn flag_words() {
        assert_eq!(split_flag("--x=1", false), Some(("x", Some("1"))));
        assert_eq!(split_flag("-h", false), Some(("h", None)));
        assert_eq!(split_flag("-rw=read", false), None);
        assert_eq!(split_flag("-rw=read", true), Some(("rw", Some("read"))));
        assert_eq!(split_flag("--", false), None);
        let args: Vec<String> = vec!["7".into()];
        let mut i = 0;
        let v = take_value(
            &flag("n", ReqVal, "N", "a number"),
            "--n",
            None,
            &args,
            &mut i,
        );
        assert_eq!((v, i), (Ok(Some("7".into())), 1));
        assert!(HELP.matches("h") && HELP.matches("help") && !HELP.matches("x"));
    }
}
