//! Frames: a 24-byte header, then at most [`MAX_FRAME`] payload bytes. A longer
//! message is sent as several frames of one opcode and tag, each but the last with
//! the "more" flag set.
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | u16 | protocol version ([`crate::VERSION`]) |
//! | 2 | u16 | opcode |
//! | 4 | u32 | flags (bit 0: more fragments follow) |
//! | 8 | u64 | tag (echoed in replies to PROBE and SEND_ETA) |
//! | 16 | u32 | this frame's payload length |
//! | 20 | u16 | CRC-16/ARC of bytes 0..20 |
//! | 22 | u16 | CRC-16/ARC of the payload (0 when empty) |

use crate::{WireError, VERSION};
use std::io::{Read, Write};

pub const HEADER: usize = 24;
/// Payload bytes per frame: fio's client drops a connection that sends more.
pub const MAX_FRAME: usize = 1024;
/// The longest message accepted (a job's statistics with every tail is ~0.5 MB; a
/// job file is small): a peer cannot make us hold more.
pub const MAX_MESSAGE: usize = 64 << 20;
const MORE: u32 = 1;

/// One whole message: opcode, tag and the joined payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub op: u16,
    pub tag: u64,
    pub payload: Vec<u8>,
}

/// CRC-16/ARC: polynomial 0x8005 reflected, initial 0, no final xor.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xA001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

fn header(op: u16, flags: u32, tag: u64, payload: &[u8]) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..2].copy_from_slice(&VERSION.to_le_bytes());
    h[2..4].copy_from_slice(&op.to_le_bytes());
    h[4..8].copy_from_slice(&flags.to_le_bytes());
    h[8..16].copy_from_slice(&tag.to_le_bytes());
    h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    let hc = crc16(&h[..20]);
    h[20..22].copy_from_slice(&hc.to_le_bytes());
    let pc = if payload.is_empty() {
        0
    } else {
        crc16(payload)
    };
    h[22..24].copy_from_slice(&pc.to_le_bytes());
    h
}

/// Send one message, split into frames.
pub fn send(w: &mut impl Write, op: u16, tag: u64, payload: &[u8]) -> Result<(), WireError> {
    let mut out = Vec::with_capacity(payload.len() + HEADER * (payload.len() / MAX_FRAME + 1));
    let mut chunks = payload.chunks(MAX_FRAME).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&header(op, 0, tag, &[]));
    }
    while let Some(c) = chunks.next() {
        let flags = if chunks.peek().is_some() { MORE } else { 0 };
        out.extend_from_slice(&header(op, flags, tag, c));
        out.extend_from_slice(c);
    }
    w.write_all(&out)?;
    w.flush()?;
    Ok(())
}

/// Read one whole message (its frames joined); `None` at a clean end of the stream
/// before a new message.
pub fn receive(r: &mut impl Read) -> Result<Option<Message>, WireError> {
    let mut payload = Vec::new();
    let mut first: Option<(u16, u64)> = None;
    loop {
        let mut h = [0u8; HEADER];
        if !read_full(r, &mut h, first.is_none())? {
            return Ok(None);
        }
        let le16 = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let version = le16(0);
        if version != VERSION {
            return Err(WireError::Version { got: version });
        }
        let want = crc16(&h[..20]);
        if le16(20) != want {
            return Err(WireError::HeaderCrc {
                got: le16(20),
                want,
            });
        }
        let op = le16(2);
        let flags = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&h[8..16]);
        let tag = u64::from_le_bytes(tag);
        let len = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        if len as usize > MAX_FRAME {
            return Err(WireError::FrameTooLarge(len));
        }
        if payload.len() + len as usize > MAX_MESSAGE {
            return Err(WireError::MessageTooLarge(MAX_MESSAGE));
        }
        let start = payload.len();
        payload.resize(start + len as usize, 0);
        read_full(r, &mut payload[start..], false)?;
        let got = crc16(&payload[start..]);
        if len > 0 && le16(22) != got {
            return Err(WireError::PayloadCrc {
                op,
                got: le16(22),
                want: got,
            });
        }
        first.get_or_insert((op, tag));
        if flags & MORE == 0 {
            let (op, tag) = first.unwrap_or((op, tag));
            return Ok(Some(Message { op, tag, payload }));
        }
    }
}

/// Fill `buf`; `false` when the stream ended before its first byte and `eof_ok`.
fn read_full(r: &mut impl Read, buf: &mut [u8], eof_ok: bool) -> Result<bool, WireError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 && eof_ok => return Ok(false),
            Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_arc_check_value() {
        // The catalogue's check value of CRC-16/ARC over "123456789".
        assert_eq!(crc16(b"123456789"), 0xBB3D);
    }

    #[test]
    fn long_messages_split_and_join() {
        let payload: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let mut wire = Vec::new();
        send(&mut wire, 6, 7, &payload).unwrap();
        send(&mut wire, 8, 9, &[]).unwrap();
        // 3 frames (1024 + 1024 + 452) and an empty one.
        assert_eq!(wire.len(), 2500 + 4 * HEADER);
        assert_eq!(u32::from_le_bytes(wire[4..8].try_into().unwrap()), MORE);
        let mut r = &wire[..];
        let m = receive(&mut r).unwrap().unwrap();
        assert_eq!((m.op, m.tag, m.payload), (6, 7, payload));
        let m = receive(&mut r).unwrap().unwrap();
        assert_eq!((m.op, m.tag, m.payload.len()), (8, 9, 0));
        assert!(receive(&mut r).unwrap().is_none());
    }

    #[test]
    fn a_foreign_version_or_a_bad_checksum_is_refused() {
        let mut wire = Vec::new();
        send(&mut wire, 10, 1, b"x").unwrap();
        let mut bad = wire.clone();
        bad[0] = 97;
        assert!(matches!(
            receive(&mut &bad[..]),
            Err(WireError::Version { got: 97 })
        ));
        let mut bad = wire.clone();
        bad[HEADER] ^= 1;
        assert!(matches!(
            receive(&mut &bad[..]),
            Err(WireError::PayloadCrc { .. })
        ));
        let mut bad = wire;
        bad[16] = 0xff;
        bad[17] = 0x7f;
        assert!(matches!(
            receive(&mut &bad[..]),
            Err(WireError::HeaderCrc { .. })
        ));
    }
}
