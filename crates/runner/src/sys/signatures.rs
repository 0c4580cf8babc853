//! What a block device carries, from its first and last bytes: the file system,
//! partition table, volume manager, RAID, cache and pool signatures blkid knows best,
//! each where blkid looks for it. Written from the formats' published layouts.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Bytes read from each end of the device: every signature below lies within them.
const SPAN: u64 = 512 << 10;

/// A magic string at a fixed offset from the start of the device.
struct Magic {
    at: u64,
    bytes: &'static [u8],
    what: &'static str,
}

const fn m(at: u64, bytes: &'static [u8], what: &'static str) -> Magic {
    Magic { at, bytes, what }
}

const EXT: &str = "an ext2/3/4 file system";
const LVM: &str = "an LVM2 physical volume";
const SWAP: &str = "a swap area";
const GPT: &str = "a GPT partition table";
const FAT: &str = "a FAT (vfat) file system";
const SQUASHFS: &str = "a squashfs file system";
const BCACHE_MAGIC: &[u8] = &[
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const BCACHEFS_MAGIC: &[u8] = &[
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];
/// MD RAID superblock magic, 0xa92b4efc little-endian.
const MD_MAGIC: &[u8] = &[0xfc, 0x4e, 0x2b, 0xa9];

/// Magic strings at fixed offsets from the start, in the order blkid tries them.
const MAGICS: &[Magic] = &[
    m(0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    m(0, b"bluestore block device", "a Ceph BlueStore OSD"),
    m(0, b"dmvdo001", "a VDO volume"),
    m(0, b"integrt\0", "a dm-integrity volume"),
    m(0, b"verity\0\0", "a dm-verity hash device"),
    m(0, MD_MAGIC, "an MD RAID member (superblock 1.1)"),
    m(4096, MD_MAGIC, "an MD RAID member (superblock 1.2)"),
    m(0, b"LABELONE", LVM),
    m(512, b"LABELONE", LVM),
    m(1024, b"LABELONE", LVM),
    m(1536, b"LABELONE", LVM),
    m(0x1018, BCACHE_MAGIC, "a bcache device"),
    m(0x1018, BCACHEFS_MAGIC, "a bcachefs file system"),
    m(
        4096 + 32,
        b"!Stra0tis\x86\xff\x02^\x41rh",
        "a Stratis pool member",
    ),
    m(0x438, &[0x53, 0xef], EXT),
    m(0, b"XFSB", "an XFS file system"),
    m(0x10040, b"_BHRfS_M", "a btrfs file system"),
    m(0x400, &[0x10, 0x20, 0xf5, 0xf2], "an F2FS file system"),
    m(0x400, &[0xe2, 0xe1, 0xf5, 0xe0], "an EROFS file system"),
    m(3, b"EXFAT   ", "an exFAT file system"),
    m(3, b"NTFS    ", "an NTFS file system"),
    m(0x52, b"FAT32   ", FAT),
    m(0x36, b"FAT12   ", FAT),
    m(0x36, b"FAT16   ", FAT),
    m(0x36, b"FAT     ", FAT),
    m(0, b"hsqs", SQUASHFS),
    m(0, b"sqsh", SQUASHFS),
    m(0x8000, b"JFS1", "a JFS file system"),
    m(0x8001, b"CD001", "an ISO 9660 file system"),
    m(0x10034, b"ReIsEr", "a ReiserFS file system"),
    m(4096 - 10, b"SWAPSPACE2", SWAP),
    m(4096 - 10, b"SWAP-SPACE", SWAP),
    m(8192 - 10, b"SWAPSPACE2", SWAP),
    m(16384 - 10, b"SWAPSPACE2", SWAP),
    m(65536 - 10, b"SWAPSPACE2", SWAP),
    m(512, b"EFI PART", GPT),
    m(4096, b"EFI PART", GPT),
];

/// The device's first and last [`SPAN`] bytes.
struct Sample {
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Offset of `tail[0]` on the device.
    tail_at: u64,
    size: u64,
}

impl Sample {
    fn read(file: &File, size: u64) -> Sample {
        let head = read_at(file, 0, SPAN.min(size));
        let tail_at = size.saturating_sub(SPAN);
        let tail = read_at(file, tail_at, size - tail_at);
        Sample {
            head,
            tail,
            tail_at,
            size,
        }
    }

    /// `len` bytes at device offset `at`, when they were read.
    fn at(&self, at: u64, len: usize) -> Option<&[u8]> {
        slice(&self.head, at, len).or_else(|| slice(&self.tail, at.checked_sub(self.tail_at)?, len))
    }

    fn has(&self, at: u64, magic: &[u8]) -> bool {
        self.at(at, magic.len()) == Some(magic)
    }

    fn u16_le(&self, at: u64) -> Option<u16> {
        let b = self.at(at, 2)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }
}

fn slice(buf: &[u8], at: u64, len: usize) -> Option<&[u8]> {
    let o = usize::try_from(at).ok()?;
    buf.get(o..o.checked_add(len)?)
}

fn read_at(file: &File, at: u64, len: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len as usize];
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf.truncate(got);
    buf
}

/// The first signature found on the device (`size` bytes long), if any.
pub fn find_signature(file: &File, size: u64) -> Option<&'static str> {
    let s = Sample::read(file, size);
    MAGICS
        .iter()
        .find(|g| s.has(g.at, g.bytes))
        .map(|g| g.what)
        .or_else(|| md_at_end(&s))
        .or_else(|| zfs(&s))
        .or_else(|| minix(&s))
        .or_else(|| mbr(&s))
}

