//! Errors that name where the bad input is: file, line and option.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// Where a piece of input came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    File(PathBuf),
    CommandLine,
    Builtin,
    /// A job of fio's built-in profile of this name (`--profile`).
    Profile(String),
}

/// A position in the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loc {
    pub source: Source,
    /// 1-based line in a file, or argv index on the command line.
    pub line: usize,
}

impl Loc {
    pub fn file(path: impl Into<PathBuf>, line: usize) -> Self {
        Loc {
            source: Source::File(path.into()),
            line,
        }
    }
    pub fn cli(index: usize) -> Self {
        Loc {
            source: Source::CommandLine,
            line: index,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::File(p) => write!(f, "{}:{}", p.display(), self.line),
            Source::CommandLine => write!(f, "command line (argument {})", self.line),
            Source::Builtin => write!(f, "built-in job"),
            Source::Profile(p) => write!(f, "--profile={p}"),
        }
    }
}

/// An error in options or job files.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    /// A problem with one option's value or name.
    #[error("{loc}: option '{option}': {msg}")]
    Option {
        loc: Loc,
        option: String,
        msg: String,
    },
    /// A problem with the input at a position (syntax, include, …).
    #[error("{loc}: {msg}")]
    At { loc: Loc, msg: String },
    /// A file that cannot be read.
    #[error("{path}: {msg}")]
    File { path: PathBuf, msg: String },
    /// Anything without a position.
    #[error("{0}")]
    Other(String),
    /// Several errors, one per line (every bad option of a job file, up to a limit),
    /// and how many more there were.
    #[error("{}", join_lines(.0, *.1))]
    Many(Vec<OptionsError>, usize),
}

/// At most this many errors are reported at once.
pub const MAX_ERRORS: usize = 20;

fn join_lines(errs: &[OptionsError], more: usize) -> String {
    let mut lines: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    if more > 0 {
        lines.push(format!("… and {more} more errors"));
    }
    lines.join("\n")
}

/// Collects errors so that one run reports all of them (up to [`MAX_ERRORS`]).
#[derive(Debug, Default)]
pub struct Errors {
    list: Vec<OptionsError>,
    more: usize,
}

impl Errors {
    /// Keep `e` (once: an error inherited by several jobs is reported once).
    pub fn push(&mut self, e: OptionsError) {
        match e {
            OptionsError::Many(v, more) => {
                v.into_iter().for_each(|e| self.push(e));
                self.more += more;
            }
            e => {
                let text = e.to_string();
                if self.list.iter().any(|x| x.to_string() == text) {
                    return;
                }
                if self.list.len() < MAX_ERRORS {
                    self.list.push(e);
                } else {
                    self.more += 1;
                }
            }
        }
    }

    /// Keep the error of `r`, if any; its value otherwise.
    pub fn take<T>(&mut self, r: Result<T, OptionsError>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Ok when nothing was collected; else one error, or all of them.
    pub fn finish(mut self) -> Result<(), OptionsError> {
        match self.list.len() {
            0 => Ok(()),
            1 if self.more == 0 => Err(self.list.remove(0)),
            _ => Err(OptionsError::Many(self.list, self.more)),
        }
    }
}

impl OptionsError {
    pub fn option(loc: &Loc, option: &str, msg: impl Into<String>) -> Self {
        OptionsError::Option {
            loc: loc.clone(),
            option: option.to_string(),
            msg: msg.into(),
        }
    }
    pub fn at(loc: &Loc, msg: impl Into<String>) -> Self {
        OptionsError::At {
            loc: loc.clone(),
            msg: msg.into(),
        }
    }
}
