//! fio's command line: `--opt=value`, `-opt=value`, `--opt value`; options before the
//! first `--name` are global; `--name` starts a job; other words are job files.
//! fio's own flags (`--output`, `--parse-only`, …) are the `flags` the caller gives.

use crate::error::{Loc, OptionsError};
use crate::flags::{self, did_you_mean, FlagDef};
use crate::jobfile::{RawEntry, RawSection};
use crate::table;
use std::path::PathBuf;

/// What the command line asked for.
#[derive(Debug, Default)]
pub struct Cli {
    /// Flags seen, in order: (name, value).
    pub flags: Vec<(String, Option<String>, Loc)>,
    /// Options before the first `--name`.
    pub global: Vec<RawEntry>,
    /// Jobs started by `--name`.
    pub jobs: Vec<RawSection>,
    pub job_files: Vec<PathBuf>,
    /// Warnings for flags that have no effect in ioscope.
    pub warnings: Vec<String>,
}

impl Cli {
    pub fn flag(&self, name: &str) -> Option<Option<&str>> {
        self.flags
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, v, _)| v.as_deref())
    }
    pub fn has(&self, name: &str) -> bool {
        self.flag(name).is_some()
    }
    pub fn flag_all(&self, name: &str) -> Vec<&str> {
        self.flags
            .iter()
            .filter(|(n, _, _)| n == name)
            .filter_map(|(_, v, _)| v.as_deref())
            .collect()
    }
}

/// Parse argv (without the program name).
/// Marks an argument that is not UTF-8 (argv never holds a NUL byte).
const NOT_UTF8: &str = "\0ioscope-not-utf8-";

/// Parse argv as the OS gives it: a job file may have any name; an option or its
/// value must be UTF-8 text, and one that is not gets a clear error.
pub fn parse_args_os(args: &[std::ffi::OsString], flags: &[&FlagDef]) -> Result<Cli, OptionsError> {
    let mut raw = Vec::new();
    let mut strs = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        match a.to_str() {
            Some(s) => strs.push(s.to_string()),
            None if !a.as_encoded_bytes().starts_with(b"-") => {
                strs.push(format!("{NOT_UTF8}{}", raw.len()));
                raw.push(a.clone());
            }
            None => return Err(not_utf8(i + 1, a)),
        }
    }
    let mut cli = parse_args(&strs, flags)?;
    for f in &mut cli.job_files {
        if let Some(k) = f.to_str().and_then(|s| s.strip_prefix(NOT_UTF8)) {
            if let Some(a) = k.parse::<usize>().ok().and_then(|k| raw.get(k)) {
                *f = PathBuf::from(a);
            }
        }
    }
    let values = cli
        .global
        .iter()
        .chain(cli.jobs.iter().flat_map(|j| &j.entries));
    for e in values {
        if let Some(k) = e.value.as_deref().and_then(|v| v.strip_prefix(NOT_UTF8)) {
            let a = k.parse::<usize>().ok().and_then(|k| raw.get(k));
            let shown = a
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(OptionsError::option(
                &e.loc,
                &e.key,
                format!("value '{shown}' is not valid UTF-8: option values must be UTF-8 text"),
            ));
        }
    }
    Ok(cli)
}

fn not_utf8(index: usize, a: &std::ffi::OsStr) -> OptionsError {
    OptionsError::at(
        &Loc::cli(index),
        format!(
            "'{}' is not valid UTF-8: options and their values must be UTF-8 text",
            a.to_string_lossy()
        ),
    )
}

