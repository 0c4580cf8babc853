//! One job's thread: the I/O loop in fio's queue / commit / reap model, timing every
//! I/O with the calibrated clock and recording it into the job's statistics.
//!
//! Only the loop core ([`core`]: queue, submit, reap, drain) is generic over the
//! engine, so that every engine call is static; everything around it is compiled once,
//! on the loop's non-generic [`state::State`], one concern per file:
//!
//! | file | concern |
//! |---|---|
//! | `core.rs` | the rounds of the loop and every call into the engine |
//! | `burst.rs` | a job with nothing between its I/Os, in the engine's own loop (`peak`) |
//! | `state.rs` | the loop's state; limits, pacing, preparing units, completions |
//! | `units.rs` | the unit ring, the depth knobs, the time stamps |
//! | `extras.rs` | options that look at every I/O (replay times, serialize_overlap, flow, lockfile, latency_target, unlink_each_loop, write_iolog, think time) |
//! | `errors.rs` | the error policy (continue_on_error, ignore_error, exitall_on_error) |
//! | `checking.rs` | handing blocks to the verifier (in the job thread or on checker threads) |
//! | `finish.rs` | the end of the job: syncs, results, interim snapshots |
//!
//! Hot path rules: the units, their buffers, the pending list and all statistics are
//! allocated before the first I/O; per I/O there is no allocation, lock or syscall
//! beyond the engine's own and the clock. Features not every job uses sit behind one
//! flag (`State::extras`) and out of line.

mod burst;
mod checkers;
mod checking;
pub(crate) mod cmdprio;
mod core;
mod errors;
mod extras;
mod finish;
pub(crate) mod flow;
mod inputs;
mod io_ops;
mod nop_burst;
mod qdsearch;
mod rate;
mod state;
mod trims;
mod units;
pub(crate) mod verify;
mod verify_dump;
mod zones;

pub(crate) use inputs::{JobRun, Outcome};
