//! Writes to a block device carrying any signature blkid knows (file systems, partition
//! tables, volume managers, RAID, caches, pools), mounted in any mount namespace or held
//! by another process are refused, and the device is left byte for byte unchanged.
//! Needs root, losetup, blkid and each format's tool (a visible skip otherwise, a
//! failure under CI=true).

use crate::common::*;
use std::path::Path;

#[test]
fn formatted_loop_device_is_refused_and_unchanged() {
    require!(Prereq::Root, Prereq::LOSETUP, Prereq::MKFS_EXT4);
    let d = tmpdir();
    let img = d.path().join("disk.img");
    let Some(dev) = sh(&format!(
        "truncate -s 64M {0} && mkfs.ext4 -q -F {0} && losetup --find --show {0}",
        img.display()
    )) else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let before = std::fs::read(&img).unwrap();
    for rw in ["write", "randwrite", "trim", "randrw"] {
        let r = run_in(
            d.path(),
            &[
                "--name=x",
                &format!("--filename={dev}"),
                &format!("--rw={rw}"),
                "--size=1m",
                "--direct=1",
            ],
        );
        assert_eq!(r.code, 1, "{rw}: {}", r.stderr);
        assert!(
            r.stderr.contains("refusing to write") && r.stderr.contains("ext2/3/4"),
            "{rw}: {}",
            r.stderr
        );
    }
    // Reading is fine.
    let r = run_in(
        d.path(),
        &[
            "--name=x",
            &format!("--filename={dev}"),
            "--rw=randread",
            "--size=1m",
            "--direct=1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let _ = sh(&format!("losetup -d {dev}"));
    assert!(std::fs::read(&img).unwrap() == before, "the device changed");
}

#[test]
fn blank_loop_device_is_writable_and_explicit_override_works() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let d = tmpdir();
    let img = d.path().join("blank.img");
    let Some(dev) = sh(&format!(
        "truncate -s 16M {0} && losetup --find --show {0}",
        img.display()
    )) else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=x",
            &format!("--filename={dev}"),
            "--rw=write",
            "--bs=64k",
            "--direct=1",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        u(&job(&v, 0)["write"]["io_bytes"]),
        16 << 20,
        "the whole device by default"
    );
    let _ = sh(&format!("losetup -d {dev}"));
}

/// How a test makes a device image: a shell command (`{img}` is its path) run by a
/// program that must be installed, or bytes written here in the format's layout.
enum Make {
    Tool {
        program: &'static str,
        package: &'static str,
        cmd: &'static str,
    },
    Bytes(fn(&mut [u8])),
}

/// An image of `size` bytes made by `make`, which blkid's low-level probe must name
/// `blkid` (so the sample is the real thing, by blkid's judgement), behind a loop
/// device: every kind of write is refused naming `what`, and the image is unchanged
/// byte for byte.
fn signature_refused(size: u64, make: Make, blkid: &str, what: &str) {
    require!(Prereq::Root, Prereq::LOSETUP, Prereq::BLKID);
    let d = tmpdir();
    let img = d.path().join("disk.img");
    match make {
        Make::Tool {
            program,
            package,
            cmd,
        } => {
            require!(Prereq::Program {
                name: program,
                package
            });
            let cmd = cmd.replace("{img}", &img.display().to_string());
            let made = sh(&format!(
                "truncate -s {size} {0} && ({cmd}) >/dev/null 2>&1 && truncate -s {size} {0}",
                img.display()
            ));
            assert!(made.is_some(), "could not make the image: {cmd}");
        }
        Make::Bytes(fill) => {
            let mut bytes = vec![0u8; size as usize];
            fill(&mut bytes);
            std::fs::write(&img, bytes).unwrap();
        }
    }
    let probe = sh(&format!("blkid -p -o export {}", img.display())).unwrap_or_default();
    assert!(
        probe
            .lines()
            .any(|l| l == format!("TYPE={blkid}") || l == format!("PTTYPE={blkid}")),
        "blkid does not name the sample {blkid}: {probe}"
    );
    let Some(dev) = sh(&format!("losetup --find --show {}", img.display())) else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let before = std::fs::read(&img).unwrap();
    let runs: Vec<Run> = ["write", "randwrite", "trim", "randrw"]
        .iter()
        .map(|rw| {
            run_in(
                d.path(),
                &[
                    "--name=x",
                    &format!("--filename={dev}"),
                    &format!("--rw={rw}"),
                    "--size=1m",
                    "--direct=1",
                ],
            )
        })
        .collect();
    let _ = sh(&format!("losetup -d {dev}"));
    for r in &runs {
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr.contains("refusing to write") && r.stderr.contains(&format!("carries {what}")),
            "{what}: {}",
            r.stderr
        );
    }
    assert!(std::fs::read(&img).unwrap() == before, "the device changed");
}

