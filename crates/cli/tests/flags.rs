//! Program flags and subcommands: every flag in the flag table
//! (`ioscope::COMMANDS`, each subcommand's flags beside its code) has a test here that checks what it does;
//! `every_flag_has_a_test` fails when a flag is added without one. Also: --help, the
//! generated docs/cli.md and the bash completion script.
//! Regenerate docs/cli.md with: UPDATE_DOCS=1 cargo test -p ioscope --test tests flags::

use crate::common::*;
use ioscope::COMMANDS;
use ioscope_options::flags::Support;
use std::path::{Path, PathBuf};

/// (subcommand, flag) pairs that have a test below.
const COVERED: &[(&str, &str)] = &[
    // fio face
    ("fio", "output"),
    ("fio", "output-format"),
    ("fio", "compat"), // fio_parse.rs: lenient_values_resolve_as_fio_does_under_compat_fio
    ("fio", "minimal"),
    ("fio", "append-terse"),
    ("fio", "terse-version"),
    ("fio", "bandwidth-log"),
    ("fio", "gather-logs"), // and mpi.rs three_network_namespace_hosts_in_one_report
    ("fio", "parse-only"),
    ("fio", "dump-jobs"),
    ("fio", "showcmd"),
    ("fio", "debug"),
    ("fio", "cmdhelp"),
    ("fio", "enghelp"),
    ("fio", "version"),
    ("fio", "json"), // install.rs version_names_the_commit_the_build_and_the_fio_it_follows
    ("fio", "help"),
    ("fio", "readonly"),
    ("fio", "max-jobs"),
    ("fio", "warnings-fatal"),
    ("fio", "section"),
    ("fio", "eta"),
    ("fio", "eta-newline"),
    ("fio", "eta-interval"),
    ("fio", "status-interval"),
    ("fio", "history"),        // history.rs (every test)
    ("fio", "label"), // history.rs check_exits_non_zero_on_a_regression_and_passes_a_same_distribution_pair
    ("fio", "live"),  // live.rs live_intervals_add_up_to_the_report_per_direction_and_priority
    ("fio", "live-interval"), // live.rs (the same)
    ("fio", "metrics"), // live.rs prometheus_stores_the_runs_totals
    ("fio", "metrics-linger"), // live.rs metrics_end_at_the_reports_totals_and_linger_for_a_last_scrape
    ("fio", "allow-destructive"),
    ("fio", "alloc-size"),
    ("fio", "log-format"),  // logtools.rs binary_logs_convert_to_the_same_text
    ("fio", "inflate-log"), // logs.rs log_store_compressed_writes_fz_that_fio_inflates
    ("fio", "merge-blktrace-only"),
    // not_yet_flags_are_refused_also_by_parse_only
    ("fio", "cpuclock-test"),
    ("fio", "crctest"),       // verify.rs crctest_times_the_checksums_fio_lists
    ("fio", "server"),        // server.rs (every test)
    ("fio", "client"),        // server.rs (an ioscope client with fio and ioscope servers)
    ("fio", "server-token"),  // server.rs a_token_server_runs_jobs_only_for_its_token
    ("fio", "daemonize"),     // server.rs fios_client_server_harness_passes
    ("fio", "remote-config"), // server.rs interim_reports_and_remote_job_files
    ("fio", "idle-prof"),
    ("fio", "trigger-file"),
    ("fio", "trigger-timeout"),
    ("fio", "trigger"),
    ("fio", "trigger-remote"),
    ("fio", "aux-path"), // verify.rs aux_path_holds_the_verify_state
    // quick
    ("quick", "size"),
    ("quick", "runtime"),
    ("quick", "json"),
    ("quick", "live"), // live.rs quick_and_peak_stream_too
    ("quick", "live-interval"),
    ("quick", "metrics"), // the shared definitions (live.rs tests them)
    ("quick", "metrics-linger"),
    ("quick", "help"),
    // peak
    ("peak", "engine"),
    ("peak", "depth"),
    ("peak", "batch"),
    ("peak", "complete"),
    ("peak", "bs"),
    ("peak", "threads"),
    ("peak", "seq"),
    ("peak", "write"),
    ("peak", "polled"),
    ("peak", "fixedbufs"),
    ("peak", "registerfiles"),
    ("peak", "sqpoll"),
    ("peak", "buffered"),
    ("peak", "nop"),
    ("peak", "passthrough"), // rig.rs: peak_passthrough_polls_the_generic_device
    ("peak", "runtime"),
    ("peak", "no-lat"),
    ("peak", "json"),
    ("peak", "live"), // live.rs quick_and_peak_stream_too
    ("peak", "live-interval"),
    ("peak", "metrics"), // the shared definitions (live.rs tests them)
    ("peak", "metrics-linger"),
    ("peak", "help"),
    // fairness
    ("fairness", "model"),
    ("fairness", "tolerance"), // fairness.rs violations_within_the_tolerance_are_noise
    ("fairness", "dir"),
    ("fairness", "json"),
    ("fairness", "help"),
    ("fairness", "scenario"),
    ("fairness", "size"),
    ("fairness", "runtime"),
    ("fairness", "ioscheduler"),
    ("fairness", "bw-log"),
    ("fairness", "window"),
    ("fairness", "svg"),                 // fairness.rs charts_render_in_chromium
    ("fairness", "html"),                // fairness.rs charts_render_in_chromium
    ("fairness", "include-interrupted"), // fairness.rs an_interrupted_result_is_refused_unless_asked
    // compare
    ("compare", "json"),
    ("compare", "markdown"),
    ("compare", "run"),
    ("compare", "repeat"),
    ("compare", "output"),
    ("compare", "svg"),                 // compare.rs charts_render_in_chromium
    ("compare", "html"),                // compare.rs charts_render_in_chromium
    ("compare", "vary"),                // compare.rs vary_runs_one_job_file_with_two_values
    ("compare", "include-interrupted"), // sweep.rs report_names_every_file_it_leaves_out
    ("compare", "live"), // history.rs compare_run_records_each_repetition_under_its_arm
    ("compare", "live-interval"), // the shared definitions (live.rs tests them)
    ("compare", "metrics"), // (the same)
    ("compare", "metrics-linger"), // (the same)
    ("compare", "history"), // history.rs compare_run_records_each_repetition_under_its_arm
    ("compare", "label"), // (the same)
    ("compare", "help"),
    // sweep (sweep.rs), report
    ("sweep", "output"),
    ("sweep", "retry-failed"), // a_failed_point_is_flagged_skipped_and_retried
    ("sweep", "allow-destructive"), // devices_are_protected_and_identified
    ("sweep", "live"),         // live.rs a_sweep_streams_each_point_and_records_each_in_the_history
    ("sweep", "live-interval"),
    ("sweep", "history"),
    ("sweep", "label"),
    ("sweep", "metrics"), // live.rs a_sweep_streams_each_point_and_records_each_in_the_history
    ("sweep", "metrics-linger"), // (the same)
    ("sweep", "emit"),    // the_readme_example_plans_as_written
    ("sweep", "check"),
    ("sweep", "json"),
    ("sweep", "help"),
    ("report", "output"), // report_reads_a_directory_of_fio_results
    ("report", "ssv"),
    ("report", "include-interrupted"), // sweep.rs report_names_every_file_it_leaves_out
    ("report", "help"),
    ("plot", "output"), // plot.rs logs_and_results_become_panels
    ("plot", "html"),
    ("plot", "window"),
    ("plot", "help"),
    // log (logtools.rs)
    ("log", "output"),
    ("log", "interval"),
    ("log", "percentiles"),
    ("log", "divisor"),
    ("log", "decimals"),
    ("log", "directions"),
    ("log", "noweight"),
    ("log", "json"),
    ("log", "force"), // logtools.rs log_convert_writes_only_where_it_is_told
    ("log", "help"),
    // history (history.rs)
    ("history", "db"),
    ("history", "json"),      // list_show_and_export_read_back_what_runs_recorded
    ("history", "markdown"),  // (the same)
    ("history", "format"),    // (the same)
    ("history", "baseline"), // check_exits_non_zero_on_a_regression_and_passes_a_same_distribution_pair
    ("history", "candidate"), // (the same)
    ("history", "metric"),   // (the same)
    ("history", "threshold"), // (the same)
    ("history", "help"),
    // completions, help
    ("completions", "help"),
    ("help", "help"),
];

