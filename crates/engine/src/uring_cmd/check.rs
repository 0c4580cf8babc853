//! The host's own check of the protection information a read brings back when the
//! controller does not strip it (`pi_act=0`), as fio 3.42 checks it after the
//! controller: for each block, the fields `pi_chk` names. It catches what goes wrong
//! between the controller's check and the host's memory.
//!
//! A block whose application tag is 0xFFFF (types 1 and 2), or whose application and
//! reference tags are all ones (type 3), has its checks disabled, as the NVMe
//! specification and fio say.

use super::nvme::{NsInfo, PRCHK_APPTAG, PRCHK_GUARD, PRCHK_REFTAG};
use super::pi::{crc16_t10dif, crc64_nvme, Guard};

/// A field that does not hold what it should.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Guard = 1,
    AppTag = 2,
    RefTag = 3,
}

/// What a read's checks are against: its first LBA and the expected tags.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    pub slba: u64,
    /// PRCHK bits (`pi_chk`).
    pub chk: u32,
    pub apptag: u16,
    pub apptag_mask: u16,
}

/// One block's PI fields: guard, application tag, reference tag.
fn fields(guard: Guard, pi: &[u8]) -> (u64, u16, u64) {
    let be = |b: &[u8]| b.iter().fold(0u64, |v, &x| v << 8 | u64::from(x));
    match guard {
        Guard::Crc16 => (be(&pi[0..2]), be(&pi[2..4]) as u16, be(&pi[4..8])),
        Guard::Crc64 => (be(&pi[0..8]), be(&pi[8..10]) as u16, be(&pi[10..16])),
    }
}

/// Check each block (its data and its metadata); the first field that fails, with
/// the block's index in the read.
pub fn check<'a>(
    ns: NsInfo,
    e: Expect,
    blocks: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) -> Result<(), (Field, usize)> {
    let len = ns.guard.pi_bytes();
    let at = if ns.pi_first {
        0
    } else {
        usize::from(ns.ms) - len
    };
    let mask = ns.guard.reftag_mask();
    for (i, (data, meta)) in blocks.enumerate() {
        let (before, pi) = meta.split_at(at);
        let (guard, app, reftag) = fields(ns.guard, &pi[..len]);
        let disabled = match ns.pi_type {
            3 => app == 0xffff && reftag == mask,
            _ => app == 0xffff,
        };
        if disabled {
            continue;
        }
        if e.chk & PRCHK_GUARD != 0 {
            let want = match ns.guard {
                Guard::Crc16 => u64::from(crc16_t10dif(crc16_t10dif(0, data), before)),
                Guard::Crc64 => crc64_nvme(crc64_nvme(0, data), before),
            };
            if guard != want {
                return Err((Field::Guard, i));
            }
        }
        if e.chk & PRCHK_APPTAG != 0 && (app ^ e.apptag) & e.apptag_mask != 0 {
            return Err((Field::AppTag, i));
        }
        let lba = e.slba.wrapping_add(i as u64) & mask;
        if e.chk & PRCHK_REFTAG != 0 && ns.pi_type != 3 && reftag != lba {
            return Err((Field::RefTag, i));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uring_cmd::meta::write_pi;

    fn ns(guard: Guard, ms: u16, pi_type: u8) -> NsInfo {
        NsInfo {
            nsid: 1,
            lba_shift: 9,
            ms,
            nsze: 1 << 20,
            pi_type,
            pi_first: false,
            guard,
            extended: false,
        }
    }

    const ALL: u32 = PRCHK_GUARD | PRCHK_APPTAG | PRCHK_REFTAG;

    fn run(n: NsInfo, data: &[u8], md: &[u8], e: Expect) -> Result<(), (Field, usize)> {
        let ms = usize::from(n.ms);
        check(n, e, data.chunks(512).zip(md.chunks(ms)))
    }

    #[test]
    fn written_pi_passes_and_each_corruption_is_named_with_its_block() {
        for (guard, ms) in [(Guard::Crc16, 8), (Guard::Crc16, 16), (Guard::Crc64, 16)] {
            let n = ns(guard, ms, 1);
            let ms = usize::from(ms);
            let mut data: Vec<u8> = (0..4 * 512).map(|i| (i * 7) as u8).collect();
            let mut md = vec![0u8; 4 * ms];
            write_pi(n, 0x1234, 100, data.chunks(512).zip(md.chunks_mut(ms)));
            let e = Expect {
                slba: 100,
                chk: ALL,
                apptag: 0x1234,
                apptag_mask: 0xffff,
            };
            assert_eq!(run(n, &data, &md, e), Ok(()));
            data[2 * 512 + 5] ^= 1;
            assert_eq!(run(n, &data, &md, e), Err((Field::Guard, 2)));
            assert_eq!(
                run(
                    n,
                    &data,
                    &md,
                    Expect {
                        chk: PRCHK_REFTAG,
                        ..e
                    }
                ),
                Ok(())
            );
            data[2 * 512 + 5] ^= 1;
            let pi = ms - guard.pi_bytes();
            let app = pi + if guard == Guard::Crc16 { 2 } else { 8 };
            md[ms + app + 1] ^= 0x40;
            assert_eq!(run(n, &data, &md, e), Err((Field::AppTag, 1)));
            // Bits outside apptag_mask are not compared.
            assert_eq!(
                run(
                    n,
                    &data,
                    &md,
                    Expect {
                        apptag_mask: 0xff00,
                        ..e
                    }
                ),
                Ok(())
            );
            md[ms + app + 1] ^= 0x40;
            assert_eq!(
                run(n, &data, &md, Expect { slba: 101, ..e }),
                Err((Field::RefTag, 0))
            );
            // An application tag of 0xFFFF turns the block's checks off.
            md[3 * ms + app..][..2].copy_from_slice(&[0xff, 0xff]);
            data[3 * 512] ^= 1;
            assert_eq!(run(n, &data, &md, e), Ok(()));
        }
    }

    #[test]
    fn type_3_has_no_reference_tag_to_check() {
        let n = ns(Guard::Crc16, 8, 3);
        let data = vec![9u8; 512];
        let mut md = vec![0u8; 8];
        write_pi(n, 7, 55, data.chunks(512).zip(md.chunks_mut(8)));
        let e = Expect {
            slba: 55,
            chk: ALL,
            apptag: 7,
            apptag_mask: 0xffff,
        };
        assert_eq!(run(n, &data, &md, Expect { slba: 1, ..e }), Ok(()));
    }
}
