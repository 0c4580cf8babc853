//! `ioscope peak`: NOP mode runs; file mode issues the I/O it claims, as the kernel
//! counts it (the loop device's own statistics); latency percentiles are present and sane.

use crate::common::*;

fn percentiles(v: &serde_json::Value) -> Vec<(f64, u64)> {
    let mut p: Vec<(f64, u64)> = v["clat_ns"]["percentile"]
        .as_object()
        .expect("clat percentiles")
        .iter()
        .map(|(k, x)| (k.parse().unwrap(), u(x)))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

#[test]
fn nop_mode_runs_with_sane_percentiles() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            "--nop",
            "--depth=32",
            "--batch=8",
            "--runtime=1",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(u(&v["ios"]) > 10_000, "{v}");
    assert!(v["iops"].as_f64().unwrap() > 10_000.0);
    assert!(
        (7.9..=8.1).contains(&v["ios_per_submit"].as_f64().unwrap()),
        "batches of 8: {v}"
    );
    let p = percentiles(&v);
    assert_eq!(p.len(), 17);
    assert!(
        p.windows(2).all(|w| w[0].1 <= w[1].1),
        "percentiles ascend: {p:?}"
    );
    assert!(p[0].1 > 0 && p[16].1 < 1_000_000_000, "{p:?}");
    assert_eq!(u(&v["clat_ns"]["N"]), u(&v["ios"]), "every I/O timed");
    let (r, v) = run_json(
        d.path(),
        &["peak", "--nop", "--runtime=1", "--no-lat", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&v["clat_ns"]["N"]), 0, "--no-lat takes no timestamps");
    let r = run_in(d.path(), &["peak", "--nop", "--runtime=1"]);
    assert!(
        r.stdout.contains("IOPS") && r.stdout.contains("percentiles"),
        "{}",
        r.stdout
    );
    let r = run_in(d.path(), &["peak"]);
    assert_eq!(r.code, 1, "a target is required");
}

#[test]
fn nops_that_name_a_file_leave_it_untouched() {
    // `peak --nop FILE`: every NOP names FILE (registered) and the registered buffer,
    // as t/io_uring -N1's do, so the kernel looks both up; the file is opened only.
    let d = tmpdir();
    let f = d.path().join("nopfile");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).expect("write the file");
    let mtime = || {
        std::fs::metadata(&f)
            .and_then(|m| m.modified())
            .expect("mtime")
    };
    let before = mtime();
    let path = f.to_str().expect("utf-8 path");
    let args = [
        "peak",
        "--nop",
        "--depth=16",
        "--batch=4",
        "--runtime=1",
        "--registerfiles",
        "--fixedbufs",
        "--json",
        path,
    ];
    let r = run_in(d.path(), &args);
    if r.code != 0 && r.stderr.contains("refused by this kernel") {
        skip!(
            "a kernel whose NOPs name files (Linux 6.13+): {}",
            r.stderr.trim()
        );
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    assert!(u(&v["ios"]) > 1000, "{v}");
    assert_eq!(u(&v["clat_ns"]["N"]), u(&v["ios"]), "every NOP timed");
    let per_call = v["ios_per_submit"].as_f64().expect("ios_per_submit");
    assert!((3.9..=4.1).contains(&per_call), "batches of 4: {v}");
    assert_eq!(std::fs::read(&f).expect("read back"), data, "never written");
    assert_eq!(mtime(), before, "never written");
    for (bad, says) in [
        (vec!["peak", "--nop", path, path], "at most one file"),
        (
            vec!["peak", "--nop", "--write", path],
            "--write is not for it",
        ),
    ] {
        let r = run_in(d.path(), &bad);
        assert_eq!(r.code, 1, "{bad:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{bad:?}: {}", r.stderr);
    }
}

