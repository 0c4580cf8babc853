//! A verify block: how a write buffer is filled (data, then a header and checksum per
//! chunk of `verify_interval` bytes, optionally moved to `verify_offset`), and how a
//! block read back is checked, in fio's order, with fio's messages.

use crate::checksum::Method;
use crate::header::{Header, Layout, MAGIC};
use crate::pattern::{random_fill, Pattern};

/// How a job's blocks are verified.
#[derive(Clone, Debug)]
pub struct Spec {
    pub method: Method,
    /// verify_interval: a header every this many bytes (0 or more than the block: one).
    pub interval: u32,
    /// verify_offset: the header is swapped to this offset in each chunk.
    pub verify_offset: u32,
    pub pattern: Option<Pattern>,
    /// The job's number (1-based), written in each header.
    pub thread: u16,
    /// The header layout written (either is read: each header says which it is).
    pub layout: Layout,
}

/// What the writer puts in a block's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    pub offset: u64,
    pub seed: u64,
    pub numberio: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
}

/// What the reader expects of a block; `None` fields are not checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    pub offset: u64,
    pub numberio: Option<u64>,
    pub seed: Option<u64>,
    /// Check the seed and write number only in blocks whose header names this job
    /// (verify_only: another job's are not predictable).
    pub own_only: bool,
}

/// What was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A header field: fio's text ("bad magic header 0, wanted acca").
    Header(String),
    /// The checksum over the data: stored (expected) against computed (received).
    Checksum {
        expected: Vec<u8>,
        received: Vec<u8>,
    },
    /// A byte that is not the pattern, at this position of the block.
    Pattern { at: usize, got: u8, want: u8 },
    /// A trimmed block that does not read back as zeros (first non-zero byte).
    NotZero { at: usize },
}

/// A block that failed verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub problem: Problem,
    pub method: Method,
    pub chunk_offset: u64,
    pub chunk_len: u32,
    pub block_offset: u64,
    pub block_len: u32,
    /// The type the header on the media names (when there is a header).
    pub media_type: Option<u16>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Failure {
    /// fio's lines for this failure (it prints them on stderr); `flags` is fio's io_u
    /// flag word (0x88 for verify-phase reads, 0x8 for reads of read jobs).
    pub fn lines(&self, file: &str, flags: u32) -> Vec<String> {
        let at = format!(
            "at file {file} offset {}, length {}",
            self.chunk_offset, self.chunk_len
        );
        let req = format!(
            "(requested block: offset={}, length={}",
            self.block_offset, self.block_len
        );
        let mut out = Vec::new();
        match &self.problem {
            Problem::NotZero { at: pos } => {
                out.push(format!(
                    "trim: verify failed at file {file} offset {}, length {}, block offset {pos}",
                    self.block_offset, self.block_len
                ));
                return out;
            }
            Problem::Header(what) => {
                out.push(format!("verify: {what} {at} {req})"));
                return out;
            }
            Problem::Pattern { at: pos, got, want } => {
                let bad = (got ^ want).count_ones();
                out.push(format!(
                    "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {bad}"
                ));
                let data_start = self.method.hdr_len(Layout::default());
                out.push(format!(
                    "fio: bad pattern block offset {}",
                    pos.saturating_sub(data_start)
                ));
                out.push(format!(
                    "{}: verify failed {at} {req}, flags={flags:x})",
                    self.method.name()
                ));
            }
            Problem::Checksum { expected, received } => {
                out.push(format!(
                    "{}: verify failed {at} {req}, flags={flags:x})",
                    self.method.name()
                ));
                out.push(format!("       Expected CRC: {}", hex(expected)));
                out.push(format!("       Received CRC: {}", hex(received)));
            }
        }
        if let Some(media) = self.media_type.filter(|&m| m != self.method.type_code()) {
            out.push(format!(
                "fio: verify type mismatch ({media} media, {} given)",
                self.method.type_code()
            ));
        }
        out
    }

    /// One line for the job's error text.
    pub fn summary(&self, file: &str) -> String {
        match &self.problem {
            Problem::Header(_) | Problem::NotZero { .. } => self.lines(file, 0).remove(0),
            _ => format!(
                "{}: verify failed at file {file} offset {}, length {}",
                self.method.name(),
                self.chunk_offset,
                self.chunk_len
            ),
        }
    }

    /// A header that was not what it should be (fio's dump is `.hdr_fail` then).
    pub fn is_header(&self) -> bool {
        matches!(self.problem, Problem::Header(_))
    }
}

