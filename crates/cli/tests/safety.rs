//! Writes to a block device with a filesystem on it are refused, and the device is left
//! byte for byte unchanged. Needs root, losetup and mkfs.ext4 (a visible skip otherwise, a
//! failure under CI=true).

use crate::common::*;

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
