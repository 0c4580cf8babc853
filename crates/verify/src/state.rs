//! verify_state_save / verify_state_load: how far a writing job got, so that a later
//! verification (after Ctrl-C, SIGTERM or an I/O error stopped the job) checks exactly
//! the blocks that were written. Saved when the job ends, as fio does. fio 3.33's file layout (version 3, little-endian):
//!
//! ```text
//! 0   u64 version (3)        8  u64 record size      16 u64 fio-crc32c of the record
//! 24  u64 completions kept   32 u32 depth            36 u32 files
//! 40  u64 writes issued      48 u64 job index        56 u64 64-bit RNG (0/1)
//! 64  48 bytes RNG state     112 64 bytes job name   176 {u64 file, u64 offset} × depth·files
//! ```
//! Named `<prefix>-<job name>-<job index>-verify.state` (prefix `local`).

use crate::crc::fio_crc32c;

pub const VERSION: u64 = 3;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// Writes the job issued (its numberio counter).
    pub numberio: u64,
    /// The job's 0-based index (fio's thread number - 1).
    pub index: u64,
    pub name: String,
    pub depth: u32,
    pub files: u32,
    /// The last completed writes (file, offset), oldest first, at most depth·files.
    pub completions: Vec<(u64, u64)>,
}

/// `local-<name>-<index>-verify.state`.
pub fn file_name(name: &str, index: u64) -> String {
    format!("local-{name}-{index}-verify.state")
}

impl State {
    pub fn encode(&self) -> Vec<u8> {
        let slots = (self.depth.max(1) * self.files.max(1)) as usize;
        let mut rec = Vec::with_capacity(152 + 16 * slots);
        let kept = self.completions.len().min(slots);
        rec.extend((kept as u64).to_le_bytes());
        rec.extend(self.depth.to_le_bytes());
        rec.extend(self.files.to_le_bytes());
        rec.extend(self.numberio.to_le_bytes());
        rec.extend(self.index.to_le_bytes());
        rec.extend(0u64.to_le_bytes());
        rec.extend([0u8; 48]);
        let mut name = [0u8; 64];
        let n = self.name.len().min(63);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        rec.extend(name);
        let recent = &self.completions[self.completions.len() - kept..];
        for i in 0..slots {
            let (f, o) = recent.get(i).copied().unwrap_or((0, 0));
            rec.extend(f.to_le_bytes());
            rec.extend(o.to_le_bytes());
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
        let u32_at = |i: usize| -> Result<u32, String> {
            let s = b.get(i..i + 4).ok_or("the file is cut short")?;
            Ok(u32::from_le_bytes(s.try_into().map_err(|_| "short")?))
        };
        let version = u64_at(0)?;
        if version != VERSION {
            return Err(format!(
                "state file version {version}, this reads version {VERSION}"
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
        // The completion count comes from the file: it must fit the record read, or a
        // crafted count would size an allocation.
        let room = rec.len().saturating_sub(152) / 16;
        let kept = u64_at(24)?;
        let kept = usize::try_from(kept)
            .ok()
            .filter(|&k| k <= room)
            .ok_or_else(|| {
                format!("the state file lists {kept} completions but its record holds {room}")
            })?;
        let depth = u32_at(32)?;
        let files = u32_at(36)?;
        let name_bytes = b.get(112..176).ok_or("the file is cut short")?;
        let end = name_bytes.iter().position(|&c| c == 0).unwrap_or(64);
        let mut completions = Vec::with_capacity(kept);
        for i in 0..kept {
            completions.push((u64_at(176 + 16 * i)?, u64_at(184 + 16 * i)?));
        }
        Ok(State {
            numberio: u64_at(40)?,
            index: u64_at(48)?,
            name: String::from_utf8_lossy(&name_bytes[..end]).into_owned(),
            depth,
            files,
            completions,
        })
    }

    /// Whether write number `n` (0-based) at (file, offset) had completed: every write
    /// before the last `depth` did; of those, only the ones in the completion list.
    pub fn written(&self, n: u64, file: u64, offset: u64) -> bool {
        if n >= self.numberio {
            return false;
        }
        let window = u64::from(self.depth.max(1)) * u64::from(self.files.max(1));
        n + window < self.numberio || self.completions.contains(&(file, offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A completion count the record cannot hold, with a valid checksum, is refused
    /// before anything is sized by it (2^64−1 panicked on capacity overflow, 2^40
    /// aborted on a 16 TB allocation).
    #[test]
    fn crafted_completion_counts_are_refused() {
        let s = State {
            numberio: 6,
            index: 0,
            name: "w".into(),
            depth: 4,
            files: 1,
            completions: vec![(0, 53248), (0, 28672), (0, 24576), (0, 57344)],
        };
        let b = s.encode();
        for count in [u64::MAX, 1 << 40, 5] {
            let mut rec = b[24..].to_vec();
            rec[..8].copy_from_slice(&count.to_le_bytes());
            let mut crafted = b[..24].to_vec();
            crafted[16..24].copy_from_slice(&u64::from(fio_crc32c(&rec)).to_le_bytes());
            crafted.extend(rec);
            let e = State::decode(&crafted).unwrap_err();
            assert!(
                e.contains(&format!("lists {count} completions but its record holds 4")),
                "{e}"
            );
        }
        // A record size past the end of memory is a short file, not an overflow.
        let mut huge = b.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(State::decode(&huge)
            .unwrap_err()
            .contains("shorter than its record"));
    }

    #[test]
    fn round_trip_and_fios_sizes() {
        let s = State {
            numberio: 6,
            index: 0,
            name: "w".into(),
            depth: 4,
            files: 1,
            completions: vec![(0, 53248), (0, 28672), (0, 24576), (0, 57344)],
        };
        let b = s.encode();
        // fio 3.33: iodepth=4 gives a 216-byte record and a 240-byte file.
        assert_eq!(b.len(), 240);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 216);
        assert_eq!(State::decode(&b).unwrap(), s);
        let mut bad = b.clone();
        bad[50] ^= 1;
        assert!(State::decode(&bad).unwrap_err().contains("checksum"));
        assert!(State::decode(&b[..100]).is_err());
        assert_eq!(file_name("w", 1), "local-w-1-verify.state");
    }

    #[test]
    fn which_writes_had_completed() {
        let s = State {
            numberio: 10,
            depth: 2,
            files: 1,
            completions: vec![(0, 9 * 4096)],
            ..State::default()
        };
        assert!(s.written(0, 0, 0));
        assert!(s.written(7, 0, 7 * 4096));
        assert!(!s.written(8, 0, 8 * 4096), "in flight when it stopped");
        assert!(s.written(9, 0, 9 * 4096));
        assert!(!s.written(10, 0, 10 * 4096));
    }
}
