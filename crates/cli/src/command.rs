//! What a subcommand is: its words for help, docs and completions, its typed
//! arguments and the flags that set them, and where its job sets run. The table of
//! every subcommand is [`crate::commands::COMMANDS`].
//!
//! Each subcommand declares, beside its code, an arguments struct whose `Default` holds
//! every default (once) and a table of [`Flag`]s: the flag as it is written (name,
//! value, help: [`FlagDef`]) and the setter that stores its value in the struct.
//! Parsing ([`crate::args`]), `--help`, docs/cli.md and the completion scripts
//! ([`crate::doc`]) all read these tables.

use anyhow::Result;
use ioscope_options::flags::FlagDef;
use ioscope_runner::{Execute, RunOptions, Runner};
use std::ffi::OsString;
use std::process::ExitCode;

/// One flag of a subcommand: how it is written, and what it sets in `A`.
pub struct Flag<A: 'static> {
    pub def: FlagDef,
    /// For a command with verbs (`sweep run`, `log convert`): the verbs the flag goes
    /// with (empty: every verb).
    pub verbs: &'static [&'static str],
    /// Store the flag's value (None for a flag without one); an error says why the
    /// value is not one.
    pub set: fn(&mut A, Option<&str>) -> Result<(), String>,
}

/// A subcommand's typed arguments.
pub trait Args: Default + 'static {
    /// Its flags, `--help` aside (every subcommand has that one).
    fn flags() -> &'static [Flag<Self>];
    /// A word that is not a flag.
    fn operand(&mut self, word: String) -> Result<(), String>;
    /// Once every flag and operand is in: what they say together.
    fn check(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// The flag definitions of `A`, then `--color` and `--help` (every command has those):
/// what help, docs and completions show.
pub fn defs<A: Args>() -> Vec<&'static FlagDef> {
    A::flags()
        .iter()
        .map(|f| &f.def)
        .chain([
            &ioscope_options::flags::COLOR,
            &ioscope_options::flags::HELP,
        ])
        .collect()
}

/// Each flag of `A` that goes with some verbs only, and those verbs.
pub fn verbs_of<A: Args>() -> Vec<(&'static str, &'static [&'static str])> {
    A::flags()
        .iter()
        .filter(|f| !f.verbs.is_empty())
        .map(|f| (f.def.name, f.verbs))
        .collect()
}

/// Where a workflow's job sets run: this host, or every rank of an MPI job.
pub trait Hosts {
    /// The executor of runs made with `opts`.
    fn exec(&self, opts: RunOptions) -> Box<dyn Execute + '_>;
}

/// This host alone.
pub struct Local;

impl Hosts for Local {
    fn exec(&self, opts: RunOptions) -> Box<dyn Execute + '_> {
        Box::new(Runner::new(opts))
    }
}

/// What a subcommand is given besides its arguments.
pub struct Context<'a> {
    /// Every subcommand (for `help`, `completions` and the main help).
    pub commands: &'static [Command],
    /// This one.
    pub this: &'static Command,
    /// Where its job sets run.
    pub hosts: &'a dyn Hosts,
}

/// What a subcommand does under an MPI launch of several ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranks {
    /// Runs no I/O: the same on every rank.
    Any,
    /// Runs I/O on this host only: refused, since each rank would run alone.
    Alone,
    /// Runs every job set on all ranks together (rank 0 leads, the others serve).
    Workflow,
    /// The fio face: every rank runs the jobs, rank 0 reports.
    Fio,
}

