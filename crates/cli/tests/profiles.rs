//! fio's built-in profiles (`--profile=tiobench`, `--profile=act`) and
//! block_error_percentiles, side by side with fio 3.33 where fio's own output can be
//! had (fio 3.33 ignores tiobench's options, and aborts reporting block lifetimes of
//! more than one used block: those cases are checked against what fio documents).

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn names_groups_bytes(v: &Value) -> Vec<(String, u64, u64, u64)> {
    v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap_or("").to_string(),
                u(&j["groupid"]),
                u(&j["read"]["io_bytes"]),
                u(&j["write"]["io_bytes"]),
            )
        })
        .collect()
}

/// tiobench: four jobs, one group each, over four files in `dir`; fio's jobs.
#[test]
fn tiobench_runs_fios_four_jobs() {
    let d = tmpdir();
    let dir = d.path().to_str().expect("utf-8");
    let (r, v) = run_json(
        d.path(),
        &[
            "--profile=tiobench",
            "--size=8",
            &format!("--dir={dir}"),
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let eight = 8u64 << 20;
    assert_eq!(
        names_groups_bytes(&v),
        [
            ("seqwrite".to_string(), 0, 0, eight),
            ("randwrite".to_string(), 1, 0, eight),
            ("seqread".to_string(), 2, eight, 0),
            ("randread".to_string(), 3, eight, 0),
        ]
    );
    for i in 1..=4 {
        let f = d.path().join(format!(".fio.tio.{i}"));
        assert_eq!(std::fs::metadata(&f).expect("tiobench file").len(), 2 << 20);
    }
    // fio 3.33 ignores tiobench's own options: compare with both bounded by filesize.
    if fio_usable() {
        let args = [
            "--profile=tiobench",
            "--filesize=1m",
            "--output-format=json",
        ];
        let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        let fv: Value = serde_json::from_str(&f.stdout).expect("fio JSON");
        let (r, ours) = run_json(d.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let fio_jobs: Vec<_> = names_groups_bytes(&fv)
            .into_iter()
            .filter(|j| !j.0.is_empty())
            .collect();
        assert_eq!(names_groups_bytes(&ours), fio_jobs);
    }
    // act's options need --profile=act; an unknown profile is named.
    let r = run_in(d.path(), &["--name=x", "--device-names=/dev/x"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown option"), "{}", r.stderr);
    let r = run_in(d.path(), &["--profile=nope"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("profile 'nope' not found"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["--profile=act", "--cmdhelp"]);
    assert!(
        r.stdout
            .contains("device-names            : Devices to use"),
        "{}",
        r.stdout
    );
}

/// act on a loop device: its jobs (readers paced at 250 IOPS each, one writer at 12),
/// and its table of latency shares with the verdict, as fio prints them.
#[test]
fn act_runs_its_jobs_and_prints_its_table() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::new("256M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let d = tmpdir();
    let names = format!("--device-names={}", lp.dev);
    let args = ["--profile=act", names.as_str(), "--test-duration=2"];
    let r = run_in(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("trans"))
        .expect("act's table");
    assert_eq!(lines[at], "        trans                   device");
    assert_eq!(lines[at + 1], "        %>(ms)                  %>(ms)");
    assert_eq!(lines[at + 2], " slice\t  1\t  8\t 64\t  1\t  8\t 64");
    let row: Vec<&str> = lines[at + 4].split('\t').collect();
    assert_eq!(row[0], "    1");
    assert_eq!(row.len(), 7, "{}", lines[at + 4]);
    assert_eq!(row[1..4], row[4..7], "the device columns repeat trans");
    let verdict = lines[at + 6];
    assert!(
        verdict == "act: test complete, device(s): PASSED"
            || verdict == "act: test complete, device(s): FAILED",
        "{verdict}"
    );
    let header = format!("act-read-{}: (groupid=0, jobs=9)", lp.dev);
    assert!(r.stdout.contains(&header), "{}", r.stdout);
    // JSON stays one document; the table goes to stderr.
    let mut json = args.to_vec();
    json.push("--output-format=json");
    let (r, v) = run_json(d.path(), &json);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("act: test complete"), "{}", r.stderr);
    let j = job(&v, 0);
    assert_eq!(j["jobname"], format!("act-read-{}", lp.dev));
    let iops = j["read"]["iops"].as_f64().expect("iops");
    assert!(
        (1900.0..=2100.0).contains(&iops),
        "8 readers at 250 IOPS: {iops}"
    );
    let w = j["write"]["iops"].as_f64().expect("iops");
    assert!((10.0..=14.0).contains(&w), "one writer at 12 IOPS: {w}");
    if fio_usable() {
        let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        for l in &lines[at..at + 4] {
            assert!(f.stdout.contains(l), "fio prints {l:?} too:\n{}", f.stdout);
        }
        assert!(f.stdout.contains(&header), "{}", f.stdout);
    }
}

/// block_error_percentiles on a loop device: trims per block, as fio reports them.
#[test]
fn block_lifetimes_as_fio_reports_them() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::new("64M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let d = tmpdir();
    let file = format!("--filename={}", lp.dev);
    let cases: [&[&str]; 3] = [
        &["--rw=trim", "--size=4k", "--loops=5"],
        &["--rw=trim", "--size=12k", "--number_ios=1"],
        &["--rw=write", "--size=16k"],
    ];
    for case in cases {
        let mut args = vec![
            "--name=b",
            file.as_str(),
            "--bs=4k",
            "--block_error_percentiles=1",
        ];
        args.extend_from_slice(case);
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 0, "{case:?}: {}", r.stderr);
        let ours = block_lines(&r.stdout);
        assert!(
            ours.starts_with("  block lifetime percentiles :"),
            "{case:?}: {}",
            r.stdout
        );
        let mut json = args.clone();
        json.push("--output-format=json");
        let (_, v) = run_json(d.path(), &json);
        if fio_usable() {
            let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
            assert_eq!(f.code, 0, "{}", f.stderr);
            if case[0] == "--rw=write" {
                // fio prints uninitialised state counts here; ioscope the real ones.
                assert!(block_lines(&f.stdout)
                    .starts_with("  block lifetime percentiles :\n   |        states"));
            } else {
                assert_eq!(ours, block_lines(&f.stdout), "{case:?}");
            }
            let f = run_tool(Path::new("fio"), d.path(), &json, &[]);
            let fv: Value = serde_json::from_str(&f.stdout).expect("fio JSON");
            assert_eq!(
                job(&v, 0).get("block"),
                job(&fv, 0).get("block"),
                "{case:?}"
            );
        }
    }
    // 256 blocks trimmed once each (fio 3.33 aborts reporting this).
    let args = [
        "--name=b",
        file.as_str(),
        "--bs=4k",
        "--rw=randtrim",
        "--size=1m",
        "--block_error_percentiles=1",
        "--output-format=json",
    ];
    let (r, v) = run_json(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b = &job(&v, 0)["block"];
    assert_eq!(b["states"]["trimmed"], 256);
    assert_eq!(b["percentiles"]["50.000000"], 1);
}

/// The block lines of a normal report.
fn block_lines(out: &str) -> String {
    let Some(at) = out.find("  block lifetime percentiles :") else {
        return String::new();
    };
    let rest = &out[at..];
    let end = rest.find("write failure=").map_or(rest.len(), |i| {
        i + rest[i..].find('\n').map_or(rest.len() - i, |n| n + 1)
    });
    rest[..end].to_string()
}