/// A trimmed block must read back as zeros (trim_verify_zero).
pub fn check_zeros(method: Method, buf: &[u8], offset: u64) -> Result<(), Failure> {
    match buf.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(at) => Err(Failure {
            problem: Problem::NotZero { at },
            method,
            chunk_offset: offset,
            chunk_len: buf.len() as u32,
            block_offset: offset,
            block_len: buf.len() as u32,
            media_type: None,
        }),
    }
}

impl Spec {
    /// Bytes per chunk of a block of `len` bytes.
    pub fn chunk_len(&self, len: usize) -> usize {
        match self.interval as usize {
            i if i > 0 && i < len => i,
            _ => len,
        }
    }

    /// Header and trailer of a chunk written by this spec.
    pub fn hdr_len(&self) -> usize {
        self.method.hdr_len(self.layout)
    }

    /// The smallest block the method can verify (header and trailer must fit).
    pub fn min_block(&self) -> usize {
        self.hdr_len().max(1)
    }

    /// The data a read of `offset` expects, when it depends on the offset alone
    /// (verify=pattern, no header): what `verify_mode=compare` sends the device to
    /// compare with.
    pub fn fill_expected(&self, buf: &mut [u8], offset: u64) {
        let st = Stamp {
            offset,
            ..Default::default()
        };
        self.fill(buf, &st);
    }

    /// Fill a write buffer: data, then each chunk's header and checksum.
    pub fn fill(&self, buf: &mut [u8], st: &Stamp) {
        match &self.pattern {
            Some(p) => p.fill(buf, st.offset),
            None => random_fill(buf, st.seed),
        }
        if !self.method.has_header() {
            return;
        }
        let cl = self.chunk_len(buf.len());
        let hl = self.hdr_len();
        for (k, chunk) in buf.chunks_mut(cl).enumerate() {
            if chunk.len() < hl {
                break;
            }
            let h = Header {
                layout: self.layout,
                magic: MAGIC,
                vtype: self.method.type_code(),
                len: chunk.len() as u32,
                rand_seed: if self.pattern.is_some() { 0 } else { st.seed },
                offset: st.offset + (k * cl) as u64,
                time_sec: st.time_sec,
                time_nsec: st.time_nsec,
                thread: self.thread,
                numberio: st.numberio,
                crc32: 0,
            };
            h.encode(chunk);
            let (head, data) = chunk.split_at_mut(hl);
            self.method.trailer(data, &mut head[self.layout.bytes()..]);
            self.swap(chunk);
        }
    }

    /// What to expect of the chunk with header `h`: without the seed and write number
    /// when they are only checked in this job's own blocks and another job wrote it.
    fn expect_of(&self, h: &Header, exp: &Expect) -> Expect {
        if exp.own_only && h.thread != self.thread {
            return Expect {
                seed: None,
                numberio: None,
                ..*exp
            };
        }
        *exp
    }

    /// verify_offset: exchange the header with the bytes at the offset (its own inverse).
    fn swap(&self, chunk: &mut [u8]) {
        let hl = self.hdr_len();
        let vo = self.verify_offset as usize;
        if vo == 0 || vo < hl || vo + hl > chunk.len() {
            return;
        }
        let (a, b) = chunk.split_at_mut(vo);
        a[..hl].swap_with_slice(&mut b[..hl]);
    }

