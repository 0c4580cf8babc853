//! ioscope's I/O logs, shared by everything that writes or reads them: the kinds of
//! log and their file names ([`kind`]), ioscope's binary log of per-I/O records
//! ([`binary`]), fio's text lines made from it ([`text`]), fio's compressed logs
//! ([`fz`]) and reading fio's text logs back ([`read`]).
//!
//! The runner captures records and writes these files; `ioscope log`, `plot`,
//! `fairness`, MPI log gathering and sweeps read the names and formats from here.

pub mod binary;
pub mod fz;
pub mod kind;
pub mod read;
pub mod set;
pub mod text;

pub use kind::{binary_path, log_path, LogFormat, LogKind, KINDS};

/// A log file that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {why}", path.display())]
    Line {
        path: std::path::PathBuf,
        line: usize,
        why: String,
    },
}
