//! fio's command line: `--opt=value`, `-opt=value`, `--opt value`; options before the
//! first `--name` are global; `--name` starts a job; other words are job files.
//! fio's own flags (`--output`, `--parse-only`, …) are listed in `FLAGS`.

use crate::error::{Loc, OptionsError};
use crate::flags;
use crate::jobfile::{RawEntry, RawSection};
use crate::suggest::did_you_mean;
use crate::table;
use std::path::PathBuf;

/// fio's program flags: the fio face's part of the flag table ([`crate::flags`]).
pub use crate::flags::{FlagDef, FlagValue, FIO_FLAGS as FLAGS};

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
pub fn parse_args(args: &[String]) -> Result<Cli, OptionsError> {
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
        if let Some(flag) = flags::find_in(FLAGS, name) {
            let w = flags::check_support(flag).map_err(OptionsError::Other)?;
            cli.warnings.extend(w);
            let value = flags::take_value(flag, arg, inline.as_deref(), args, &mut i)
                .map_err(|e| OptionsError::at(&loc, e))?;
            cli.flags.push((flag.name.to_string(), value, loc));
            continue;
        }
        let Some(def) = table::find(name) else {
            return Err(OptionsError::option(
                &loc,
                arg,
                format!("unknown option{}", did_you_mean(name)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn fio_styles() {
        let c = parse_args(&args("-ioengine=io_uring --bs 4k --name=a --time_based --rw=randread --name b job.fio --output-format=json")).unwrap();
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
        let c = parse_args(&args("--name=x --direct --ioengine=null")).unwrap();
        assert_eq!(
            c.jobs[0].entries[0].value.as_deref(),
            Some("--ioengine=null")
        );
    }

    #[test]
    fn unknown_suggests() {
        let e = parse_args(&args("--iodepht=4")).unwrap_err().to_string();
        assert!(e.contains("did you mean 'iodepth'"), "{e}");
    }
}