    /// Check a block read back (the buffer is changed: headers swapped back).
    pub fn check(&self, buf: &mut [u8], exp: &Expect) -> Result<(), Failure> {
        let block_len = buf.len() as u32;
        let fail = |problem, chunk_offset, chunk_len, media_type| Failure {
            problem,
            method: self.method,
            chunk_offset,
            chunk_len,
            block_offset: exp.offset,
            block_len,
            media_type,
        };
        match self.method {
            Method::Null => return Ok(()),
            Method::Pattern => {
                let p = self
                    .pattern
                    .as_ref()
                    .expect("verify=pattern has a pattern (checked when planning)");
                return match p.mismatch(buf, 0, exp.offset) {
                    None => Ok(()),
                    Some((at, got, want)) => Err(fail(
                        Problem::Pattern { at, got, want },
                        exp.offset,
                        block_len,
                        None,
                    )),
                };
            }
            _ => {}
        }
        let cl = self.chunk_len(buf.len());
        for (k, chunk) in buf.chunks_mut(cl).enumerate() {
            if chunk.len() < self.hdr_len() {
                break;
            }
            let coff = exp.offset + (k * cl) as u64;
            self.swap(chunk);
            let h = Header::decode(chunk);
            // Either layout is read: the header says which it is.
            let hl = self.method.hdr_len(h.layout);
            if chunk.len() < hl {
                break;
            }
            let media = Some(h.vtype);
            if let Some(what) = header_problem(&h, chunk, coff, &self.expect_of(&h, exp)) {
                return Err(fail(Problem::Header(what), coff, chunk.len() as u32, None));
            }
            let (head, data) = chunk.split_at(hl);
            if self.method.has_checksum() {
                let mut computed = [0u8; 128];
                self.method.trailer(data, &mut computed);
                let n = self.method.trailer_len();
                let stored = &head[h.layout.bytes()..hl];
                if stored != &computed[..n] {
                    let problem = Problem::Checksum {
                        expected: stored.to_vec(),
                        received: computed[..n].to_vec(),
                    };
                    return Err(fail(problem, coff, chunk.len() as u32, media));
                }
            } else if let Some(p) = &self.pattern {
                // meta with a pattern: the data after the header must be the pattern,
                // in the phase it has from the block's first byte.
                let base = k * cl;
                if let Some((at, got, want)) = p.mismatch_from(data, base + hl, exp.offset) {
                    return Err(fail(
                        Problem::Pattern { at, got, want },
                        coff,
                        chunk.len() as u32,
                        media,
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The header checks: magic, length, offset, write number, seed, CRC — fio's order,
/// except that the seed (which fio checks in mixed jobs only) comes after the offset
/// and the write number, so that a misplaced block is reported as misplaced and a
/// stale one by its write number.
fn header_problem(h: &Header, chunk: &[u8], coff: u64, exp: &Expect) -> Option<String> {
    if h.magic != MAGIC {
        return Some(format!("bad magic header {:x}, wanted {MAGIC:x}", h.magic));
    }
    if h.len as usize != chunk.len() {
        return Some(format!(
            "bad header length {}, wanted {}",
            h.len,
            chunk.len()
        ));
    }
    if h.offset != coff {
        return Some(format!(
            "bad header offset {}, wanted {}",
            h.offset, exp.offset
        ));
    }
    if let Some(n) = exp.numberio.filter(|&n| !h.numberio_is(n)) {
        return Some(format!("bad header numberio {}, wanted {n}", h.numberio));
    }
    if let Some(seed) = exp.seed.filter(|&s| s != h.rand_seed) {
        return Some(format!(
            "bad header rand_seed {}, wanted {seed}",
            h.rand_seed
        ));
    }
    let calc = Header::computed_crc(chunk);
    if calc != h.crc32 {
        return Some(format!("bad header crc {:x}, calculated {calc:x}", h.crc32));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(m: Method) -> Spec {
        Spec {
            method: m,
            interval: 0,
            verify_offset: 0,
            pattern: None,
            thread: 1,
            layout: Layout::default(),
        }
    }

    fn stamp(offset: u64) -> Stamp {
        Stamp {
            offset,
            seed: 0x1234_5678_9abc_def0 ^ offset,
            numberio: 7,
            time_sec: 1,
            time_nsec: 2,
        }
    }

    fn exp(offset: u64) -> Expect {
        Expect {
            offset,
            numberio: Some(7),
            seed: None,
            own_only: false,
        }
    }

    /// fio 3.33's first crc32c block (bs 4k, seed from its verify RNG) byte for byte.
    #[test]
    fn writes_the_block_fio_writes() {
        let mut b = vec![0u8; 4096];
        let st = Stamp {
            offset: 0,
            seed: 0x00A4_CC01_C509_543C,
            numberio: 0,
            time_sec: 0x179,
            time_nsec: 0x290A_A1FD,
        };
        let s = Spec {
            layout: Layout::Fio333,
            ..spec(Method::Crc32c)
        };
        s.fill(&mut b, &st);
        let want: [u8; 48] = [
            0xca, 0xac, 0x05, 0x00, 0x00, 0x10, 0x00, 0x00, 0x3c, 0x54, 0x09, 0xc5, 0x01, 0xcc,
            0xa4, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x79, 0x01, 0x00, 0x00,
            0xfd, 0xa1, 0x0a, 0x29, 0x01, 0x00, 0x00, 0x00, 0x68, 0x38, 0x27, 0x2d, 0xf4, 0xa2,
            0xef, 0xa3, 0x24, 0x2f, 0xeb, 0xb1,
        ];
        assert_eq!(b[..48], want);
    }

    /// fio 3.42's first crc32c block, same seed: its 48-byte header (bytes 42-43 keep
    /// the data), then the checksum and the data.
    #[test]
    fn writes_the_block_fio_342_writes() {
        let mut b = vec![0u8; 4096];
        let st = Stamp {
            offset: 0,
            seed: 0x00A4_CC01_C509_543C,
            numberio: 0,
            time_sec: 0,
            time_nsec: 0x0658_7905,
        };
        spec(Method::Crc32c).fill(&mut b, &st);
        let want = "caac8105001000003c5409c501cca400000000000000000000000000057958060000\
                    00000000000001002e68b1a104b82438089ab6c6e00a64237304dbf5cbbc";
        let got: String = b[..64].iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(got, want);
        assert_eq!(s_check(&mut b), Ok(()));
    }

    fn s_check(b: &mut [u8]) -> Result<(), Failure> {
        let exp = Expect {
            offset: 0,
            numberio: Some(0),
            seed: Some(0x00A4_CC01_C509_543C),
            own_only: false,
        };
        spec(Method::Crc32c).check(b, &exp)
    }

    #[test]
    fn every_method_catches_a_flipped_bit_anywhere() {
        for m in Method::CHECKSUMS {
            let s = spec(m);
            let mut b = vec![0u8; 4096];
            s.fill(&mut b, &stamp(8192));
            assert_eq!(s.check(&mut b.clone(), &exp(8192)), Ok(()), "{m:?} clean");
            for pos in [m.hdr_len(Layout::default()), 2000, 4095] {
                let mut c = b.clone();
                c[pos] ^= 0x10;
                let f = s.check(&mut c, &exp(8192)).expect_err("corruption found");
                assert!(
                    matches!(f.problem, Problem::Checksum { .. }),
                    "{m:?} at {pos}: {f:?}"
                );
                assert_eq!((f.chunk_offset, f.block_offset), (8192, 8192));
            }
            // In the header: its CRC or a field check catches it.
            let mut c = b.clone();
            c[20] ^= 1;
            assert!(s.check(&mut c, &exp(8192)).unwrap_err().is_header());
        }
    }

    #[test]
    fn header_checks_in_fios_order_with_fios_text() {
        let s = spec(Method::Crc32c);
        let mut b = vec![0u8; 4096];
        s.fill(&mut b, &stamp(8192));
        let text = |buf: &mut Vec<u8>, e: &Expect| {
            s.check(buf, e).unwrap_err().lines("/f", 0x88)[0].clone()
        };
        let mut zero = vec![0u8; 4096];
        assert_eq!(
            text(&mut zero, &exp(8192)),
            "verify: bad magic header 0, wanted acca at file /f offset 8192, length 4096 (requested block: offset=8192, length=4096)"
        );
        // The same block read back at another offset: moved data.
        assert!(text(&mut b.clone(), &exp(4096))
            .starts_with("verify: bad header offset 8192, wanted 4096 at file /f offset 4096"));
        // A stale generation: the right block, an older write.
        let stale = Expect {
            numberio: Some(9),
            ..exp(8192)
        };
        assert!(text(&mut b.clone(), &stale).starts_with("verify: bad header numberio 7, wanted 9"));
        let seeded = Expect {
            seed: Some(1),
            ..exp(8192)
        };
        assert!(text(&mut b.clone(), &seeded).contains("bad header rand_seed"));
        // verify_only: another job's block (its header names job 1; this is job 2) is
        // checked for what it says of itself, not for this job's seeds and order.
        let other = Spec {
            thread: 2,
            ..s.clone()
        };
        let lenient = Expect {
            own_only: true,
            ..seeded
        };
        assert!(other.check(&mut b.clone(), &lenient).is_ok());
        assert!(
            s.check(&mut b.clone(), &lenient).is_err(),
            "its own block: checked"
        );
        let mut c = b.clone();
        c[2000] ^= 1;
        let lines = s.check(&mut c, &exp(8192)).unwrap_err().lines("/f", 0x88);
        assert_eq!(lines[0], "crc32c: verify failed at file /f offset 8192, length 4096 (requested block: offset=8192, length=4096, flags=88)");
        assert!(
            lines[1].starts_with("       Expected CRC: ")
                && lines[2].starts_with("       Received CRC: ")
        );
        // Verified as md5 what was written as crc32c: the type mismatch line follows.
        let lines = spec(Method::Md5)
            .check(&mut b.clone(), &exp(8192))
            .unwrap_err()
            .lines("/f", 0x88);
        assert_eq!(
            lines.last().unwrap(),
            "fio: verify type mismatch (5 media, 2 given)"
        );
    }

    #[test]
    fn intervals_offsets_and_patterns() {
        let mut s = spec(Method::Md5);
        s.interval = 2048;
        let mut b = vec![0u8; 8192];
        s.fill(&mut b, &stamp(0));
        // Four headers, at each 2 KiB, naming their own offset.
        for k in 0..4 {
            let h = Header::decode(&b[k * 2048..]);
            assert_eq!((h.len, h.offset), (2048, k as u64 * 2048));
        }
        let mut c = b.clone();
        c[6000] ^= 4;
        let f = s.check(&mut c, &exp(0)).unwrap_err();
        assert_eq!((f.chunk_offset, f.chunk_len), (4096, 2048));
        // verify_offset: the header sits at 64, the check swaps it back.
        let mut s = spec(Method::Crc32c);
        s.verify_offset = 64;
        let mut b = vec![0u8; 4096];
        s.fill(&mut b, &stamp(0));
        assert_eq!(u16::from_le_bytes([b[64], b[65]]), MAGIC);
        assert_eq!(s.check(&mut b, &exp(0)), Ok(()));
        // verify=pattern: no header, every byte is the pattern.
        let s = Spec {
            pattern: Some(Pattern {
                bytes: vec![0xde, 0xad, 0xbe, 0xef],
                offset_at: vec![],
                interval: 0,
            }),
            ..spec(Method::Pattern)
        };
        let mut b = vec![0u8; 4096];
        s.fill(&mut b, &stamp(0));
        assert_eq!(b[..4], [0xde, 0xad, 0xbe, 0xef]);
        b[4001] = 0xbc;
        let f = s.check(&mut b, &exp(4096)).unwrap_err();
        assert_eq!(
            f.problem,
            Problem::Pattern {
                at: 4001,
                got: 0xbc,
                want: 0xad
            }
        );
        // A trimmed block reads back as zeros, or fails with fio's trim message.
        assert_eq!(check_zeros(Method::Md5, &[0u8; 512], 8192), Ok(()));
        let mut z = [0u8; 512];
        z[17] = 1;
        let f = check_zeros(Method::Md5, &z, 8192).unwrap_err();
        assert_eq!(
            f.lines("/f", 0)[0],
            "trim: verify failed at file /f offset 8192, length 512, block offset 17"
        );
        // meta with a pattern: the header, then the pattern after it.
        let s = Spec {
            pattern: Some(Pattern {
                bytes: vec![0xaa, 0x55],
                offset_at: vec![],
                interval: 0,
            }),
            ..spec(Method::Meta)
        };
        let mut b = vec![0u8; 512];
        s.fill(&mut b, &stamp(0));
        assert_eq!(s.check(&mut b.clone(), &exp(0)), Ok(()));
        b[300] ^= 1;
        assert!(matches!(
            s.check(&mut b, &exp(0)).unwrap_err().problem,
            Problem::Pattern { at: 300, .. }
        ));
    }
}
