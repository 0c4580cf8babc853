//! fio's verify header: 40 bytes at the start of every verify chunk (little-endian):
//! magic 0xACCA, type, chunk length, random seed of the data, chunk offset, write time
//! (seconds, nanoseconds), job number, write number (16 bits, wrapping), and a CRC-32C
//! (fio's variant) over the 36 bytes before it.

use crate::crc::fio_crc32c;

pub const HEADER_LEN: usize = 40;
pub const MAGIC: u16 = 0xACCA;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u16,
    pub vtype: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
    pub crc32: u32,
}

impl Header {
    /// Write the header (with its CRC) into the first 40 bytes of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        let b = &mut out[..HEADER_LEN];
        b[0..2].copy_from_slice(&self.magic.to_le_bytes());
        b[2..4].copy_from_slice(&self.vtype.to_le_bytes());
        b[4..8].copy_from_slice(&self.len.to_le_bytes());
        b[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        b[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        b[32..34].copy_from_slice(&self.thread.to_le_bytes());
        b[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = fio_crc32c(&b[..36]);
        b[36..40].copy_from_slice(&crc.to_le_bytes());
    }

    /// Read a header from the first 40 bytes of `b`.
    pub fn decode(b: &[u8]) -> Header {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(a)
        };
        Header {
            magic: u16_at(0),
            vtype: u16_at(2),
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            numberio: u16_at(34),
            crc32: u32_at(36),
        }
    }

    /// The CRC the header's first 36 bytes have.
    pub fn computed_crc(b: &[u8]) -> u32 {
        fio_crc32c(&b[..36])
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
        let mut out = [0u8; 40];
        h.encode(&mut out);
        assert_eq!(out, FIO_BLOCK);
    }
}
