//! Every I/O logged (binary capture, text after the run), `--log-format`, and the log
//! tools: `ioscope log convert`, `summary`, `percentiles` — the last against fio's own
//! fiologparser_hist.py on the same logs.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .count()
}

/// The null engine at full speed (millions of I/Os per second): every I/O is in the lat
/// and clat logs — none dropped — at QD1 and QD32, and the binary spill is gone. The
/// run must pass four of the logger's 65536-record chunks to its writer (a loaded
/// machine still does ten times that in the second).
#[test]
fn every_io_is_logged_at_full_speed() {
    let d = tmpdir();
    for qd in ["1", "32"] {
        let (r, v) = run_json(
            d.path(),
            &[
                "--name=n",
                "--ioengine=null",
                "--rw=randread",
                "--bs=4k",
                "--size=1g",
                "--norandommap",
                &format!("--iodepth={qd}"),
                "--runtime=1",
                "--time_based",
                "--write_lat_log=l",
                "--output-format=json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.stderr.contains("dropped"), "{}", r.stderr);
        let ios = u(&job(&v, 0)["read"]["total_ios"]) as usize;
        assert!(ios > 4 * 65_536, "QD{qd}: {ios} I/Os");
        assert_eq!(
            lines(&d.path().join("l_clat.1.log")),
            ios,
            "QD{qd}: clat lines = total_ios"
        );
        assert_eq!(
            lines(&d.path().join("l_lat.1.log")),
            ios,
            "QD{qd}: lat lines = total_ios"
        );
        assert!(
            !d.path().join("l_io.1.bin").exists(),
            "the spill is removed"
        );
    }
}

fn logged_job(dir: &Path, format: &str, extra: &[&str]) -> Value {
    let mut a = vec![
        "--name=j",
        "--ioengine=null",
        "--rw=randrw",
        "--bs=4k",
        "--size=64m",
        "--write_lat_log=L",
        "--write_bw_log=L",
        "--write_iops_log=L",
        "--output-format=json",
    ];
    let f = format!("--log-format={format}");
    a.push(&f);
    a.extend_from_slice(extra);
    let (r, v) = run_json(dir, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    v
}

/// --log-format=binary keeps the records and writes no per-I/O text; `ioscope log
/// convert` later writes exactly the text logs a text run writes (byte for byte: the
/// `both` run writes both from the same records).
#[test]
fn binary_logs_convert_to_the_same_text() {
    for extra in [
        &[][..],
        &["--log_offset=1", "--log_prio=1"],
        &["--log_unix_epoch=1"],
    ] {
        let d = tmpdir();
        let v = logged_job(d.path(), "binary", extra);
        assert!(d.path().join("L_io.1.bin").is_file());
        assert!(
            !d.path().join("L_clat.1.log").exists(),
            "no text with --log-format=binary"
        );
        let ios = u(&job(&v, 0)["read"]["total_ios"]) + u(&job(&v, 0)["write"]["total_ios"]);
        let out = d.path().join("conv");
        std::fs::create_dir(&out).unwrap();
        let r = run_in(d.path(), &["log", "convert", "L_io.1.bin", "-o", "conv"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(lines(&out.join("L_clat.1.log")), ios as usize);
        // both: text and binary of one run; converting the binary gives the same text.
        let e = tmpdir();
        logged_job(e.path(), "both", extra);
        let conv = e.path().join("conv");
        std::fs::create_dir(&conv).unwrap();
        let r = run_in(e.path(), &["log", "convert", "L_io.1.bin", "-o", "conv"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for kind in ["lat", "slat", "clat", "bw", "iops"] {
            let name = format!("L_{kind}.1.log");
            let a = std::fs::read(e.path().join(&name)).unwrap();
            let b = std::fs::read(conv.join(&name)).unwrap();
            assert!(a == b, "{extra:?}: {name} differs after convert");
        }
    }
    let d = tmpdir();
    std::fs::write(d.path().join("x.bin"), b"not a log").unwrap();
    let r = run_in(d.path(), &["log", "convert", "x.bin"]);
    assert!(r.code == 1 && r.stderr.contains("x.bin"), "{}", r.stderr);
}

/// `log convert` writes only beside its binary log (or under -o), whatever names the
/// log's header records — an absolute path or `../` is taken for its file name alone —
/// never over a file that exists unless --force, and never empties a good text log
/// when the binary log is cut short.
#[test]
fn log_convert_writes_only_where_it_is_told() {
    let d = tmpdir();
    let far = d.path().join("far");
    std::fs::create_dir(&far).unwrap();
    // The header records absolute paths under far/.
    let prefix = format!("--write_lat_log={}/L", far.display());
    let r = run_in(
        d.path(),
        &[
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--log-format=binary",
            &prefix,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let here = d.path().join("here");
    std::fs::create_dir(&here).unwrap();
    std::fs::rename(far.join("L_io.1.bin"), here.join("L_io.1.bin")).unwrap();
    let r = run_in(&here, &["log", "convert", "L_io.1.bin"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        lines(&here.join("L_clat.1.log")),
        256,
        "beside the binary log"
    );
    assert!(
        !far.join("L_clat.1.log").exists(),
        "never where the header points"
    );
    // An existing text log is refused, kept byte for byte, and replaced with --force.
    std::fs::write(here.join("L_lat.1.log"), "keep me\n").unwrap();
    let r = run_in(&here, &["log", "convert", "L_io.1.bin"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("L_lat.1.log: exists; give --force"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(here.join("L_lat.1.log")).unwrap(),
        b"keep me\n"
    );
    let r = run_in(&here, &["log", "convert", "--force", "L_io.1.bin"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(lines(&here.join("L_lat.1.log")), 256);
    // A binary log cut short: the conversion fails, the text logs stay whole, and no
    // temporary file is left behind.
    let bin = std::fs::read(here.join("L_io.1.bin")).unwrap();
    std::fs::write(here.join("L_io.1.bin"), &bin[..bin.len() - 5]).unwrap();
    let before = std::fs::read(here.join("L_clat.1.log")).unwrap();
    let r = run_in(&here, &["log", "convert", "--force", "L_io.1.bin"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read(here.join("L_clat.1.log")).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(&here)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // --force goes with convert alone.
    let r = run_in(&here, &["log", "summary", "--force", "L_clat.1.log"]);
    assert!(
        r.stderr
            .contains("--force goes with log convert, not log summary"),
        "{}",
        r.stderr
    );
}

/// summary: per direction and priority, the count and percentiles of a cmdprio run's
/// clat log (seed 000's table by hand), from text and from binary logs alike.
#[test]
fn summary_splits_by_priority() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=p",
            "--filename=data",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=8",
            "--cmdprio_percentage=30",
            "--cmdprio_class=2",
            "--cmdprio=1",
            "--write_lat_log=P",
            "--log_prio=1",
            "--log-format=both",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ios = u(&job(&v, 0)["read"]["total_ios"]);
    for input in ["P_clat.1.log", "P_io.1.bin"] {
        let (r, s) = run_json(d.path(), &["log", "summary", "--json", input]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let clat: Vec<&Value> = s
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["log"] == "clat" && g["direction"] == "read")
            .collect();
        assert_eq!(clat.len(), 2, "{input}: two priorities: {s}");
        let total: u64 = clat.iter().map(|g| u(&g["count"])).sum();
        assert_eq!(total, ios, "{input}");
        let high = clat
            .iter()
            .find(|g| u(&g["prio"]) == 0x4001)
            .expect("be/1 group");
        let share = u(&high["count"]) as f64 / ios as f64;
        assert!(
            (0.2..0.4).contains(&share),
            "{input}: about 30% at be/1: {share}"
        );
        assert!(high["percentiles_ns"]["99.9"].as_u64().is_some());
    }
    let r = run_in(d.path(), &["log", "summary", "P_clat.1.log"]);
    assert!(
        r.stdout.contains("be/1") && r.stdout.contains("p99.9"),
        "{}",
        r.stdout
    );
    let r = run_in(d.path(), &["log", "summary", "nothing_bw.1.log"]);
    assert!(
        r.code == 1 && r.stderr.contains("holds no latencies"),
        "{}",
        r.stderr
    );
}

/// `ioscope log percentiles` prints what fio's fiologparser_hist.py prints, column for
/// column and digit for digit, on ioscope's histogram logs of two jobs.
#[test]
fn percentiles_match_fiologparser_hist() {
    require!(Prereq::FioLogParserHist);
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=h",
            "--filename=data",
            "--size=32m",
            "--rw=randrw",
            "--ioengine=libaio",
            "--iodepth=8",
            "--numjobs=2",
            "--write_hist_log=h",
            "--log_hist_msec=100",
            "--time_based",
            "--runtime=1",
            "--output-format=terse",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = d.path().join("fiologparser_hist.py");
    let text = std::process::Command::new("zcat")
        .arg(FIOLOGPARSER_HIST)
        .output()
        .expect("zcat");
    std::fs::write(&script, text.stdout).unwrap();
    for args in [
        &[][..],
        &["-i", "100"],
        &["-i", "300", "--percentiles=50,99.5,99.99"],
        &["--noweight", "-i", "200", "--directions=rwm"],
        &["-i", "200", "-d", "1000", "--decimals", "4"],
    ] {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["h_clat_hist.1.log", "h_clat_hist.2.log"]);
        let fio = run_tool(
            Path::new("/usr/bin/python3"),
            d.path(),
            &[&[script.to_str().unwrap()][..], &a].concat(),
            &[],
        );
        assert_eq!(fio.code, 0, "{}", fio.stderr);
        let mut b = vec!["log", "percentiles"];
        b.extend(&a);
        let ours = run_in(d.path(), &b);
        assert_eq!(ours.code, 0, "{}", ours.stderr);
        assert!(fio.stdout.lines().count() > 2, "{args:?}: {}", fio.stdout);
        assert_eq!(ours.stdout, fio.stdout, "{args:?}");
    }
}
