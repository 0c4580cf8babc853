//! ioscope report writers: fio 3.33-compatible normal, terse (v2–v5), JSON and JSON+
//! output from a [`RunResult`].
//!
//! [`render`] prints the requested formats in fio's order, whatever order they were
//! given in: terse lines first, then the JSON document, then the normal report (which
//! starts with a blank line). fio prints its header lines (one per job, `fio-3.33`,
//! `Starting N processes`) before the run only when the normal format is among the
//! requested ones; [`job_header_line`] formats the per-job one. [`render_cluster`]
//! reports a run on many hosts (MPI ranks) the way fio's client mode does.

pub mod calc;
pub mod clients;
pub mod cluster;
pub mod formats;
pub mod json;
pub mod normal;
pub mod num;
pub mod profiles;
pub mod run;
pub mod terse;

#[cfg(test)]
mod testdata;

pub use clients::{client_host_normal, render_clients, Endpoint};
pub use cluster::{ran_json_value, render_cluster, render_ran};
pub use formats::{interrupted_line, parse_formats, version_string, OutputFormat};
pub use json::write_json;
pub use normal::{job_header_line, write_normal};
pub use run::render;
pub use terse::write_terse;
