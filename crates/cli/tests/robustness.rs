//! Results are never lost and never stale: interruption, output files, non-UTF-8
//! arguments, limits, checks that --parse-only makes, fio's file and wording rules.

use crate::common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::time::{Duration, Instant};

const LONG_NULL: [&str; 6] = [
    "--name=long",
    "--ioengine=null",
    "--size=1g",
    "--rw=randread",
    "--time_based",
    "--runtime=60",
];

#[test]
fn sigint_marks_the_json_interrupted_and_exits_130() {
    let d = tmpdir();
    let mut args = LONG_NULL.to_vec();
    args.push("--output-format=json");
    let Signalled {
        code,
        stdout: out,
        stderr: err,
        ..
    } = signal_run(d.path(), &args, Duration::from_millis(700), &[libc::SIGINT]);
    assert_eq!(code, 130, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one valid JSON document");
    assert_eq!(v["ioscope"]["interrupted"], true);
    assert_eq!(v["ioscope"]["signal"], "SIGINT");
    assert!(
        u(&job(&v, 0)["read"]["total_ios"]) > 0,
        "what was measured is kept"
    );
    assert!(err.contains("interrupted by SIGINT"), "{err}");
}

#[test]
fn sigterm_marks_the_normal_report_and_exits_143() {
    let d = tmpdir();
    let Signalled {
        code, stdout: out, ..
    } = signal_run(
        d.path(),
        &LONG_NULL,
        Duration::from_millis(700),
        &[libc::SIGTERM],
    );
    assert_eq!(code, 143);
    assert!(out.contains("ioscope: run interrupted by SIGTERM"), "{out}");
    assert!(
        out.contains("Run status group 0"),
        "the full report follows: {out}"
    );
}

#[test]
fn a_second_sigint_still_prints_what_was_measured() {
    let d = tmpdir();
    let mut args = LONG_NULL.to_vec();
    args.push("--output-format=json");
    let Signalled {
        code, stdout: out, ..
    } = signal_run(
        d.path(),
        &args,
        Duration::from_millis(700),
        &[libc::SIGINT, libc::SIGINT],
    );
    assert_eq!(code, 130);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON after two SIGINTs");
    assert_eq!(v["ioscope"]["interrupted"], true);
}

#[test]
fn a_clean_run_is_not_marked_interrupted() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0);
    assert_eq!(v["ioscope"]["interrupted"], false);
    assert!(v["ioscope"].get("signal").is_none());
}