const fn tool(program: &'static str, package: &'static str, cmd: &'static str) -> Make {
    Make::Tool {
        program,
        package,
        cmd,
    }
}

#[test]
fn ext4_is_never_written() {
    let make = tool("mkfs.ext4", "e2fsprogs", "mkfs.ext4 -q -F {img}");
    signature_refused(16 << 20, make, "ext4", "an ext2/3/4 file system");
}

#[test]
fn xfs_is_never_written() {
    let make = tool("mkfs.xfs", "xfsprogs", "mkfs.xfs -q -f {img}");
    signature_refused(320 << 20, make, "xfs", "an XFS file system");
}

#[test]
fn btrfs_is_never_written() {
    let make = tool("mkfs.btrfs", "btrfs-progs", "mkfs.btrfs -q -f {img}");
    signature_refused(128 << 20, make, "btrfs", "a btrfs file system");
}

#[test]
fn f2fs_is_never_written() {
    let make = tool("mkfs.f2fs", "f2fs-tools", "mkfs.f2fs -q -f {img}");
    signature_refused(64 << 20, make, "f2fs", "an F2FS file system");
}

#[test]
fn exfat_is_never_written() {
    let make = tool("mkfs.exfat", "exfatprogs", "mkfs.exfat {img}");
    signature_refused(16 << 20, make, "exfat", "an exFAT file system");
}

#[test]
fn vfat_is_never_written() {
    let make = tool("mkfs.vfat", "dosfstools", "mkfs.vfat {img}");
    signature_refused(16 << 20, make, "vfat", "a FAT (vfat) file system");
}

#[test]
fn ntfs_is_never_written() {
    let make = tool("mkntfs", "ntfs-3g", "mkntfs -q -F -Q {img}");
    signature_refused(16 << 20, make, "ntfs", "an NTFS file system");
}

#[test]
fn erofs_is_never_written() {
    let cmd = "rm -f {img} && d=$(mktemp -d) && echo data > $d/f && mkfs.erofs {img} $d; \
               r=$?; rm -r $d; exit $r";
    let make = tool("mkfs.erofs", "erofs-utils", cmd);
    signature_refused(16 << 20, make, "erofs", "an EROFS file system");
}

#[test]
fn squashfs_is_never_written() {
    let cmd = "rm -f {img} && d=$(mktemp -d) && echo data > $d/f && \
               mksquashfs $d {img} -quiet -noappend; r=$?; rm -r $d; exit $r";
    let make = tool("mksquashfs", "squashfs-tools", cmd);
    signature_refused(16 << 20, make, "squashfs", "a squashfs file system");
}

#[test]
fn minix_is_never_written() {
    let make = tool("mkfs.minix", "util-linux", "mkfs.minix {img}");
    signature_refused(16 << 20, make, "minix", "a minix file system");
}

#[test]
fn swap_is_never_written() {
    let make = tool("mkswap", "util-linux", "mkswap {img}");
    signature_refused(16 << 20, make, "swap", "a swap area");
}

#[test]
fn gpt_is_never_written() {
    let make = tool("sfdisk", "fdisk", "echo 'label: gpt' | sfdisk -q {img}");
    signature_refused(16 << 20, make, "gpt", "a GPT partition table");
}

