//! The man page ioscope(1), in roff, from the same tables as `--help`: the command table
//! (the fio face's flags, every subcommand with its flags, examples and exit statuses)
//! and the job-option table (by category). docs/man/ioscope.1 is this page, kept current
//! by a test; the Debian package installs it.

use super::{flag_synopsis, help_line};
use crate::command::{Command, Exit, FIO};
use ioscope_options::{Category, Kind, OptionDef, Status, OPTIONS};
use std::fmt::Write;

/// The whole page.
pub fn page(commands: &[Command]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        ".\\\" Generated from ioscope's command and option tables; do not edit.\n\
         .TH IOSCOPE 1 \"\" \"ioscope {}\" \"User Commands\"",
        env!("CARGO_PKG_VERSION")
    );
    s.push_str(
        ".SH NAME\nioscope \\- a storage I/O benchmark that runs fio job files and command lines\n",
    );
    synopsis(&mut s, commands);
    description(&mut s);
    let fio = super::fio_face(commands);
    s.push_str(".SH FIO FRONT END\n");
    para(&mut s, fio.details);
    s.push_str(".SS Program flags\n");
    flags(&mut s, fio);
    s.push_str(".SH SUBCOMMANDS\n");
    for c in commands.iter().filter(|c| c.name != FIO) {
        subcommand(&mut s, c);
    }
    job_options(&mut s);
    exit_status(&mut s, commands);
    environment(&mut s);
    files(&mut s);
    s.push_str(".SH EXAMPLES\n");
    examples(&mut s, fio.examples);
    s.push_str(
        ".SH SEE ALSO\n.BR fio (1)\n.PP\nThe command-line reference (cli.md), the option \
         reference (options.md) and the JSON schemas (schema/) in /usr/share/doc/ioscope.\n",
    );
    s
}

