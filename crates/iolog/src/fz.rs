//! log_store_compressed: fio's compressed logs (`NAME.log.fz`) and `--inflate-log`.
//!
//! fio 3.33 stores such a log as its in-memory samples, compressed in chunks of
//! log_compression bytes, each chunk one zlib stream, the streams one after another.
//! A sample is little-endian: time (u64, ms), value (u64), direction (u32, with bit 31
//! set when an offset follows and bit 30 when priorities are logged in full), priority
//! (u16) and 2 bytes of padding, block size (u64), then the offset (u64) if bit 31 is
//! set — 32 or 40 bytes. ioscope writes its text logs first and turns each line into
//! such a sample; `--inflate-log` prints a file of them (ioscope's or fio's) as fio's text.

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

/// Which columns the text lines have (log_offset) and how priorities read (log_prio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub offset: bool,
    pub prio_hex: bool,
}

fn bad(line: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("not a log line: {line:?}"),
    )
}

/// One text line (`time, value, ddir, bs[, offset], prio`) as fio's sample.
fn encode(line: &str, c: Columns, out: &mut Vec<u8>) -> std::io::Result<()> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let want = if c.offset { 6 } else { 5 };
    if f.len() != want {
        return Err(bad(line));
    }
    let n = |s: &str| s.parse::<u64>().map_err(|_| bad(line));
    let prio = if c.prio_hex {
        u16::from_str_radix(f[want - 1].trim_start_matches("0x"), 16).map_err(|_| bad(line))?
    } else if n(f[want - 1])? != 0 {
        1 << 13
    } else {
        0
    };
    let mut ddir = n(f[2])? as u32;
    if c.offset {
        ddir |= OFFSET_BIT;
    }
    if c.prio_hex {
        ddir |= PRIO_BIT;
    }
    out.extend(n(f[0])?.to_le_bytes());
    out.extend(n(f[1])?.to_le_bytes());
    out.extend(ddir.to_le_bytes());
    out.extend(prio.to_le_bytes());
    out.extend([0u8; 2]);
    out.extend(n(f[3])?.to_le_bytes());
    if c.offset {
        out.extend(n(f[4])?.to_le_bytes());
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
    if s.len() < 32 {
        return Ok(None);
    }
    let u64_at = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
    let ddir = u32::from_le_bytes(s[16..20].try_into().unwrap_or([0; 4]));
    let prio = u16::from_le_bytes([s[20], s[21]]);
    let has_offset = ddir & OFFSET_BIT != 0;
    let len = if has_offset { 40 } else { 32 };
    if s.len() < len {
        return Ok(None);
    }
    let (t, v, bs) = (u64_at(0), u64_at(8), u64_at(24));
    let d = ddir & !(OFFSET_BIT | PRIO_BIT);
    let p = if ddir & PRIO_BIT != 0 {
        format!("0x{prio:04x}")
    } else {
        u8::from(prio >> 13 == 1).to_string()
    };
    if has_offset {
        writeln!(out, "{t}, {v}, {d}, {bs}, {}, {p}", u64_at(32))?;
    } else {
        writeln!(out, "{t}, {v}, {d}, {bs}, {p}")?;
    }
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

    /// Samples as fio 3.33 stores them (read off a .fz it wrote): 32 bytes, and 40 with
    /// the offset and full priorities.
    #[test]
    fn samples_are_fios() {
        let mut b = Vec::new();
        let plain = Columns {
            offset: false,
            prio_hex: false,
        };
        encode("0, 287313, 0, 4096, 0", plain, &mut b).unwrap();
        assert_eq!(
            hex(&b),
            "00000000000000005162040000000000000000000000000000100000000000000"[..64]
        );
        let full = Columns {
            offset: true,
            prio_hex: true,
        };
        b.clear();
        encode("0, 63644, 1, 4096, 28672, 0x2000", full, &mut b).unwrap();
        assert_eq!(
            hex(&b),
            "00000000000000009cf8000000000000010000c000200000001000000000000000700000000000\
             00"
        );
        let mut text = Vec::new();
        assert_eq!(decode(&b, &mut text).unwrap(), Some(40));
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "0, 63644, 1, 4096, 28672, 0x2000\n"
        );
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
        let c = Columns {
            offset: false,
            prio_hex: false,
        };
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
        assert_eq!(streams, (20_000usize * 32).div_ceil(64 << 10));
    }

    #[test]
    fn an_empty_log_stays_empty() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("l_slat.1.log");
        std::fs::write(&log, "").unwrap();
        let c = Columns {
            offset: true,
            prio_hex: false,
        };
        let fz = fz_name(&log);
        compress_file(&log, File::create(&fz).unwrap(), DEFAULT_CHUNK, c).unwrap();
        let mut back = Vec::new();
        inflate(&fz, &mut back).unwrap();
        assert!(back.is_empty());
    }
}
