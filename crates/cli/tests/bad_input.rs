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
    fs::write(
        d.path().join("j.fio"),
        "[job]\nsize=1m\nioengine=sg\nstream_id=1\n",
    )
    .unwrap();
    // --parse-only checks everything a run would, short of I/O.
    fails_with(
        &["--parse-only", "j.fio"],
        d.path(),
        &["j.fio:4", "stream_id", "not supported yet"],
    );
    fails_with(
        &["j.fio"],
        d.path(),
        &["j.fio:4", "stream_id", "not supported yet"],
    );
}

/// recover_zbd_write_error refused where fio refuses it: in a write job without
/// continue_on_error, and with verify on an asynchronous engine.
#[test]
fn recover_zbd_write_error_needs_continue_on_error_and_a_sync_engine_to_verify() {
    let d = tmpdir();
    let base = "[job]\nfilename=z\nsize=4m\nzonemode=zbd\nzonesize=1m\nrw=write\n";
    for (extra, want) in [
        ("", "works only when continue_on_error is set"),
        (
            "continue_on_error=all\nioengine=libaio\nverify=crc32c\n",
            "with an asynchronous engine (libaio) does not support verify",
        ),
    ] {
        let job = format!("{base}{extra}recover_zbd_write_error=1\n");
        fs::write(d.path().join("j.fio"), &job).unwrap();
        let line = format!("j.fio:{}", job.lines().count());
        for args in [&["--parse-only", "j.fio"][..], &["j.fio"]] {
            fails_with(args, d.path(), &[&line, "recover_zbd_write_error", want]);
        }
    }
    // A synchronous engine verifies with it; a job that only reads takes it as is.
    let sync = format!("{base}continue_on_error=all\nverify=crc32c\nrecover_zbd_write_error=1\n");
    let read = "[job]\nfilename=z\nsize=4m\nzonemode=zbd\nzonesize=1m\nrw=read\n\
                recover_zbd_write_error=1\n";
    for job in [sync.as_str(), read] {
        fs::write(d.path().join("j.fio"), job).unwrap();
        let r = run_tool(&bin(), d.path(), &["--parse-only", "j.fio"], &[]);
        assert_eq!(r.code, 0, "{job}: {}", r.stderr);
    }
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

/// Ten job files, each including the next eight times: 8^9 reads before the include
/// depth limit would stop them (the run hung). The includes are counted over the
/// whole job file and cut at 1024, naming the line.
#[test]
fn an_include_graph_that_fans_out_is_cut_short() {
    let d = tmpdir();
    for i in 0..10 {
        let body = match i {
            9 => "[j]\nbs=4k\n".to_string(),
            _ => format!("include f{}.fio\n", i + 1).repeat(8),
        };
        fs::write(d.path().join(format!("f{i}.fio")), body).unwrap();
    }
    fails_with(
        &["--parse-only", "f0.fio"],
        d.path(),
        &["more than 1024 includes in all"],
    );
}

/// /dev/zero as a job file, an include, a sweep file or a template: read up to a
/// limit and refused, not read until memory runs out.
#[test]
fn dev_zero_is_no_job_file_include_sweep_or_template() {
    let d = tmpdir();
    let limit = "longer than 64 MiB";
    fails_with(
        &["--parse-only", "/dev/zero"],
        d.path(),
        &["/dev/zero", limit],
    );
    fs::write(d.path().join("j.fio"), "[j]\ninclude /dev/zero\n").unwrap();
    fails_with(&["--parse-only", "j.fio"], d.path(), &["j.fio:2", limit]);
    fails_with(
        &["sweep", "plan", "/dev/zero"],
        d.path(),
        &["/dev/zero", limit],
    );
    let sweep = "[target]\nfilename = \"/tmp/x\"\nsize = \"1m\"\n[template]\n\
                 file = \"/dev/zero\"\n[[sweep]]\nname = \"t\"\naxes = { iodepth = [1] }\n";
    fs::write(d.path().join("s.toml"), sweep).unwrap();
    fails_with(&["sweep", "plan", "s.toml"], d.path(), &["s.toml:5", limit]);
}

/// A verify state file whose depth (with a valid checksum) is more than its record
/// holds: refused naming the depth, not an allocation sized by it.
#[test]
fn a_crafted_verify_state_file_is_refused() {
    use ioscope_verify::state::State;
    let d = tmpdir();
    let f = d.path().join("data");
    fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let good = State {
        numberio: 4,
        index: 0,
        name: "v".into(),
        depth: 1,
        inflight: vec![3],
    }
    .encode();
    for depth in [u32::MAX, 1 << 30] {
        let mut rec = good[24..].to_vec();
        rec[..4].copy_from_slice(&depth.to_le_bytes());
        let mut crafted = good[..24].to_vec();
        let crc = u64::from(ioscope_verify::fio_crc32c(&rec));
        crafted[16..24].copy_from_slice(&crc.to_le_bytes());
        crafted.extend(rec);
        fs::write(d.path().join("local-v-0-verify.state"), crafted).unwrap();
        let r = run_in(
            d.path(),
            &[
                "--name=v",
                &format!("--filename={}", f.display()),
                "--size=1m",
                "--rw=read",
                "--verify=crc32c",
                "--verify_state_load=1",
            ],
        );
        assert_eq!(r.code, 1, "{}", r.stderr);
        let want = format!("lists {depth} writes in flight but its record holds 1");
        assert!(r.stderr.contains(&want), "{}", r.stderr);
    }
}

/// `rounds = 1e20` in [steady_state]: refused naming the line (it panicked converting
/// the planned time to a Duration).
#[test]
fn steady_state_rounds_are_counted_and_bounded() {
    let d = tmpdir();
    let sweep = "[target]\nfilename = \"/tmp/x\"\nsize = \"4m\"\n[steady_state]\nrounds = 1e20\n\
                 workload = { rw = \"randwrite\", runtime = \"1s\" }\n[[sweep]]\nname = \"a\"\n\
                 profiles = [\"randread\"]\naxes = { iodepth = [1] }\n";
    fs::write(d.path().join("s.toml"), sweep).unwrap();
    fails_with(
        &["sweep", "plan", "s.toml"],
        d.path(),
        &["s.toml:5: steady_state.rounds: a whole number of rounds, 1 to 10000"],
    );
}

/// A link planted at the name of an output (--output, a latency log, a chart) is
/// refused, never written through: its target is unchanged.
#[test]
fn outputs_are_never_written_through_a_planted_link() {
    let d = tmpdir();
    let victim = d.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    for name in ["out.json", "lat_lat.1.log", "chart.svg"] {
        std::os::unix::fs::symlink(&victim, d.path().join(name)).unwrap();
    }
    let job = ["--name=x", "--ioengine=null", "--size=1m"];
    let r = run_in(d.path(), &[&job[..], &["--output=out.json"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--output=out.json: a symbolic link: refused"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &[&job[..], &["--write_lat_log=lat"]].concat());
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("a symbolic link: refused"),
        "{}",
        r.stderr
    );
    fs::write(d.path().join("a.json"), "{\"jobs\": []}").unwrap();
    let r = run_in(
        d.path(),
        &["compare", "--svg", "chart.svg", "a.json", "a.json"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("chart.svg: a symbolic link: refused"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
}

/// As fio: a size below the smallest block size is an error (it warned and exited 0
/// after a short I/O), and `ioscope` with no arguments defines no job: usage and exit
/// 1 (it exited 0).
#[test]
fn a_size_below_the_block_size_and_no_arguments_fail() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &["--name=x", "--filename=f", "--size=4k", "--bs=8k"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("size too small, must not be less than minimum block size: 4096 < 8192"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("f").exists(), "no file laid out");
    // The smallest of the directions counts, as fio's td_min_bs.
    let r = run_in(
        d.path(),
        &["--name=x", "--filename=f", "--size=4k", "--bs=4k,8k"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_in(d.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("ioscope"),
        "usage on stdout: {}",
        r.stdout
    );
    assert!(r.stderr.contains("no job(s) defined"), "{}", r.stderr);
}

#[test]
fn num_range_is_refused_where_fio_refuses_it_and_where_ranges_cannot_be_drawn() {
    let d = tmpdir();
    let base = [
        "--parse-only",
        "--name=x",
        "--filename=/dev/ng0n1",
        "--size=1m",
    ];
    for (extra, needle) in [
        (
            &["--ioengine=io_uring_cmd", "--rw=trimwrite", "--num_range=4"][..],
            "trimwrite cannot be used with multiple ranges",
        ),
        (
            &[
                "--ioengine=io_uring_cmd",
                "--rw=randtrim",
                "--num_range=4",
                "--verify=crc32c",
            ][..],
            "num_range=4 with verify is not supported yet",
        ),
        (
            &[
                "--ioengine=io_uring_cmd",
                "--rw=randtrim",
                "--num_range=257",
            ][..],
            "num_range",
        ),
    ] {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        fails_with(&a, d.path(), &[needle]);
    }
    // With trims of one file on io_uring_cmd, the job is accepted.
    let mut a = base.to_vec();
    a.extend_from_slice(&["--ioengine=io_uring_cmd", "--rw=randtrim", "--num_range=4"]);
    let r = run_in(d.path(), &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn verify_mode_compare_needs_a_pattern_the_device_can_compare_with() {
    let d = tmpdir();
    let a = [
        "--parse-only",
        "--name=x",
        "--filename=/dev/ng0n1",
        "--ioengine=io_uring_cmd",
        "--rw=write",
        "--size=1m",
        "--verify=crc32c",
        "--verify_mode=compare",
    ];
    fails_with(
        &a,
        d.path(),
        &[
            "verify_mode=compare needs verify=pattern and verify_pattern",
            "verify=crc32c",
        ],
    );
}

/// Jobs of one reporting group with other steady-state options (or one with none)
/// are refused naming both, as fio 3.42 refuses them, in a run and under
/// --parse-only; a group of clones (numjobs) and jobs in groups of their own run.
#[test]
fn steady_state_options_differ_within_a_group() {
    let d = tmpdir();
    let job = |name: &str, ss: &str| format!("[{name}]\nioengine=null\nsize=1m\n{ss}");
    let ss = |dur: u32| format!("steadystate=iops:1\nsteadystate_duration={dur}\n");
    let cases = [
        ("none.fio", format!("{}{}", job("s", &ss(2)), job("t", ""))),
        (
            "dur.fio",
            format!("{}{}", job("s", &ss(2)), job("t", &ss(3))),
        ),
    ];
    for (file, text) in &cases {
        fs::write(d.path().join(file), text).unwrap();
        let want =
            ["job 't': steadystate options must be consistent within reporting groups: job 's'"];
        fails_with(&[file], d.path(), &want);
        fails_with(&["--parse-only", file], d.path(), &want);
    }
    let fine = format!(
        "{}{}",
        job("s", &format!("{}numjobs=2\n", ss(2))),
        job("t", "new_group\n")
    );
    fs::write(d.path().join("fine.fio"), fine).unwrap();
    let r = run_in(d.path(), &["--output-format=terse", "fine.fio"]);
    assert_eq!((r.code, r.stdout.lines().count()), (0, 3), "{}", r.stderr);
}
