//! Writes to a zone at a depth above 1 on a zoned block device whose kernel may reorder
//! them (before 6.10, with a scheduler other than mq-deadline): ioscope warns, naming
//! the device, its scheduler and what to change; not where the kernel keeps them in
//! order, nor at depth 1. The rig's init sets mq-deadline on the zoned namespaces before
//! 6.10 (rig/init.sh); a job's `ioscheduler` switches it for the run and back.

use super::in_guest;
use crate::common::*;

/// The kernel in the guest has no zone write plugging (before 6.10).
fn before_6_10() -> bool {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease");
    let mut n = r
        .split(|c: char| !c.is_ascii_digit())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0)) < (6, 10)
}

/// The zoned namespace's active scheduler.
fn scheduler(disk: &str) -> String {
    let all =
        std::fs::read_to_string(format!("/sys/block/{disk}/queue/scheduler")).expect("scheduler");
    let active = all
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .expect("[active]");
    active.trim_matches(|c| c == '[' || c == ']').to_string()
}

/// One 256 KiB write to the first zone (nothing to reorder) with `extra`: it lands; its
/// stderr.
fn write_once(extra: &[&str]) -> String {
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
    let d = tmpdir();
    let mut a = vec![
        "--name=o",
        "--filename=/dev/rig/zoned",
        "--direct=1",
        "--zonemode=zbd",
        "--ioengine=libaio",
        "--rw=write",
        "--bs=256k",
        "--size=64m",
        "--number_ios=1",
        "--output-format=json",
    ];
    a.extend_from_slice(extra);
    let r = run_tool(&bin(), d.path(), &a, &[]);
    assert_eq!(r.code, 0, "{a:?}: {}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(
        v["jobs"][0]["write"]["io_bytes"].as_u64(),
        Some(256 << 10),
        "{a:?}"
    );
    r.stderr
}

#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn zone_writes_out_of_order_are_warned_of() {
    in_guest();
    let dev = std::fs::canonicalize("/dev/rig/zoned").expect("/dev/rig/zoned");
    let disk = dev
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let old = before_6_10();
    let was = scheduler(&disk);
    if old {
        assert_eq!(was, "mq-deadline", "rig/init.sh sets it before 6.10");
    }
    let warned = write_once(&["--ioscheduler=none", "--iodepth=4"]);
    if old {
        for part in [
            "job 'o': zonemode=zbd: /dev/rig/zoned",
            &format!("({disk}) has I/O scheduler none"),
            "writes at iodepth=4 may reach a zone out of order",
            "use ioscheduler=mq-deadline or iodepth=1",
        ] {
            assert!(warned.contains(part), "no {part:?} in: {warned}");
        }
        assert_eq!(warned.lines().count(), 1, "{warned}");
    } else {
        assert_eq!(warned, "", "zone write plugging keeps the order");
    }
    assert_eq!(scheduler(&disk), was, "ioscheduler=none is undone");
    assert_eq!(write_once(&["--ioscheduler=none", "--iodepth=1"]), "");
    assert_eq!(write_once(&["--ioscheduler=none", "--ioengine=psync"]), "");
    assert_eq!(
        write_once(&["--ioscheduler=mq-deadline", "--iodepth=4"]),
        ""
    );
    assert_eq!(write_once(&["--iodepth=4"]), "", "the rig's {was}");
    assert_eq!(scheduler(&disk), was);
    sh("/sbin/blkzone reset /dev/rig/zoned").expect("reset every zone");
}
