//! 64-bit guard protection information (QEMU `pif=2`: 512-byte blocks, 16 bytes of
//! metadata that are all PI: CRC-64/NVMe guard, application tag, 48-bit reference
//! tag), through io_uring_cmd on the namespace's generic device, against fio 3.42.

use crate::common::*;
use ioscope_engine::uring_cmd::pi::crc64_nvme;
use std::path::Path;

const DEV: &str = "/dev/rig/pi64-ng";
/// Blocks of the namespace: QEMU lays a 1 GiB image out as data, then 16 bytes of
/// metadata per block.
const NSZE: u64 = (1 << 30) / (512 + 16);

/// An io_uring_cmd job on the namespace: `prog`'s run and JSON (None when it failed).
fn job(prog: &Path, extra: &[&str]) -> (Run, Option<serde_json::Value>) {
    super::job_on(prog, DEV, extra)
}

fn ok(prog: &Path, extra: &[&str]) -> serde_json::Value {
    let (r, v) = job(prog, extra);
    v.unwrap_or_else(|| panic!("{} {extra:?}: {}{}", prog.display(), r.stdout, r.stderr))
}

/// `len` bytes of the backing image at `offset`, read behind the controller.
fn image(offset: u64, len: usize) -> Vec<u8> {
    super::read_image("pi64.img", offset, len)
}

/// The PI ioscope or fio wrote for block `lba`, as the device keeps it, checked
/// against the block's data: CRC-64/NVMe guard, `apptag`, the LBA as reference tag.
fn check_block(lba: u64, apptag: u16) {
    let data = image(lba * 512, 512);
    let pi = image(512 * NSZE + lba * 16, 16);
    let guard = u64::from_be_bytes(pi[..8].try_into().unwrap());
    assert_eq!(guard, crc64_nvme(0, &data), "block {lba}: guard");
    assert_eq!(
        pi[8..10],
        apptag.to_be_bytes(),
        "block {lba}: application tag"
    );
    assert_eq!(
        pi[10..16],
        lba.to_be_bytes()[2..],
        "block {lba}: reference tag"
    );
}

/// ioscope writes the 64-bit guard PI (pi_act=0) and the controller checks every field
/// of it; the blocks on the device carry it; fio 3.42 reads ioscope's blocks through
/// its own PI checks, and ioscope reads fio's. With pi_act=1 the controller inserts
/// and strips it (no metadata buffer). A block changed behind the controller fails its
/// read with the guard check error at its offset, a reference tag with its own error.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn the_64_bit_guard_is_written_checked_and_corruption_caught() {
    super::in_guest();
    let host_pi = [
        "--pi_act=0",
        "--md_per_io_size=512",
        "--pi_chk=GUARD,REFTAG,APPTAG",
        "--apptag=0x0abc",
    ];
    let with = |a: &[&'static str]| [a, &host_pi[..]].concat();
    let v = ok(
        &bin(),
        &with(&[
            "--rw=randwrite",
            "--bs=4k",
            "--offset=1m",
            "--size=1m",
            "--verify=crc32c",
            "--do_verify=1",
        ]),
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 256);
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 256);
    for lba in [2048, 2049, 2055, 4095] {
        check_block(lba, 0x0abc);
    }
    // Too small a metadata buffer is refused, naming the 16 bytes a block.
    let (r, _) = job(
        &bin(),
        &[
            "--rw=read",
            "--bs=4k",
            "--size=4k",
            "--pi_act=0",
            "--md_per_io_size=64",
        ],
    );
    assert!(
        r.stderr.contains("128 bytes of metadata per I/O"),
        "{}",
        r.stderr
    );
    if available!(Prereq::Fio342) {
        let f = ok(
            &fio342_path(),
            &with(&["--rw=read", "--bs=4k", "--offset=1m", "--size=1m"]),
        );
        assert_eq!(
            f["jobs"][0]["read"]["total_ios"], 256,
            "fio 3.42 reads ioscope's PI"
        );
        assert_eq!(f["jobs"][0]["error"], 0);
        let f = ok(
            &fio342_path(),
            &with(&["--rw=write", "--bs=8k", "--offset=2m", "--size=1m"]),
        );
        assert_eq!(f["jobs"][0]["write"]["total_ios"], 128);
        check_block(4096 + 17, 0x0abc);
        let v = ok(
            &bin(),
            &with(&["--rw=read", "--bs=16k", "--offset=2m", "--size=1m"]),
        );
        assert_eq!(
            v["jobs"][0]["read"]["io_bytes"],
            1 << 20,
            "ioscope reads fio's PI"
        );
    }
    // The controller inserts and strips the PI: 16 bytes of metadata, all PI.
    let v = ok(
        &bin(),
        &[
            "--rw=write",
            "--bs=4k",
            "--offset=4m",
            "--size=64k",
            "--pi_chk=GUARD,REFTAG",
        ],
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 16);
    let pi = image(512 * NSZE + 8192 * 16, 16);
    assert_eq!(
        pi[10..16],
        8192u64.to_be_bytes()[2..],
        "the controller's reference tag"
    );
    // Behind the controller: a byte of block 2050's data, then block 2051's reference tag.
    super::poke_image("pi64.img", 2050 * 512 + 100, &[0xff, 0x00, 0xff]);
    super::poke_image("pi64.img", 512 * NSZE + 2051 * 16 + 12, &[0xde, 0xad]);
    let read = |at: &str, chk: &str| {
        let (r, v) = job(
            &bin(),
            &[
                "--rw=read",
                "--bs=512",
                at,
                "--size=512",
                &format!("--pi_chk={chk}"),
            ],
        );
        assert!(
            v.is_none(),
            "{at} {chk}: the corrupted block read without error"
        );
        r.stderr
    };
    let e = read("--offset=1025k", "GUARD");
    assert!(
        e.contains("cq entry status (sct=0x02; sc=0x82): end-to-end guard check error")
            && e.contains("read offset=1049600, buflen=512"),
        "{e}"
    );
    let e = read("--offset=1050112", "REFTAG");
    assert!(
        e.contains("cq entry status (sct=0x02; sc=0x84): end-to-end reference tag check error")
            && e.contains("read offset=1050112, buflen=512"),
        "{e}"
    );
}