#[test]
fn file_mode_issues_the_io_it_claims() {
    // A loop device: the kernel's own I/O count of it checks peak's.
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::new("256M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let dev = lp.dev.clone();
    let name = dev.trim_start_matches("/dev/").to_string();
    // Reads completed plus reads merged into others: the requests the device was sent.
    let reads = || -> u64 {
        std::fs::read_to_string(format!("/sys/block/{name}/stat"))
            .ok()
            .map(|s| {
                s.split_whitespace()
                    .take(2)
                    .filter_map(|x| x.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0)
    };
    let d = tmpdir();
    let before = reads();
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            &dev,
            "--depth=16",
            "--batch=4",
            "--runtime=1",
            "--json",
        ],
    );
    let after = reads();
    drop(lp);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ios = u(&v["ios"]);
    assert!(ios > 1000, "{v}");
    // The kernel saw exactly the reads peak reports.
    let kernel = after - before;
    assert!(
        kernel >= ios && kernel <= ios + 16,
        "peak says {ios}, the device counted {kernel}"
    );
    let p = percentiles(&v);
    assert!(p.windows(2).all(|w| w[0].1 <= w[1].1), "{p:?}");
    assert!(
        p[8].1 >= 1_000,
        "a real read takes at least a microsecond: {p:?}"
    );
}

/// A loop device of 4 KiB sectors read 512 bytes at a time: every I/O fails (EINVAL).
/// peak prints no IOPS for it (it printed "peak: 128000 IOPS" and percentiles of 0),
/// its JSON carries the error and no figures, and it exits 1.
#[test]
fn a_run_whose_io_all_failed_prints_no_figures() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::with("64M", "--sector-size 4096 --direct-io=on") else {
        skip!("a loop device with 4 KiB sectors (losetup --sector-size)")
    };
    let dev = lp.dev.clone();
    let d = tmpdir();
    let text = run_in(d.path(), &["peak", &dev, "--bs=512", "--runtime=1"]);
    let json = run_in(
        d.path(),
        &["peak", &dev, "--bs=512", "--runtime=1", "--json"],
    );
    drop(lp);
    assert_eq!(text.code, 1, "{}", text.stderr);
    assert!(!text.stdout.contains("IOPS"), "{}", text.stdout);
    assert!(
        text.stderr.contains("the I/O failed (err=22"),
        "{}",
        text.stderr
    );
    assert_eq!(json.code, 1, "{}", json.stderr);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(v["error"], 22, "{v}");
    assert!(v.get("iops").is_none() && v.get("clat_ns").is_none(), "{v}");
}

/// --polled on a device without poll queues (a loop device's queue/io_poll is 0) is
/// refused before any I/O with the reason (every I/O failed with EOPNOTSUPP, and the
/// failures' rate was printed as the peak); --depth=0 and --batch=0 are refused (they
/// were silently made 1).
#[test]
fn polled_io_needs_poll_queues_and_depths_are_counted() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lo) = LoopDev::new("16M") else {
        skip!("a loop device (losetup --find --show failed)")
    };
    let d = tmpdir();
    let r = run_in(d.path(), &["peak", &lo.dev, "--polled", "--runtime=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let name = lo.dev.trim_start_matches("/dev/");
    let why = format!("/sys/block/{name}/queue/io_poll is 0: {name} has no poll queues");
    assert!(r.stderr.contains(&why), "{}", r.stderr);
    let job = [
        "--name=x",
        &format!("--filename={}", lo.dev),
        "--ioengine=io_uring",
        "--hipri",
        "--direct=1",
        "--rw=randread",
        "--size=1m",
    ];
    let r = run_in(d.path(), &job);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("hipri (polled I/O)") && r.stderr.contains(&why),
        "{}",
        r.stderr
    );
    for (flag, what) in [("--depth=0", "--depth=0"), ("--batch=0", "--batch=0")] {
        let r = run_in(d.path(), &["peak", "--nop", flag]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{what}: a number of I/Os, at least 1")),
            "{}",
            r.stderr
        );
    }
}
