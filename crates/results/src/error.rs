use std::path::PathBuf;

/// Why a result file could not be read. Every variant names the file, so that a
/// message reaching the user says which of several inputs was wrong.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no JSON document (no '{{' found); write it with --output-format=json")]
    NoJson { path: PathBuf },
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: not an ioscope or fio result: {why}")]
    NotAResult { path: PathBuf, why: String },
}