#[test]
fn mbr_is_never_written() {
    let make = tool(
        "sfdisk",
        "fdisk",
        "printf 'label: dos\\n,8M\\n' | sfdisk -q {img}",
    );
    signature_refused(16 << 20, make, "dos", "a DOS/MBR partition table");
}

#[test]
fn lvm2_is_never_written() {
    // pvcreate wants a block device: a loop device of its own for the labelling.
    let cmd = "l=$(losetup --find --show {img}) && pvcreate -q -ff -y $l; r=$?; \
               losetup -d $l; exit $r";
    let make = tool("pvcreate", "lvm2", cmd);
    signature_refused(16 << 20, make, "LVM2_member", "an LVM2 physical volume");
}

#[test]
fn luks_is_never_written() {
    let cmd = "printf pw | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
               --pbkdf-force-iterations 1000 {img} -";
    let make = tool("cryptsetup", "cryptsetup-bin", cmd);
    signature_refused(32 << 20, make, "crypto_LUKS", "a LUKS encrypted volume");
}

#[test]
fn bcache_is_never_written() {
    let make = tool("make-bcache", "bcache-tools", "make-bcache -B {img}");
    signature_refused(16 << 20, make, "bcache", "a bcache device");
}

/// An MD RAID 1.2 member: the version-1 superblock 4 KiB in, its checksum as md
/// computes it (mdadm needs the md driver, which this kernel may lack).
#[test]
fn mdraid_is_never_written() {
    fn fill(b: &mut [u8]) {
        let sectors = (b.len() / 512) as u64;
        let mut sb = vec![0u8; 256 + 2 * 2];
        let put = |sb: &mut Vec<u8>, at: usize, v: &[u8]| sb[at..at + v.len()].copy_from_slice(v);
        put(&mut sb, 0, &0xa92b_4efc_u32.to_le_bytes()); // magic
        put(&mut sb, 4, &1u32.to_le_bytes()); // major version
        put(&mut sb, 16, &[7; 16]); // set uuid
        put(&mut sb, 32, b"ioscope:test");
        put(&mut sb, 72, &1u32.to_le_bytes()); // level: raid1
        put(&mut sb, 80, &(sectors - 2048).to_le_bytes()); // size
        put(&mut sb, 92, &2u32.to_le_bytes()); // raid disks
        put(&mut sb, 128, &2048u64.to_le_bytes()); // data offset
        put(&mut sb, 136, &(sectors - 2048).to_le_bytes()); // data size
        put(&mut sb, 144, &8u64.to_le_bytes()); // super offset (sectors)
        put(&mut sb, 220, &2u32.to_le_bytes()); // max dev
        put(&mut sb, 258, &1u16.to_le_bytes()); // roles: 0, 1
        let sum: u64 = sb
            .chunks(4)
            .map(|w| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
            .sum();
        let csum = ((sum & 0xffff_ffff) + (sum >> 32)) as u32;
        put(&mut sb, 216, &csum.to_le_bytes());
        b[4096..4096 + sb.len()].copy_from_slice(&sb);
    }
    let what = "an MD RAID member (superblock 1.2)";
    signature_refused(16 << 20, Make::Bytes(fill), "linux_raid_member", what);
}

/// A ZFS pool member: uberblocks in the four vdev labels (zpool needs the zfs module).
#[test]
fn zfs_is_never_written() {
    fn fill(b: &mut [u8]) {
        let n = b.len();
        for label in [0, 256 << 10, n - (512 << 10), n - (256 << 10)] {
            for i in 0..8 {
                let at = label + (128 << 10) + i * 1024;
                b[at..at + 8].copy_from_slice(&0x00ba_b10c_u64.to_le_bytes());
                b[at + 8..at + 16].copy_from_slice(&5000u64.to_le_bytes());
            }
        }
    }
    signature_refused(
        64 << 20,
        Make::Bytes(fill),
        "zfs_member",
        "a ZFS pool member",
    );
}

/// A Ceph BlueStore OSD's block device: its label at the start.
#[test]
fn ceph_bluestore_is_never_written() {
    fn fill(b: &mut [u8]) {
        let label = b"bluestore block device\n2d5b4d5e-0a0c-4c2a-9e3c-6f1b0c1d2e3f\n";
        b[..label.len()].copy_from_slice(label);
    }
    signature_refused(
        16 << 20,
        Make::Bytes(fill),
        "ceph_bluestore",
        "a Ceph BlueStore OSD",
    );
}

/// A device held open exclusively by another process (as md, dm or a mount would) is
/// refused as in use, though it carries nothing and is mounted nowhere we can see.
#[test]
fn a_device_another_process_holds_is_never_written() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lo) = LoopDev::new("16M") else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let hold = format!(
        "import os, sys, time\nfd = os.open('{}', os.O_RDONLY | os.O_EXCL)\n\
         print('held', flush=True)\nsys.stdin.read()\n",
        lo.dev
    );
    let mut holder = std::process::Command::new("python3")
        .args(["-c", &hold])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "held");
    let d = tmpdir();
    let job = [
        "--name=x",
        &format!("--filename={}", lo.dev),
        "--rw=write",
        "--size=1m",
    ];
    let r = run_in(d.path(), &job);
    drop(holder.stdin.take());
    let _ = holder.wait();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is in use"), "{}", r.stderr);
    let written = std::fs::read(lo.backing()).unwrap();
    assert!(written.iter().all(|&b| b == 0), "the device was written");
    // Once the holder has gone, the blank device is writable.
    let r = run_in(d.path(), &job);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A device mounted in another mount namespace (a container's): /proc/self/mountinfo
/// does not show it, the exclusive open refuses it.
#[test]
fn a_device_mounted_in_another_namespace_is_never_written() {
    require!(
        Prereq::Root,
        Prereq::LOSETUP,
        Prereq::MKFS_EXT4,
        Prereq::MOUNT
    );
    require!(Prereq::Program {
        name: "unshare",
        package: "util-linux"
    });
    let d = tmpdir();
    let img = d.path().join("disk.img");
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let Some(dev) = sh(&format!(
        "truncate -s 16M {0} && mkfs.ext4 -q -F {0} && losetup --find --show {0}",
        img.display()
    )) else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let before = std::fs::read(&img).unwrap();
    // Read-only without replaying the journal: mounting writes nothing.
    let script = format!(
        "mount -o ro,noload {dev} {} && echo mounted && read _",
        mnt.display()
    );
    let mut container = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(container.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let here = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let r = run_in(
        d.path(),
        &[
            "--name=x",
            &format!("--filename={dev}"),
            "--rw=write",
            "--size=1m",
        ],
    );
    drop(container.stdin.take());
    let _ = container.wait();
    let _ = sh(&format!("losetup -d {dev}"));
    assert_eq!(line.trim(), "mounted");
    assert!(
        !here.contains(&mnt.display().to_string()),
        "the mount leaked here"
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is in use: mounted"), "{}", r.stderr);
    assert!(std::fs::read(&img).unwrap() == before, "the device changed");
}

/// A device the user may not open says so ("Permission denied"), not "beyond the
/// device size 0".
#[test]
fn a_device_it_may_not_open_says_permission_denied() {
    require!(Prereq::Root, Prereq::LOSETUP);
    require!(Prereq::Program {
        name: "setpriv",
        package: "util-linux"
    });
    let Some(lo) = LoopDev::new("4M") else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let bin = bin();
    let r = run_tool(
        Path::new("setpriv"),
        Path::new("/"),
        &[
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            &bin.display().to_string(),
            "--name=x",
            &format!("--filename={}", lo.dev),
            "--rw=read",
            "--size=1m",
        ],
        &[],
    );
    if r.stderr.contains("setpriv:") {
        skip!(
            "setpriv cannot run ioscope as nobody here: {}",
            r.stderr.trim()
        );
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    let want = format!("{}: cannot open: Permission denied", lo.dev);
    assert!(r.stderr.contains(&want), "{}", r.stderr);
    assert!(!r.stderr.contains("device size"), "{}", r.stderr);
}
