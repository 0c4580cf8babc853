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
fn file_mode_issues_the_io_it_claims() {
    // A loop device: the kernel's own I/O count of it checks peak's.
    require!(Prereq::Root, Prereq::LOSETUP);
    let img = format!("/dev/shm/ioscope-peak-{}.img", std::process::id());
    let Some(dev) = sh(&format!(
        "truncate -s 256M {img} && losetup --direct-io=on --find --show {img}"
    )) else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
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
    let _ = sh(&format!("losetup -d {dev}; rm -f {img}"));
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
