//! log_store_compressed: fio's compressed logs (`NAME.log.fz`) and `--inflate-log`.
//!
//! fio 3.42 stores such a log as its in-memory samples, compressed in chunks of
//! log_compression bytes, each chunk one zlib stream, the streams one after another
//! (read off the .fz files it writes, and off what its server sends a client). A
//! sample is little-endian: time (u64, ms), value (u64), a second value (u64: the
//! window's maximum with log_window_value=both, else 0), direction (u32; bit 31: an
//! offset follows, bit 30: priorities logged in full, bit 29: the second value is
//! written, bit 28: an issue time follows), priority (u32), block size (u64), then
//! the offset and the issue time (u64 each) when flagged: 40 to 56 bytes. ioscope
//! writes its text logs first and turns each line into such a sample;
//! `--inflate-log` prints a file of them (ioscope's or fio's) as fio's text:
//! `time, value[, max], ddir, bs[, offset], prio[, issue time]`.

use flate2::bufread::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Chunk size when log_store_compressed is set without log_compression.
pub const DEFAULT_CHUNK: usize = 1 << 20;

const OFFSET_BIT: u32 = 1 << 31;
const PRIO_BIT: u32 = 1 << 30;
const MAX_BIT: u32 = 1 << 29;
const ISSUE_BIT: u32 = 1 << 28;
const FLAG_BITS: u32 = 0xf000_0000;

/// Which columns the text lines have (log_offset, log_window_value=both,
/// log_issue_time) and how priorities read (log_prio).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub offset: bool,
    pub prio_hex: bool,
    pub max: bool,
    pub issue: bool,
}

impl Columns {
    /// Fields of a text line.
    fn count(self) -> usize {
        5 + usize::from(self.max) + usize::from(self.offset) + usize::from(self.issue)
    }

    /// The direction's flag bits.
    fn bits(self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.offset, OFFSET_BIT)
            | bit(self.prio_hex, PRIO_BIT)
            | bit(self.max, MAX_BIT)
            | bit(self.issue, ISSUE_BIT)
    }

    fn of_bits(d: u32) -> Columns {
        Columns {
            offset: d & OFFSET_BIT != 0,
            prio_hex: d & PRIO_BIT != 0,
            max: d & MAX_BIT != 0,
            issue: d & ISSUE_BIT != 0,
        }
    }

    /// Bytes of a sample.
    fn size(self) -> usize {
        40 + 8 * (usize::from(self.offset) + usize::from(self.issue))
    }
}

fn bad(line: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("not a log line: {line:?}"),
    )
}

/// One text line (`time, value[, max], ddir, bs[, offset], prio[, issue]`) as fio's
/// sample.
fn encode(line: &str, c: Columns, out: &mut Vec<u8>) -> std::io::Result<()> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() != c.count() {
        return Err(bad(line));
    }
    let n = |s: &str| s.parse::<u64>().map_err(|_| bad(line));
    let mut at = f.iter().copied();
    let mut next = || at.next().ok_or_else(|| bad(line));
    let (time, value) = (n(next()?)?, n(next()?)?);
    let max = if c.max { n(next()?)? } else { 0 };
    let (ddir, bs) = (n(next()?)? as u32, n(next()?)?);
    let offset = if c.offset { Some(n(next()?)?) } else { None };
    let p = next()?;
    let prio: u32 = if c.prio_hex {
        u32::from_str_radix(p.trim_start_matches("0x"), 16).map_err(|_| bad(line))?
    } else if n(p)? != 0 {
        1 << 13
    } else {
        0
    };
    let issue = if c.issue { Some(n(next()?)?) } else { None };
    for v in [time, value, max] {
        out.extend(v.to_le_bytes());
    }
    out.extend((ddir | c.bits()).to_le_bytes());
    out.extend(prio.to_le_bytes());
    out.extend(bs.to_le_bytes());
    for v in [offset, issue].into_iter().flatten() {
        out.extend(v.to_le_bytes());
    }
    Ok(())
}

