//! Reported percentiles agree with the exact percentiles of the raw per-I/O clat log
//! to within the histogram's stated error (1/1024 of the value), for several latency
//! distributions; json+ bins sum to N.

use crate::common::*;

/// Exact value of rank ceil(p/100 · N) — fio's definition.
fn exact(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn check(args: &[&str]) {
    let d = tmpdir();
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--write_lat_log=L", "--output-format=json+"]);
    let (r, v) = run_json(d.path(), &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("dropped"),
        "the log must be complete for this check: {}",
        r.stderr
    );
    let clat = &job(&v, 0)["read"]["clat_ns"];
    let mut vals: Vec<u64> = std::fs::read_to_string(d.path().join("L_clat.1.log"))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap())
        .collect();
    vals.sort_unstable();
    assert_eq!(vals.len() as u64, u(&clat["N"]), "one log line per I/O");
    assert_eq!(vals[0], u(&clat["min"]));
    assert_eq!(*vals.last().unwrap(), u(&clat["max"]));
    let mean = vals.iter().map(|&x| x as f64).sum::<f64>() / vals.len() as f64;
    assert!(
        (clat["mean"].as_f64().unwrap() - mean).abs() <= mean * 1e-9 + 1e-6,
        "mean is exact"
    );
    for (k, val) in clat["percentile"].as_object().unwrap() {
        let p: f64 = k.parse().unwrap();
        let want = exact(&vals, p);
        let got = u(val);
        let err = (got as f64 - want as f64).abs() / want.max(1) as f64;
        assert!(
            err <= 1.0 / 1024.0 + 1e-12,
            "{args:?} p{p}: reported {got}, exact {want} (error {err:.5})"
        );
    }
    let bins: u64 = clat["bins"].as_object().unwrap().values().map(u).sum();
    assert_eq!(bins, u(&clat["N"]), "json+ bins sum to N");
}

#[test]
fn null_engine_nanoseconds() {
    check(&[
        "--name=p",
        "--ioengine=null",
        "--size=64m",
        "--bs=4k",
        "--rw=randread",
    ]);
}

#[test]
fn null_engine_queued() {
    check(&[
        "--name=p",
        "--ioengine=null",
        "--size=64m",
        "--bs=4k",
        "--rw=randread",
        "--iodepth=16",
    ]);
}

#[test]
fn page_cache_reads() {
    check(&[
        "--name=p",
        "--filename=f",
        "--size=16m",
        "--bs=4k",
        "--rw=randread",
    ]);
}

#[test]
fn direct_reads_from_disk() {
    check(&[
        "--name=p",
        "--filename=f",
        "--size=16m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=libaio",
        "--iodepth=8",
        "--direct=1",
    ]);
}

#[test]
fn mixed_block_sizes() {
    check(&[
        "--name=p",
        "--filename=f",
        "--size=16m",
        "--bssplit=4k/50:64k/30:256k/20",
        "--rw=randread",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--direct=1",
    ]);
}
