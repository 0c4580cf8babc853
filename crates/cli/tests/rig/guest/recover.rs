//! recover_zbd_write_error on the zoned namespace: a write made to fail for real. While
//! the job thinks (thinktime after its first 16 writes of 64 KiB), another writer puts
//! 4 KiB of its own at zone 0's write pointer (1 MiB); the job's next write there
//! fails (the device's write pointer is past it). With continue_on_error the job goes
//! on; with recover_zbd_write_error it first reads the zone's write pointer (1 MiB +
//! 4 KiB) and writes from there to the failed write's end: its data (the failed write
//! covers that range) or, when several writes in flight failed, zeros. The zone ends at
//! 2 MiB with the other writer's block at 1 MiB and the job's data around it, as with
//! fio 3.42, whose numbers must equal ioscope's.

use super::{ok_job, read_back, with_fio342, zones_now};
use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const BLOCK: u64 = 64 << 10;
const ZONED: &str = "/dev/rig/zoned";

/// The other writer: once zone 0's write pointer stands still past 1 MiB (the job
/// thinking), 4 KiB of 0xa5 there, through the block device with O_DIRECT. Where.
fn poke_when_the_job_thinks() -> std::thread::JoinHandle<Result<u64, String>> {
    std::thread::spawn(|| {
        let start = Instant::now();
        let wp = || zones_now().first().map_or(0, |z| z.0);
        let at = loop {
            if start.elapsed() > Duration::from_secs(120) {
                return Err(format!(
                    "zone 0's write pointer never stood still: {}",
                    wp()
                ));
            }
            let before = wp();
            std::thread::sleep(Duration::from_millis(300));
            if (MIB..2 * MIB).contains(&before) && wp() == before {
                break before;
            }
        };
        let block = tmpdir();
        let src = block.path().join("a5");
        std::fs::write(&src, [0xa5u8; 4096]).map_err(|e| e.to_string())?;
        let out = std::process::Command::new("dd")
            .arg(format!("if={}", src.display()))
            .args(["of=/dev/rig/zoned", "bs=4k", "count=1"])
            .arg(format!("seek={}", at / 4096))
            .args(["oflag=direct", "status=none"])
            .output()
            .map_err(|e| e.to_string())?;
        match out.status.success() {
            true => Ok(at),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    })
}

/// One run of `prog` writing 2 MiB to zone 0 of `dev` with `extra` options while the
/// other writer pokes: (write io_bytes, total_err, first error) of its JSON, and where
/// the other writer wrote.
fn recovered_run(prog: &Path, dev: &str, extra: &[&str]) -> ((u64, u64, u64), u64) {
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
    let poke = poke_when_the_job_thinks();
    let file = format!("--filename={dev}");
    let base = [
        "--name=z",
        &file,
        "--direct=1",
        "--zonemode=zbd",
        "--rw=write",
        "--bs=64k",
        "--size=64m",
        "--io_size=2m",
        "--thinktime=2s",
        "--thinktime_blocks=16",
        "--continue_on_error=all",
        "--recover_zbd_write_error=1",
        "--buffer_pattern=0x5a",
    ];
    let v = ok_job(prog, &base, extra);
    let poked = poke.join().expect("the poking thread");
    let at = poked.unwrap_or_else(|e| panic!("{}: {e}", prog.display()));
    let j = &v["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(u64::MAX);
    let did = (
        n(&j["write"]["io_bytes"]),
        n(&j["total_err"]),
        n(&j["error"]),
    );
    (did, at)
}

/// Zone 0 after a recovered run with `failed` writes: its write pointer at 2 MiB,
/// the other writer's block at `at`, then what the recovery wrote up to the end of
/// the failed writes (the failed write's own data when it was the only one, zeros
/// otherwise), and the job's data everywhere else.
fn check_zone(who: &str, at: u64, failed: u64) {
    assert_eq!(zones_now()[0].0, 2 * MIB, "{who}: zone 0's write pointer");
    let data = read_back("/dev/rig/zoned", 2);
    let poked = at as usize..(at + 4096) as usize;
    let fill = poked.end..(at + failed * BLOCK) as usize;
    let fill_byte = if failed == 1 { 0x5a } else { 0 };
    for (i, &b) in data.iter().enumerate() {
        let want = match i {
            _ if poked.contains(&i) => 0xa5,
            _ if fill.contains(&i) => fill_byte,
            _ => 0x5a,
        };
        assert_eq!(
            b, want,
            "{who}: byte {i} of zone 0 ({failed} failed writes)"
        );
    }
}

/// psync: one write fails, its data written from the device's write pointer on; the
/// same numbers and the same zone for ioscope and fio 3.42.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn a_failed_zoned_write_is_recovered_with_its_data_as_with_fio() {
    super::in_guest();
    let mut seen = Vec::new();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        let (did, at) = recovered_run(&prog, ZONED, &["--ioengine=psync"]);
        assert_eq!(did, (2 * MIB - BLOCK, 1, libc::EIO as u64), "{who}");
        assert_eq!(at, MIB, "{who}: the job thinks after 16 writes");
        check_zone(&who, at, 1);
        seen.push(did);
    }
    if let [ours, fio] = &seen[..] {
        assert_eq!(ours, fio, "ioscope, then fio 3.42");
    }
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}

/// libaio at depth 4: the writes in flight behind the failed one fail too; once they
/// have completed the write pointer is moved past them all, by zeros (by the failed
/// write's data when it failed alone). ioscope, and fio 3.42 held to the same rules
/// (how many writes were in flight is each run's own).
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn failed_zoned_writes_in_flight_are_recovered_as_with_fio() {
    super::in_guest();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        let extra = ["--ioengine=libaio", "--iodepth=4"];
        let ((bytes, errors, first), at) = recovered_run(&prog, ZONED, &extra);
        assert!((1..=4).contains(&errors), "{who}: {errors} failed writes");
        assert_eq!(
            (bytes, first),
            (2 * MIB - errors * BLOCK, libc::EIO as u64),
            "{who}"
        );
        check_zone(&who, at, errors);
    }
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}

/// Through io_uring_cmd on the namespace's generic device: the failed write is the
/// device's Zone Invalid Write, and the write pointer is moved by an NVMe Write of the
/// failed write's data. fio 3.42 cannot (it moves write pointers through the block
/// device's calls, which the generic device does not take); ioscope alone.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn a_failed_passthrough_write_is_recovered_by_nvme_commands() {
    super::in_guest();
    let extra = ["--ioengine=io_uring_cmd", "--cmd_type=nvme"];
    let (did, at) = recovered_run(&bin(), "/dev/rig/zoned-ng", &extra);
    assert_eq!(did, (2 * MIB - BLOCK, 1, libc::EIO as u64));
    check_zone("ioscope on zoned-ng", at, 1);
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}
