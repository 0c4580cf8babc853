//! ioscope's binary I/O log (`--log-format=binary`, and the spill file every per-I/O
//! log goes through): one exact record per I/O, written as captured, turned into fio's
//! text logs after the run or later by `ioscope log convert`.
//!
//! The job thread captures fixed 40-byte [`Rec`]s (plain fields: cheap to store); the
//! writer thread encodes them compactly before they reach the disk — about 3 bytes per
//! I/O on the null engine, 8–12 on real devices — so that even tens of millions of I/Os
//! per second fit what a disk can take.
//!
//! File format, version 2 (little-endian):
//! - a 4096-byte header: `IOSCOPE-IOLOG 2\n`, then `key=value` lines (`job`, `number`,
//!   `lat`, `slat`, `clat`, `bw`, `iops` — the text log each would go to, empty when
//!   not wanted — `offset`, `prio_hex`, `issue_time`, `both`, `unix_epoch_ms`,
//!   `records`), an empty line, and
//!   zero padding;
//! - records in completion order, each: a flag byte (bits 0–1 direction, bit 2 has a
//!   submission latency, bit 3 a new block size follows, bit 4 a new priority follows),
//!   then LEB128 varints: the completion time minus the previous one (ns, zigzag), the
//!   completion latency (ns), the submission latency (if bit 2), the block size (if
//!   bit 3), the priority (if bit 4), and, when the header says `offset=1`, the offset
//!   minus the previous offset (zigzag).
//!
//! Exact: every value is stored in full.

use crate::kind::{KINDS, PER_IO};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &str = "IOSCOPE-IOLOG 2\n";
pub const HEADER_SIZE: u64 = 4096;
pub const RECORD_SIZE: usize = 40;

/// One I/O, as the job thread captures it: plain fields, so that capturing is a few
/// stores and no packing (the encoder packs them on the writer thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Rec {
    /// Completion time: raw clock ticks as the job thread captures it, ns since the
    /// log's time zero from the writer thread on (and in every file).
    pub t_ns: u64,
    pub offset: u64,
    clat: u64,
    slat: u64,
    len: u32,
    prio: u16,
    ddir: u8,
    has_slat: bool,
}

const _: () = assert!(std::mem::size_of::<Rec>() == RECORD_SIZE);

impl Rec {
    #[inline(always)]
    pub fn new(
        t_ns: u64,
        offset: u64,
        clat: u64,
        slat: Option<u64>,
        bs: u64,
        prio: u16,
        ddir: u8,
    ) -> Rec {
        Rec {
            t_ns,
            offset,
            clat,
            slat: slat.unwrap_or(0),
            // Block sizes come from a u32 unit length; a larger one read from a file
            // is kept at the largest that fits.
            len: u32::try_from(bs).unwrap_or(u32::MAX),
            prio,
            ddir,
            has_slat: slat.is_some(),
        }
    }

    pub fn clat(&self) -> u64 {
        self.clat
    }
    pub fn prio(&self) -> u16 {
        self.prio
    }
    /// The direction (0 read, 1 write, 2 trim); masked here, off the job thread.
    pub fn ddir(&self) -> u8 {
        self.ddir & 3
    }
    pub fn slat(&self) -> Option<u64> {
        self.has_slat.then_some(self.slat)
    }
    pub fn bs(&self) -> u64 {
        u64::from(self.len)
    }
    /// Total latency: submission to completion (slat + clat).
    pub fn lat(&self) -> u64 {
        self.clat + self.slat().unwrap_or(0)
    }
}