/// Write the text log `path` into `out` in fio's compressed format (synced), then
/// remove `path`. The caller creates `out` (safely, and names it).
pub fn compress_file(path: &Path, out: File, chunk: usize, c: Columns) -> std::io::Result<()> {
    let src = BufReader::new(File::open(path)?);
    let mut out = BufWriter::new(out);
    let chunk = chunk.max(4096);
    let mut buf = Vec::with_capacity(chunk + 64);
    let flush = |buf: &mut Vec<u8>, out: &mut BufWriter<File>| -> std::io::Result<()> {
        let mut e = ZlibEncoder::new(out, Compression::default());
        e.write_all(buf)?;
        e.finish()?;
        buf.clear();
        Ok(())
    };
    for line in src.lines() {
        encode(&line?, c, &mut buf)?;
        if buf.len() >= chunk {
            flush(&mut buf, &mut out)?;
        }
    }
    if !buf.is_empty() {
        flush(&mut buf, &mut out)?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::remove_file(path)
}

/// fio's text line of one sample; its length in bytes.
fn decode(s: &[u8], out: &mut dyn Write) -> std::io::Result<Option<usize>> {
    if s.len() < 40 {
        return Ok(None);
    }
    let u64_at = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
    let ddir = u32::from_le_bytes(s[24..28].try_into().unwrap_or([0; 4]));
    let prio = u32::from_le_bytes(s[28..32].try_into().unwrap_or([0; 4]));
    let c = Columns::of_bits(ddir);
    let len = c.size();
    if s.len() < len {
        return Ok(None);
    }
    let mut line = format!("{}, {}", u64_at(0), u64_at(8));
    if c.max {
        line += &format!(", {}", u64_at(16));
    }
    line += &format!(", {}, {}", ddir & !FLAG_BITS, u64_at(32));
    if c.offset {
        line += &format!(", {}", u64_at(40));
    }
    line += &match c.prio_hex {
        true => format!(", 0x{prio:04x}"),
        false => format!(", {}", u8::from(prio >> 13 == 1)),
    };
    if c.issue {
        line += &format!(", {}", u64_at(40 + 8 * usize::from(c.offset)));
    }
    writeln!(out, "{line}")?;
    Ok(Some(len))
}

/// The text of a compressed log (ioscope's or fio's), as fio's --inflate-log prints it.
pub fn inflate(path: &Path, out: &mut dyn Write) -> std::io::Result<()> {
    let mut r = BufReader::new(File::open(path)?);
    let mut pending: Vec<u8> = Vec::new();
    while !r.fill_buf()?.is_empty() {
        let mut d = ZlibDecoder::new(&mut r);
        d.read_to_end(&mut pending)?;
        let mut at = 0;
        while let Some(n) = decode(&pending[at..], out)? {
            at += n;
        }
        pending.drain(..at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fz_name(p: &Path) -> PathBuf {
        let mut n = p.as_os_str().to_owned();
        n.push(".fz");
        PathBuf::from(n)
    }

    /// Samples as fio 3.42 stores them (read off a .fz it wrote and off what its server
    /// sent a client): 40 bytes, 48 with the offset, 56 with the issue time too; the
    /// window's maximum in the third u64.
    #[test]
    fn samples_are_fios() {
        let cases = [
            (
                Columns::default(),
                "0, 8456, 0, 4096, 0",
                "00000000000000000821000000000000000000000000000000000000000000000010000000000000",
            ),
            (
                Columns {
                    offset: true,
                    issue: true,
                    ..Columns::default()
                },
                "0, 11482, 0, 4096, 1049071616, 0, 26329",
                "0000000000000000da2c000000000000000000000000000000000090000000000010000000000000\
                 0090873e00000000d966000000000000",
            ),
            (
                Columns {
                    offset: true,
                    issue: true,
                    max: true,
                    ..Columns::default()
                },
                "200, 90, 97663, 0, 0, 0, 0, 0",
                "c8000000000000005a000000000000007f7d010000000000000000b0000000000000000000000000\
                 00000000000000000000000000000000",
            ),
            (
                Columns {
                    offset: true,
                    prio_hex: true,
                    ..Columns::default()
                },
                "0, 63644, 1, 4096, 28672, 0x2000",
                "00000000000000009cf80000000000000000000000000000010000c0002000000010000000000000\
                 0070000000000000",
            ),
        ];
        for (c, line, bytes) in cases {
            let mut b = Vec::new();
            encode(line, c, &mut b).unwrap();
            assert_eq!(hex(&b), bytes, "{line}");
            let mut text = Vec::new();
            assert_eq!(decode(&b, &mut text).unwrap(), Some(b.len()));
            assert_eq!(String::from_utf8(text).unwrap(), format!("{line}\n"));
        }
        let mut b = Vec::new();
        assert!(encode(
            "0, 1, 0, 4096, 0",
            Columns {
                max: true,
                ..Columns::default()
            },
            &mut b
        )
        .is_err());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn chunks_round_trip_and_each_is_a_zlib_stream() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("l_clat.1.log");
        let text: String = (0..20_000)
            .map(|i| {
                format!(
                    "{}, {}, {}, 4096, {}\n",
                    i / 100,
                    i * 7 % 1000,
                    i % 2,
                    i % 2
                )
            })
            .collect();
        std::fs::write(&log, &text).unwrap();
        let c = Columns::default();
        let fz = fz_name(&log);
        compress_file(&log, File::create(&fz).unwrap(), 64 << 10, c).unwrap();
        assert!(!log.exists(), "the text is replaced");
        assert_eq!(fz.file_name().unwrap(), "l_clat.1.log.fz");
        let mut back = Vec::new();
        inflate(&fz, &mut back).unwrap();
        assert_eq!(String::from_utf8(back).unwrap(), text);
        let raw = std::fs::read(&fz).unwrap();
        let mut r = &raw[..];
        let mut streams = 0;
        while !r.is_empty() {
            let mut dec = ZlibDecoder::new(&mut r);
            std::io::copy(&mut dec, &mut std::io::sink()).unwrap();
            streams += 1;
        }
        assert_eq!(streams, (20_000usize * 40).div_ceil(64 << 10));
    }

    #[test]
    fn an_empty_log_stays_empty() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("l_slat.1.log");
        std::fs::write(&log, "").unwrap();
        let c = Columns {
            offset: true,
            ..Columns::default()
        };
        let fz = fz_name(&log);
        compress_file(&log, File::create(&fz).unwrap(), DEFAULT_CHUNK, c).unwrap();
        let mut back = Vec::new();
        inflate(&fz, &mut back).unwrap();
        assert!(back.is_empty());
    }
}
