//! ioscope sweeps: parameter matrices over fio options, run through the runner as a
//! library, with a journal that makes them resumable, preconditioning and SNIA steady
//! state, and every point's result kept as a JSON+ file.
//!
//! [`file`] reads the sweep file (TOML); [`matrix`] expands it into [`matrix::Point`]s;
//! [`identity`] says which disk the target is; [`journal`] records what ran;
//! [`precondition`] fills the device and runs steady-state rounds; [`execute`] runs a
//! campaign; [`campaign`] reads a run directory (or any directory of results) back.

pub mod axes;
pub mod campaign;
pub mod error;
pub mod execute;
pub mod file;
pub mod identity;
pub mod import;
pub mod journal;
pub mod matrix;
pub mod opt;
pub mod precondition;
pub mod profiles;
pub mod ready;
pub mod report;
pub mod warmup;

pub use error::SweepError;
pub use execute::{Campaign, Outcome, Position, Progress, Settings, Summary};
pub use file::SweepFile;
pub use matrix::{expand, Point};
