//! What can go wrong with a history database, each naming the file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{path}: not an ioscope history database ({why}): refused, left as it is")]
    Foreign { path: PathBuf, why: String },
    #[error(
        "{path}: written by a newer ioscope (history schema {found}; this one knows up to \
         {known}): refused, left as it is"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("{path}: {why}")]
    Unusable { path: PathBuf, why: String },
    #[error("{path}: {source}")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Selector(String),
    #[error("no history database: set IOSCOPE_HISTORY, or HOME for the default place")]
    NoDefault,
}
