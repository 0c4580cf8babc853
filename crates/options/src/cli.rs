//! fio's command line: `--opt=value`, `-opt=value`, `--opt value`; options before the
//! first `--name` are global; `--name` starts a job; other words are job files.
//! fio's own flags (`--output`, `--parse-only`, …) are listed in `FLAGS`.

use crate::error::{Loc, OptionsError};
use crate::jobfile::{RawEntry, RawSection};
use crate::suggest::did_you_mean;
use crate::table;
use std::path::PathBuf;

/// One of fio's program flags: (name, takes a value, help).
pub struct FlagDef {
    pub name: &'static str,
    pub value: FlagValue,
    pub help: &'static str,
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub enum FlagValue {
    None,
    Required,
    Optional,
}

use FlagValue::{None as NoVal, Optional as OptVal, Required as ReqVal};

pub const FLAGS: &[FlagDef] = &[
    FlagDef {
        name: "output",
        value: ReqVal,
        help: "Write the report to this file",
    },
    FlagDef {
        name: "output-format",
        value: ReqVal,
        help: "normal, terse, json or json+ (comma-separated for several)",
    },
    FlagDef {
        name: "minimal",
        value: NoVal,
        help: "Terse output (same as --output-format=terse)",
    },
    FlagDef {
        name: "append-terse",
        value: NoVal,
        help: "Print terse output after the selected format",
    },
    FlagDef {
        name: "terse-version",
        value: ReqVal,
        help: "Terse format version: 2, 3 (default), 4 or 5",
    },
    FlagDef {
        name: "bandwidth-log",
        value: OptVal,
        help: "Write aggregate bandwidth logs NAME-{read,write,trim}_bw.log (NAME defaults to agg)",
    },
    FlagDef {
        name: "parse-only",
        value: NoVal,
        help: "Parse and validate the options, then exit",
    },
    FlagDef {
        name: "dump-jobs",
        value: NoVal,
        help: "Print the resolved job specifications as JSON and exit (ioscope)",
    },
    FlagDef {
        name: "showcmd",
        value: NoVal,
        help: "Print the job files as a command line and exit",
    },
    FlagDef {
        name: "debug",
        value: ReqVal,
        help: "Debug output; ioscope knows 'parse' (print resolved options)",
    },
    FlagDef {
        name: "cmdhelp",
        value: OptVal,
        help: "Help on an option, or all options",
    },
    FlagDef {
        name: "enghelp",
        value: OptVal,
        help: "List engines, or the options of one engine",
    },
    FlagDef {
        name: "version",
        value: NoVal,
        help: "Print the version and exit",
    },
    FlagDef {
        name: "help",
        value: NoVal,
        help: "Print this help and exit",
    },
    FlagDef {
        name: "readonly",
        value: NoVal,
        help: "Refuse any write",
    },
    FlagDef {
        name: "max-jobs",
        value: ReqVal,
        help: "Refuse to run more than this many jobs",
    },
    FlagDef {
        name: "warnings-fatal",
        value: NoVal,
        help: "Treat warnings as errors",
    },
    FlagDef {
        name: "section",
        value: ReqVal,
        help: "Run only this job-file section (may be repeated)",
    },
    FlagDef {
        name: "eta",
        value: ReqVal,
        help: "Live status line: auto, always or never",
    },
    FlagDef {
        name: "eta-newline",
        value: ReqVal,
        help: "Start a new status line every this many seconds",
    },
    FlagDef {
        name: "eta-interval",
        value: ReqVal,
        help: "Status line update interval",
    },
    FlagDef {
        name: "status-interval",
        value: ReqVal,
        help: "Print a full interim report every this many seconds",
    },
    FlagDef {
        name: "inflate-log",
        value: ReqVal,
        help: "Decompress a .fz log (not supported yet)",
    },
    FlagDef {
        name: "allow-destructive",
        value: NoVal,
        help: "Allow writes to block devices that are mounted or carry data signatures (ioscope)",
    },
    FlagDef {
        name: "cpuclock-test",
        value: NoVal,
        help: "Test the CPU clock (not supported yet)",
    },
    FlagDef {
        name: "server",
        value: OptVal,
        help: "fio client/server mode (not supported)",
    },
    FlagDef {
        name: "client",
        value: ReqVal,
        help: "fio client/server mode (not supported)",
    },
    FlagDef {
        name: "aux-path",
        value: ReqVal,
        help: "Directory for auxiliary files",
    },
    FlagDef {
        name: "alloc-size",
        value: ReqVal,
        help: "fio's shared-memory pool size (ioscope needs none)",
    },
];

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

fn find_flag(name: &str) -> Option<&'static FlagDef> {
    FLAGS.iter().find(|f| f.name == name)
}

/// Parse argv (without the program name).
pub fn parse_args(args: &[String]) -> Result<Cli, OptionsError> {
    let mut cli = Cli::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let loc = Loc::cli(i + 1);
        i += 1;
        let body = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            Some(b) if !b.is_empty() => b,
            _ => {
                cli.job_files.push(PathBuf::from(arg));
                continue;
            }
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let name = match name {
            "h" => "help",
            "v" | "V" => "version",
            other => other,
        };
        if let Some(flag) = find_flag(name) {
            let value = match (flag.value, inline) {
                (NoVal, Some(_)) => return Err(OptionsError::option(&loc, arg, "takes no value")),
                (ReqVal, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => return Err(OptionsError::option(&loc, arg, "requires a value")),
                },
                (_, v) => v,
            };
            cli.flags.push((name.to_string(), value, loc));
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
