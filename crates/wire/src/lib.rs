//! fio 3.42's client/server wire format, as observed between fio's own client and
//! server (documentation and captured bytes; no fio code was read or copied).
//!
//! - [`addr`]: fio's `[ip:|ip6:]HOST[,PORT]` and `sock:PATH`; [`conn`]: a TCP or
//!   unix-domain connection.
//! - [`frame`]: the 24-byte header, its CRC-16/ARC checksums, and messages split into
//!   frames of at most 1024 payload bytes and joined again.
//! - [`msg`]: the commands (opcodes) and the small payloads: the handshake, text,
//!   start/stop, job files, ETA, job options, disk utilisation.
//! - [`stats`]: a job's statistics (fio's TS payload, 184 072 bytes plus tails) and a
//!   group's (GS), written from ioscope's [`ioscope_stats::JobResult`]; [`read`] reads
//!   them (and the other server messages) back, a job's steady state among them
//!   (`steady`).
//!
//! Every integer is little-endian; doubles travel as IEEE-754 binary64 in 16-byte slots.

pub mod addr;
pub mod conn;
pub mod ext;
pub mod frame;
pub mod iolog;
mod le;
pub mod msg;
pub mod read;
pub mod stats;
mod steady;
pub mod vstate;

/// The protocol version fio 3.42 sends in every frame (fio 3.33 sends 97); a peer
/// of another version is refused, as fio refuses it.
pub const VERSION: u16 = 120;

/// What can go wrong on the wire.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the peer speaks protocol version {got}, not fio 3.42's {VERSION}")]
    Version { got: u16 },
    #[error("bad header checksum (got {got:#06x}, wanted {want:#06x})")]
    HeaderCrc { got: u16, want: u16 },
    #[error("bad payload checksum for command {op} (got {got:#06x}, wanted {want:#06x})")]
    PayloadCrc { op: u16, got: u16, want: u16 },
    #[error("a frame of {0} payload bytes (at most 1024)")]
    FrameTooLarge(u32),
    #[error("a message of more than {0} bytes")]
    MessageTooLarge(usize),
    #[error("command {op}: {what}")]
    Malformed { op: u16, what: String },
}
