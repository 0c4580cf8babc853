//! Zones whose capacity is below their size, as ZNS drives have them: the rig's `zcap`
//! namespace has 16 zones of 64 MiB, of which 48 MiB take writes. Each job is run by
//! fio 3.42 and by ioscope from the same zones; their bytes, I/O counts and zone
//! resets, and the zones' write pointers and conditions (blkzone, outside both), must
//! be fio's, which the steps below spell out.

use super::{ok_job, with_fio342, zones_of};
use crate::common::*;
use std::path::Path;

const MIB: u64 = 1 << 20;
const ZCAP: &str = "/dev/rig/zcap";

/// What a job did: (read io_bytes, write io_bytes, I/Os, zone_resets), and the first
/// four zones after it: (write pointer from the zone's start, condition).
type Did = ((u64, u64, u64, Option<u64>), Vec<(u64, String)>);

fn reset_all() {
    sh(&format!("/sbin/blkzone reset {ZCAP}")).expect("reset every zone");
}

/// Run `prog` on the zcap namespace with zonemode=zbd and `extra`; what it did.
fn job(prog: &Path, dev: &str, extra: &[&str]) -> Did {
    let file = format!("--filename={dev}");
    let v = ok_job(prog, &["--name=z", &file, "--zonemode=zbd"], extra);
    let j = &v["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(u64::MAX);
    let ios = n(&j["read"]["total_ios"]) + n(&j["write"]["total_ios"]);
    let did = (
        n(&j["read"]["io_bytes"]),
        n(&j["write"]["io_bytes"]),
        ios,
        j.get("zone_resets").map(n),
    );
    let mut zones = zones_of(ZCAP);
    zones.truncate(4);
    (did, zones)
}

fn psync(prog: &Path, extra: &[&str]) -> Did {
    let mut a = vec!["--direct=1", "--ioengine=psync"];
    a.extend_from_slice(extra);
    job(prog, ZCAP, &a)
}

/// Zones as blkzone shows them: a full zone's write pointer at its end (64 MiB).
fn zones(z: &[(u64, &str)]) -> Vec<(u64, String)> {
    z.iter().map(|&(wp, c)| (wp, c.to_string())).collect()
}

const FU: (u64, &str) = (64 * MIB, "14(fu)");
const EM: (u64, &str) = (0, "1(em)");

/// Sequential writes stop at each zone's capacity (96 MiB of a 128 MiB region) and
/// leave the zones full; reads stop there too, but with read_beyond_wp; writing the
/// region again resets its two zones.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn writes_and_reads_keep_to_the_zone_capacity_as_with_fio() {
    super::in_guest();
    let mut seen = Vec::new();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        reset_all();
        let seq = ["--rw=write", "--bs=64k", "--size=128m"];
        let full2 = zones(&[FU, FU, EM, EM]);
        let steps = [
            (psync(&prog, &seq), ((0, 96 * MIB, 1536, Some(0)), &full2)),
            (
                psync(&prog, &["--rw=read", "--bs=64k", "--size=256m"]),
                ((96 * MIB, 0, 1536, None), &full2),
            ),
            (
                psync(
                    &prog,
                    &[
                        "--rw=randread",
                        "--bs=4k",
                        "--size=256m",
                        "--number_ios=500",
                    ],
                ),
                ((500 * 4096, 0, 500, None), &full2),
            ),
            (
                psync(
                    &prog,
                    &["--rw=read", "--bs=64k", "--size=128m", "--read_beyond_wp=1"],
                ),
                ((128 * MIB, 0, 2048, None), &full2),
            ),
            (psync(&prog, &seq), ((0, 96 * MIB, 1536, Some(2)), &full2)),
        ];
        for (k, (got, (did, z))) in steps.iter().enumerate() {
            assert_eq!(&got.0, did, "{who}: step {k}");
            assert_eq!(&got.1, *z, "{who}: step {k}: zones");
        }
        seen.push(steps.map(|s| s.0));
    }
    if let [ours, fio] = &seen[..] {
        assert_eq!(ours, fio, "ioscope, then fio 3.42");
    }
    reset_all();
}

