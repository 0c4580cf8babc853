//! verify_state_save / verify_state_load: how far a writing job got, so that a later
//! verification (after a trigger, Ctrl-C, SIGTERM or an I/O error stopped the job)
//! checks exactly the writes that had completed. fio 3.42's file layout (version 5,
//! little-endian), learned from its files and `verify-state.h`'s documented struct:
//!
//! ```text
//! 0   u64 version (5)        8   u64 record size (144 + 8·depth)   16 u64 fio-crc32c of the record
//! 24  u32 depth, u32 pad     32  u64 writes issued                 40 u64 job index
//! 48  u64 64-bit RNG (0/1)   56  48 bytes RNG state (unused)       104 64 bytes job name
//! 168 u64 × depth: the write numbers in flight when it was saved (u64::MAX: none)
//! ```
//! Verification stops at the first write that was in flight or not yet issued, as
//! fio 3.42's does. Named `<prefix>-<job name>-<job index>-verify.state` (prefix
//! `local`; '/' in the name becomes '.').

use crate::crc::fio_crc32c;

pub const VERSION: u64 = 5;
/// An empty in-flight slot.
pub const NONE: u64 = u64::MAX;
/// The record's fixed part, before the in-flight slots.
const FIXED: usize = 144;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// Writes the job issued (its numberio counter).
    pub numberio: u64,
    /// The job's 0-based index (fio's thread number - 1).
    pub index: u64,
    pub name: String,
    /// The job's I/O depth: the number of in-flight slots.
    pub depth: u32,
    /// The write numbers issued and not completed when the state was saved.
    pub inflight: Vec<u64>,
}

/// `local-<name>-<index>-verify.state`.
pub fn file_name(name: &str, index: u64) -> String {
    prefixed_name("local", name, index)
}

/// `<prefix>-<name>-<index>-verify.state`, '/' in the name turned into '.'.
pub fn prefixed_name(prefix: &str, name: &str, index: u64) -> String {
    format!("{prefix}-{}-{index}-verify.state", name.replace('/', "."))
}

impl State {
    pub fn encode(&self) -> Vec<u8> {
        let depth = self.depth.max(1).max(self.inflight.len() as u32);
        let mut rec = Vec::with_capacity(FIXED + 8 * depth as usize);
        rec.extend(depth.to_le_bytes());
        rec.extend(0u32.to_le_bytes());
        rec.extend(self.numberio.to_le_bytes());
        rec.extend(self.index.to_le_bytes());
        rec.extend(0u64.to_le_bytes());
        rec.extend([0u8; 48]);
        let mut name = [0u8; 64];
        let n = self.name.len().min(63);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        rec.extend(name);
        for i in 0..depth as usize {
            rec.extend(self.inflight.get(i).copied().unwrap_or(NONE).to_le_bytes());
        }
        let mut out = Vec::with_capacity(24 + rec.len());
        out.extend(VERSION.to_le_bytes());
        out.extend((rec.len() as u64).to_le_bytes());
        out.extend(u64::from(fio_crc32c(&rec)).to_le_bytes());
        out.extend(rec);
        out
    }

    pub fn decode(b: &[u8]) -> Result<State, String> {
        let u64_at = |i: usize| -> Result<u64, String> {
            let s = b.get(i..i + 8).ok_or("the file is cut short")?;
            Ok(u64::from_le_bytes(s.try_into().map_err(|_| "short")?))
        };
        let version = u64_at(0)?;
        if version != VERSION {
            let from = if version == 3 { " (fio 3.33's)" } else { "" };
            return Err(format!(
                "state file version {version}{from}, this reads version {VERSION} (fio 3.42's)"
            ));
        }
        let size = u64_at(8)?;
        let rec = usize::try_from(size)
            .ok()
            .and_then(|n| b.get(24..24usize.checked_add(n)?))
            .ok_or("the file is shorter than its record")?;
        if u64::from(fio_crc32c(rec)) != u64_at(16)? {
            return Err("the state file's checksum does not match (damaged)".into());
        }
        // The depth comes from the file: it must fit the record read, or a crafted
        // depth would size an allocation.
        let room = rec.len().saturating_sub(FIXED) / 8;
        let depth = rec
            .get(..4)
            .map_or(0, |d| u32::from_le_bytes([d[0], d[1], d[2], d[3]]));
        if depth as usize > room || rec.len() < FIXED {
            return Err(format!(
                "the state file lists {depth} writes in flight but its record holds {room}"
            ));
        }
        let name_bytes = b.get(104..168).ok_or("the file is cut short")?;
        let end = name_bytes.iter().position(|&c| c == 0).unwrap_or(64);
        let mut inflight = Vec::new();
        for i in 0..depth as usize {
            let n = u64_at(168 + 8 * i)?;
            if n != NONE {
                inflight.push(n);
            }
        }
        Ok(State {
            numberio: u64_at(32)?,
            index: u64_at(40)?,
            name: String::from_utf8_lossy(&name_bytes[..end]).into_owned(),
            depth,
            inflight,
        })
    }