#[test]
fn a_bad_output_path_fails_before_any_io() {
    let d = tmpdir();
    let t = Instant::now();
    let r = run_in(
        d.path(),
        &[
            "--name=w",
            "--filename=data",
            "--size=64m",
            "--rw=write",
            "--output=/missing/dir/out.json",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--output=/missing/dir/out.json"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("data").exists(), "no file was laid out");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_killed_run_leaves_no_stale_output() {
    let d = tmpdir();
    let out = d.path().join("out.json");
    std::fs::write(&out, "{\"stale\": true}").expect("write stale file");
    let mut args = LONG_NULL.to_vec();
    args.extend(["--output-format=json", "--output=out.json"]);
    let Signalled { code, .. } = signal_run(
        d.path(),
        &args,
        Duration::from_millis(700),
        &[libc::SIGKILL],
    );
    assert_eq!(code, -1, "killed");
    let left = std::fs::read_to_string(&out).expect("read output");
    assert!(left.is_empty(), "stale results left behind: {left}");
}

#[test]
fn output_files_hold_the_complete_report() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=n",
            "--ioengine=null",
            "--size=4m",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("out.json")).expect("output written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("complete JSON");
    assert_eq!(u(&job(&v, 0)["read"]["io_bytes"]), 4 << 20);
}

#[test]
fn a_job_file_with_a_latin1_name_runs() {
    let d = tmpdir();
    let name = OsStr::from_bytes(b"caf\xe9.fio");
    std::fs::write(
        d.path().join(name),
        "[j]\nioengine=null\nsize=1m\nrw=read\n",
    )
    .expect("write job file");
    let out = Command::new(bin())
        .arg("--output-format=json")
        .arg(name)
        .current_dir(d.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(u(&job(&v, 0)["read"]["io_bytes"]), 1 << 20);
}

#[test]
fn a_non_utf8_option_value_is_a_clear_error() {
    let out = Command::new(bin())
        .arg("--parse-only")
        .arg(OsStr::from_bytes(b"--name=\xff"))
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not valid UTF-8") && err.contains("argument 2"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn too_many_jobs_are_refused_at_once_also_by_parse_only() {
    for extra in [&[][..], &["--parse-only"][..]] {
        let t = Instant::now();
        let mut args = vec![
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--numjobs=10000",
        ];
        args.extend(extra);
        let r = run(&args);
        assert_eq!(r.code, 1);
        assert!(
            r.stderr.contains("10000 jobs exceed the limit of 4096"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("--max-jobs"));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn a_plan_that_does_not_fit_in_memory_is_refused() {
    let r = run(&[
        "--name=n",
        "--ioengine=null",
        "--size=64g",
        "--bs=1g",
        "--iodepth=256",
        "--numjobs=64",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("MiB of memory before their first I/O"),
        "{}",
        r.stderr
    );
}

#[test]
fn parse_only_reports_what_a_run_would_refuse() {
    for (opt, what) in [
        (
            "--ioengine=e4defrag",
            "ioengine=e4defrag is not supported yet",
        ),
        ("--mem=cudamalloc", "mem=cudamalloc is not supported yet"),
    ] {
        let r = run(&["--parse-only", "--name=n", "--size=1m", opt]);
        assert_eq!(r.code, 1, "{opt}");
        assert!(r.stderr.contains(what), "{opt}: {}", r.stderr);
    }
    // What this machine lacks is a warning (fio_342.rs
    // parse_only_checks_the_file_not_this_machine); a run fails on it.
    let r = run(&[
        "--parse-only",
        "--name=n",
        "--size=1m",
        "--directory=/no/such/dir",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("warning: job 'n': directory=/no/such/dir: not a directory"),
        "{}",
        r.stderr
    );
    let r = run(&["--name=n", "--size=1m", "--directory=/no/such/dir"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not a directory"), "{}", r.stderr);
}

#[test]
fn missing_parent_directories_of_a_filename_are_created() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=w",
            "--filename=a/b/c/data",
            "--size=1m",
            "--rw=write",
            "--bs=64k",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::metadata(d.path().join("a/b/c/data")).expect("file created");
    assert_eq!(md.len(), 1 << 20);
}

#[test]
fn the_start_line_counts_processes_and_threads_as_fio_does() {
    let base = ["--name=n", "--ioengine=null", "--size=1m", "--numjobs=2"];
    let r = run(&base);
    assert!(r.stdout.contains("Starting 2 processes"), "{}", r.stdout);
    let mut with_thread = base.to_vec();
    with_thread.push("--thread");
    let r = run(&with_thread);
    assert!(r.stdout.contains("Starting 2 threads"), "{}", r.stdout);
}

#[test]
fn io_errors_go_to_stderr_and_notices_to_stdout_with_normal_output() {
    let d = tmpdir();
    // An O_DIRECT read of 1000 bytes fails with EINVAL at I/O time; laying out the
    // missing file first prints fio's notice.
    let r = run_in(
        d.path(),
        &[
            "--name=e",
            "--filename=data",
            "--size=64k",
            "--bs=1000",
            "--direct=1",
            "--rw=read",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("Laying out IO file"),
        "notice on stdout: {}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("io_u error"),
        "no error text on stdout: {}",
        r.stdout
    );
    assert!(r.stderr.contains("io_u error"), "{}", r.stderr);
}
