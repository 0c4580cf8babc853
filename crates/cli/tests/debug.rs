//! fio's `--debug=parse,random,io` and the behaviour fio 3.42's harness checks with
//! them: option parsing, the random seeds (randseed, randrepeat, allrandrepeat), the
//! 32-bit tausworthe generator, openfiles' window of files; and two fixes its tests
//! found (rate with rwmixread=100, log_store_compressed with per_job_logs=0).

use crate::common::*;

/// (file, offset, len) of each `complete:` line of `--debug=io`.
fn completions(stdout: &str) -> Vec<(String, u64, u64)> {
    stdout
        .lines()
        .filter(|l| l.starts_with("io ") && l.contains(" complete: "))
        .map(|l| {
            let field = |k: &str| {
                let i = l.find(k).expect(k) + k.len();
                l[i..].split(',').next().unwrap().to_string()
            };
            let hex = |k: &str| u64::from_str_radix(field(k).trim_start_matches("0x"), 16).unwrap();
            (field("file="), hex("off="), hex("len="))
        })
        .collect()
}

/// A time-based random read on the null engine, with `extra`.
fn timed<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=j",
        "--ioengine=null",
        "--size=1G",
        "--rw=randread",
        "--time_based",
    ];
    a.extend_from_slice(extra);
    a
}

/// The `rand_seeds[i]=N` values of `--debug=random`.
fn seeds(text: &str) -> Vec<u64> {
    text.lines()
        .filter(|l| l.starts_with("random ") && l.contains("rand_seeds["))
        .map(|l| l.rsplit('=').next().unwrap().trim().parse().unwrap())
        .collect()
}

#[test]
fn debug_io_prints_each_completed_io_as_fio_does() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--filesize=1m",
            "--bs=4k",
            "--rw=randread",
            "--number_ios=100",
            "--debug=io",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let c = completions(&r.stdout);
    assert_eq!(c.len(), 100, "{}", r.stdout);
    assert!(c
        .iter()
        .all(|(f, off, len)| f == "t.0.0" && *len == 4096 && off % 4096 == 0 && *off < 1 << 20));
    // The random map: 100 different blocks.
    let mut offs: Vec<u64> = c.iter().map(|x| x.1).collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len(), 100);
}

#[test]
fn an_explicit_tausworthe_draws_32_bits_and_says_so_as_fio_does() {
    // 1 TiB in 1-byte blocks is 2^40 blocks: fio's 32-bit generator reaches one block
    // in 256 (so offsets repeat); left to its default, the generator covers them all.
    let d = tmpdir();
    let args = |gen: Option<&'static str>| {
        let mut a = vec![
            "--name=t",
            "--ioengine=null",
            "--filesize=1T",
            "--bs=1",
            "--rw=randread",
            "--norandommap",
            "--number_ios=2000",
            "--randseed=7",
            "--debug=io",
        ];
        a.extend(gen);
        a
    };
    let narrow = run_in(d.path(), &args(Some("--random_generator=tausworthe")));
    assert_eq!(narrow.code, 0, "{}", narrow.stderr);
    assert!(narrow
        .stdout
        .contains("fio: file t.0.0 exceeds 32-bit tausworthe random generator."));
    let c = completions(&narrow.stdout);
    assert_eq!(c.len(), 2000);
    assert!(
        c.iter().all(|x| x.1 % 256 == 0),
        "32 random bits over 2^40 blocks"
    );
    let wide = run_in(d.path(), &args(None));
    assert!(!wide.stdout.contains("exceeds 32-bit"));
    let c = completions(&wide.stdout);
    let off_grid = c.iter().filter(|x| x.1 % 256 != 0).count();
    assert!(
        off_grid > 1900,
        "{off_grid} of 2000 offsets off the 256-byte grid"
    );
}

#[test]
fn randseed_fixes_the_seeds_and_randrepeat_0_changes_them() {
    let d = tmpdir();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--name=t",
            "--ioengine=null",
            "--filesize=32k",
            "--rw=randread",
            "--debug=random",
        ];
        a.extend_from_slice(extra);
        let r = run_in(d.path(), &a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let s = seeds(&r.stdout);
        assert_eq!(s.len(), 6, "{}", r.stdout);
        s
    };
    let fixed = run(&["--randseed=12345", "--randrepeat=0"]);
    assert_eq!(
        fixed,
        run(&["--randseed=12345", "--allrandrepeat=0"]),
        "randseed overrides"
    );
    assert_eq!(fixed, run(&["--randseed=12345"]));
    assert_ne!(fixed, run(&["--randseed=67890"]));
    let repeat = run(&["--randrepeat=1"]);
    assert_eq!(repeat, run(&["--allrandrepeat=1"]));
    assert_ne!(repeat, fixed);
    let a = run(&["--randrepeat=0"]);
    assert_ne!(a, run(&["--randrepeat=0"]), "seeds from the system");
    assert_ne!(
        run(&["--allrandrepeat=0"]),
        run(&["--allrandrepeat=0"]),
        "an alias"
    );
    assert_ne!(a, repeat);
    // With --output, the lines go into the file (fio's harness reads them there).
    let r = run_in(
        d.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--filesize=32k",
            "--rw=randread",
            "--debug=random",
            "--randseed=12345",
            "--output=out.txt",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("out.txt")).unwrap();
    assert_eq!(seeds(&text), fixed);
    assert!(text.contains("Run status group 0"));
}