/// MD superblocks 0.90 and 1.0 live near the end of the member.
fn md_at_end(s: &Sample) -> Option<&'static str> {
    let v090 = (s.size & !0xffff).checked_sub(0x10000);
    let v10 = s.size.checked_sub(8192).map(|o| o & !4095);
    if v090.is_some_and(|o| s.has(o, MD_MAGIC)) {
        return Some("an MD RAID member (superblock 0.90)");
    }
    v10.filter(|&o| s.has(o, MD_MAGIC))
        .map(|_| "an MD RAID member (superblock 1.0)")
}

/// A ZFS pool member: uberblocks (magic 0x00bab10c, either byte order) in the 1 KiB
/// slots of the uberblock area (128 KiB into each of the four 256 KiB vdev labels, two
/// at each end); at least four, as blkid asks.
fn zfs(s: &Sample) -> Option<&'static str> {
    const LABEL: u64 = 256 << 10;
    let magic = 0x00ba_b10c_u64;
    let align = s.size % LABEL;
    let labels = [
        Some(0),
        Some(LABEL),
        s.size.checked_sub(2 * LABEL + align),
        s.size.checked_sub(LABEL + align),
    ];
    let found = labels
        .into_iter()
        .flatten()
        .flat_map(|l| (0..128).map(move |i| l + (128 << 10) + i * 1024))
        .filter(|&o| {
            s.at(o, 8).is_some_and(|b| {
                let b: [u8; 8] = b.try_into().unwrap_or_default();
                u64::from_le_bytes(b) == magic || u64::from_be_bytes(b) == magic
            })
        })
        .count();
    (found >= 4).then_some("a ZFS pool member")
}

/// A minix superblock (1 KiB in): a two-byte magic, so only with plausible counts
/// beside it.
fn minix(s: &Sample) -> Option<&'static str> {
    let sb = 1024;
    let magic = s.u16_le(sb + 16)?;
    let v3 = s.u16_le(sb + 24)? == 0x4d5a;
    if !(matches!(magic, 0x137f | 0x138f | 0x2468 | 0x2478) || v3) {
        return None;
    }
    let (inodes, imap, zmap) = (s.u16_le(sb)?, s.u16_le(sb + 4)?, s.u16_le(sb + 6)?);
    let log_zone = s.u16_le(sb + 10)?;
    let plausible = imap > 0 && zmap > 0 && log_zone == 0 && (inodes > 0 || v3);
    plausible.then_some("a minix file system")
}

/// A DOS/MBR partition table: the boot signature and one plausible entry.
fn mbr(s: &Sample) -> Option<&'static str> {
    if !s.has(510, &[0x55, 0xaa]) {
        return None;
    }
    let entries = s.at(446, 64)?;
    entries
        .chunks(16)
        .any(|e| e[4] != 0 && (e[0] == 0 || e[0] == 0x80))
        .then_some("a DOS/MBR partition table")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn image(size: usize, put: &[(usize, &[u8])]) -> tempfile::NamedTempFile {
        let mut data = vec![0u8; size];
        for (at, b) in put {
            data[*at..*at + b.len()].copy_from_slice(b);
        }
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&data).unwrap();
        f
    }

    fn found(f: &tempfile::NamedTempFile) -> Option<&'static str> {
        find_signature(f.as_file(), f.as_file().metadata().unwrap().len())
    }

    #[test]
    fn magics_at_both_ends() {
        assert_eq!(found(&image(8192, &[(1080, &[0x53, 0xef])])), Some(EXT));
        assert_eq!(found(&image(8192, &[])), None);
        // MD 1.0 8 KiB before the end of a 1 MiB member, 0.90 in its last 64 KiB.
        let one = image(1 << 20, &[((1 << 20) - 8192, MD_MAGIC)]);
        assert_eq!(found(&one), Some("an MD RAID member (superblock 1.0)"));
        let old = image(1 << 20, &[((1 << 20) - 0x10000, MD_MAGIC)]);
        assert_eq!(found(&old), Some("an MD RAID member (superblock 0.90)"));
        // A device shorter than a magic's offset is not misread.
        assert_eq!(found(&image(100, &[(3, b"NTFS")])), None);
    }

    #[test]
    fn zfs_wants_four_uberblocks_and_minix_plausible_counts() {
        let ub = 0x00ba_b10c_u64.to_le_bytes();
        let at = |i: usize| (128 << 10) + i * 1024;
        let three = image(4 << 20, &[(at(0), &ub), (at(1), &ub), (at(2), &ub)]);
        assert_eq!(found(&three), None);
        let four = image(
            4 << 20,
            &[(at(0), &ub), (at(1), &ub), (at(2), &ub), (at(9), &ub)],
        );
        assert_eq!(found(&four), Some("a ZFS pool member"));
        let magic_only = image(8192, &[(1040, &[0x8f, 0x13])]);
        assert_eq!(found(&magic_only), None);
        let sb: &[u8] = &[32, 0, 0, 1, 1, 0, 1, 0, 5, 0, 0, 0];
        let minix = image(8192, &[(1024, sb), (1040, &[0x8f, 0x13])]);
        assert_eq!(found(&minix), Some("a minix file system"));
    }
}
