//! ioscope options: the one option table, fio job-file and command-line parsing,
//! and the validated job specifications the runner consumes.
//!
//! Data flow: argv + job files → [`cli::parse_args`] / [`jobfile::read_job_file`]
//! → [`spec::build`] → [`JobSet`] of [`JobSpec`]s.

pub mod cli;
pub mod compat;
pub mod def;
mod derived;
pub mod engines;
pub mod error;
pub mod flags;
pub mod help;
pub mod jobfile;
pub mod profile;
pub mod spec;
pub mod structured;
pub mod suggest;
pub mod table;
pub mod types;
pub mod units;

pub use def::{Category, Kind, OptionDef, Status};
pub use error::{Loc, OptionsError, Source};
pub use spec::{JobSet, JobSpec};
pub use structured::*;
pub use table::{JobOptions, OPTIONS};
pub use types::*;
