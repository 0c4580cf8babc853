use std::path::PathBuf;

/// Why a sweep could not be planned, run or read.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A problem at a line of the sweep file.
    #[error("{}:{line}: {msg}", path.display())]
    At {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    #[error("{}: {msg}", path.display())]
    Io { path: PathBuf, msg: String },
    /// A point's options, as the option parser reports them.
    #[error("point {point}: {msg}")]
    Point { point: String, msg: String },
    /// The target is not what the sweep file expects, or may not be touched.
    #[error("{0}")]
    Target(String),
    #[error("{0}")]
    Run(String),
}

/// `.at(path)`: an error about a file, as [`SweepError::Io`] naming it.
pub trait At<T> {
    fn at(self, path: impl AsRef<std::path::Path>) -> Result<T, SweepError>;
}

impl<T, E: std::fmt::Display> At<T> for Result<T, E> {
    fn at(self, path: impl AsRef<std::path::Path>) -> Result<T, SweepError> {
        self.map_err(|e| SweepError::Io {
            path: path.as_ref().to_path_buf(),
            msg: e.to_string(),
        })
    }
}
