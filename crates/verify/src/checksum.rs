//! fio's verify methods: the type number written in each header, the size of the
//! checksum trailer after the header, and the checksum itself — the same algorithm,
//! parameters and byte order as fio 3.33, so that each tool reads the other's blocks.
//!
//! Two exceptions, on purpose: fio 3.33's sha256 and sha512 trailers are not digests
//! (sha256 stores a 64-bit remnant of the state and the last input block; sha512 never
//! finalises and misses most corruption). ioscope writes the real SHA-256 and SHA-512
//! digest in the first 32 and 64 bytes of trailers of fio's sizes (the rest zero): the
//! layout stays fio's, and a corruption anywhere in the block is caught.

use crate::crc::fio_crc32c;
use crc::{Algorithm, Crc, CRC_16_ARC, CRC_64_REDIS, CRC_7_MMC};
use md5::Digest as _;

/// One verify method (`verify=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
    /// Header only (and the pattern, when verify_pattern is set).
    Meta,
    /// No header: every byte is the pattern.
    Pattern,
    /// A header, then the pattern (fio 3.42's pattern_hdr).
    PatternHdr,
    /// Nothing written, nothing checked.
    Null,
}

/// fio's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0, no final xor
/// (check value 0x89A1897F) — not zlib's CRC-32.
const CRC_32_FIO: Algorithm<u32> = Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};

static CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_FIO);
static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);
static CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_ARC);
static CRC7: Crc<u8> = Crc::<u8>::new(&CRC_7_MMC);

