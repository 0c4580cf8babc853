//! End-to-end protection information (NVM command set specification, "End-to-end
//! Data Protection"): the two guard formats Linux and QEMU offer without storage tags,
//! and the tuple of one block, as the host writes it when the controller does not
//! insert it (PRACT clear).
//!
//! - 16-bit guard (8 bytes): CRC-16/T10-DIF guard, application tag, 32-bit reference tag.
//! - 64-bit guard (16 bytes): CRC-64/NVMe guard, application tag, 48-bit reference tag.
//!
//! All fields are big-endian. When the protection information is the last bytes of a
//! block's metadata, its guard covers the block's data and the metadata before it.

/// The guard format of a namespace's current LBA format (Identify Namespace for the
/// NVM command set, ELBAF PIF; 16-bit when the controller does not report it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    Crc16,
    Crc64,
}

impl Guard {
    /// Bytes of one block's protection information.
    pub fn pi_bytes(self) -> usize {
        match self {
            Guard::Crc16 => 8,
            Guard::Crc64 => 16,
        }
    }

    /// The reference tag's bits: 32, or 48 with the 64-bit guard (no storage tag).
    pub fn reftag_mask(self) -> u64 {
        match self {
            Guard::Crc16 => u64::from(u32::MAX),
            Guard::Crc64 => (1 << 48) - 1,
        }
    }
}

/// One block's protection information, written into `out` (its first
/// [`Guard::pi_bytes`] bytes): the guard over `data` then `before` (the metadata bytes
/// that precede the PI), the application tag, the reference tag (cut to its bits).
pub fn put_pi(
    guard: Guard,
    (data, before): (&[u8], &[u8]),
    apptag: u16,
    reftag: u64,
    out: &mut [u8],
) {
    let reftag = reftag & guard.reftag_mask();
    match guard {
        Guard::Crc16 => {
            let g = crc16_t10dif(crc16_t10dif(0, data), before);
            out[0..2].copy_from_slice(&g.to_be_bytes());
            out[2..4].copy_from_slice(&apptag.to_be_bytes());
            out[4..8].copy_from_slice(&(reftag as u32).to_be_bytes());
        }
        Guard::Crc64 => {
            let g = crc64_nvme(crc64_nvme(0, data), before);
            out[0..8].copy_from_slice(&g.to_be_bytes());
            out[8..10].copy_from_slice(&apptag.to_be_bytes());
            out[10..16].copy_from_slice(&reftag.to_be_bytes()[2..]);
        }
    }
}

/// CRC-16/T10-DIF (polynomial 0x8BB7, initial 0, not reflected) of `data`, going on
/// from `crc` (0 to start).
pub fn crc16_t10dif(crc: u16, data: &[u8]) -> u16 {
    data.iter().fold(crc, |crc, &b| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// CRC-64/NVMe (polynomial 0xAD93D23594C93659, reflected, initial and final XOR all
/// ones) of `data`, going on from the CRC `crc` of what came before (0 to start).
pub fn crc64_nvme(crc: u64, data: &[u8]) -> u64 {
    !data.iter().fold(!crc, |crc, &b| {
        (crc >> 8) ^ CRC64_TABLE[usize::from(crc as u8 ^ b)]
    })
}

const CRC16_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000 != 0 {
                (c << 1) ^ 0x8BB7
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The table of the reflected polynomial (0xAD93D23594C93659 bit-reversed).
const CRC64_TABLE: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x9A6C_9329_AC4B_C9B5
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guards_are_the_catalogued_crcs() {
        // The check values of CRC-16/T10-DIF and CRC-64/NVME.
        assert_eq!(crc16_t10dif(0, b"123456789"), 0xD0DB);
        assert_eq!(crc64_nvme(0, b"123456789"), 0xAE8B_1486_0A79_9888);
        // Going on from a part's CRC is the CRC of the whole.
        assert_eq!(
            crc64_nvme(crc64_nvme(0, b"1234"), b"56789"),
            0xAE8B_1486_0A79_9888
        );
        assert_eq!(crc16_t10dif(crc16_t10dif(0, b"12"), b"3456789"), 0xD0DB);
    }

    #[test]
    fn tuples_are_laid_out_big_endian() {
        let mut pi = [0u8; 16];
        put_pi(
            Guard::Crc16,
            (&[0u8; 512], &[]),
            0x1234,
            0x1_0000_0007,
            &mut pi,
        );
        assert_eq!(&pi[2..8], &[0x12, 0x34, 0, 0, 0, 7]);
        let mut pi = [0u8; 16];
        put_pi(
            Guard::Crc64,
            (&[0u8; 512], &[]),
            0xabcd,
            0x7f_0102_0304_0506,
            &mut pi,
        );
        assert_eq!(
            &pi[8..16],
            &[0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]
        );
        assert_eq!(
            u64::from_be_bytes(pi[..8].try_into().unwrap()),
            crc64_nvme(0, &[0u8; 512])
        );
        // The metadata before the PI is guarded too.
        let mut other = [0u8; 16];
        put_pi(Guard::Crc64, (&[0u8; 512], &[1]), 0xabcd, 0, &mut other);
        assert_ne!(pi[..8], other[..8]);
    }
}
