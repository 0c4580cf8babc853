//! `verify_pattern` (fio's pattern syntax), and the random data of verify blocks.
//!
//! A pattern is elements written one after another: `0x…` hex bytes in the order typed
//! (an odd digit count gets a leading 0), a decimal number as the fewest little-endian
//! bytes that hold it (negative: 32-bit two's complement), `"text"`, `'file'` (its
//! contents), and `%o`, the block's offset as 8 little-endian bytes. At most 512 bytes.
//! The unit repeats across the block from its first byte.

/// The longest pattern fio takes.
pub const MAX_PATTERN: usize = 512;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub bytes: Vec<u8>,
    /// Where `%o` puts the block offset in the unit.
    pub offset_at: Vec<usize>,
}

impl Pattern {
    pub fn parse(s: &str) -> Result<Pattern, String> {
        let mut p = Pattern {
            bytes: Vec::new(),
            offset_at: Vec::new(),
        };
        let t = s.trim();
        let mut rest = t;
        while !rest.is_empty() {
            rest = p
                .element(rest)
                .map_err(|e| format!("verify_pattern={s}: {e}"))?;
            if p.bytes.len() > MAX_PATTERN {
                return Err(format!(
                    "verify_pattern={s}: longer than {MAX_PATTERN} bytes"
                ));
            }
        }
        if p.bytes.is_empty() {
            return Err(format!("verify_pattern={s}: empty"));
        }
        Ok(p)
    }

    /// Take one element from the front of `s`; what is left.
    fn element<'a>(&mut self, s: &'a str) -> Result<&'a str, String> {
        if let Some(r) = s.strip_prefix("%o") {
            self.offset_at.push(self.bytes.len());
            self.bytes.extend([0u8; 8]);
            return Ok(r);
        }
        if let Some(r) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            let n = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len());
            if n == 0 {
                return Err("'0x' without hex digits".into());
            }
            let mut digits = r[..n].to_string();
            if digits.len() % 2 == 1 {
                digits.insert(0, '0');
            }
            for i in (0..digits.len()).step_by(2) {
                let b = u8::from_str_radix(&digits[i..i + 2], 16).map_err(|e| e.to_string())?;
                self.bytes.push(b);
            }
            return Ok(&r[n..]);
        }
        if let Some(r) = s.strip_prefix('"') {
            let end = r
                .find('"')
                .ok_or("a '\"' string without its closing quote")?;
            self.bytes.extend(&r.as_bytes()[..end]);
            return Ok(&r[end + 1..]);
        }
        if let Some(r) = s.strip_prefix('\'') {
            let end = r
                .find('\'')
                .ok_or("a '…' file name without its closing quote")?;
            let data = std::fs::read(&r[..end]).map_err(|e| format!("'{}': {e}", &r[..end]))?;
            self.bytes.extend(data);
            return Ok(&r[end + 1..]);
        }
        let neg = s.starts_with('-');
        let digits = if neg { &s[1..] } else { s };
        let n = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        if n == 0 {
            return Err(format!(
                "cannot read '{s}' (hex 0x.., decimal, \"text\", 'file' or %o)"
            ));
        }
        let v: u64 = digits[..n]
            .parse()
            .map_err(|_| format!("'{}' is too large", &digits[..n]))?;
        if neg {
            let v = i32::try_from(v).map_err(|_| format!("-{v} does not fit 32 bits"))?;
            self.bytes.extend((-v).to_le_bytes());
        } else {
            let v = u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"))?;
            let len = (4 - (v.leading_zeros() / 8) as usize).max(1);
            self.bytes.extend(&v.to_le_bytes()[..len]);
        }
        Ok(&digits[n..])
    }

    /// The unit for a block at `offset` (with %o filled in).
    pub fn unit(&self, offset: u64) -> Vec<u8> {
        let mut u = self.bytes.clone();
        for &at in &self.offset_at {
            u[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        }
        u
    }

    /// Fill `buf` with the pattern of a block at `offset`, from the unit's first byte.
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        let unit = self.unit(offset);
        for (dst, src) in buf.chunks_mut(unit.len()).zip(std::iter::repeat(&unit)) {
            dst.copy_from_slice(&src[..dst.len()]);
        }
    }

    /// The first byte of `buf[start..]` that is not the pattern (the unit's phase is
    /// `start`: the pattern runs from the block's first byte), if any.
    pub fn mismatch(&self, buf: &[u8], start: usize, offset: u64) -> Option<(usize, u8, u8)> {
        let unit = self.unit(offset);
        (start..buf.len()).find_map(|i| {
            let want = unit[i % unit.len()];
            (buf[i] != want).then_some((i, buf[i], want))
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
    fn fios_pattern_syntax() {
        let p = |s: &str| Pattern::parse(s).map(|p| p.bytes);
        assert_eq!(p("0xdeadbeef").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0x123").unwrap(), [0x01, 0x23]);
        assert_eq!(p("255").unwrap(), [0xff]);
        assert_eq!(p("4660").unwrap(), [0x34, 0x12]);
        assert_eq!(p("65536").unwrap(), [0, 0, 1]);
        assert_eq!(p("0").unwrap(), [0]);
        assert_eq!(p("-12").unwrap(), [0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(p("\"ab\"\"cd\"").unwrap(), b"abcd");
        let full = Pattern::parse("0xff%o\"abcd\"-12").unwrap();
        assert_eq!(full.bytes.len(), 17);
        assert_eq!(full.offset_at, [1]);
        assert_eq!(full.unit(4096)[1..9], 4096u64.to_le_bytes());
        assert!(p("4294967296").unwrap_err().contains("does not fit"));
        assert!(p("\"ab\"*3").is_err());
        assert!(p("0x01,0x02").is_err());
        assert!(p("").unwrap_err().contains("empty"));
    }

    #[test]
    fn fill_and_mismatch() {
        let p = Pattern::parse("0xaabbcc").unwrap();
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
}