impl Method {
    /// The `verify=` names, as fio spells them.
    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "md5" => Method::Md5,
            "crc64" => Method::Crc64,
            "crc32" => Method::Crc32,
            "crc32c" | "crc32c-intel" => Method::Crc32c,
            "crc16" => Method::Crc16,
            "crc7" => Method::Crc7,
            "sha256" => Method::Sha256,
            "sha512" => Method::Sha512,
            "sha3-224" => Method::Sha3_224,
            "sha3-256" => Method::Sha3_256,
            "sha3-384" => Method::Sha3_384,
            "sha3-512" => Method::Sha3_512,
            "xxhash" => Method::Xxhash,
            "sha1" => Method::Sha1,
            "meta" => Method::Meta,
            "pattern" => Method::Pattern,
            "pattern_hdr" => Method::PatternHdr,
            "null" => Method::Null,
            _ => return None,
        })
    }

    /// The name fio prints in messages (`crc32c: verify failed …`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Md5 => "md5",
            Method::Crc64 => "crc64",
            Method::Crc32 => "crc32",
            Method::Crc32c => "crc32c",
            Method::Crc16 => "crc16",
            Method::Crc7 => "crc7",
            Method::Sha256 => "sha256",
            Method::Sha512 => "sha512",
            Method::Sha3_224 => "sha3-224",
            Method::Sha3_256 => "sha3-256",
            Method::Sha3_384 => "sha3-384",
            Method::Sha3_512 => "sha3-512",
            Method::Xxhash => "xxhash",
            Method::Sha1 => "sha1",
            Method::Meta => "meta",
            Method::Pattern => "pattern",
            Method::PatternHdr => "pattern_hdr",
            Method::Null => "null",
        }
    }

    /// The type number in the header (fio 3.33's numbering).
    pub fn type_code(self) -> u16 {
        match self {
            Method::Meta => 1,
            Method::Md5 => 2,
            Method::Crc64 => 3,
            Method::Crc32 => 4,
            Method::Crc32c => 5,
            Method::Crc16 => 7,
            Method::Crc7 => 8,
            Method::Sha256 => 9,
            Method::Sha512 => 10,
            Method::Sha3_224 => 11,
            Method::Sha3_256 => 12,
            Method::Sha3_384 => 13,
            Method::Sha3_512 => 14,
            Method::Xxhash => 15,
            Method::Sha1 => 16,
            Method::PatternHdr => 17,
            Method::Pattern => 18,
            Method::Null => 0,
        }
    }

    /// Bytes of the checksum trailer after the 40-byte header.
    pub fn trailer_len(self) -> usize {
        match self {
            Method::Md5 => 16,
            Method::Crc64 => 8,
            Method::Crc32 | Method::Crc32c | Method::Xxhash => 4,
            Method::Crc16 => 2,
            Method::Crc7 => 1,
            Method::Sha256 => 64,
            Method::Sha512 => 128,
            Method::Sha3_224 => 28,
            Method::Sha3_256 => 32,
            Method::Sha3_384 => 48,
            Method::Sha3_512 => 64,
            Method::Sha1 => 20,
            Method::Meta | Method::Pattern | Method::PatternHdr | Method::Null => 0,
        }
    }

    /// Whether blocks carry a header (all but pattern and null).
    pub fn has_header(self) -> bool {
        !matches!(self, Method::Pattern | Method::Null)
    }

    /// Header and trailer: where a chunk's checksummed data starts, in header layout
    /// `layout`.
    pub fn hdr_len(self, layout: crate::header::Layout) -> usize {
        if self.has_header() {
            layout.bytes() + self.trailer_len()
        } else {
            0
        }
    }

    /// Whether the method has a checksum over the data.
    pub fn has_checksum(self) -> bool {
        self.trailer_len() > 0
    }

    /// The trailer for `data`, as stored.
    pub fn trailer(self, data: &[u8], out: &mut [u8]) {
        let n = self.trailer_len();
        let out = &mut out[..n];
        out.fill(0);
        match self {
            Method::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
            Method::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
            Method::Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
            Method::Crc32c => out.copy_from_slice(&fio_crc32c(data).to_le_bytes()),
            Method::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
            Method::Crc7 => out[0] = CRC7.checksum(data),
            Method::Xxhash => {
                out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes())
            }
            Method::Sha1 => {
                // fio keeps SHA-1 as five host-order 32-bit words.
                let d = sha1::Sha1::digest(data);
                for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                    let v = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
                    o.copy_from_slice(&v.to_ne_bytes());
                }
            }
            Method::Sha256 => out[..32].copy_from_slice(&sha2::Sha256::digest(data)),
            Method::Sha512 => out[..64].copy_from_slice(&sha2::Sha512::digest(data)),
            Method::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
            Method::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
            Method::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
            Method::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
            Method::Meta | Method::Pattern | Method::PatternHdr | Method::Null => {}
        }
    }

    /// Every method with a header and a checksum, for tests and help.
    pub const CHECKSUMS: [Method; 14] = [
        Method::Md5,
        Method::Crc64,
        Method::Crc32,
        Method::Crc32c,
        Method::Crc16,
        Method::Crc7,
        Method::Sha256,
        Method::Sha512,
        Method::Sha3_224,
        Method::Sha3_256,
        Method::Sha3_384,
        Method::Sha3_512,
        Method::Xxhash,
        Method::Sha1,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's check values for "123456789", as fio 3.33 computes them.
    #[test]
    fn check_values_match_fio() {
        let d = b"123456789";
        let t = |m: Method| {
            let mut out = [0u8; 128];
            m.trailer(d, &mut out);
            out[..m.trailer_len()].to_vec()
        };
        assert_eq!(fio_crc32c(d), 0x1CF9_6D7C);
        assert_eq!(t(Method::Crc32c), 0x1CF9_6D7Cu32.to_le_bytes());
        assert_eq!(t(Method::Crc32), 0x89A1_897Fu32.to_le_bytes());
        assert_eq!(t(Method::Crc64), 0xE9C6_D914_C4B8_D9CAu64.to_le_bytes());
        assert_eq!(t(Method::Crc16), 0xBB3Du16.to_le_bytes());
        assert_eq!(t(Method::Crc7), [0x75]);
        assert_eq!(
            t(Method::Xxhash),
            xxhash_rust::xxh32::xxh32(d, 1).to_le_bytes()
        );
        // MD5 of "123456789".
        assert_eq!(t(Method::Md5)[..4], [0x25, 0xf9, 0xe7, 0x94]);
    }

    #[test]
    fn type_codes_and_sizes_are_fios() {
        assert_eq!(Method::from_name("crc32c-intel"), Some(Method::Crc32c));
        assert_eq!(Method::Crc32c.type_code(), 5);
        assert_eq!(Method::Sha1.type_code(), 16);
        assert_eq!(Method::Pattern.type_code(), 18);
        use crate::header::Layout;
        assert_eq!(Method::Md5.hdr_len(Layout::Fio333), 56);
        assert_eq!(Method::Sha256.hdr_len(Layout::Fio333), 104);
        assert_eq!(Method::Sha512.hdr_len(Layout::Fio333), 168);
        assert_eq!(Method::Md5.hdr_len(Layout::Fio342), 64);
        assert_eq!(Method::Pattern.hdr_len(Layout::Fio342), 0);
        assert_eq!(Method::from_name("pattern_hdr"), Some(Method::PatternHdr));
        assert_eq!(Method::PatternHdr.type_code(), 17);
    }
}