#[test]
fn every_flag_has_a_test() {
    let mut missing = Vec::new();
    for c in COMMANDS {
        for f in (c.flags)() {
            // Every command's --color: compare.rs colour_follows_the_flag_no_color_and_the_terminal.
            if f.name == "color" {
                continue;
            }
            if !COVERED.contains(&(c.name, f.name)) {
                missing.push(format!("{} --{}", c.name, f.name));
            }
        }
    }
    assert!(missing.is_empty(), "flags without a test: {missing:?}");
    for (c, f) in COVERED {
        let cmd = COMMANDS.iter().find(|x| x.name == *c);
        assert!(
            cmd.is_some_and(|cmd| (cmd.flags)().iter().any(|x| x.name == *f)),
            "COVERED lists {c} --{f}, which is not in the flag table"
        );
    }
}

#[test]
fn cli_reference_is_current() {
    let want = ioscope::docs::cli_reference();
    keep_current("docs/cli.md", &want);
    for c in COMMANDS {
        for f in (c.flags)() {
            assert!(want.contains(&format!("`--{}`", f.name)), "{}", f.name);
        }
    }
}

/// A generated document checked in at `rel` (from the repository root) is `want`;
/// with UPDATE_DOCS set it is written instead.
fn keep_current(rel: &str, want: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, want).unwrap_or_else(|e| panic!("write {rel}: {e}"));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{rel} is stale: run `UPDATE_DOCS=1 cargo test -p ioscope --test tests flags::`"
    );
}

