//! The run history: runs recorded with `--history` and `--label`, listed, exported,
//! compared and checked for regressions; files that are not ours refused untouched; a
//! full disk loses the row, never the results; runs at once all recorded.

use crate::common::*;
use std::path::Path;

/// A paced random read on the null engine: `iops` I/Os a second for 1 s.
fn paced(iops: &str, label: &str, db: &str) -> Vec<String> {
    [
        "--name=j",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--time_based",
        "--runtime=1",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--rate_iops={iops}"),
        format!("--label={label}"),
        format!("--history={db}"),
    ])
    .collect()
}

/// Records `n` paced runs under `label`; returns each run's own JSON report.
fn record(dir: &Path, iops: &str, label: &str, n: usize) -> Vec<serde_json::Value> {
    (0..n)
        .map(|_| {
            let a = paced(iops, label, "h.db");
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let r = run_in(dir, &a);
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(r.stderr.is_empty(), "{}", r.stderr);
            serde_json::from_str(&r.stdout).expect("the run's JSON report")
        })
        .collect()
}

/// The percentage on the `REGRESSION: j read METRIC: -9.9% …` line.
fn regression(stdout: &str, metric: &str) -> f64 {
    let head = format!("REGRESSION: j read {metric}: ");
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(head.as_str()))
        .unwrap_or_else(|| panic!("no {head:?} line: {stdout}"));
    let pct = line.split('%').next().unwrap_or_default();
    pct.parse()
        .unwrap_or_else(|e| panic!("{pct:?} in {line:?}: {e}"))
}

fn history(dir: &Path, args: &[&str]) -> Run {
    let mut a = vec!["history", "--db=h.db"];
    a.extend_from_slice(args);
    run_in(dir, &a)
}

