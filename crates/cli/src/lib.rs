//! ioscope, the program: a command table over the library crates. `main.rs` calls
//! [`main`]; everything a command does lives in its module here or, for what is not
//! about the command line, in the library crates.
//!
//! ```text
//! commands   THE command table and dispatch (argv → subcommand or the fio face)
//! fio/       the fio face: its flags, jobs, reporting, a run on this host
//! cluster/   the fio face and the workflows on every rank of an MPI job
//! quick peak fairness/ compare/ sweep/ report/ plot log   the subcommands
//! server/    --server: fio 3.42's clients drive runs here over fio's wire format
//! client/    --client: drive fio 3.42 (or ioscope) servers and report their results
//! args doc/  parsing a subcommand's words; help, docs/cli.md, completions, the man page
//! version    what --version says of the build
//! command    what a command is (its table entry, typed arguments, flags)
//! term/      the status line, signals, report files
//! ```

mod args;
mod client;
mod cluster;
pub mod command;
mod commands;
mod compare;
mod doc;
mod fairness;
mod fio;
mod history;
mod live;
mod log;
mod peak;
mod plot;
mod quick;
mod recording;
mod report;
mod server;
mod sweep;
mod term;
mod version;

pub use command::{Command, Completes, Ranks};
pub use commands::COMMANDS;

use std::process::ExitCode;

/// Run `ioscope` with this process's arguments.
pub fn main() -> ExitCode {
    quiet_on_closed_pipe();
    // argv as the OS gives it: job files may have any name (the fio face sorts them out).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match commands::dispatch(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ioscope: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The command line reference (docs/cli.md) and the bash completion script, as the
/// command table makes them (for the tests that keep docs/cli.md current).
pub mod docs {
    pub fn cli_reference() -> String {
        crate::doc::markdown_reference(crate::commands::COMMANDS)
    }

    /// The completion script for `shell` (bash, zsh, fish).
    pub fn completion(shell: &str) -> Option<String> {
        crate::doc::complete::script(shell, crate::commands::COMMANDS)
    }

    /// The man page ioscope(1) in roff (docs/man/ioscope.1).
    pub fn man_page() -> String {
        crate::doc::man::page(crate::commands::COMMANDS)
    }
}

/// Parse `words` as every command would (the fio face and each subcommand), running
/// nothing: the fuzzer's way in. Never panics.
#[doc(hidden)]
pub fn parse_all(words: &[std::ffi::OsString]) {
    for cmd in COMMANDS {
        let cx = command::Context {
            commands: COMMANDS,
            this: cmd,
            hosts: &command::Local,
        };
        let _ = (cmd.parse)(&cx, words);
    }
}

/// Parse `words` (after `ioscope`) as dispatch would pick the command, running nothing:
/// how the tests check that every example in the help parses.
#[doc(hidden)]
pub fn parse_line(words: &[std::ffi::OsString]) -> anyhow::Result<()> {
    let named = words
        .first()
        .and_then(|w| w.to_str())
        .and_then(commands::find)
        .filter(|c| c.name != command::FIO);
    let (cmd, rest) = match named {
        Some(c) => (c, &words[1..]),
        None => (&COMMANDS[0], words),
    };
    let cx = command::Context {
        commands: COMMANDS,
        this: cmd,
        hosts: &command::Local,
    };
    (cmd.parse)(&cx, rest)
}

/// The fio face's flags, as its parser takes them (the fuzzer's way into job options
/// given on the command line).
#[doc(hidden)]
pub fn fio_flags() -> Vec<&'static ioscope_options::flags::FlagDef> {
    command::defs::<fio::args::FioArgs>()
}

/// `ioscope --dump-jobs | head` ends quietly, as fio and every Unix filter do, instead of
/// panicking on the closed pipe (Rust ignores SIGPIPE). Not under an MPI launch: there
/// the launcher's pipe may close mid-report and the rank must go on to save its results.
fn quiet_on_closed_pipe() {
    if ioscope_cluster::launch::detect().is_none() {
        // SAFETY: restoring the default disposition of a signal has no preconditions.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
}
