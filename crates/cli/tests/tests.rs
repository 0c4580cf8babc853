//! Every end-to-end test of the `ioscope` binary, in one test binary (as ripgrep's
//! `tests/tests.rs`): a failure in one module never keeps the others from running.
//! Each module tests one area; `common` holds the helpers and the prerequisite checks
//! (visible skips locally, failures under `CI=true`).

#[macro_use]
mod common;

mod architecture;
mod bad_input;
mod compare;
mod debug;
mod devices;
mod fairness;
mod faults;
mod fio_342;
mod fio_compare;
mod fio_parse;
mod flags;
mod golden;
mod history;
mod install;
mod job_options;
mod live;
mod logs;
mod logtools;
mod metadata;
mod mpi;
mod peak;
mod percentiles;
mod plot;
mod profiles;
mod quick;
mod replay;
mod reports;
mod rig;
mod robustness;
mod runs;
mod safety;
mod seeds;
mod server;
mod sweep;
mod triggers;
mod verify;
mod zbd;
mod zones;