/// A small, fast job on the null engine.
fn null_job(rw: &str) -> Vec<String> {
    ["--name=x", "--ioengine=null", "--size=1m", "--bs=4k"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--rw={rw}")])
        .collect()
}

/// A time-based null job of `secs` seconds, rate-limited so that it costs little CPU.
fn timed_job(secs: &str) -> Vec<String> {
    let mut v = null_job("read");
    v.extend(
        ["--time_based", "--rate_iops=2000"]
            .iter()
            .map(|s| s.to_string()),
    );
    v.push(format!("--runtime={secs}"));
    v
}

fn run_args(dir: &Path, a: &[String], extra: &[&str]) -> Run {
    let mut args: Vec<&str> = extra.to_vec();
    args.extend(a.iter().map(String::as_str));
    run_in(dir, &args)
}

// ---------------------------------------------------------------- help and completions

#[test]
fn help_lists_every_subcommand_and_its_flags() {
    let d = tmpdir();
    for main in [&["--help"][..], &["-h"], &["help"]] {
        let r = run_in(d.path(), main);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for c in COMMANDS {
            assert!(r.stdout.contains(c.about), "{main:?}: {}", c.name);
            if c.name != "fio" {
                assert!(
                    r.stdout.contains(&format!("ioscope {}", c.name)),
                    "{}",
                    c.name
                );
            }
        }
        for f in (COMMANDS[0].flags)() {
            assert!(r.stdout.contains(&format!("--{}", f.name)), "{}", f.name);
        }
    }
    for c in COMMANDS.iter().filter(|c| c.name != "fio") {
        let r = run_in(d.path(), &[c.name, "--help"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.starts_with(&format!("usage: {}", c.usage)));
        for f in (c.flags)() {
            assert!(
                r.stdout.contains(&format!("--{}", f.name)),
                "{} --{}",
                c.name,
                f.name
            );
        }
        // `ioscope help X` is `ioscope X --help`; `-h` too.
        assert_eq!(run_in(d.path(), &["help", c.name]).stdout, r.stdout);
        assert_eq!(run_in(d.path(), &[c.name, "-h"]).stdout, r.stdout);
    }
    let r = run_in(d.path(), &["help", "fio"]);
    assert!(r.stdout.contains("--bandwidth-log"), "{}", r.stdout);
    let r = run_in(d.path(), &["help", "nosuch"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no subcommand 'nosuch'"), "{}", r.stderr);
    // Status marks come from the table.
    let r = run_in(d.path(), &["--help"]);
    assert!(r.stdout.contains("[not supported yet]"));
    assert!(r.stdout.contains("[no effect in ioscope]"));
    // A subcommand's unknown flag names the closest one.
    let r = run_in(d.path(), &["peak", "--dpeth=4"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("unknown flag '--dpeth=4'") && r.stderr.contains("'--depth'"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- the fio face

#[test]
fn output_writes_the_report_to_a_file() {
    let d = tmpdir();
    let r = run_args(d.path(), &null_job("read"), &["--output=report.txt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("Run status group"), "{}", r.stdout);
    let report = std::fs::read_to_string(d.path().join("report.txt")).unwrap();
    assert!(report.contains("Run status group"), "{report}");
    assert!(report.contains("x: (g=0)"), "job header line too: {report}");
}

#[test]
fn output_formats_terse_and_terse_versions() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--output-format=json",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&job(&v, 0)["read"]["io_bytes"]), 1 << 20);
    let r = run_args(d.path(), &null_job("read"), &["--minimal"]);
    assert!(r.stdout.starts_with("3;ioscope-"), "{}", r.stdout);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    let r = run_args(
        d.path(),
        &null_job("read"),
        &["--minimal", "--terse-version=2"],
    );
    assert!(r.stdout.starts_with("2;x;"), "{}", r.stdout);
    let r = run_args(d.path(), &null_job("read"), &["--terse-version=9"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("must be 2, 3, 4 or 5"), "{}", r.stderr);
    let r = run_args(d.path(), &null_job("read"), &["--append-terse"]);
    assert!(r.stdout.contains("Run status group"), "{}", r.stdout);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("3;ioscope-")),
        "{}",
        r.stdout
    );
    let r = run_args(d.path(), &null_job("read"), &["--output-format=bogus"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--output-format"), "{}", r.stderr);
}

fn log_lines(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn bandwidth_log_writes_fio_format_aggregate_logs() {
    let d = tmpdir();
    // Two jobs of 2 MiB/s each: the aggregate is about 4096 KiB/s.
    let args = [
        "--bandwidth-log",
        "--ioengine=null",
        "--bs=4k",
        "--size=64m",
        "--rw=read",
        "--rate=2m",
        "--time_based",
        "--runtime=2",
        "--name=a",
        "--name=b",
        "--output-format=json",
    ];
    let (r, v) = run_json(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["agg-read_bw.log", "agg-trim_bw.log", "agg-write_bw.log"]
    );
    let report_kib: u64 = (0..2).map(|i| u(&job(&v, i)["read"]["bw"])).sum();
    for (ddir, name) in ["read", "write", "trim"].iter().enumerate() {
        let lines = log_lines(&d.path().join(format!("agg-{name}_bw.log")));
        assert!(lines.len() >= 2, "{name}: {lines:?}");
        for l in &lines {
            // time (ms), KiB/s, ddir, bs 0, prio 0 — fio 3.33's five columns.
            assert_eq!(l.len(), 5, "{l:?}");
            assert_eq!(l[2], ddir as u64);
            assert_eq!(&l[3..], [0, 0]);
            if ddir != 0 {
                assert_eq!(l[1], 0, "{name}: {lines:?}");
            }
        }
        assert!(lines.windows(2).all(|w| w[0][0] < w[1][0]), "{lines:?}");
        if ddir == 0 {
            let mut vals: Vec<u64> = lines.iter().map(|l| l[1]).collect();
            vals.sort();
            let median = vals[vals.len() / 2];
            assert!(
                median * 4 >= report_kib * 3 && median * 4 <= report_kib * 5,
                "log median {median} KiB/s, report {report_kib} KiB/s: {lines:?}"
            );
        }
    }
    // A name of one's own; --parse-only writes nothing.
    let r = run_args(d.path(), &null_job("write"), &["--bandwidth-log=mine"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(d.path().join("mine-write_bw.log").exists());
    let e = tmpdir();
    let r = run_args(
        e.path(),
        &null_job("write"),
        &["--bandwidth-log", "--parse-only"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_dir(e.path()).unwrap().count(), 0);
}

/// --gather-logs belongs to runs under mpirun; elsewhere it is refused before any I/O,
/// also by --parse-only.
#[test]
fn gather_logs_outside_mpi_is_refused() {
    let d = tmpdir();
    for extra in [&["--gather-logs"][..], &["--gather-logs", "--parse-only"]] {
        let mut job = null_job("write");
        job.push("--filename=f".into());
        let r = run_args(d.path(), &job, extra);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("--gather-logs"), "{}", r.stderr);
        assert!(r.stderr.contains("not under MPI"), "{}", r.stderr);
        assert!(!d.path().join("f").exists(), "no I/O");
    }
}

#[test]
fn parse_only_dump_jobs_and_debug_stop_before_running() {
    let d = tmpdir();
    let file_job = [
        "--name=x",
        "--ioengine=psync",
        "--filename=data",
        "--size=1m",
        "--rw=write",
    ];
    let r = run_in(d.path(), &[&["--parse-only"][..], &file_job].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(!d.path().join("data").exists(), "nothing ran");
    let r = run_in(d.path(), &["--parse-only", "--name=x", "--iodepth=abc"]);
    assert_eq!(r.code, 1, "invalid options are still refused");
    let (r, v) = run_json(d.path(), &[&["--dump-jobs"][..], &file_job].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(v["jobs"][0]["name"], "x");
    assert!(!d.path().join("data").exists(), "nothing ran");
    let r = run_in(
        d.path(),
        &[&["--debug=parse", "--parse-only"][..], &file_job].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // fio's lines, on stdout (stderr stays empty, as fio's does).
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(r.stdout.contains("handle_option="), "{}", r.stdout);
    assert!(r.stdout.contains("job 'x': resolved"), "{}", r.stdout);
    let r = run_in(
        d.path(),
        &[&["--debug=mutex", "--parse-only"][..], &file_job].concat(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("debug types parse, random and io"),
        "{}",
        r.stderr
    );
}

#[test]
fn showcmd_turns_job_files_into_a_command_line() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("j.fio"),
        "[global]\nioengine=null\n[a]\nrw=read\nsize=1m\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["--showcmd", "j.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.trim(),
        "ioscope --ioengine=null --name=a --rw=read --size=1m"
    );
}

#[test]
fn cmdhelp_enghelp_and_version() {
    let d = tmpdir();
    let r = run_in(d.path(), &["--cmdhelp=iodepth"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("iodepth"), "{}", r.stdout);
    assert!(r.stdout.contains("type"), "{}", r.stdout);
    let r = run_in(d.path(), &["--cmdhelp"]);
    assert!(r.stdout.contains("iodepth_batch_complete_max"));
    let r = run_in(d.path(), &["--cmdhelp=iodpeth"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("did you mean 'iodepth'"), "{}", r.stderr);
    let r = run_in(d.path(), &["--enghelp"]);
    assert!(
        r.stdout.contains("null") && r.stdout.contains("io_uring"),
        "{}",
        r.stdout
    );
    let r = run_in(d.path(), &["--enghelp=io_uring"]);
    assert!(r.stdout.contains("fixedbufs"), "{}", r.stdout);
    // install.rs: version_names_the_commit_the_build_and_the_fio_it_follows.
    let want = run_in(d.path(), &["--version"]).stdout;
    assert!(want.starts_with("ioscope-"), "{want}");
    for v in ["-v", "-V"] {
        assert_eq!(run_in(d.path(), &[v]).stdout, want);
    }
}

#[test]
fn readonly_and_max_jobs_refuse_runs() {
    let d = tmpdir();
    let r = run_args(d.path(), &null_job("write"), &["--readonly"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("refused by --readonly"), "{}", r.stderr);
    let r = run_args(d.path(), &null_job("read"), &["--readonly"]);
    assert_eq!(r.code, 0, "reads are fine: {}", r.stderr);
    // As in fio 3.42, --max-jobs below the default (4096) does not lower the limit:
    // the cdm wrapper passes --max-jobs=1 with files of several jobs.
    let mut jobs = null_job("read");
    jobs.push("--numjobs=3".into());
    let r = run_args(d.path(), &jobs, &["--max-jobs=2", "--output-format=terse"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    let mut jobs = null_job("read");
    jobs.push("--numjobs=5000".into());
    let r = run_args(d.path(), &jobs, &["--max-jobs=2"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("5000 jobs exceed the limit of 4096 (raise it with --max-jobs)"),
        "{}",
        r.stderr
    );
    let r = run_args(d.path(), &jobs, &["--max-jobs=many"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not a number"), "{}", r.stderr);
}

#[test]
fn alloc_size_warns_and_warnings_fatal_makes_it_an_error() {
    let d = tmpdir();
    let r = run_args(d.path(), &null_job("read"), &["--alloc-size=65536"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("--alloc-size has no effect") && r.stderr.contains("no shared pool"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("Run status group"), "the run happened");
    let r = run_args(
        d.path(),
        &null_job("read"),
        &["--alloc-size=65536", "--warnings-fatal"],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("warnings are fatal"), "{}", r.stderr);
    assert!(!r.stdout.contains("Run status group"), "no run");
    let r = run_args(d.path(), &null_job("read"), &["--warnings-fatal"]);
    assert_eq!(r.code, 0, "no warnings, no error: {}", r.stderr);
}

#[test]
fn section_runs_only_the_named_sections() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("j.fio"),
        "[global]\nioengine=null\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n[c]\nrw=read\n",
    )
    .unwrap();
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].as_str().unwrap().to_string())
            .collect()
    };
    let (r, v) = run_json(d.path(), &["j.fio", "--section=b", "--output-format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(names(&v), ["b"]);
    let (_, v) = run_json(
        d.path(),
        &[
            "j.fio",
            "--section=a",
            "--section=c",
            "--output-format=json",
        ],
    );
    assert_eq!(names(&v), ["a", "c"]);
}

#[test]
fn eta_controls_the_status_line() {
    let d = tmpdir();
    let job = timed_job("1500ms");
    let r = run_args(d.path(), &job, &["--eta=always"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("Jobs: 1 (f=1): [R]"), "{}", r.stderr);
    let r = run_args(d.path(), &job, &["--eta=never"]);
    assert!(!r.stderr.contains("Jobs:"), "{}", r.stderr);
    // Not a terminal: auto means none.
    let r = run_args(d.path(), &job, &[]);
    assert!(!r.stderr.contains("Jobs:"), "{}", r.stderr);
    let r = run_args(d.path(), &job, &["--eta=sometimes"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("use auto, always or never"),
        "{}",
        r.stderr
    );
}

#[test]
fn eta_interval_sets_the_refresh_interval() {
    let d = tmpdir();
    // Longer than the run: the line is never drawn.
    let r = run_args(
        d.path(),
        &timed_job("1500ms"),
        &["--eta=always", "--eta-interval=1h"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("Jobs:"), "{}", r.stderr);
    let r = run_args(
        d.path(),
        &timed_job("1500ms"),
        &["--eta=always", "--eta-interval=250ms"],
    );
    assert!(r.stderr.contains("Jobs:"), "{}", r.stderr);
    // fio's minimum, refused before anything runs (also with --parse-only).
    let r = run_args(
        d.path(),
        &null_job("read"),
        &["--eta-interval=100ms", "--parse-only"],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("at least 250ms"), "{}", r.stderr);
    let r = run_args(d.path(), &null_job("read"), &["--eta-interval=soon"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--eta-interval"), "{}", r.stderr);
}

#[test]
fn eta_newline_keeps_status_lines() {
    let d = tmpdir();
    let job = timed_job("1500ms");
    let kept = |r: &Run| r.stderr.contains("\x1b[K\n");
    let r = run_args(
        d.path(),
        &job,
        &[
            "--eta=always",
            "--eta-interval=250ms",
            "--eta-newline=250ms",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(kept(&r), "{:?}", r.stderr);
    let r = run_args(d.path(), &job, &["--eta=always", "--eta-interval=250ms"]);
    assert!(!kept(&r), "the line is redrawn in place: {:?}", r.stderr);
}

#[test]
fn status_interval_prints_interim_reports() {
    let d = tmpdir();
    let r = run_args(d.path(), &timed_job("2500ms"), &["--status-interval=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reports = r.stdout.matches("Run status group").count();
    assert!(reports >= 2, "interim and final reports: {}", r.stdout);
    let r = run_args(d.path(), &timed_job("1500ms"), &[]);
    assert_eq!(r.stdout.matches("Run status group").count(), 1);
    // With --output they all go into the file, as fio writes them (only the final
    // one was kept there): the header once at the top, then every report.
    let r = run_args(
        d.path(),
        &timed_job("2500ms"),
        &["--status-interval=1", "--output=o.txt"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let text = std::fs::read_to_string(d.path().join("o.txt")).unwrap();
    assert!(text.matches("Run status group").count() >= 2, "{text}");
    assert_eq!(text.matches("Starting 1 process").count(), 1, "{text}");
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.contains(": (g=0): rw=read"),
        "the header first: {text}"
    );
    let j = [
        "--status-interval=1",
        "--output=o.json",
        "--output-format=json",
    ];
    let r = run_args(d.path(), &timed_job("2500ms"), &j);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("o.json")).unwrap();
    let docs = serde_json::Deserializer::from_str(&text)
        .into_iter::<serde_json::Value>()
        .collect::<Result<Vec<_>, _>>()
        .expect("whole JSON documents");
    assert!(
        docs.len() >= 2,
        "interim and final documents: {}",
        docs.len()
    );
}

#[test]
fn allow_destructive_overrides_the_signature_check() {
    require!(Prereq::Root, Prereq::LOSETUP, Prereq::MKFS_EXT4);
    let d = tmpdir();
    let img = d.path().join("disk.img");
    let Some(dev) = sh(&format!(
        "truncate -s 16M {0} && mkfs.ext4 -q -F {0} && losetup --find --show {0}",
        img.display()
    )) else {
        skip!("cannot set up a loop device here");
    };
    let job = [
        "--name=x",
        &format!("--filename={dev}"),
        "--rw=write",
        "--size=1m",
        "--bs=64k",
        "--direct=1",
    ];
    let before = std::fs::read(&img).unwrap();
    let refused = run_in(d.path(), &job);
    let unchanged = std::fs::read(&img).unwrap() == before;
    let allowed = run_in(d.path(), &[&["--allow-destructive"][..], &job].concat());
    let changed = std::fs::read(&img).unwrap() != before;
    let _ = sh(&format!("losetup -d {dev}"));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("refusing to write"),
        "{}",
        refused.stderr
    );
    assert!(unchanged);
    assert_eq!(allowed.code, 0, "{}", allowed.stderr);
    assert!(changed, "--allow-destructive wrote to the device");
}

/// --merge-blktrace-only writes each job's merge_blktrace_file and does no I/O.
#[test]
fn merge_blktrace_only_writes_the_merge_and_no_io() {
    let d = tmpdir();
    for (name, action, minor) in [("a.bin", BT_QUEUE_READ, 0), ("b.bin", BT_QUEUE_WRITE, 1)] {
        let ev: Vec<u8> = (0..3u64)
            .flat_map(|i| blktrace_event(1_000 * (2 * i + minor), 8 * i, 4096, action, (8, 0)))
            .collect();
        std::fs::write(d.path().join(name), ev).expect("trace");
    }
    let r = run_in(
        d.path(),
        &[
            "--name=r",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=m.bin",
            "--replay_redirect=target",
            "--merge-blktrace-only",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("merged 6 events into m.bin"),
        "{}",
        r.stderr
    );
    let m = std::fs::read(d.path().join("m.bin")).expect("merged trace");
    assert_eq!(m.len(), 6 * 48);
    // In time order: a read, a write, a read, ...
    let actions: Vec<u32> = m
        .chunks(48)
        .map(|e| u32::from_ne_bytes([e[28], e[29], e[30], e[31]]))
        .collect();
    assert_eq!(
        actions,
        [
            BT_QUEUE_READ,
            BT_QUEUE_WRITE,
            BT_QUEUE_READ,
            BT_QUEUE_WRITE,
            BT_QUEUE_READ,
            BT_QUEUE_WRITE
        ]
    );
    assert!(!d.path().join("target").exists(), "no I/O");
    assert!(
        !r.stdout.contains("Run status group"),
        "no run: {}",
        r.stdout
    );
}

#[test]
fn not_yet_flags_are_refused_also_by_parse_only() {
    let d = tmpdir();
    let flags = ["--cpuclock-test", "--idle-prof=system"];
    for f in flags {
        let name = f.trim_start_matches("--").split('=').next().unwrap();
        for extra in [&["--parse-only"][..], &[]] {
            let r = run_args(d.path(), &null_job("read"), &[extra, &[f]].concat());
            assert_eq!(r.code, 1, "{f} {extra:?}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!("--{name} is not supported yet")),
                "{f}: {}",
                r.stderr
            );
            assert!(!r.stdout.contains("Run status group"), "{f}: no run");
        }
    }
    // The table marks exactly these (and only these) as not supported.
    let table: Vec<&str> = COMMANDS
        .iter()
        .flat_map(|c| (c.flags)())
        .filter(|f| matches!(f.support, Support::NotYet(_)))
        .map(|f| f.name)
        .collect();
    let mut tested: Vec<&str> = flags
        .iter()
        .map(|f| f.trim_start_matches("--").split('=').next().unwrap())
        .collect();
    tested.dedup();
    assert_eq!(table, tested);
    // With one dash, as fio accepts flags too.
    let r = run_args(d.path(), &null_job("read"), &["-idle-prof=system"]);
    assert!(
        r.stderr.contains("--idle-prof is not supported yet"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- quick

#[test]
fn quick_flags_size_runtime_json_and_dir() {
    let d = tmpdir();
    let target = tmpdir();
    // README syntax: DIR first, values after a space.
    let (r, v) = run_json(
        d.path(),
        &[
            "quick",
            target.path().to_str().unwrap(),
            "--size",
            "16m",
            "--runtime",
            "1",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&v["size"]), 16 << 20);
    assert_eq!(u(&v["runtime_s"]), 1);
    assert_eq!(v["dir"], target.path().to_str().unwrap());
    assert_eq!(v["tests"].as_array().unwrap().len(), 6);
    let r = run_in(d.path(), &["quick", "--size=1m"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("use at least 16m"), "{}", r.stderr);
    let r = run_in(d.path(), &["quick", "--runtime=soon"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--runtime"), "{}", r.stderr);
    let r = run_in(d.path(), &["quick", "/nonexistent/dir"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is not a directory"), "{}", r.stderr);
    let r = run_in(d.path(), &["quick", "--sise=1g"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("did you mean '--size'"), "{}", r.stderr);
}

#[test]
fn quick_table_says_which_latency_it_shows() {
    let d = tmpdir();
    let r = run_in(d.path(), &["quick", "--size=16m", "--runtime=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = r.stdout.lines().next().unwrap();
    assert!(
        header.contains("lat p50") && header.contains("lat p99"),
        "{header}"
    );
    assert!(r.stdout.contains("fio's lat, submission to completion"));
    assert!(
        r.stderr.contains("16 MiB") && r.stderr.contains("1 s per test"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- peak

fn has(v: &serde_json::Value, arg: &str) -> bool {
    v["job"].as_array().unwrap().iter().any(|a| a == arg)
}

#[test]
fn peak_flags_shape_the_job() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            "--nop",
            "--depth=16",
            "--batch",
            "4",
            "--complete=2",
            "--bs=8k",
            "--threads=2",
            "--fixedbufs",
            "--registerfiles",
            "--runtime=1",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&v["depth"]), 16);
    assert_eq!(u(&v["batch_submit"]), 4);
    let per_submit = v["ios_per_submit"].as_f64().unwrap();
    assert!((3.9..=4.1).contains(&per_submit), "batches of 4: {v}");
    assert!(v["ios_per_reap"].as_f64().unwrap() >= 2.0, "{v}");
    assert_eq!(u(&v["bs"]), 8192);
    assert_eq!(
        u(&v["bw_bytes"]) / 8192,
        (v["iops"].as_f64().unwrap()) as u64
    );
    assert_eq!(u(&v["threads"]), 2);
    assert_eq!(v["nop"], true);
    for arg in [
        "--iodepth=16",
        "--iodepth_batch_submit=4",
        "--iodepth_batch_complete_min=2",
        "--bs=8k",
        "--numjobs=2",
        "--fixedbufs",
        "--registerfiles",
        "--runtime=1",
    ] {
        assert!(has(&v, arg), "{arg}: {v}");
    }
    assert!(u(&v["clat_ns"]["N"]) > 0, "latency on by default");
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            "--nop",
            "--sqpoll=0",
            "--no-lat",
            "--runtime=1",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        has(&v, "--sqthread_poll=1") && has(&v, "--sqthread_poll_cpu=0"),
        "{v}"
    );
    assert!(u(&v["ios"]) > 0);
    assert_eq!(u(&v["clat_ns"]["N"]), 0, "--no-lat takes no timestamps");
    let r = run_in(d.path(), &["peak", "--nop", "--sqpoll=first"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not a CPU number"), "{}", r.stderr);
    let r = run_in(d.path(), &["peak", "--nop", "--engine=libaio"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--nop needs --engine=io_uring"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["peak", "--nop", "--depth=many"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("--depth=many: a number of I/Os, at least 1"),
        "{}",
        r.stderr
    );
}

#[test]
fn peak_reports_every_second_and_ends_with_min_avg_max() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            "--nop",
            "--depth=32",
            "--batch=8",
            "--runtime=2",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let per_second = v["iops_per_second"].as_array().unwrap();
    assert_eq!(per_second.len(), 2, "one entry per second: {v}");
    assert!(per_second.iter().all(|x| x.as_f64().unwrap() > 0.0), "{v}");
    let ms = u(&v["runtime_ms"]);
    assert!((1900..=2200).contains(&ms), "--runtime=2: {ms} ms");
    let r = run_in(d.path(), &["peak", "--nop", "--runtime=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("Minimum IOPS=")
            && last.contains("Average IOPS=")
            && last.contains("Maximum IOPS=")
            && last.ends_with("(per second, 1 s)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("IOPS=")),
        "{}",
        r.stdout
    );
}

#[test]
fn peak_on_a_file_writes_reads_buffered_and_polls() {
    let d = tmpdir();
    let file = d.path().join("data");
    let f = file.to_str().unwrap();
    assert!(sh(&format!(
        "dd if=/dev/zero of={f} bs=1M count=16 oflag=direct status=none"
    ))
    .is_some());
    // --write --seq through a synchronous engine: one I/O per call, data written.
    let (r, v) = run_json(
        d.path(),
        &[
            "peak",
            f,
            "--write",
            "--seq",
            "--engine=pvsync2",
            "--runtime=1",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(v["engine"], "pvsync2");
    assert_eq!(v["ios_per_submit"].as_f64().unwrap(), 1.0, "{v}");
    assert!(has(&v, "--rw=write") && has(&v, "--direct=1"), "{v}");
    let data = std::fs::read(&file).unwrap();
    assert!(data.iter().any(|&b| b != 0), "--write wrote the file");
    // --buffered goes through the page cache; the default (O_DIRECT) does not.
    let cached =
        || sh(&format!("fincore -b -n -o RES {f}")).and_then(|s| s.trim().parse::<u64>().ok());
    let (r, v) = run_json(d.path(), &["peak", f, "--runtime=1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(has(&v, "--rw=randread") && has(&v, "--direct=1"), "{v}");
    let direct = cached();
    let (r, v) = run_json(
        d.path(),
        &["peak", f, "--buffered", "--runtime=1", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(has(&v, "--direct=0"), "{v}");
    if let (Some(before), Some(after)) = (direct, cached()) {
        assert!(after > before, "page cache {before} → {after} bytes");
    }
    // --polled asks for IOPOLL: it runs where the disk polls; elsewhere it is refused
    // with the disk's queue/io_poll (the same run without --polled worked above).
    let r = run_in(d.path(), &["peak", f, "--polled", "--runtime=1", "--json"]);
    if r.code == 0 {
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert!(has(&v, "--hipri"), "{v}");
    } else {
        assert!(
            r.stderr.contains("hipri (polled I/O)") && r.stderr.contains("queue/io_poll"),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
}

// ---------------------------------------------------------------- fairness

fn fairness_fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../results/testdata")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn fairness_flags_model_dir_json_help() {
    let d = tmpdir();
    let f = fairness_fixture("seed_patched_ladder.json");
    let first_line = |args: &[&str]| {
        let r = run_in(d.path(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout.lines().next().unwrap_or_default().to_string()
    };
    assert_eq!(first_line(&["fairness", &f]), "total priority: 880");
    assert_eq!(
        first_line(&["fairness", "--model=cfq", &f]),
        "total priority: 880"
    );
    assert_eq!(
        first_line(&["fairness", "--model", "bfq", &f]),
        "total priority: 360"
    );
    assert_eq!(
        first_line(&["fairness", "--model=equal", &f]),
        "total priority: 8"
    );
    assert_eq!(
        first_line(&["fairness", "--model=8,7,6,5,4,3,2,1", &f]),
        "total priority: 36"
    );
    let r = run_in(d.path(), &["fairness", "--model=1,2", &f]);
    assert!(
        r.code == 1 && r.stderr.contains("2 weights for 8 jobs"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["fairness", "--model=fifo", &f]);
    assert!(r.code == 1 && r.stderr.contains("--model"), "{}", r.stderr);
    let (r, v) = run_json(d.path(), &["fairness", "--json", "--dir=write", &f]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        (v["total"].as_u64(), v["dir"].as_str()),
        (Some(0), Some("write"))
    );
    let (_, v) = run_json(
        d.path(),
        &["fairness", "--json", "--dir=read", "--model=bfq", &f],
    );
    assert_eq!(
        (v["total"].as_u64(), v["model"].as_str()),
        (Some(1045920), Some("bfq"))
    );
    assert_eq!(v["jobs"][0]["weight"].as_u64(), Some(80));
    let r = run_in(d.path(), &["fairness", "--dir=sideways", &f]);
    assert!(
        r.code == 1 && r.stderr.contains("--dir=sideways"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["fairness", "--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("ioscope fairness") && r.stdout.contains("be 4"),
        "{}",
        r.stdout
    );
}

#[test]
fn fairness_scenario_flags() {
    let d = tmpdir();
    let file = d.path().join("eq.dat").display().to_string();
    // equal: 8 readers at be 4, for --runtime on a file of --size.
    let (r, v) = run_json(
        d.path(),
        &[
            "fairness",
            "--scenario=equal",
            "--size=16m",
            "--runtime=1",
            "--json",
            &file,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 8);
    assert!(jobs
        .iter()
        .all(|j| j["prio"].as_u64() == Some(4) && j["class"] == "be"));
    assert_eq!(v["total_weight"].as_u64(), Some(800));
    let len = std::fs::metadata(&file).expect("laid out").len();
    assert_eq!(len, 16 << 20);
    let max_run = v["groups"][0]["read"]["max_run_ms"].as_u64().expect("run");
    assert!((900..=1500).contains(&max_run), "{max_run}");
    // An --ioscheduler the device does not offer is refused before the run (or, without
    // a block device behind the file, said to change nothing).
    let r = run_in(
        d.path(),
        &[
            "fairness",
            "--scenario=equal",
            "--runtime=1",
            "--ioscheduler=nosuch",
            &file,
        ],
    );
    assert!(r.stderr.contains("--ioscheduler=nosuch"), "{}", r.stderr);
    let r = run_in(d.path(), &["fairness", "--scenario=zigzag", &file]);
    assert!(
        r.code == 1 && r.stderr.contains("--scenario=zigzag"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["fairness", "--size=16m", &file]);
    assert!(
        r.code == 1 && r.stderr.contains("--size needs --scenario"),
        "{}",
        r.stderr
    );
}

#[test]
fn fairness_flags_bw_log_window() {
    let d = tmpdir();
    let f = fairness_fixture("seed_patched_ladder.json");
    // One fio-format log per job (500 ms averages, 3 s), equal bytes for everyone.
    let prefix = d.path().join("lg").display().to_string();
    for n in 1..=8 {
        let text: String = (1..=6)
            .map(|i| format!("{}, 1000, 0, 0, 0\n", i * 500))
            .collect();
        std::fs::write(format!("{prefix}_bw.{n}.log"), text).expect("write log");
    }
    let windows = |args: &[&str]| {
        let r = run_in(d.path(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout
            .lines()
            .filter(|l| l.starts_with("t="))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let w = windows(&["fairness", "--model=equal", "--bw-log", &prefix, &f]);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[2].starts_with("t=2s jain=1.00"), "{w:?}");
    let w = windows(&["fairness", "--bw-log", &prefix, "--window", "500ms", &f]);
    assert_eq!(w.len(), 6, "{w:?}");
    assert!(w[1].starts_with("t=0.5s jain="), "{w:?}");
    let w = windows(&["fairness", &format!("--bw-log={prefix}"), "--window=3", &f]);
    assert_eq!(w.len(), 1, "{w:?}");
    let r = run_in(d.path(), &["fairness", "--window=2s", &f]);
    assert!(
        r.code == 1 && r.stderr.contains("--window needs --bw-log"),
        "{}",
        r.stderr
    );
    let r = run_in(
        d.path(),
        &["fairness", "--bw-log", &prefix, "--window=0", &f],
    );
    assert!(
        r.code == 1 && r.stderr.contains("--window=0"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- compare

/// A fio-shaped result of one read job `x` with bandwidth `bw`.
fn compare_doc(dir: &Path, name: &str, bw: u64) {
    let doc = serde_json::json!({"fio version": "fio-3.33", "jobs": [{"jobname": "x",
        "read": {"io_bytes": 1 << 20, "bw_bytes": bw, "iops": (bw / 4096) as f64, "runtime": 1000}}]});
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(name), doc.to_string()).expect("write");
}

#[test]
fn compare_flags_json_markdown_run_repeat_output_help() {
    let d = tmpdir();
    for (i, (a, b)) in [(100, 110), (101, 111), (99, 109), (100, 112)]
        .iter()
        .enumerate()
    {
        compare_doc(&d.path().join("a"), &format!("{i}.json"), a * 1_000_000);
        compare_doc(&d.path().join("b"), &format!("{i}.json"), b * 1_000_000);
    }
    // Plain: the table; --json: an array of rows; --markdown: a GitHub table.
    let r = run_in(d.path(), &["compare", "a", "b"]);
    assert!(r.stdout.contains("job  dir   metric"), "{}", r.stdout);
    let (_, v) = run_json(d.path(), &["compare", "--json", "a", "b"]);
    assert_eq!(v[0]["metric"], "bw");
    assert_eq!(v[0]["verdict"], "better");
    let r = run_in(d.path(), &["compare", "--markdown", "a", "b"]);
    assert!(r.stdout.contains("| x | read | bw |"), "{}", r.stdout);
    // --run with --repeat and -o/--output: job files run N times each into DIR.
    let job = d.path().join("j.fio");
    std::fs::write(&job, "[x]\nioengine=null\nsize=1m\nbs=4k\n").expect("write");
    let j = job.to_str().expect("utf-8");
    let r = run_in(
        d.path(),
        &["compare", "--run", "--repeat=2", "-o", "o1", j, j],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("not enough repetitions"), "{}", r.stdout);
    let names = |dir: &str| {
        let mut v: Vec<String> = std::fs::read_dir(d.path().join(dir))
            .expect("results kept")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names("o1"),
        ["a-1.json", "a-2.json", "b-1.json", "b-2.json"]
    );
    let r = run_in(
        d.path(),
        &["compare", "--run", "--repeat", "1", "--output=o2", j, j],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(names("o2"), ["a-1.json", "b-1.json"]);
    // Without -o the results go to a temporary directory that is named.
    let r = run_in(d.path(), &["compare", "--run", "--repeat=1", j, j]);
    let tmp = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("ioscope compare: results in "))
        .expect("names the directory");
    assert!(Path::new(tmp).join("b-1.json").is_file(), "{tmp}");
    let _ = std::fs::remove_dir_all(tmp);
    // Bad values and flags without --run.
    let r = run_in(d.path(), &["compare", "--run", "--repeat=0", j, j]);
    assert!(
        r.code == 1 && r.stderr.contains("--repeat=0"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["compare", "--repeat=3", "a", "b"]);
    assert!(
        r.code == 1 && r.stderr.contains("goes with --run"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["compare", "--help"]);
    assert!(
        r.code == 0 && r.stdout.contains("ioscope compare") && r.stdout.contains("Mann-Whitney"),
        "{}",
        r.stdout
    );
}

#[test]
fn man_page_is_current_and_renders() {
    keep_current("docs/man/ioscope.1", &ioscope::docs::man_page());
}
