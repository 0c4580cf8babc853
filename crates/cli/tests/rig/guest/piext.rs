//! An extended-LBA format (QEMU `mset=1`): each 512-byte block travels with its 8 bytes
//! of type 1 protection information inside the data, 520 bytes a block on the host's
//! side, through io_uring_cmd on the namespace's generic device, against fio 3.42.

use crate::common::*;
use ioscope_engine::uring_cmd::pi::crc16_t10dif;
use std::path::Path;

const DEV: &str = "/dev/rig/piext-ng";
/// Blocks of the namespace: QEMU keeps a 1 GiB image as data, then 8 bytes of
/// metadata per block, whatever the format the host sees.
const NSZE: u64 = (1 << 30) / (512 + 8);
/// ioscope writes the PI into each block's metadata, the controller checks it.
const HOST_PI: [&str; 3] = [
    "--pi_act=0",
    "--pi_chk=GUARD,REFTAG,APPTAG",
    "--apptag=0x0abc",
];

/// An io_uring_cmd job on the namespace: `prog`'s run and JSON (None when it failed).
fn job(prog: &Path, extra: &[&str]) -> (Run, Option<serde_json::Value>) {
    super::job_on(prog, DEV, extra)
}

fn ok(prog: &Path, extra: &[&str]) -> serde_json::Value {
    let (r, v) = job(prog, extra);
    v.unwrap_or_else(|| panic!("{} {extra:?}: {}{}", prog.display(), r.stdout, r.stderr))
}

fn refused(prog: &Path, extra: &[&str]) -> String {
    let (r, v) = job(prog, extra);
    assert!(
        v.is_none(),
        "{} {extra:?} ran: {}",
        prog.display(),
        r.stdout
    );
    r.stderr
}

/// `len` bytes of the backing image at `offset`, read behind the controller.
fn image(offset: u64, len: usize) -> Vec<u8> {
    super::read_image("piext.img", offset, len)
}

/// Block `lba`'s PI as the device keeps it, checked against its data.
fn check_block(lba: u64, apptag: u16) {
    let data = image(lba * 512, 512);
    let pi = image(512 * NSZE + lba * 8, 8);
    assert_eq!(
        pi[..2],
        crc16_t10dif(0, &data).to_be_bytes(),
        "block {lba}: guard"
    );
    assert_eq!(
        pi[2..4],
        apptag.to_be_bytes(),
        "block {lba}: application tag"
    );
    assert_eq!(
        pi[4..8],
        (lba as u32).to_be_bytes(),
        "block {lba}: reference tag"
    );
}

/// Blocks of 520 bytes: ioscope writes each block's PI inside its data (pi_act=0) and
/// the controller checks every field; the device keeps it; ioscope and fio 3.42 read
/// each other's blocks through the controller's checks (and fio's own). With pi_act=1
/// the controller inserts and strips the PI, and blocks are 512 bytes again. Block
/// sizes that are not whole blocks, and verify (the PI is inside the data), are refused
/// before any I/O, as fio refuses them. A block changed behind the controller fails its
/// read with the guard check error at its offset.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn extended_lbas_carry_their_protection_information_inside_the_data() {
    super::in_guest();
    let with = |a: &[&'static str]| [a, &HOST_PI[..]].concat();
    let w = ok(&bin(), &with(&["--rw=write", "--bs=4160", "--size=266240"]));
    assert_eq!(w["jobs"][0]["write"]["total_ios"], 64);
    assert_eq!(w["jobs"][0]["write"]["io_bytes"], 266_240);
    for lba in [0, 1, 7, 8, 511] {
        check_block(lba, 0x0abc);
    }
    let r = ok(
        &bin(),
        &with(&["--rw=randread", "--bs=1040", "--size=266240"]),
    );
    assert_eq!(r["jobs"][0]["read"]["io_bytes"], 266_240);
    let e = refused(&bin(), &with(&["--rw=write", "--bs=4k", "--size=64k"]));
    assert!(
        e.contains("block size must be a multiple of 520 (LBA data size + metadata size)")
            && e.contains("bs=4160?"),
        "{e}"
    );
    let e = refused(
        &bin(),
        &with(&[
            "--rw=write",
            "--bs=4160",
            "--size=266240",
            "--verify=crc32c",
        ]),
    );
    assert!(
        e.contains("verify cannot be used on an extended-LBA format"),
        "{e}"
    );
    if available!(Prereq::Fio342) {
        let f = ok(
            &fio342_path(),
            &with(&["--rw=read", "--bs=4160", "--size=266240"]),
        );
        assert_eq!(
            f["jobs"][0]["read"]["total_ios"], 64,
            "fio 3.42 reads ioscope's PI"
        );
        assert_eq!(f["jobs"][0]["error"], 0);
        let f = ok(
            &fio342_path(),
            &with(&[
                "--rw=write",
                "--bs=8320",
                "--offset=532480",
                "--size=266240",
            ]),
        );
        assert_eq!(f["jobs"][0]["write"]["total_ios"], 32);
        check_block(1024 + 33, 0x0abc);
        let v = ok(
            &bin(),
            &with(&["--rw=read", "--bs=520", "--offset=532480", "--size=266240"]),
        );
        assert_eq!(
            v["jobs"][0]["read"]["total_ios"], 512,
            "ioscope reads fio's PI"
        );
        let e = refused(
            &fio342_path(),
            &with(&["--rw=write", "--bs=4k", "--size=64k"]),
        );
        assert!(
            e.contains("block size must be a multiple of 520"),
            "fio 3.42: {e}"
        );
    }
    // The controller inserts and strips the PI: 512-byte blocks on the host's side.
    let v = ok(
        &bin(),
        &["--rw=write", "--bs=4k", "--offset=1m", "--size=64k"],
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 16);
    assert_eq!(image(512 * NSZE + 2048 * 8 + 4, 4), 2048u32.to_be_bytes());
    let v = ok(
        &bin(),
        &[
            "--rw=read",
            "--bs=4k",
            "--offset=1m",
            "--size=64k",
            "--pi_chk=GUARD,REFTAG",
        ],
    );
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 16);
    // Behind the controller: a byte of block 5's data.
    super::poke_image("piext.img", 5 * 512 + 100, &[0xff, 0x00, 0xff]);
    let e = refused(
        &bin(),
        &[
            "--rw=read",
            "--bs=520",
            "--offset=2600",
            "--size=520",
            "--pi_act=0",
            "--pi_chk=GUARD",
        ],
    );
    assert!(
        e.contains("cq entry status (sct=0x02; sc=0x82): end-to-end guard check error")
            && e.contains("read offset=2600, buflen=520"),
        "{e}"
    );
}
