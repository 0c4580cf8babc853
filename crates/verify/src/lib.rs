//! fio-compatible data verification: the header fio writes into every verify chunk,
//! its checksums ([`checksum`]), the data fill and `verify_pattern` ([`pattern`]), how
//! a block is written and checked with fio's messages ([`block`]), and the verify
//! state file ([`state`]). Pure functions on buffers; the runner does the I/O.

pub mod block;
pub mod checksum;
pub mod crc;
pub mod hashes;
pub mod header;
pub mod pattern;
pub mod state;

pub use block::{check_zeros, Expect, Failure, Problem, Spec, Stamp};
pub use checksum::Method;
pub use crc::fio_crc32c;
pub use pattern::{random_fill, Pattern};