/// Records to bytes: the compact stream of the file format.
#[derive(Default)]
pub struct Encoder {
    t: u64,
    offset: u64,
    bs: u64,
    prio: u16,
    offsets: bool,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl Encoder {
    /// `offsets`: the records carry offsets (log_offset=1).
    pub fn new(offsets: bool) -> Encoder {
        Encoder {
            offsets,
            ..Encoder::default()
        }
    }

    pub fn push(&mut self, out: &mut Vec<u8>, r: &Rec) {
        let bs = r.bs();
        let prio = r.prio();
        let slat = r.slat();
        let mut flags = r.ddir() & 3;
        flags |= u8::from(slat.is_some()) << 2;
        flags |= u8::from(bs != self.bs) << 3;
        flags |= u8::from(prio != self.prio) << 4;
        out.push(flags);
        varint(out, zigzag(r.t_ns.wrapping_sub(self.t) as i64));
        varint(out, r.clat());
        if let Some(s) = slat {
            varint(out, s);
        }
        if bs != self.bs {
            varint(out, bs);
        }
        if prio != self.prio {
            varint(out, u64::from(prio));
        }
        if self.offsets {
            varint(out, zigzag(r.offset.wrapping_sub(self.offset) as i64));
            self.offset = r.offset;
        }
        self.t = r.t_ns;
        self.bs = bs;
        self.prio = prio;
    }
}

/// Bytes back to records.
#[derive(Default)]
struct Decoder {
    t: u64,
    offset: u64,
    bs: u64,
    prio: u16,
    offsets: bool,
}

/// The longest encoded record: the flag byte and six 10-byte varints.
const MAX_ENCODED: usize = 61;

impl Decoder {
    /// Decode one record from the front of `b`: the record and the bytes it took, or
    /// `None` when `b` ends inside it.
    fn next(&mut self, b: &[u8]) -> Option<(Rec, usize)> {
        let mut pos = 1;
        let flags = *b.first()?;
        let varint = |pos: &mut usize| -> Option<u64> {
            let mut v = 0u64;
            let mut shift = 0;
            loop {
                let byte = *b.get(*pos)?;
                *pos += 1;
                v |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 || shift >= 63 {
                    return Some(v);
                }
                shift += 7;
            }
        };
        let dt = unzigzag(varint(&mut pos)?);
        let clat = varint(&mut pos)?;
        let slat = if flags & 4 != 0 {
            Some(varint(&mut pos)?)
        } else {
            None
        };
        let bs = if flags & 8 != 0 {
            varint(&mut pos)?
        } else {
            self.bs
        };
        let prio = if flags & 16 != 0 {
            varint(&mut pos)? as u16
        } else {
            self.prio
        };
        let offset = if self.offsets {
            self.offset.wrapping_add(unzigzag(varint(&mut pos)?) as u64)
        } else {
            self.offset
        };
        self.t = self.t.wrapping_add(dt as u64);
        self.bs = bs;
        self.prio = prio;
        self.offset = offset;
        Some((
            Rec::new(self.t, offset, clat, slat, bs, prio, flags & 3),
            pos,
        ))
    }
}

/// What the header says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub job: String,
    pub number: u32,
    /// Text log per kind (lat, slat, clat, bw, iops); `None` when not wanted.
    pub logs: [Option<PathBuf>; 5],
    pub offset: bool,
    pub prio_hex: bool,
    /// log_issue_time: the clat and slat lines end with the issue time.
    pub issue_time: bool,
    /// log_window_value=both: every line has a second value, 0 in per-I/O lines (fio
    /// 3.42 writes the column whether or not the log is windowed).
    pub both: bool,
    /// With log_unix_epoch: the Unix time (ms) of the log's time zero.
    pub unix_epoch_ms: Option<u64>,
    pub records: u64,
}

impl Meta {
    fn header(&self) -> Vec<u8> {
        let mut s = String::from(MAGIC);
        s.push_str(&format!("job={}\nnumber={}\n", self.job, self.number));
        for (k, p) in KINDS.iter().map(|k| k.name).zip(&self.logs) {
            s.push_str(&format!(
                "{k}={}\n",
                p.as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ));
        }
        s.push_str(&format!(
            "offset={}\nprio_hex={}\nissue_time={}\nboth={}\nunix_epoch_ms={}\nrecords={}\n\n",
            u8::from(self.offset),
            u8::from(self.prio_hex),
            u8::from(self.issue_time),
            u8::from(self.both),
            self.unix_epoch_ms
                .map(|v| v.to_string())
                .unwrap_or_default(),
            self.records
        ));
        let mut b = s.into_bytes();
        b.resize(HEADER_SIZE as usize, 0);
        b
    }

    /// Write (or rewrite) the header at the start of the file.
    pub fn write_header(&self, f: &mut File) -> std::io::Result<()> {
        let h = self.header();
        if h.len() as u64 > HEADER_SIZE {
            return Err(std::io::Error::other(
                "binary log header longer than 4096 bytes (file names too long)",
            ));
        }
        f.seek(SeekFrom::Start(0))?;
        f.write_all(&h)?;
        f.seek(SeekFrom::End(0))?;
        Ok(())
    }

    fn parse(text: &str) -> Result<Meta, String> {
        let body = text
            .strip_prefix(MAGIC)
            .ok_or("not an ioscope binary log (or another version)")?;
        let mut m = Meta::default();
        for line in body.lines().take_while(|l| !l.is_empty()) {
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("bad header line '{line}'"))?;
            let num = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("{k}={v}: not a number"))
            };
            match k {
                "job" => m.job = v.to_string(),
                "number" => m.number = num(v)? as u32,
                "offset" => m.offset = v == "1",
                "prio_hex" => m.prio_hex = v == "1",
                "issue_time" => m.issue_time = v == "1",
                "both" => m.both = v == "1",
                "unix_epoch_ms" => m.unix_epoch_ms = (!v.is_empty()).then(|| num(v)).transpose()?,
                "records" => m.records = num(v)?,
                _ => {
                    if let Some(i) = KINDS[..PER_IO].iter().position(|x| x.name == k) {
                        m.logs[i] = (!v.is_empty()).then(|| PathBuf::from(v));
                    }
                }
            }
        }
        Ok(m)
    }
}

/// An open binary log for reading.
pub struct Reader {
    pub meta: Meta,
    file: File,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    left: u64,
    dec: Decoder,
}

