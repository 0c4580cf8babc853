//! The bytes of a `verify_pattern` (its syntax is read by the option table:
//! `ioscope_options::VerifyPattern`), and the random data of verify blocks.
//!
//! A pattern's unit repeats across the block from its first byte; `%o` places the
//! block's offset (8 little-endian bytes) in it.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub bytes: Vec<u8>,
    /// Where `%o` puts the block offset in the unit.
    pub offset_at: Vec<usize>,
    /// verify_pattern_interval: the pattern starts again every this many bytes of the
    /// block, its `%o` the offset where it starts (0: once, from the block's start).
    pub interval: usize,
}

impl Pattern {
    /// The unit for a block at `offset` (with %o filled in).
    pub fn unit(&self, offset: u64) -> Vec<u8> {
        let mut u = self.bytes.clone();
        for &at in &self.offset_at {
            u[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        }
        u
    }

    /// Bytes from one start of the pattern to the next in a block of `len` bytes.
    fn step(&self, len: usize) -> usize {
        if self.interval > 0 {
            self.interval
        } else {
            len.max(1)
        }
    }

    /// Fill `buf` with the pattern of a block at `offset`, from the unit's first byte
    /// (again at each verify_pattern_interval).
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        let step = self.step(buf.len());
        for (k, seg) in buf.chunks_mut(step).enumerate() {
            let unit = self.unit(offset + (k * step) as u64);
            for (dst, src) in seg.chunks_mut(unit.len()).zip(std::iter::repeat(&unit)) {
                dst.copy_from_slice(&src[..dst.len()]);
            }
        }
    }

    /// The first byte of `buf[start..]` that is not the pattern (the unit's phase is
    /// `start`: the pattern runs from the block's first byte), if any.
    pub fn mismatch(&self, buf: &[u8], start: usize, offset: u64) -> Option<(usize, u8, u8)> {
        self.mismatch_from(buf.get(start..).unwrap_or(&[]), start, offset)
    }

    /// The first byte of `data` that is not the pattern, where `data` starts at byte
    /// `start` of the block; the position reported is the block's.
    pub fn mismatch_from(&self, data: &[u8], start: usize, offset: u64) -> Option<(usize, u8, u8)> {
        let step = self.step(start + data.len());
        let mut seg = usize::MAX;
        let mut unit = Vec::new();
        data.iter().enumerate().find_map(|(i, &b)| {
            let pos = start + i;
            if pos / step != seg {
                seg = pos / step;
                unit = self.unit(offset + (seg * step) as u64);
            }
            let want = unit[(pos - seg * step) % unit.len()];
            (b != want).then_some((pos, b, want))
        })
    }
}

/// fio's random fill from a seed: four interleaved 64-bit lanes starting at seed × 1,
/// 2, 3, 5, each multiplied by a golden-ratio constant after it writes a word; the tail
/// that is not a multiple of 32 bytes continues from lane 0. The same seed gives the
/// same bytes fio writes.
pub fn random_fill(buf: &mut [u8], seed: u64) {
    const MUL: u64 = 0x61C8_8646_80B5_83EB;
    let mut lanes = [1u64, 2, 3, 5].map(|k| seed.wrapping_mul(k));
    let whole = buf.len() / 32 * 32;
    let (body, tail) = buf.split_at_mut(whole);
    for chunk in body.chunks_exact_mut(32) {
        for (w, lane) in chunk.chunks_exact_mut(8).zip(lanes.iter_mut()) {
            w.copy_from_slice(&lane.to_le_bytes());
            *lane = lane.wrapping_mul(MUL);
        }
    }
    let mut v = lanes[0];
    for w in tail.chunks_mut(8) {
        w.copy_from_slice(&v.to_le_bytes()[..w.len()]);
        v = v.wrapping_mul(MUL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_goes_where_percent_o_was() {
        let p = Pattern {
            bytes: vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0, b'a'],
            offset_at: vec![1],
            interval: 0,
        };
        assert_eq!(p.unit(4096)[1..9], 4096u64.to_le_bytes());
        assert_eq!(p.unit(4096)[9], b'a');
    }

    #[test]
    fn fill_and_mismatch() {
        let p = Pattern {
            bytes: vec![0xaa, 0xbb, 0xcc],
            offset_at: vec![],
            interval: 0,
        };
        let mut b = [0u8; 8];
        p.fill(&mut b, 0);
        assert_eq!(b, [0xaa, 0xbb, 0xcc, 0xaa, 0xbb, 0xcc, 0xaa, 0xbb]);
        assert_eq!(p.mismatch(&b, 0, 0), None);
        b[4] = 0;
        assert_eq!(p.mismatch(&b, 2, 0), Some((4, 0, 0xbb)));
    }

    /// The bytes fio 3.33 wrote after the 44-byte crc32c header in its first block with
    /// seed 0x00A4CC01C509543C (offset 0x38 of the hex dump: 64 23 73 04 db f5 cb bc).
    #[test]
    fn random_fill_is_fios() {
        let mut b = vec![0u8; 4096];
        random_fill(&mut b, 0x00A4_CC01_C509_543C);
        assert_eq!(
            b[0x38..0x40],
            [0x64, 0x23, 0x73, 0x04, 0xdb, 0xf5, 0xcb, 0xbc]
        );
        let mut odd = vec![0u8; 45];
        random_fill(&mut odd, 7);
        assert_eq!(odd[..8], 7u64.to_le_bytes());
    }

    #[test]
    fn an_interval_starts_the_pattern_again_with_its_own_offset() {
        let p = Pattern {
            bytes: vec![0xee, 0, 0, 0, 0, 0, 0, 0, 0],
            offset_at: vec![1],
            interval: 16,
        };
        let mut b = [0u8; 40];
        p.fill(&mut b, 4096);
        assert_eq!(b[0], 0xee);
        assert_eq!(b[1..9], 4096u64.to_le_bytes());
        assert_eq!(b[9], 0xee, "the unit repeats inside an interval");
        assert_eq!(b[16], 0xee);
        assert_eq!(
            b[17..25],
            4112u64.to_le_bytes(),
            "the second interval's offset"
        );
        assert_eq!(b[33..40], 4128u64.to_le_bytes()[..7]);
        assert_eq!(p.mismatch(&b, 0, 4096), None);
        assert_eq!(p.mismatch_from(&b[20..], 20, 4096), None);
        b[30] ^= 1;
        assert_eq!(p.mismatch(&b, 0, 4096).map(|m| m.0), Some(30));
    }
}
