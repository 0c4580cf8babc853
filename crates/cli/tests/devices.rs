//! Block-device behaviour on loop devices over /dev/shm (root and losetup; a visible skip
//! otherwise, a failure under CI=true): ioscheduler is switched for the run and restored;
//! trims punch holes in files.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::process::Command;

use crate::common::LoopDev as Loop;

#[test]
fn ioscheduler_is_switched_for_the_run_and_restored() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = Loop::new("64M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let before = std::fs::read_to_string(lp.sched_path()).unwrap_or_default();
    let Some(target) = ["mq-deadline", "bfq", "none"].into_iter().find(|s| {
        before.split_whitespace().any(|x| x == *s) && !before.contains(&format!("[{s}]"))
    }) else {
        skip!("a second I/O scheduler for loop devices (the kernel offers {before:?})")
    };
    let d = tmpdir();
    let child = Command::new(bin())
        .args([
            "--name=s",
            &format!("--filename={}", lp.dev),
            "--rw=randread",
            "--direct=1",
            "--time_based",
            "--runtime=2",
            &format!("--ioscheduler={target}"),
            "--output-format=json",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let during = std::fs::read_to_string(lp.sched_path()).unwrap_or_default();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        during.contains(&format!("[{target}]")),
        "during the run: {during}"
    );
    let after = std::fs::read_to_string(lp.sched_path()).unwrap_or_default();
    assert_eq!(after, before, "restored after the run");
    // A scheduler the device does not offer is a clear error.
    let r = run_in(
        d.path(),
        &[
            "--name=s",
            &format!("--filename={}", lp.dev),
            "--rw=randread",
            "--size=1m",
            "--ioscheduler=nosuch",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("ioscheduler=nosuch"), "{}", r.stderr);
}

#[test]
fn trims_punch_holes_in_files_and_discard_on_devices() {
    let d = tmpdir();
    let path = d.path().join("data");
    std::fs::write(&path, vec![0xabu8; 4 << 20]).unwrap();
    let before = std::fs::metadata(&path).unwrap().blocks();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=t",
            "--filename=data",
            "--size=4m",
            "--bs=64k",
            "--rw=trim",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&job(&v, 0)["trim"]["io_bytes"]), 4 << 20);
    assert_eq!(u(&job(&v, 0)["trim"]["total_ios"]), 64);
    let after = std::fs::metadata(&path).unwrap().blocks();
    assert!(
        after < before / 10,
        "holes punched: {before} -> {after} blocks"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        4 << 20,
        "size kept"
    );
    if available!(Prereq::Root) && available!(Prereq::LOSETUP) {
        let Some(lp) = Loop::new("16M") else {
            skip!("a loop device over /dev/shm (losetup --find --show failed)")
        };
        let (r, v) = run_json(
            d.path(),
            &[
                "--name=t",
                &format!("--filename={}", lp.dev),
                "--bs=1m",
                "--rw=randtrim",
                "--ioengine=libaio",
                "--output-format=json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(u(&job(&v, 0)["trim"]["io_bytes"]), 16 << 20);
    }
}

#[test]
fn fill_device_writes_until_the_filesystem_is_full() {
    require!(Prereq::Root, Prereq::MOUNT);
    let d = tmpdir();
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if sh(&format!(
        "mount -t tmpfs -o size=8m tmpfs {}",
        mnt.display()
    ))
    .is_none()
    {
        skip!("permission to mount a tmpfs (mount -t tmpfs failed)")
    }
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=f",
            "--directory=mnt",
            "--rw=write",
            "--bs=64k",
            "--fill_device=1",
            "--output-format=json",
        ],
    );
    let _ = sh(&format!("umount {}", mnt.display()));
    assert_eq!(r.code, 0, "ENOSPC ends the job without error: {}", r.stderr);
    assert_eq!(job(&v, 0)["error"], 0);
    let written = u(&job(&v, 0)["write"]["io_bytes"]);
    assert!(
        ((7 << 20)..=(8 << 20)).contains(&written),
        "wrote {written} bytes into an 8 MiB filesystem"
    );
}

/// SCSI commands know no partitions: `ioengine=sg` on one would address the whole
/// disk from LBA 0, past the checks made on the partition. Refused, naming why, before
/// anything is opened for I/O.
#[test]
fn sg_on_a_partition_is_refused() {
    require!(
        Prereq::Root,
        Prereq::LOSETUP,
        Prereq::Program {
            name: "sfdisk",
            package: "fdisk"
        },
        Prereq::Program {
            name: "partx",
            package: "util-linux"
        }
    );
    let Some(lp) = Loop::new("64M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let part = format!("{}p1", lp.dev);
    if sh(&format!(
        "echo 'start=2048, size=8192' | sfdisk -q {0} && partx -a {0}",
        lp.dev
    ))
    .is_none()
        || !std::path::Path::new(&part).exists()
    {
        skip!("a partition on a loop device (sfdisk and partx -a failed)")
    }
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=p",
            &format!("--filename={part}"),
            "--ioengine=sg",
            "--rw=read",
            "--size=4k",
        ],
    );
    let _ = sh(&format!("partx -d {}", lp.dev));
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stderr.contains(&part) && r.stderr.contains("would address the whole disk"),
        "{}",
        r.stderr
    );
}