/// Text safe in roff: backslashes written as \e, characters beyond ASCII as their
/// Unicode escapes, a line never starting with a control character.
fn esc(t: &str) -> String {
    let t: String = t
        .replace('\\', "\\e")
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\[u{:04X}]", c as u32)
            }
        })
        .collect();
    t.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A flag or command word: bold, with its hyphens as minus signs (so it can be searched
/// and copied).
fn word(t: &str) -> String {
    esc(t).replace('-', "\\-")
}

fn para(s: &mut String, text: &str) {
    if !text.is_empty() {
        let _ = writeln!(s, ".PP\n{}", esc(text));
    }
}

fn synopsis(s: &mut String, commands: &[Command]) {
    s.push_str(".SH SYNOPSIS\n");
    for c in commands {
        // Alternatives of a command are " | ioscope ..."; a lone "|" is within one.
        for (i, u) in c.usage.split(" | ioscope ").enumerate() {
            let u = if i == 0 {
                u.to_string()
            } else {
                format!("ioscope {u}")
            };
            let _ = writeln!(s, ".br\n{}", word(&u));
        }
    }
}

fn description(s: &mut String) {
    s.push_str(".SH DESCRIPTION\n");
    para(
        s,
        "ioscope runs fio job files and fio command lines unchanged, with the same options, \
         output formats (normal, terse, json, json+) and log files, through the same kernel \
         interfaces (io_uring, libaio, pread/pwrite, preadv2, mmap), while measuring more \
         exactly: latency histograms with at most 0.1% error, a calibrated TSC clock, exact \
         merges of job statistics, and I/O logs that stream to disk during the run. Beyond \
         fio it answers the questions asked of a benchmark with subcommands: how fast is this \
         disk (quick), where does it peak (peak), did each priority get its share (fairness), \
         did a change help (compare), how does it behave across depths and job counts (sweep, \
         report), and what happened over time (plot, log).",
    );
    para(
        s,
        "Invoked as fio (a link named fio), ioscope is the fio front end alone: no \
         subcommands, fio's lenient reading of values, and --version prints the fio release \
         it follows.",
    );
}

fn flags(s: &mut String, c: &Command) {
    for f in (c.flags)() {
        let mut syn = word(&flag_synopsis(f));
        for a in f.aliases {
            let _ = write!(syn, ", \\-{}", word(a));
        }
        let _ = writeln!(s, ".TP\n.B {syn}\n{}", esc(&help_line(f)));
        if !f.choices.is_empty() {
            let _ = writeln!(s, ".br\nOne of: {}.", esc(&f.choices.join(", ")));
        }
    }
}

fn examples(s: &mut String, examples: &[&str]) {
    for e in examples {
        let _ = writeln!(s, ".PP\n.nf\n.RS 4\n{}\n.RE\n.fi", word(e));
    }
}

fn exits(s: &mut String, exits: &[Exit]) {
    for e in exits {
        let _ = writeln!(s, ".TP\n.B {}\n{}", e.code, esc(e.when));
    }
}

fn subcommand(s: &mut String, c: &Command) {
    let _ = writeln!(s, ".SS {}", word(&c.invocation()));
    let _ = writeln!(s, ".B {}", word(c.usage));
    para(s, c.about);
    para(s, c.details);
    para(s, &format!("Operands: {}.", c.operands));
    s.push_str(".PP\nFlags:\n.RS 4\n");
    flags(s, c);
    s.push_str(".RE\n");
    if !c.examples.is_empty() {
        s.push_str(".PP\nExamples:\n");
        examples(s, c.examples);
    }
    s.push_str(".PP\nExit status:\n.RS 4\n");
    exits(s, c.exits);
    s.push_str(".RE\n");
}

fn job_options(s: &mut String) {
    s.push_str(".SH JOB OPTIONS\n");
    para(
        s,
        "fio's job options, in a job file as name=value under a [section], or on the command \
         line as --name=value after --name=JOB. Options marked not supported yet are \
         read and checked, and a run (or --parse-only) that sets them fails naming them; \
         options marked no effect are accepted with a warning. ioscope --cmdhelp=NAME \
         prints one.",
    );
    let mut cats: Vec<Category> = OPTIONS.iter().map(|d| d.category).collect();
    cats.sort();
    cats.dedup();
    for cat in cats {
        let _ = writeln!(s, ".SS {}", esc(cat.title()));
        for d in OPTIONS.iter().filter(|d| d.category == cat) {
            option(s, d);
        }
    }
}

fn option(s: &mut String, d: &OptionDef) {
    let mut names = format!("\\fB{}\\fR", word(d.name));
    for a in d.aliases {
        let _ = write!(names, ", \\fB{}\\fR", word(a));
    }
    let _ = writeln!(s, ".TP\n{names}\n{}", esc(d.help));
    if let Kind::Choice(c) = d.kind {
        let values: Vec<String> = c
            .iter()
            .map(|(v, m)| {
                if m.is_empty() {
                    v.to_string()
                } else {
                    format!("{v} ({m})")
                }
            })
            .collect();
        let _ = writeln!(s, ".br\nValues: {}.", esc(&values.join(", ")));
    }
    if !d.default.is_empty() {
        let _ = writeln!(s, ".br\nDefault: {}.", esc(d.default));
    }
    match d.status {
        Status::Supported => {}
        Status::NoOp(why) => {
            let _ = writeln!(s, ".br\nNo effect in ioscope (warns): {}", esc(why));
        }
        Status::NotYet => s.push_str(".br\nNot supported yet (a run that sets it fails).\n"),
    }
}

fn exit_status(s: &mut String, commands: &[Command]) {
    s.push_str(".SH EXIT STATUS\n");
    para(
        s,
        "Every command exits 0 on success and 1 on an error, named on stderr with the file, \
         line and option where there is one. Commands that run I/O exit 128 plus the signal \
         when a signal stopped them (130 for SIGINT, 143 for SIGTERM), after reporting in \
         full what finished, marked interrupted. compare exits 2 when it finds a significant \
         regression. Each command's statuses:",
    );
    for c in commands {
        let codes: Vec<String> = c.exits.iter().map(|e| e.code.to_string()).collect();
        let _ = writeln!(s, ".TP\n.B {}\n{}", word(&c.invocation()), codes.join(", "));
    }
}

fn environment(s: &mut String) {
    s.push_str(".SH ENVIRONMENT\n");
    for (name, what) in [
        (
            "IOSCOPE_COMPAT",
            "fio: read values as fio does (4q = 4; a range splits at its first \\- or :), as \
             \\-\\-compat=fio; none: ioscope's strict reading. Unset: fio's reading only when \
             invoked as fio.",
        ),
        (
            "IOSCOPE_CLOCK",
            "monotonic: time with clock_gettime(CLOCK_MONOTONIC) instead of the calibrated TSC.",
        ),
        (
            "NO_COLOR",
            "Set and not empty: no colour, unless \\-\\-color=always says otherwise.",
        ),
    ] {
        let _ = writeln!(s, ".TP\n.B {name}\n{what}");
    }
}

fn files(s: &mut String) {
    s.push_str(".SH FILES\n");
    for (path, what) in [
        (
            "/usr/share/bash-completion/completions/ioscope",
            "bash completion (also for the name fio); zsh's is _ioscope in \
             /usr/share/zsh/vendor-completions, fish's ioscope.fish in \
             /usr/share/fish/vendor_completions.d. ioscope completions SHELL prints them.",
        ),
        (
            "/usr/lib/ioscope/fio",
            "a link named fio to ioscope, for running fio command lines and harnesses \
             unchanged: put /usr/lib/ioscope first in PATH, or make it the system's fio with \
             /usr/lib/ioscope/fio-alternative on (an alternative that never replaces an \
             installed fio; off removes it).",
        ),
        (
            "/usr/share/doc/ioscope",
            "README, the command-line and option references, JSON schemas of ioscope's own \
             documents, example job and sweep files.",
        ),
    ] {
        let _ = writeln!(s, ".TP\n.B {}\n{what}", word(path));
    }
}