impl Reader {
    pub fn open(path: &Path) -> Result<Reader, String> {
        let mut f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut h = vec![0u8; HEADER_SIZE as usize];
        f.read_exact(&mut h)
            .map_err(|e| format!("{}: not an ioscope binary log ({e})", path.display()))?;
        let end = h.iter().position(|&b| b == 0).unwrap_or(h.len());
        let text = String::from_utf8_lossy(&h[..end]);
        let meta = Meta::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Reader {
            dec: Decoder {
                offsets: meta.offset,
                ..Decoder::default()
            },
            left: meta.records,
            meta,
            file: f,
            buf: vec![0; 1 << 20],
            pos: 0,
            end: 0,
            eof: false,
        })
    }

    /// Records in the file (as its header counts them; a log whose writer was killed
    /// says 0, and reads until its bytes end).
    pub fn len(&self) -> u64 {
        self.left
    }

    pub fn is_empty(&self) -> bool {
        self.left == 0
    }

    /// Keep at least one whole record in the buffer (unless the file ends).
    fn refill(&mut self) -> std::io::Result<()> {
        if self.eof || self.end - self.pos >= MAX_ENCODED {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < self.buf.len() {
            let n = self.file.read(&mut self.buf[self.end..])?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.end += n;
        }
        Ok(())
    }

    /// Fill `buf` with up to its length of records; how many (0 at the end).
    pub fn read(&mut self, out: &mut [Rec]) -> std::io::Result<usize> {
        let counted = self.meta.records > 0;
        let want = if counted {
            (out.len() as u64).min(self.left) as usize
        } else {
            out.len()
        };
        let mut n = 0;
        while n < want {
            self.refill()?;
            match self.dec.next(&self.buf[self.pos..self.end]) {
                Some((r, used)) => {
                    out[n] = r;
                    self.pos += used;
                    n += 1;
                }
                // The bytes end: a log whose writer was killed ends here; a counted
                // one must not.
                None if !counted => break,
                None => {
                    return Err(std::io::Error::other(
                        "the binary log ends before its last record",
                    ))
                }
            }
        }
        if counted {
            self.left -= n as u64;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_every_field() {
        let r = Rec::new(
            123_456_789,
            1 << 40,
            17_000_000_000,
            Some(4321),
            131072,
            0x4004,
            1,
        );
        assert_eq!(
            (r.clat(), r.slat(), r.bs(), r.prio(), r.ddir()),
            (17_000_000_000, Some(4321), 131072, 0x4004, 1)
        );
        assert_eq!(r.lat(), 17_000_004_321);
        let big = Rec::new(0, 0, 5, None, 1 << 30, 0, 2);
        let huge = Rec::new(0, 0, 5, None, 1 << 40, 0, 2);
        assert_eq!(huge.bs(), u64::from(u32::MAX));
        assert_eq!((big.bs(), big.slat(), big.ddir()), (1 << 30, None, 2));
        let mut bytes = Vec::new();
        let mut enc = Encoder::new(true);
        enc.push(&mut bytes, &r);
        enc.push(&mut bytes, &big);
        let mut dec = Decoder {
            offsets: true,
            ..Decoder::default()
        };
        let (a, used) = dec.next(&bytes).unwrap();
        assert_eq!(a, r);
        assert_eq!(dec.next(&bytes[used..]).unwrap().0, big);
        assert!(dec.next(&bytes[used..used + 2]).is_none(), "cut short");
        // A null-engine I/O: a few bytes.
        let mut small = Vec::new();
        let mut e = Encoder::new(false);
        e.push(&mut small, &Rec::new(40, 0, 20, None, 4096, 0, 0));
        small.clear();
        e.push(&mut small, &Rec::new(80, 0, 21, None, 4096, 0, 0));
        assert_eq!(small.len(), 3);
    }

    #[test]
    fn header_and_records_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x_io.1.bin");
        let mut f = File::create(&p).unwrap();
        let mut meta = Meta {
            job: "j".into(),
            number: 1,
            logs: [
                Some("x_lat.1.log".into()),
                None,
                Some("x_clat.1.log".into()),
                None,
                None,
            ],
            offset: true,
            issue_time: true,
            both: true,
            ..Meta::default()
        };
        meta.write_header(&mut f).unwrap();
        let recs: Vec<Rec> = (0..10)
            .map(|i| Rec::new(i * 1000, i * 4096, 50 + i, None, 4096, 0, 0))
            .collect();
        let mut bytes = Vec::new();
        let mut enc = Encoder::new(true);
        for r in &recs {
            enc.push(&mut bytes, r);
        }
        f.write_all(&bytes).unwrap();
        meta.records = 10;
        meta.unix_epoch_ms = Some(1_700_000_000_000);
        meta.write_header(&mut f).unwrap();
        drop(f);
        let mut r = Reader::open(&p).unwrap();
        assert_eq!(r.meta, meta);
        let mut buf = vec![Rec::default(); 4];
        let mut got = Vec::new();
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, recs);
        std::fs::write(&p, b"nope").unwrap();
        assert!(Reader::open(&p).is_err());
    }
}
