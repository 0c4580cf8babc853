//! Errors that name where the bad input is: file, line and option.

use std::fmt;
use std::path::PathBuf;

/// Where a piece of input came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    CommandLine,
    Builtin,
}

/// A position in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
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
