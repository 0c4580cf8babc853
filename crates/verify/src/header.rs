//! fio's verify header at the start of every verify chunk (little-endian), in either
//! of fio's layouts:
//! - fio 3.42 (written by default): magic 0xACCA, version 0x81, type (a byte), chunk
//!   length, random seed of the data, chunk offset, write time (seconds, nanoseconds),
//!   write number (64 bits), job number, 2 bytes left as they were, and a CRC-32C
//!   (fio's variant) over the 44 bytes before it: 48 bytes.
//! - fio 3.33: magic, type (16 bits), length, seed, offset, time, job number, write
//!   number (16 bits, wrapping), and the CRC over the 36 bytes before it: 40 bytes.
//!
//! A header read back says which it is: 3.42's version byte has its top bit set where
//! 3.33's type has a zero high byte.

use crate::crc::fio_crc32c;

/// fio 3.33's header length.
pub const HEADER_LEN: usize = 40;
pub const MAGIC: u16 = 0xACCA;
/// fio 3.42's header version byte.
pub const VERSION_342: u8 = 0x81;

/// Which fio's header layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    Fio333,
    #[default]
    Fio342,
}

impl Layout {
    /// Bytes of the header.
    pub fn bytes(self) -> usize {
        match self {
            Layout::Fio333 => HEADER_LEN,
            Layout::Fio342 => 48,
        }
    }

    /// Bytes the header's CRC covers (all before it).
    fn crc_span(self) -> usize {
        self.bytes() - 4
    }

    /// The layout of the header at the start of `b`.
    pub fn of(b: &[u8]) -> Layout {
        if b.get(2).is_some_and(|v| v & 0x80 != 0) {
            Layout::Fio342
        } else {
            Layout::Fio333
        }
    }

    /// The name a job option gives it (`verify_header_format=`).
    pub fn from_name(name: &str) -> Option<Layout> {
        match name {
            "fio-3.33" => Some(Layout::Fio333),
            "fio-3.42" => Some(Layout::Fio342),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub layout: Layout,
    pub magic: u16,
    pub vtype: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    /// The write number (fio 3.33 keeps its low 16 bits).
    pub numberio: u64,
    pub crc32: u32,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

impl Header {
    /// Write the header (with its CRC) at the start of `out`, in its layout.
    pub fn encode(&self, out: &mut [u8]) {
        let b = &mut out[..self.layout.bytes()];
        b[0..2].copy_from_slice(&self.magic.to_le_bytes());
        b[4..8].copy_from_slice(&self.len.to_le_bytes());
        b[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        b[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        match self.layout {
            Layout::Fio333 => {
                b[2..4].copy_from_slice(&self.vtype.to_le_bytes());
                b[32..34].copy_from_slice(&self.thread.to_le_bytes());
                b[34..36].copy_from_slice(&(self.numberio as u16).to_le_bytes());
            }
            Layout::Fio342 => {
                b[2] = VERSION_342;
                b[3] = self.vtype as u8;
                b[32..40].copy_from_slice(&self.numberio.to_le_bytes());
                b[40..42].copy_from_slice(&self.thread.to_le_bytes());
            }
        }
        let span = self.layout.crc_span();
        let crc = fio_crc32c(&b[..span]);
        b[span..span + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// Read the header at the start of `b` (in the layout it has).
    pub fn decode(b: &[u8]) -> Header {
        let layout = Layout::of(b);
        let (vtype, thread, numberio) = match layout {
            Layout::Fio333 => (u16_at(b, 2), u16_at(b, 32), u64::from(u16_at(b, 34))),
            Layout::Fio342 => (u16::from(b[3]), u16_at(b, 40), u64_at(b, 32)),
        };
        Header {
            layout,
            magic: u16_at(b, 0),
            vtype,
            len: u32_at(b, 4),
            rand_seed: u64_at(b, 8),
            offset: u64_at(b, 16),
            time_sec: u32_at(b, 24),
            time_nsec: u32_at(b, 28),
            thread,
            numberio,
            crc32: u32_at(b, layout.crc_span()),
        }
    }

    /// The CRC the header at the start of `b` has (over the bytes before its CRC).
    pub fn computed_crc(b: &[u8]) -> u32 {
        fio_crc32c(&b[..Layout::of(b).crc_span()])
    }

    /// Whether the write number matches `n` (fio 3.33's header has its low 16 bits).
    pub fn numberio_is(&self, n: u64) -> bool {
        match self.layout {
            Layout::Fio333 => self.numberio == n & 0xffff,
            Layout::Fio342 => self.numberio == n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first 40 bytes of a block fio 3.33 wrote with verify=crc32c.
    const FIO_BLOCK: [u8; 40] = [
        0xca, 0xac, 0x05, 0x00, 0x00, 0x10, 0x00, 0x00, 0x3c, 0x54, 0x09, 0xc5, 0x01, 0xcc, 0xa4,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x79, 0x01, 0x00, 0x00, 0xfd, 0xa1,
        0x0a, 0x29, 0x01, 0x00, 0x00, 0x00, 0x68, 0x38, 0x27, 0x2d,
    ];

    #[test]
    fn reads_and_writes_fios_header_byte_for_byte() {
        let h = Header::decode(&FIO_BLOCK);
        assert_eq!(h.magic, MAGIC);
        assert_eq!(h.vtype, 5);
        assert_eq!(h.len, 4096);
        assert_eq!(h.rand_seed, 0x00A4_CC01_C509_543C);
        assert_eq!((h.offset, h.thread, h.numberio), (0, 1, 0));
        assert_eq!(h.crc32, 0x2D27_3868);
        assert_eq!(Header::computed_crc(&FIO_BLOCK), h.crc32);
        assert_eq!(h.layout, Layout::Fio333);
        let mut out = [0u8; 40];
        h.encode(&mut out);
        assert_eq!(out, FIO_BLOCK);
    }

    /// The first 48 bytes of a block fio 3.42 wrote with verify=pattern_hdr and
    /// verify_pattern=0xabcd (bytes 42-43 keep the pattern).
    const FIO_342_BLOCK: [u8; 48] = [
        0xca, 0xac, 0x81, 0x11, 0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0xe2, 0x3e, 0x41, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0xab, 0xcd,
        0xa6, 0xb9, 0x67, 0x20,
    ];

    #[test]
    fn reads_and_writes_fio_342s_header_byte_for_byte() {
        let h = Header::decode(&FIO_342_BLOCK);
        assert_eq!(h.layout, Layout::Fio342);
        assert_eq!((h.magic, h.vtype, h.len), (MAGIC, 17, 4096));
        assert_eq!((h.offset, h.thread, h.numberio), (0, 1, 0));
        assert_eq!(h.time_nsec, 0x0641_3ee2);
        assert_eq!(Header::computed_crc(&FIO_342_BLOCK), h.crc32);
        let mut out = FIO_342_BLOCK;
        out[..42].fill(0);
        out[44..].fill(0);
        h.encode(&mut out);
        assert_eq!(out, FIO_342_BLOCK);
    }
}
