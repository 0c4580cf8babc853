//! Trims on the zoned namespace are zone resets, alone or each followed by its write
//! (trimwrite): jobs run by fio 3.42 and by ioscope from the same zones, their trims,
//! writes and resets, and the zones' write pointers after each (blkzone, outside both),
//! must be fio's, which the steps spell out.

use super::{ok_job, with_fio342, zones_now};
use crate::common::*;
use std::path::Path;

const MIB: u64 = 1 << 20;
const ZONE: u64 = 64 * MIB;

/// (trim I/Os, write io_bytes, zone_resets) of one job on the zoned namespace's first
/// 4 zones, and which of those hold data after it.
fn step(prog: &Path, extra: &[&str]) -> ((u64, u64, u64), Vec<bool>) {
    let base = [
        "--name=t",
        "--filename=/dev/rig/zoned",
        "--direct=1",
        "--zonemode=zbd",
        "--ioengine=psync",
        "--size=256m",
    ];
    let v = ok_job(prog, &base, extra);
    let j = &v["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(u64::MAX);
    let did = (
        n(&j["trim"]["total_ios"]),
        n(&j["write"]["io_bytes"]),
        n(&j["zone_resets"]),
    );
    let data = zones_now()[..4].iter().map(|z| z.0 > 0).collect();
    (did, data)
}

/// 3 zones written; 2 random trims reset 2 of them (a trim drawn in an empty zone goes
/// to the nearest zone with data); a random trim job without a count resets the last
/// and ends; 2 zones written; trimwrite twice over the 4 zones (64 MiB each): 8 trims
/// and 512 MiB of writes, 2 + 4 resets, every zone full after; 3 random trims leave 1
/// zone with data.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn trims_and_trimwrite_reset_zones_as_with_fio() {
    super::in_guest();
    let mut seen = Vec::new();
    for prog in with_fio342() {
        let who = prog.display().to_string();
        sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
        let zones = |n: usize| (0..4).map(|k| k < n).collect::<Vec<bool>>();
        let write = |size: &str| step(&prog, &["--rw=write", "--bs=1m", size]);
        let trims = ["--rw=randtrim", "--bs=64m"];
        let steps = [
            (write("--io_size=192m"), ((0, 3 * ZONE, 0), Some(zones(3)))),
            (
                step(&prog, &[&trims[..], &["--number_ios=2"]].concat()),
                ((2, 0, 2), None),
            ),
            (step(&prog, &trims), ((1, 0, 1), Some(zones(0)))),
            (write("--io_size=128m"), ((0, 2 * ZONE, 0), Some(zones(2)))),
            (
                step(&prog, &["--rw=trimwrite", "--bs=64m", "--loops=2"]),
                ((8, 8 * ZONE, 6), Some(zones(4))),
            ),
            (
                step(&prog, &[&trims[..], &["--number_ios=3"]].concat()),
                ((3, 0, 3), None),
            ),
        ];
        for (k, ((did, data), (want, want_data))) in steps.iter().enumerate() {
            assert_eq!(did, want, "{who}: step {k}");
            if let Some(w) = want_data {
                assert_eq!(data, w, "{who}: step {k}: zones with data");
            }
            let left = data.iter().filter(|&&d| d).count();
            assert!(k != 1 || left == 1, "{who}: step 1 leaves 1 zone: {data:?}");
            assert!(k != 5 || left == 1, "{who}: step 5 leaves 1 zone: {data:?}");
        }
        seen.push(steps.map(|s| s.0 .0));
    }
    if let [ours, fio] = &seen[..] {
        assert_eq!(ours, fio, "ioscope, then fio 3.42");
    }
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}