#[test]
fn debug_parse_prints_fios_lines_even_without_a_job() {
    let cases = [
        ("iops:10", "set steady state IOPS threshold to 10.000000"),
        ("iops:.1%", "set steady state threshold to 0.100000%"),
        ("bw:12", "set steady state BW threshold to 12"),
    ];
    for (ss, line) in cases {
        let arg = format!("--ss={ss}");
        let r = run(&[
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            &arg,
            "--ss_ramp=5",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
        assert!(r.stdout.contains(line), "{ss}: {}", r.stdout);
        assert!(r
            .stdout
            .contains("handle_option=steadystate_duration, ptr=10s"));
    }
    let r = run(&["--parse-only", "--debug=mutex", "--name=x"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("'mutex'"), "{}", r.stderr);
}

#[test]
fn openfiles_keeps_a_window_of_files_in_fios_order() {
    // As fio 3.42 does it (seen with its --debug=io): two files in turn until both
    // are done, then the third; sequential service: one after another.
    let d = tmpdir();
    let order = |service: &str| -> Vec<String> {
        let svc = format!("--file_service_type={service}");
        let r = run_in(
            d.path(),
            &[
                "--name=of",
                "--ioengine=psync",
                "--nrfiles=3",
                "--openfiles=2",
                "--filesize=16k",
                "--bs=4k",
                "--rw=write",
                "--debug=io",
                &svc,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        completions(&r.stdout)
            .into_iter()
            .map(|(f, off, _)| format!("{}:{}", &f[f.len() - 1..], off / 4096))
            .collect()
    };
    let rr = "0:0 1:0 0:1 1:1 0:2 1:2 0:3 1:3 2:0 2:1 2:2 2:3";
    assert_eq!(order("roundrobin").join(" "), rr);
    let seq = "0:0 0:1 0:2 0:3 1:0 1:1 1:2 1:3 2:0 2:1 2:2 2:3";
    assert_eq!(order("sequential").join(" "), seq);
}

#[test]
fn compressed_shared_logs_hold_this_runs_lines_and_leave_an_old_log_alone() {
    // Three jobs named alike share test_bw.log (per_job_logs=0): two clones, then a
    // second phase. The .fz holds this run's lines of all three; a NAME.log of an
    // earlier run stays as it was; a link planted at the .fz is replaced, not followed.
    let d = tmpdir();
    std::fs::write(d.path().join("test_bw.log"), "an earlier run's log\n").unwrap();
    std::fs::write(d.path().join("victim"), "keep\n").unwrap();
    std::os::unix::fs::symlink("victim", d.path().join("test_bw.log.fz")).unwrap();
    let r = run_in(
        d.path(),
        &[
            "--ioengine=null",
            "--filesize=10M",
            "--bs=128K",
            "--rw=write",
            "--write_bw_log=test",
            "--per_job_logs=0",
            "--log_offset=1",
            "--log_compression=10K",
            "--log_store_compressed=1",
            "--name=job",
            "--numjobs=2",
            "--name=job",
            "--stonewall",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let old = std::fs::read_to_string(d.path().join("test_bw.log")).unwrap();
    assert_eq!(old, "an earlier run's log\n");
    assert_eq!(
        std::fs::read_to_string(d.path().join("victim")).unwrap(),
        "keep\n"
    );
    let fz = d.path().join("test_bw.log.fz");
    assert!(!fz.symlink_metadata().unwrap().file_type().is_symlink());
    let text = run_in(d.path(), &["--inflate-log", fz.to_str().unwrap()]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let mut offsets: Vec<u64> = text
        .stdout
        .lines()
        .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
        .collect();
    offsets.sort_unstable();
    let mut expect: Vec<u64> = (0..80).flat_map(|i| [i * 128 * 1024; 3]).collect();
    expect.sort_unstable();
    assert_eq!(offsets, expect);
    let left = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ioscope-") || n.ends_with(".tmp"))
        .count();
    assert_eq!(left, 0, "no staging or temporary file is left");
}

#[test]
fn a_rate_limited_randrw_with_rwmixread_100_never_writes() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=j",
            "--ioengine=null",
            "--size=1G",
            "--rw=randrw",
            "--rwmixread=100",
            "--number_ios=1000",
            "--rate_iops=100000",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&job(&v, 0)["read"]["total_ios"]), 1000);
    assert_eq!(u(&job(&v, 0)["write"]["total_ios"]), 0);
}

#[test]
fn a_steady_state_window_not_filled_is_padded_with_zeros() {
    // A 3 s run cannot fill a 10 s window: fio writes the window's 10 slots, zeros
    // where no sample came, and means over the 10.
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &timed(&[
            "--runtime=3",
            "--ss_dur=10",
            "--ss=iops:10%",
            "--rate_iops=1000",
            "--output-format=json",
        ]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let data = &job(&v, 0)["steadystate"]["data"];
    let iops: Vec<u64> = data["iops"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(iops.len(), 10, "{iops:?}");
    assert!(iops[4..].iter().all(|&x| x == 0), "{iops:?}");
    assert_eq!(u(&data["iops_mean"]), iops.iter().sum::<u64>() / 10);
}

#[test]
fn sprandom_writes_the_physical_capacity_once_and_refuses_what_it_cannot_do() {
    // 4 MiB of 4 KiB blocks with 25% over-provisioning: 1024 blocks, each written,
    // about 1024 / 0.75 writes in all; the oldest of 4 regions keeps about 0.6 of
    // its writes valid, the newest all of them.
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=s",
            "--ioengine=psync",
            "--filename=f",
            "--size=4M",
            "--bs=4k",
            "--rw=randwrite",
            "--sprandom=1",
            "--spr_op=0.25",
            "--spr_num_regions=4",
            "--debug=io",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = completions(&r.stdout);
    let w = c.len();
    assert!((1300..1400).contains(&w), "{w} writes");
    let mut last = std::collections::HashMap::new();
    for (i, (_, off, len)) in c.iter().enumerate() {
        assert_eq!(*len, 4096);
        last.insert(*off, i);
    }
    assert_eq!(last.len(), 1024, "every block written");
    let mut valid = [0usize; 4];
    for &i in last.values() {
        valid[i * 4 / w] += 1;
    }
    let share: Vec<f64> = valid.iter().map(|&v| v as f64 * 4.0 / w as f64).collect();
    assert!(share[0] > 0.45 && share[0] < 0.7, "{share:?}");
    assert!(share[3] > 0.97, "{share:?}");
    assert!(share.windows(2).all(|p| p[0] < p[1]), "{share:?}");
    // What fio refuses, refused (fio 3.42's t/sprandom.py).
    let refused = [
        ("--random_generator=tausworthe", "random_generator"),
        ("--norandommap=0", "norandommap"),
        ("--rw=randread", "rw"),
        ("--spr_num_regions=2000", "spr_cs"),
    ];
    for (arg, what) in refused {
        let r = run_in(
            d.path(),
            &[
                "--name=s",
                "--ioengine=psync",
                "--filename=g",
                "--size=32M",
                "--bs=4k",
                "--rw=randwrite",
                "--sprandom=1",
                "--spr_cs=32K",
                arg,
            ],
        );
        assert_ne!(r.code, 0, "{arg}");
        assert!(r.stderr.contains(what), "{arg}: {}", r.stderr);
    }
}

#[test]
fn steady_state_of_completion_latency_as_fio_342_does() {
    // ss=lat: each interval's mean clat; a limit of 1 s of deviation holds at once.
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &timed(&[
            "--runtime=20",
            "--ss_dur=2",
            "--ss=lat:1000000000",
            "--rate_iops=1000",
            "--output-format=json",
        ]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ss = &job(&v, 0)["steadystate"];
    assert_eq!(ss["ss"], "lat:1000000000.000000");
    assert_eq!(ss["attained"], 1, "{ss}");
    let lat: Vec<u64> = ss["data"]["lat_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .collect();
    assert_eq!(lat.len(), 2, "{ss}");
    assert!(lat.iter().any(|&l| l > 0), "{ss}");
    assert_eq!(u(&ss["data"]["lat_mean"]), lat.iter().sum::<u64>() / 2);
    // Ended by the criterion, long before the runtime.
    assert!(u(&job(&v, 0)["read"]["runtime"]) < 10_000);
    let r = run(&[
        "--parse-only",
        "--debug=parse",
        "--ss=lat_slope:10%",
        "--ss=lat:10",
    ]);
    assert!(
        r.stdout
            .contains("set steady state latency threshold to 10 nsec"),
        "{}",
        r.stdout
    );
    let r = run_in(
        d.path(),
        &timed(&[
            "--runtime=20",
            "--ss_dur=2",
            "--ss=lat_slope:100%",
            "--rate_iops=1000",
        ]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("steadystate  :"))
        .unwrap();
    assert!(
        line.contains(", lat=") && line.contains("nsec, lat slope="),
        "{line}"
    );
}

#[test]
fn rate_min_judges_a_job_slower_than_one_io_per_cycle_over_its_gaps() {
    // One 4 KiB read every 205 ms (rate=20000) against a 100 ms ratecycle: fio 3.42
    // judges the rate when I/O completes, over the gap (20000 B/s >= 5000; it would
    // take a gap of 819 ms to fail), and the job passes; at rate=4000 (one read a
    // second) the gap's 4000 B/s fails it.
    let d = tmpdir();
    let job = |rate: &str| {
        let rate = format!("--rate={rate}");
        run_in(
            d.path(),
            &[
                "--name=r",
                "--filename=rr",
                "--size=20k",
                "--bs=4k",
                "--rw=read",
                &rate,
                "--ratemin=5000",
                "--ratecycle=100",
                "--output-format=terse",
            ],
        )
    };
    let r = job("20000");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let r = job("4000");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("min rate 5000 B/s not met for read"),
        "{}",
        r.stderr
    );
}