/// A block size that leaves a remainder of the capacity (48 MiB is 1228 writes of 40k
/// and 32k) finishes the zone, or writes the remainder with write_zone_remainder; a
/// job at depth 4 appends to a partly written zone up to its capacity; zones are reset
/// by the threshold and frequency as the job writes (12 times: the job stays in zone
/// 2, which it writes to 32 MiB again and again); through io_uring_cmd on the generic
/// device, the same capacity. ioscope's figures equal fio 3.42's.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn remainders_appends_and_resets_within_the_capacity_as_with_fio() {
    super::in_guest();
    let mut seen = Vec::new();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        let mut did = Vec::new();
        let mut step = |want: (u64, u64, u64, Option<u64>), z: &[(u64, &str)], got: Did| {
            assert_eq!(got.0, want, "{who}: step {}", did.len());
            assert_eq!(got.1, zones(z), "{who}: step {}: zones", did.len());
            did.push(got.0);
        };
        let rem = ["--rw=write", "--bs=40k", "--size=64m"];
        reset_all();
        step(
            (0, 50_298_880, 1228, Some(0)),
            &[FU, EM, EM, EM],
            psync(&prog, &rem),
        );
        reset_all();
        let remainder = [&rem[..], &["--write_zone_remainder=1"]].concat();
        step(
            (0, 48 * MIB, 1229, Some(0)),
            &[FU, EM, EM, EM],
            psync(&prog, &remainder),
        );
        reset_all();
        let aio = [
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=4",
            "--rw=write",
            "--bs=64k",
        ];
        let half = [&aio[..], &["--size=64m", "--io_size=32m"]].concat();
        let oi = (32 * MIB, "2(oi)");
        step(
            (0, 32 * MIB, 512, Some(0)),
            &[oi, EM, EM, EM],
            job(&prog, ZCAP, &half),
        );
        let rest = [&aio[..], &["--size=128m"]].concat();
        step(
            (0, 64 * MIB, 1024, Some(0)),
            &[FU, FU, EM, EM],
            job(&prog, ZCAP, &rest),
        );
        reset_all();
        let gc = [
            "--rw=write",
            "--bs=64k",
            "--size=256m",
            "--io_size=512m",
            "--zone_reset_threshold=0.5",
            "--zone_reset_frequency=1",
        ];
        step(
            (0, 512 * MIB, 8192, Some(12)),
            &[FU, FU, oi, EM],
            psync(&prog, &gc),
        );
        reset_all();
        let ng = [
            "--ioengine=io_uring_cmd",
            "--cmd_type=nvme",
            "--iodepth=4",
            "--bs=64k",
        ];
        let w = [&ng[..], &["--rw=write", "--size=128m"]].concat();
        let ng_dev = "/dev/rig/zcap-ng";
        step(
            (0, 96 * MIB, 1536, Some(0)),
            &[FU, FU, EM, EM],
            job(&prog, ng_dev, &w),
        );
        let r = [&ng[..], &["--rw=read", "--size=256m"]].concat();
        step(
            (96 * MIB, 0, 1536, None),
            &[FU, FU, EM, EM],
            job(&prog, ng_dev, &r),
        );
        seen.push(did);
    }
    if let [ours, fio] = &seen[..] {
        assert_eq!(ours, fio, "ioscope, then fio 3.42");
    }
    reset_all();
}

/// Random writes at depth 4 over four zones, two open at most: two zones take all
/// 2000 writes, each within its capacity, as with fio 3.42 (which two, and how many
/// each, is each program's draw).
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn random_writes_keep_to_open_zones_within_the_capacity_as_with_fio() {
    super::in_guest();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        reset_all();
        let a = [
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=4",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256m",
            "--number_ios=2000",
            "--max_open_zones=2",
        ];
        let (did, _) = job(&prog, ZCAP, &a);
        assert_eq!(did, (0, 2000 * 4096, 2000, Some(0)), "{who}");
        let z = zones_of(ZCAP);
        let written: Vec<u64> = z.iter().map(|x| x.0).filter(|&w| w > 0).collect();
        assert_eq!(written.len(), 2, "{who}: {z:?}");
        assert_eq!(written.iter().sum::<u64>(), 2000 * 4096, "{who}: {z:?}");
        assert!(written.iter().all(|&w| w <= 48 * MIB), "{who}: {z:?}");
    }
    reset_all();
}
