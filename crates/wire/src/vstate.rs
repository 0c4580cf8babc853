//! Verification triggers and verify states between a client and its servers, as fio
//! 3.42's client and server exchange them (captured):
//!
//! - VTRIGGER from the client: `u16 length, command` (the remote trigger command, no
//!   NUL; length 0 for none).
//! - VTRIGGER from the server: `u64 jobs`, then each job's state record — a verify
//!   state file without its 24-byte header (version, size, checksum): `u32 depth,
//!   u32 pad, …`, 144 + 8·depth bytes. The client writes each as
//!   `<server>-<job>-<index>-verify.state`.
//! - SENDFILE from the server (verify_state_load): a 256-byte NUL-padded file name,
//!   the state file the client saved. The client answers SENDFILE with
//!   `u32 size, u32 error (an errno), data`.

use crate::msg::op;
use crate::WireError;

/// A state record's fixed part, before its in-flight slots.
const FIXED: usize = 144;
/// SENDFILE's name field.
const NAME: usize = 256;

fn malformed(op: u16, what: String) -> WireError {
    WireError::Malformed { op, what }
}

/// The client's VTRIGGER: the command the server runs once it has sent the states.
pub fn trigger(cmd: &str) -> Vec<u8> {
    let b = &cmd.as_bytes()[..cmd.len().min(u16::MAX as usize)];
    let mut out = (b.len() as u16).to_le_bytes().to_vec();
    out.extend_from_slice(b);
    out
}

/// A client's VTRIGGER read: its command (None when empty).
pub fn trigger_command(p: &[u8]) -> Result<Option<String>, WireError> {
    let n = p
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
        .ok_or_else(|| malformed(op::VTRIGGER, "no length".into()))?;
    let cmd = p
        .get(2..2 + n)
        .ok_or_else(|| malformed(op::VTRIGGER, format!("a {n}-byte command cut short")))?;
    let cmd = cmd.strip_suffix(&[0]).unwrap_or(cmd);
    Ok((!cmd.is_empty()).then(|| String::from_utf8_lossy(cmd).into_owned()))
}

/// The server's VTRIGGER: the jobs' state files (each with its header), in job order.
pub fn states(files: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (files.len() as u64).to_le_bytes().to_vec();
    for f in files {
        out.extend_from_slice(f.get(24..).unwrap_or_default());
    }
    out
}

/// A server's VTRIGGER read: each job's record.
pub fn state_records(p: &[u8]) -> Result<Vec<&[u8]>, WireError> {
    let bad = |w: String| malformed(op::VTRIGGER, w);
    let jobs = p
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .ok_or_else(|| bad("no job count".into()))?;
    let mut out = Vec::new();
    let mut off = 8;
    for i in 0..jobs {
        let depth = p
            .get(off..off + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| bad(format!("job {i} of {jobs} missing")))?;
        let len = depth
            .checked_mul(8)
            .and_then(|n| n.checked_add(FIXED))
            .ok_or_else(|| bad(format!("job {i}: depth {depth}")))?;
        let rec = p
            .get(off..off.saturating_add(len))
            .ok_or_else(|| bad(format!("job {i}: a record of depth {depth} cut short")))?;
        out.push(rec);
        off += len;
    }
    Ok(out)
}

/// A state file from a record: fio's header (version 5, size, crc32c) before it.
pub fn state_file(record: &[u8], crc32c: u32) -> Vec<u8> {
    let mut out = 5u64.to_le_bytes().to_vec();
    out.extend_from_slice(&(record.len() as u64).to_le_bytes());
    out.extend_from_slice(&u64::from(crc32c).to_le_bytes());
    out.extend_from_slice(record);
    out
}

/// The server's SENDFILE: the name of the state file it wants.
pub fn sendfile_request(name: &str) -> Vec<u8> {
    let mut b = vec![0u8; NAME];
    let n = name.len().min(NAME - 1);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    b
}

/// A server's SENDFILE read: the file name (up to its NUL).
pub fn sendfile_name(p: &[u8]) -> Result<String, WireError> {
    let f = p
        .get(..NAME)
        .ok_or_else(|| malformed(op::SENDFILE, format!("{} bytes, {NAME} expected", p.len())))?;
    let end = f.iter().position(|&c| c == 0).unwrap_or(NAME);
    Ok(String::from_utf8_lossy(&f[..end]).into_owned())
}

/// The client's SENDFILE answer: the file, or the errno reading it failed with.
pub fn sendfile_reply(file: Result<&[u8], i32>) -> Vec<u8> {
    let (data, err) = match file {
        Ok(d) => (d, 0),
        Err(e) => (&[][..], e as u32),
    };
    let mut b = (data.len() as u32).to_le_bytes().to_vec();
    b.extend_from_slice(&err.to_le_bytes());
    b.extend_from_slice(data);
    b
}

/// A client's SENDFILE answer read: the file's bytes, or its errno.
pub fn sendfile_data(p: &[u8]) -> Result<Result<Vec<u8>, u32>, WireError> {
    let word = |o: usize| {
        p.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (size, err) = word(0)
        .zip(word(4))
        .ok_or_else(|| malformed(op::SENDFILE, "shorter than its header".into()))?;
    if err != 0 {
        return Ok(Err(err));
    }
    let data = p
        .get(8..8 + size as usize)
        .ok_or_else(|| malformed(op::SENDFILE, format!("a {size}-byte file cut short")))?;
    Ok(Ok(data.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// fio 3.42's client asked for `touch /tmp/cap/remote-fired`; its server answered
    /// with one job's state (depth 1, 4006 writes, none in flight).
    #[test]
    fn fios_trigger_and_states() {
        let c = hex("1b00746f756368202f746d702f6361702f72656d6f74652d6669726564");
        assert_eq!(
            trigger_command(&c).unwrap().as_deref(),
            Some("touch /tmp/cap/remote-fired")
        );
        assert_eq!(trigger("touch /tmp/cap/remote-fired"), c);
        assert_eq!(trigger_command(&trigger("")).unwrap(), None);
        let s = hex(
            "01000000000000000100000000000000a60f0000000000000000000000000000\
             00000000000000005bcba8a49aaa2ceb30e25e48000000000000000000000000\
             0000000000000000000000000000000000000000000000007700000000000000\
             0000000000000000000000000000000000000000000000000000000000000000\
             000000000000000000000000000000000000000000000000ffffffffffffffff",
        );
        let recs = state_records(&s).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].len(), 152);
        assert_eq!(&recs[0][8..10], &[0xa6, 0x0f]);
        let file = state_file(recs[0], 7);
        assert_eq!(states(&[file]), s);
        assert!(state_records(&s[..100]).is_err());
        let mut huge = s.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(state_records(&huge)
            .unwrap_err()
            .to_string()
            .contains("cut short"));
    }

    #[test]
    fn sendfile_round_trips() {
        let r = sendfile_request("127.0.0.1-w-0-verify.state");
        assert_eq!(r.len(), 256);
        assert_eq!(sendfile_name(&r).unwrap(), "127.0.0.1-w-0-verify.state");
        assert_eq!(
            sendfile_data(&sendfile_reply(Ok(b"abc"))).unwrap(),
            Ok(b"abc".to_vec())
        );
        assert_eq!(sendfile_data(&sendfile_reply(Err(2))).unwrap(), Err(2));
        assert!(sendfile_data(&[1, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(sendfile_name(&[0; 10]).is_err());
    }
}