/// A subcommand: `ioscope NAME [flags] [operands]`.
pub struct Command {
    /// The word after `ioscope`; [`FIO`] is the fio face, which has no word.
    pub name: &'static str,
    /// One line for `ioscope --help`.
    pub about: &'static str,
    /// Usage line without `usage: `.
    pub usage: &'static str,
    /// What the operands (non-flag words) are.
    pub operands: &'static str,
    /// More text for `--help` and the docs.
    pub details: &'static str,
    /// Example command lines for `--help`, the docs and the man page (each is checked
    /// to parse).
    pub examples: &'static [&'static str],
    /// Its exit statuses and what each means, for `--help`, the docs and the man page.
    pub exits: &'static [Exit],
    /// Its flags, for help, docs and completions.
    pub flags: fn() -> Vec<&'static FlagDef>,
    /// For a command with verbs: each flag's name and the verbs it goes with.
    pub flag_verbs: fn() -> Vec<(&'static str, &'static [&'static str])>,
    /// What its operands complete to in shells.
    pub completes: Completes,
    pub ranks: Ranks,
    /// Parse its words alone (the fuzzer's way in): an error says why they are wrong.
    pub parse: fn(&Context, &[OsString]) -> Result<()>,
    pub run: fn(&Context, &[OsString]) -> Result<ExitCode>,
}

/// One exit status of a command and when it is given.
#[derive(Clone, Copy, Debug)]
pub struct Exit {
    pub code: u8,
    pub when: &'static str,
}

const OK: Exit = Exit {
    code: 0,
    when: "success",
};
const ERROR: Exit = Exit {
    code: 1,
    when: "an error: a bad flag, option or input file (named on stderr), or a run that could not be made",
};
const SIGINT: Exit = Exit {
    code: 130,
    when: "interrupted by SIGINT (Ctrl-C): what finished is reported in full, marked interrupted",
};
const SIGTERM: Exit = Exit {
    code: 143,
    when: "interrupted by SIGTERM: as for SIGINT",
};

/// Commands that read and write files only.
pub const EXITS_PLAIN: &[Exit] = &[OK, ERROR];
/// Commands that run I/O (a signal stops them with what finished reported).
pub const EXITS_RUN: &[Exit] = &[OK, ERROR, SIGINT, SIGTERM];
/// The fio face: a failed job fails the run, as in fio.
pub const EXITS_FIO: &[Exit] = &[
    OK,
    Exit {
        code: 1,
        when: "an error in the command line or a job file (named on stderr), or a job that failed (its error is in the report)",
    },
    SIGINT,
    SIGTERM,
    Exit {
        code: 138,
        when: "under MPI: interrupted by SIGUSR1 (kill -USR1 on mpirun), reported as for SIGINT",
    },
];
/// `sweep`: a failed point fails the run (the others are measured and reported).
pub const EXITS_SWEEP: &[Exit] = &[
    OK,
    Exit {
        code: 1,
        when: "an error in the sweep file or the run directory (named on stderr), a point that failed (the others are measured and reported; --retry-failed runs it again), or no report could be written",
    },
    Exit {
        code: 130,
        when: "interrupted by SIGINT (Ctrl-C): the finished points are saved; the same command resumes",
    },
    SIGTERM,
];
/// `compare`: a significant regression has its own status, for scripts and CI.
pub const EXITS_COMPARE: &[Exit] = &[
    Exit {
        code: 0,
        when: "no significant change, or only improvements (better)",
    },
    ERROR,
    Exit {
        code: 2,
        when: "a significant regression: at least one row's verdict is worse",
    },
    SIGINT,
    SIGTERM,
];

/// The status `compare` exits with when a row is worse.
pub const REGRESSION: u8 = 2;

/// What a command's operands are, for shell completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completes {
    Files,
    Dirs,
    /// These words (a shell name).
    Words(&'static [&'static str]),
    /// One of these verbs, then files.
    Verbs(&'static [&'static str]),
    /// The subcommands' names.
    Commands,
}

/// Name of the fio face in the command table.
pub const FIO: &str = "fio";

impl Command {
    /// How the command is typed: `ioscope` for the fio face, `ioscope NAME` otherwise.
    pub fn invocation(&self) -> String {
        if self.name == FIO {
            "ioscope".to_string()
        } else {
            format!("ioscope {}", self.name)
        }
    }
}
