//! Every class of bad input gets one clear message naming file, line and option,
//! exit status 1, and never a panic.

use crate::common::*;
use std::fs;

fn fails_with(args: &[&str], dir: &std::path::Path, needles: &[&str]) {
    let r = run_in(dir, args);
    assert_eq!(
        r.code, 1,
        "expected exit 1 for {args:?}; stderr: {}",
        r.stderr
    );
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "stderr lacks {n:?} for {args:?}:\n{}",
            r.stderr
        );
    }
    assert!(
        r.stdout.is_empty(),
        "nothing on stdout for errors: {}",
        r.stdout
    );
}

#[test]
fn unknown_option_in_file_suggests() {
    let d = tmpdir();
    fs::write(
        d.path().join("j.fio"),
        "[global]\nbs=4k\n[job]\niodepht=4\n",
    )
    .unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:4", "iodepht", "did you mean 'iodepth'"],
    );
}

#[test]
fn unknown_option_on_command_line() {
    let d = tmpdir();
    fails_with(
        &["--name=x", "--ramp_tme=3"],
        d.path(),
        &["ramp_tme", "did you mean 'ramp_time'"],
    );
}

#[test]
fn bad_unit_is_stricter_than_fio() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\nsize=1g\nbs=4q\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:3", "'bs'", "unknown size unit"],
    );
}

#[test]
fn out_of_range() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\nrwmixread=101\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:2", "rwmixread", "above the maximum 100"],
    );
}

#[test]
fn bad_enum_value() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\nrw=randomread\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:2", "'rw'", "randread"],
    );
    fails_with(
        &["--parse-only", "--name=x", "--ioengine=iouring"],
        d.path(),
        &["ioengine", "io_uring"],
    );
}

#[test]
fn conflicting_options() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\nrate=1m\nrate_iops=100\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:3", "rate_iops", "conflicts with 'rate'"],
    );
}

#[test]
fn engine_option_with_wrong_engine() {
    let d = tmpdir();
    fails_with(
        &[
            "--parse-only",
            "--name=x",
            "--ioengine=psync",
            "--sqthread_poll=1",
        ],
        d.path(),
        &["sqthread_poll", "ioengine=io_uring"],
    );
}

#[test]
fn missing_include_and_missing_file() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\ninclude nothere.fio\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:2", "nothere.fio", "does not exist"],
    );
    fails_with(
        &["--parse-only", "absent.fio"],
        d.path(),
        &["absent.fio", "cannot read job file"],
    );
}

#[test]
fn unreadable_file() {
    let d = tmpdir();
    fs::create_dir(d.path().join("dir.fio")).unwrap();
    fails_with(
        &["--parse-only", "dir.fio"],
        d.path(),
        &["dir.fio", "cannot read job file"],
    );
}

#[test]
fn invalid_utf8_and_binary_garbage() {
    let d = tmpdir();
    fs::write(d.path().join("u.fio"), b"[job]\nbs=4k\nname=\xff\xfe\n").unwrap();
    fails_with(&["--parse-only", "u.fio"], d.path(), &["u.fio:3", "UTF-8"]);
    fs::write(
        d.path().join("b.fio"),
        b"\x7fELF\x02\x01\x01\x00\x00\x00binary",
    )
    .unwrap();
    fails_with(&["--parse-only", "b.fio"], d.path(), &["b.fio:1", "binary"]);
}

#[test]
fn option_outside_section_and_missing_value() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "bs=4k\n[job]\n").unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:1", "'bs'", "before any [section]"],
    );
    fails_with(
        &["--parse-only", "--name=x", "--bs"],
        d.path(),
        &["--bs", "requires a value"],
    );
}

#[test]
fn not_yet_supported_option_fails_parse_only_and_the_run() {
    let d = tmpdir();
    fs::write(d.path().join("j.fio"), "[job]\nsize=1m\nmax_open_zones=4\n").unwrap();
    // --parse-only checks everything a run would, short of I/O.
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:3", "max_open_zones", "not supported yet"],
    );
    fails_with(
        &["j.fio"],
        d.path(),
        &["j.fio:3", "max_open_zones", "not supported yet"],
    );
}

#[test]
fn env_variables() {
    let d = tmpdir();
    fs::write(
        d.path().join("j.fio"),
        "[job]\nsize=${IOSCOPE_SURELY_UNSET}\n",
    )
    .unwrap();
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:2", "IOSCOPE_SURELY_UNSET", "not set"],
    );
}

#[test]
fn every_bad_option_of_a_job_file_is_reported_with_its_line() {
    let d = tmpdir();
    fs::write(
        d.path().join("j.fio"),
        "[global]\nbs=4q\n[a]\nsize=1m\niodepth=abc\nrw=sideways\n[b]\nsize=1m\nnumjobs=0\n",
    )
    .unwrap();
    for args in [&["--parse-only", "j.fio"][..], &["j.fio"][..]] {
        fails_with(
            args,
            d.path(),
            &[
                "j.fio:2: option 'bs'",
                "j.fio:5: option 'iodepth'",
                "j.fio:6: option 'rw'",
                "j.fio:9: option 'numjobs'",
            ],
        );
    }
    // The inherited global error is reported once, not once per job.
    let r = run_in(d.path(), &["--parse-only", "j.fio"]);
    assert_eq!(r.stderr.matches("j.fio:2:").count(), 1, "{}", r.stderr);
}

#[test]
fn a_flood_of_errors_is_cut_at_twenty() {
    let d = tmpdir();
    let mut text = String::from("[a]\n");
    for i in 0..25 {
        text.push_str(&format!("iodepth=x{i}\n"));
    }
    fs::write(d.path().join("j.fio"), text).unwrap();
    let r = run_in(d.path(), &["--parse-only", "j.fio"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.matches("option 'iodepth'").count(),
        20,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("and 5 more errors"), "{}", r.stderr);
}