pub fn parse_args(args: &[String], flags: &[&FlagDef]) -> Result<Cli, OptionsError> {
    let mut cli = Cli::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let loc = Loc::cli(i + 1);
        i += 1;
        let Some((name, inline)) = flags::split_flag(arg, true) else {
            cli.job_files.push(PathBuf::from(arg));
            continue;
        };
        let inline = inline.map(str::to_string);
        if let Some(flag) = flags.iter().find(|f| f.matches(name)) {
            let w = flags::check_support(flag).map_err(OptionsError::Other)?;
            cli.warnings.extend(w);
            let value = flags::take_value(flag, arg, inline.as_deref(), args, &mut i)
                .map_err(|e| OptionsError::at(&loc, e))?;
            cli.flags.push((flag.name.to_string(), value, loc));
            continue;
        }
        let Some(def) = table::find(name) else {
            // An option of the --profile given before it (fio knows a profile's
            // options from the --profile on).
            if let Some(e) = profile_option(&cli, name, inline, args, &mut i, &loc) {
                cli.global.push(e?);
                continue;
            }
            return Err(OptionsError::option(
                &loc,
                arg,
                format!("unknown option{}", did_you_mean(name, flags)),
            ));
        };
        // fio: an option without '=' takes the next argument as its value,
        // unless it is a flag (time_based, norandommap, ...).
        let value = match inline {
            Some(v) => Some(v),
            None if def.is_flag() => None,
            None => match args.get(i) {
                Some(v) => {
                    i += 1;
                    Some(v.clone())
                }
                None => return Err(OptionsError::option(&loc, arg, "requires a value")),
            },
        };
        let entry = RawEntry {
            key: name.to_string(),
            value,
            loc: loc.clone(),
        };
        if def.name == "name" {
            cli.jobs.push(RawSection {
                name: entry.value.clone().unwrap_or_default(),
                loc,
                entries: Vec::new(),
            });
            continue;
        }
        match cli.jobs.last_mut() {
            Some(job) => job.entries.push(entry),
            None => cli.global.push(entry),
        }
    }
    Ok(cli)
}

/// `--NAME[=VALUE]` as an option of the last --profile so far, if it has one of that
/// name (`prep` is a flag; the others take a value, inline or the next argument).
fn profile_option(
    cli: &Cli,
    name: &str,
    inline: Option<String>,
    args: &[String],
    i: &mut usize,
    loc: &Loc,
) -> Option<Result<RawEntry, OptionsError>> {
    let chosen = cli.global.iter().rev().find(|e| e.key == "profile")?;
    let p = crate::profile::find(chosen.value.as_deref()?)?;
    let opt = p.options.iter().find(|o| o.name == name)?;
    let value = match inline {
        Some(v) => Some(v),
        None if opt.name == "prep" => None,
        None => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Some(v.clone())
            }
            None => {
                return Some(Err(OptionsError::option(
                    loc,
                    &format!("--{name}"),
                    "requires a value",
                )))
            }
        },
    };
    Some(Ok(RawEntry {
        key: name.to_string(),
        value,
        loc: loc.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{flag, FlagValue};

    /// A few of fio's flags, as the program gives them.
    const FLAGS: &[&FlagDef] = &[
        &flag("parse-only", FlagValue::None, "", ""),
        &flag("output", FlagValue::Required, "FILE", ""),
        &flag("output-format", FlagValue::Required, "FORMAT", ""),
    ];

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn fio_styles() {
        let c = parse_args(&args("-ioengine=io_uring --bs 4k --name=a --time_based --rw=randread --name b job.fio --output-format=json"), FLAGS).unwrap();
        assert_eq!(c.global.len(), 2);
        assert_eq!(c.global[1].value.as_deref(), Some("4k"));
        assert_eq!(c.jobs.len(), 2);
        assert_eq!(c.jobs[1].name, "b");
        assert!(c.jobs[0].entries[0].value.is_none());
        assert_eq!(c.job_files, vec![PathBuf::from("job.fio")]);
        assert_eq!(c.flag("output-format"), Some(Some("json")));
    }

    #[test]
    fn fio_consumes_next_arg() {
        // fio: "--direct --ioengine=null" makes direct's value "--ioengine=null".
        let c = parse_args(&args("--name=x --direct --ioengine=null"), FLAGS).unwrap();
        assert_eq!(
            c.jobs[0].entries[0].value.as_deref(),
            Some("--ioengine=null")
        );
    }

    #[test]
    fn non_utf8_job_files_work_and_values_get_a_clear_error() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let latin1 = OsString::from_vec(b"caf\xe9.fio".to_vec());
        let c = parse_args_os(&[OsString::from("--parse-only"), latin1.clone()], FLAGS).unwrap();
        assert_eq!(c.job_files, vec![PathBuf::from(latin1.clone())]);
        let bad = OsString::from_vec(b"--name=\xff".to_vec());
        let e = parse_args_os(&[bad], FLAGS).unwrap_err().to_string();
        assert!(
            e.contains("not valid UTF-8") && e.contains("argument 1"),
            "{e}"
        );
        let e = parse_args_os(
            &[
                OsString::from("--name=a"),
                OsString::from("--filename"),
                latin1,
            ],
            FLAGS,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("filename") && e.contains("not valid UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn unknown_suggests() {
        let e = parse_args(&args("--iodepht=4"), FLAGS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean 'iodepth'"), "{e}");
    }
}
