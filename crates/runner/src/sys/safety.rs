//! Never destroy data by surprise: before writing to a block device, refuse if it (or
//! a partition on it) is mounted, used by another device (dm, md, LVM), or carries a
//! filesystem, partition table, LVM, RAID or swap signature.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// (major, minor) of a block device.
pub fn dev_numbers(rdev: u64) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// Kernel name ("sda", "loop0", "nvme0n1p1") of a block device.
pub fn kernel_name(major: u32, minor: u32) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Names of the partitions of a whole-disk device.
fn partitions(name: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/sys/class/block/{name}")) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with(name) && Path::new(&format!("/sys/class/block/{n}/partition")).exists()
        })
        .collect()
}

fn dev_of(name: &str) -> Option<(u32, u32)> {
    let s = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Mount points of the given devices, from /proc/self/mountinfo.
fn mounts_of(devs: &[(u32, u32)]) -> Vec<String> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (a, b) = f.get(2)?.split_once(':')?;
            let d = (a.parse().ok()?, b.parse().ok()?);
            devs.contains(&d)
                .then(|| f.get(4).unwrap_or(&"?").to_string())
        })
        .collect()
}

/// Is the device listed as active swap?
fn is_active_swap(names: &[String]) -> bool {
    std::fs::read_to_string("/proc/swaps")
        .map(|s| {
            s.lines()
                .skip(1)
                .any(|l| names.iter().any(|n| l.starts_with(&format!("/dev/{n} "))))
        })
        .unwrap_or(false)
}

fn holders(name: &str) -> Vec<String> {
    std::fs::read_dir(format!("/sys/class/block/{name}/holders"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Known on-disk signatures: (offset, magic, what).
const SIGNATURES: &[(u64, &[u8], &str)] = &[
    (1080, &[0x53, 0xEF], "an ext2/3/4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (0x10040, b"_BHRfS_M", "a btrfs filesystem"),
    (512, b"EFI PART", "a GPT partition table"),
    (512, b"LABELONE", "an LVM physical volume"),
    (536, b"LVM2 001", "an LVM physical volume"),
    (4096, &[0xFC, 0x4E, 0x2B, 0xA9], "an MD RAID member (v1.2)"),
    (0, &[0xFC, 0x4E, 0x2B, 0xA9], "an MD RAID member (v1.1)"),
    (4086, b"SWAPSPACE2", "a swap area"),
    (4086, b"SWAP-SPACE", "a swap area"),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (0x36, b"FAT", "a FAT filesystem"),
    (0x52, b"FAT32", "a FAT32 filesystem"),
    (0x8001, b"CD001", "an ISO 9660 filesystem"),
    (0, b"hsqs", "a squashfs filesystem"),
    (0x400, &[0x10, 0x20, 0xF5, 0xF2], "an F2FS filesystem"),
    (0x10000 + 0x40, b"ReIsEr", "a ReiserFS filesystem"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (
        0x1018,
        &[
            0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba,
            0x6d, 0x81,
        ],
        "a bcache device",
    ),
];

/// The first signature found in the device's first 128 KiB, if any.
pub fn find_signature(file: &File) -> Option<&'static str> {
    let mut buf = vec![0u8; 128 * 1024];
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    let buf = &buf[..got];
    for (off, magic, what) in SIGNATURES {
        let o = *off as usize;
        if buf.len() >= o + magic.len() && &buf[o..o + magic.len()] == *magic {
            return Some(what);
        }
    }
    // MBR: boot signature plus at least one plausible partition entry.
    if buf.len() >= 512 && buf[510] == 0x55 && buf[511] == 0xAA {
        let entries = &buf[446..510];
        if entries
            .chunks(16)
            .any(|e| e[4] != 0 && (e[0] == 0 || e[0] == 0x80))
        {
            return Some("a DOS/MBR partition table");
        }
    }
    None
}

/// Why writing to this block device would destroy data, or None if it looks unused.
pub fn write_hazard(path: &Path, rdev: u64) -> Option<String> {
    let (ma, mi) = dev_numbers(rdev);
    let name = kernel_name(ma, mi).unwrap_or_else(|| path.display().to_string());
    let mut names = vec![name.clone()];
    names.extend(partitions(&name));
    let devs: Vec<(u32, u32)> = names
        .iter()
        .filter_map(|n| dev_of(n))
        .chain([(ma, mi)])
        .collect();
    let mounted = mounts_of(&devs);
    if let Some(m) = mounted.first() {
        return Some(format!(
            "{} (/dev/{name}) is mounted on {m}",
            path.display()
        ));
    }
    if is_active_swap(&names) {
        return Some(format!("{} is in use as swap", path.display()));
    }
    for n in &names {
        let h = holders(n);
        if !h.is_empty() {
            return Some(format!(
                "{} is in use by {} (device-mapper/MD/LVM)",
                path.display(),
                h.join(", ")
            ));
        }
    }
    if names.len() > 1 {
        return Some(format!(
            "{} has partitions ({})",
            path.display(),
            names[1..].join(", ")
        ));
    }
    let file = File::open(path).ok()?;
    find_signature(&file).map(|what| format!("{} carries {what}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn detects_signatures() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let mut data = vec![0u8; 8192];
        data[1080] = 0x53;
        data[1081] = 0xEF;
        f.write_all(&data).unwrap();
        assert_eq!(find_signature(f.as_file()), Some("an ext2/3/4 filesystem"));
        let mut g = tempfile::NamedTempFile::new().unwrap();
        g.write_all(&vec![0u8; 8192]).unwrap();
        assert_eq!(find_signature(g.as_file()), None);
    }
}
