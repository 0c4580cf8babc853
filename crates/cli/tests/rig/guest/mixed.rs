//! Reads mixed with writes on the zoned namespace, by fio 3.42 and by ioscope from
//! empty zones. Which I/O is a read is each program's own draw (their mixes differ I/O
//! by I/O, not in share), so the two are held to the same rules rather than the same
//! sequence, checked from each one's write_iolog: every write at its zone's write
//! pointer, every read within data written before it, the job's bytes all done, and
//! the zones' write pointers (blkzone, outside both) where the writes left them.

use super::{ok_job, with_fio342, zones_now};
use crate::common::*;
use std::collections::HashMap;
use std::path::Path;

const ZONE: u64 = 64 << 20;

/// (reads, writes, bytes written per zone) of a log.
type Logged = (u64, u64, HashMap<u64, u64>);

/// What a job's iolog shows: (reads, writes, bytes written per zone), with every
/// write at its zone's write pointer and every read below it (zones empty at first).
fn replay(log: &str) -> Logged {
    let mut wp: HashMap<u64, u64> = HashMap::new();
    let (mut reads, mut writes) = (0, 0);
    for l in log.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let [_, _, act, off, len] = f[..] else {
            continue;
        };
        let (Ok(off), Ok(len)) = (off.parse::<u64>(), len.parse::<u64>()) else {
            continue;
        };
        let zone = off / ZONE;
        let at = wp.entry(zone).or_insert(0);
        match act {
            "write" => {
                assert_eq!(off, zone * ZONE + *at, "a write off the write pointer: {l}");
                *at += len;
                writes += 1;
            }
            "read" => {
                assert!(off + len <= zone * ZONE + *at, "a read past the data: {l}");
                reads += 1;
            }
            _ => panic!("{l}"),
        }
    }
    (reads, writes, wp)
}

/// Run `prog` on the zoned namespace with `extra` from empty zones: the job's (read
/// I/Os, write I/Os, read+write bytes, zone_resets) and its log's [`replay`].
fn mixed(prog: &Path, extra: &[&str]) -> ((u64, u64, u64, u64), Logged) {
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
    let d = tmpdir();
    let log = d.path().join("io.log");
    let log_arg = format!("--write_iolog={}", log.display());
    let base = [
        "--name=m",
        "--filename=/dev/rig/zoned",
        "--direct=1",
        "--zonemode=zbd",
        &log_arg,
    ];
    let v = ok_job(prog, &base, extra);
    let j = &v["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(u64::MAX);
    let did = (
        n(&j["read"]["total_ios"]),
        n(&j["write"]["total_ios"]),
        n(&j["read"]["io_bytes"]) + n(&j["write"]["io_bytes"]),
        n(&j["zone_resets"]),
    );
    let text = std::fs::read_to_string(&log).expect("the job's iolog");
    (did, replay(&text))
}

/// Sequential rw at depth 1 and 4, and random rw with two zones open at most: each
/// program does the job's bytes, its log keeps to the rules, and the device's write
/// pointers are where its writes put them.
#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn reads_mixed_with_writes_keep_to_the_written_data_as_with_fio() {
    super::in_guest();
    let seq = ["--rw=rw", "--bs=64k", "--size=128m", "--io_size=16m"];
    let aio = ["--ioengine=libaio", "--iodepth=4"];
    let rand = [
        "--ioengine=psync",
        "--rw=randrw",
        "--bs=4k",
        "--size=256m",
        "--number_ios=3000",
        "--max_open_zones=2",
    ];
    for prog in with_fio342() {
        let who = prog.display().to_string();
        for extra in [
            [&seq[..], &["--ioengine=psync"]].concat(),
            [&seq[..], &aio[..]].concat(),
            rand.to_vec(),
        ] {
            let (did, (reads, writes, wp)) = mixed(&prog, &extra);
            let what = format!("{who} {extra:?}: {did:?}");
            assert_eq!((did.0, did.1), (reads, writes), "{what}: the log's I/Os");
            assert!(reads > 0 && writes > 0, "{what}");
            assert_eq!(did.3, 0, "{what}: no zone resets");
            match extra.contains(&"--rw=rw") {
                true => assert_eq!(did.2, 16 << 20, "{what}: io_size"),
                false => assert_eq!(reads + writes, 3000, "{what}: number_ios"),
            }
            let zones = zones_now();
            for (k, z) in zones.iter().enumerate() {
                let logged = wp.get(&(k as u64)).copied().unwrap_or(0);
                assert_eq!(z.0, logged, "{what}: zone {k}'s write pointer");
            }
            let open = zones.iter().filter(|z| z.0 > 0).count();
            assert!(open <= 2, "{what}: {zones:?}");
        }
    }
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}