#[test]
fn check_exits_non_zero_on_a_regression_and_passes_a_same_distribution_pair() {
    let d = tmpdir();
    record(d.path(), "2000", "A", 5);
    record(d.path(), "1800", "B", 5);
    // B is the latest label: the default candidate.
    let r = history(
        d.path(),
        &["check", "--baseline", "A", "--metric", "bw,iops"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("candidate B (5 runs)"), "{}", r.stdout);
    // The rates are paced, so the change is -10% give or take a late I/O or two on a
    // loaded machine (CI saw A at 1998 IOPS: -9.9%).
    for metric in ["iops", "bw"] {
        let delta = regression(&r.stdout, metric);
        assert!(
            (-10.5..=-9.5).contains(&delta),
            "{metric} {delta}: {}",
            r.stdout
        );
    }
    // B against itself, and against more runs of A's distribution: no regression.
    record(d.path(), "2000", "A2", 5);
    let r = history(
        d.path(),
        &[
            "check",
            "--baseline=A",
            "--candidate=A2",
            "--metric=bw,iops",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("REGRESSION"), "{}", r.stdout);
    // The other way round is an improvement, not a regression.
    let r = history(
        d.path(),
        &["check", "--baseline=B", "--candidate=A", "--metric=iops"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("better"), "{}", r.stdout);
    // A threshold above the change: significant, but not a regression.
    let r = history(
        d.path(),
        &[
            "check",
            "--baseline=A",
            "--candidate=B",
            "--metric=iops",
            "--threshold=15",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // compare: compare's table and verdicts, and its exit status.
    let r = history(d.path(), &["compare", "A", "B", "--json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let rows: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON rows");
    schema::validate("compare", &rows);
    let iops = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .expect("an iops row");
    assert_eq!(iops["verdict"], "worse");
    assert_eq!((u(&iops["n_a"]), u(&iops["n_b"])), (5, 5));
}

#[test]
fn list_show_and_export_read_back_what_runs_recorded() {
    let d = tmpdir();
    // Paced at 1000 IOPS; what is recorded is what each run reported.
    let ran = record(d.path(), "1000", "base", 2);
    let read = |i: usize| &ran[i]["jobs"][0]["read"];
    let r = history(d.path(), &["list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["label"], "base");
    assert_eq!(rows[0]["read"]["iops"], read(0)["iops"]);
    assert!(u(&read(0)["total_ios"]) > 900, "{}", read(0));
    let r = history(d.path(), &["show", "2", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rec: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(rec["id"], 2);
    assert!(rec["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    assert_eq!(rec["job"]["jobs"][0]["name"], "j");
    assert!(rec["command"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w == "--label=base"));
    assert_eq!(
        rec["document"]["jobs"][0]["read"]["total_ios"],
        read(1)["total_ios"]
    );
    assert!(rec["devices"][0]["disk"].is_string(), "{}", rec["devices"]);
    let r = history(d.path(), &["export", "id:2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(
        lines[1].starts_with("2,") && lines[1].contains(",base,run,"),
        "{}",
        lines[1]
    );
    let r = history(d.path(), &["export", "base", "--format=json"]);
    let all: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON records");
    assert_eq!(all.as_array().map(Vec::len), Some(2));
    assert_eq!(
        all[1]["document"]["jobs"][0]["read"]["total_ios"],
        read(1)["total_ios"]
    );
    let r = history(
        d.path(),
        &["check", "--baseline=id:1", "--candidate=id:2", "--markdown"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("| job |") || r.stdout.contains("|---"),
        "{}",
        r.stdout
    );
    let r = history(d.path(), &["list", "time:2000-01-01..2001-01-01"]);
    assert_eq!(r.stdout.lines().count(), 1, "only the header: {}", r.stdout);
    let r = history(d.path(), &["list", "--db=none.db"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("none.db: no history here"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_file_that_is_not_a_history_is_refused_before_any_io() {
    let d = tmpdir();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n".repeat(100)).unwrap();
    let r = run_in(
        d.path(),
        &[
            "--name=j",
            "--filename=data",
            "--size=1m",
            "--rw=write",
            "--history=notes.txt",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("notes.txt: not an ioscope history database"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "my notes\n".repeat(100)
    );
    assert!(!d.path().join("data").exists(), "no I/O");
    let r = run_in(
        d.path(),
        &["--name=j", "--ioengine=null", "--size=1m", "--label=x"],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("--label") && r.stderr.contains("--history"),
        "{}",
        r.stderr
    );
}

#[test]
fn runs_at_once_are_all_recorded() {
    let d = tmpdir();
    // Six runs started together, each recording into the same new database: one
    // makes it while the others wait (CI once saw "database is locked" here, from a
    // lock upgrade SQLite refuses at once rather than deadlock). Five rounds.
    for round in 0..5 {
        let db = format!("h{round}.db");
        let spawned: Vec<_> = (0..6)
            .map(|i| {
                std::process::Command::new(bin())
                    .current_dir(d.path())
                    .args(["--name=j", "--ioengine=null", "--size=1m", "--rw=read"])
                    .arg("--output-format=terse")
                    .arg(format!("--label=p{i}"))
                    .arg(format!("--history={db}"))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in spawned {
            let out = c.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && err.is_empty(),
                "round {round}: {err}"
            );
        }
        let r = run_in(
            d.path(),
            &["history", &format!("--db={db}"), "list", "--json"],
        );
        let rows: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let labels: std::collections::BTreeSet<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect();
        let want: std::collections::BTreeSet<String> = (0..6).map(|i| format!("p{i}")).collect();
        assert_eq!(labels, want, "round {round}");
    }
}

#[test]
fn a_full_disk_loses_the_history_row_never_the_results() {
    require!(Prereq::Root, Prereq::MOUNT);
    let d = tmpdir();
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if sh(&format!(
        "mount -t tmpfs -o size=1m tmpfs {}",
        mnt.display()
    ))
    .is_none()
    {
        skip!("permission to mount a tmpfs (mount -t tmpfs failed)")
    }
    let db = format!("--history={}", mnt.join("h.db").display());
    let job = [
        "--name=j",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=2",
        "--output-format=json",
        "--output=out.json",
    ];
    let mut args = job.to_vec();
    args.push(&db);
    let r1 = run_in(d.path(), &args);
    // The second run opens the database (its WAL index, -shm, appears), then the file
    // system fills up under it before the run ends.
    let child = std::process::Command::new(bin())
        .current_dir(d.path())
        .args(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let shm = mnt.join("h.db-shm");
    let t = std::time::Instant::now();
    while !shm.exists() && t.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let opened = shm.exists();
    let _ = sh(&format!(
        "dd if=/dev/zero of={} bs=4k 2>/dev/null",
        mnt.join("fill").display()
    ));
    let out2 = child.wait_with_output().unwrap();
    let r2 = (
        out2.status.code(),
        String::from_utf8_lossy(&out2.stderr).to_string(),
    );
    let out = std::fs::read_to_string(d.path().join("out.json")).unwrap_or_default();
    let listed = run_in(
        d.path(),
        &[
            "history",
            &format!("--db={}", mnt.join("h.db").display()),
            "list",
            "--json",
        ],
    );
    let _ = sh(&format!("umount {}", mnt.display()));
    assert_eq!(r1.code, 0, "{}", r1.stderr);
    assert!(
        opened,
        "the second run did not open the database in 30 s: {}",
        r2.1
    );
    assert_eq!(r2.0, Some(0), "the run succeeded: {}", r2.1);
    assert!(r2.1.contains("this run was not recorded"), "{}", r2.1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("the report is whole");
    assert!(u(&v["jobs"][0]["read"]["io_bytes"]) > 0, "{out}");
    let rows: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap_or_default();
    assert_eq!(
        rows.as_array().map(Vec::len),
        Some(1),
        "{}{}",
        listed.stdout,
        listed.stderr
    );
}

#[test]
fn compare_run_records_each_repetition_under_its_arm() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("j.fio"),
        "[j]\nioengine=null\nsize=1g\nrw=randread\ntime_based=1\nruntime=1\nrate_iops=1000\n",
    )
    .unwrap();
    let r = run_in(
        d.path(),
        &[
            "compare",
            "j.fio",
            "--vary=rate_iops=1000,900",
            "--repeat=4",
            "-o",
            "runs",
            "--history=h.db",
            "--label=k",
            "--live=c.jsonl",
        ],
    );
    assert_eq!(r.code, 2, "B is 10% slower: {}{}", r.stdout, r.stderr);
    // Each repetition streamed, named.
    let text = std::fs::read_to_string(d.path().join("c.jsonl")).unwrap();
    let reps: std::collections::BTreeSet<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "interval")
        .map(|v| v["point"].as_str().unwrap().to_string())
        .collect();
    let want: std::collections::BTreeSet<String> = ["a", "b"]
        .iter()
        .flat_map(|s| (1..=4).map(move |i| format!("{s}-{i}")))
        .collect();
    assert_eq!(reps, want);
    let r = history(d.path(), &["list", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert!(rows.iter().all(|r| r["kind"] == "repetition"));
    let labels: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    let (a, b) = (labels.iter().next().unwrap(), labels.iter().nth(1).unwrap());
    assert!(a.starts_with("k/") && b.starts_with("k/"), "{labels:?}");
    // The history judges them as compare did.
    let (base, cand) = if a.contains("1000") { (a, b) } else { (b, a) };
    let r = history(
        d.path(),
        &[
            "check",
            &format!("--baseline={base}"),
            &format!("--candidate={cand}"),
            "--metric=iops",
        ],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
}