    /// The first write a verification must not check: the first one that was in
    /// flight, or the first not issued. Writes before it had all completed.
    pub fn stop_at(&self) -> u64 {
        self.inflight.iter().copied().fold(self.numberio, u64::min)
    }

    /// fio's note when verification stops at write `n` (it prints it to stdout).
    pub fn stop_note(&self, n: u64) -> String {
        match self.inflight.contains(&n) {
            true => format!("Stop verify because seq {n} was an inflight write"),
            false => format!("Stop verify because seq {n} >= {}", self.numberio),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file fio 3.42 wrote for job `w/x` (libaio, iodepth=4), stopped by
    /// `--trigger-timeout` with writes 28825–28828 in flight.
    const FIO_342: &str = "0500000000000000b000000000000000a8a1861f000000000400000000000000\
        9d700000000000000000000000000000000000000000000078bc0a363576348d\
        4e3f338d00000000000000000000000000000000000000000000000000000000\
        0000000000000000772f78000000000000000000000000000000000000000000\
        0000000000000000000000000000000000000000000000000000000000000000\
        000000000000000099700000000000009a700000000000009b70000000000000\
        9c70000000000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn reads_fios_file_and_stops_at_its_first_write_in_flight() {
        let s = State::decode(&hex(FIO_342)).unwrap();
        assert_eq!(s.numberio, 28829);
        assert_eq!((s.index, s.depth, s.name.as_str()), (0, 4, "w/x"));
        assert_eq!(s.inflight, vec![28825, 28826, 28827, 28828]);
        assert_eq!(s.stop_at(), 28825);
        assert_eq!(
            s.stop_note(28825),
            "Stop verify because seq 28825 was an inflight write"
        );
        // The same fields encode to fio's bytes but for its (unused) RNG state.
        let mut ours = s.encode();
        let mut fios = hex(FIO_342);
        assert_eq!(ours.len(), fios.len());
        fios[56..104].fill(0);
        ours[16..24].fill(0);
        fios[16..24].fill(0);
        assert_eq!(ours, fios);
        assert_eq!(prefixed_name("local", "w/x", 0), "local-w.x-0-verify.state");
    }

    #[test]
    fn round_trip_and_fios_sizes() {
        let s = State {
            numberio: 6,
            index: 1,
            name: "w".into(),
            depth: 8,
            inflight: vec![5],
        };
        let b = s.encode();
        // fio 3.42: iodepth=8 gives a 208-byte record and a 232-byte file.
        assert_eq!(b.len(), 232);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 208);
        assert_eq!(State::decode(&b).unwrap(), s);
        assert_eq!(s.stop_at(), 5);
        let done = State {
            inflight: vec![],
            ..s.clone()
        };
        assert_eq!(done.stop_at(), 6);
        assert_eq!(done.stop_note(6), "Stop verify because seq 6 >= 6");
        let mut bad = b.clone();
        bad[50] ^= 1;
        assert!(State::decode(&bad).unwrap_err().contains("checksum"));
        assert!(State::decode(&b[..100]).is_err());
        assert_eq!(file_name("w", 1), "local-w-1-verify.state");
    }

    /// A depth the record cannot hold, with a valid checksum, is refused before
    /// anything is sized by it; fio 3.33's version 3 is named.
    #[test]
    fn crafted_depths_and_old_versions_are_refused() {
        let b = State {
            depth: 4,
            ..State::default()
        }
        .encode();
        for depth in [u32::MAX, 1 << 30, 5] {
            let mut rec = b[24..].to_vec();
            rec[..4].copy_from_slice(&depth.to_le_bytes());
            let mut crafted = b[..24].to_vec();
            crafted[16..24].copy_from_slice(&u64::from(fio_crc32c(&rec)).to_le_bytes());
            crafted.extend(rec);
            let e = State::decode(&crafted).unwrap_err();
            assert!(
                e.contains(&format!(
                    "lists {depth} writes in flight but its record holds 4"
                )),
                "{e}"
            );
        }
        let mut huge = b.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(State::decode(&huge)
            .unwrap_err()
            .contains("shorter than its record"));
        let mut v3 = b.clone();
        v3[0] = 3;
        assert_eq!(
            State::decode(&v3).unwrap_err(),
            "state file version 3 (fio 3.33's), this reads version 5 (fio 3.42's)"
        );
    }
}
