//! The seed workflows, with their filenames pointed at temporary files.

use crate::common::*;

/// Seed 000: NCQ priority with per-I/O latency logs (libaio, cmdprio 30% RT).
#[test]
fn seed_000_cmdprio_latency_log() {
    require!(Prereq::IoprioRt);
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=prio-randread",
            "--filename=dev.img",
            "--size=128m",
            "--random_generator=tausworthe64",
            "--write_lat_log=randread.log",
            "--log_prio=1",
            "--rw=randread",
            "--bs=128k",
            "--ioengine=libaio",
            "--iodepth=32",
            "--direct=1",
            "--cmdprio_class=1",
            "--cmdprio_percentage=30",
            "--runtime=3",
            "--log_entries=65536",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rd = &job(&v, 0)["read"];
    let n = u(&rd["total_ios"]);
    assert!(n > 0);
    let prios = rd["prios"].as_array().expect("per-priority stats");
    assert_eq!(prios.len(), 2);
    let rt = prios
        .iter()
        .find(|p| p["prioclass"] == 1)
        .expect("an RT entry");
    let be = prios
        .iter()
        .find(|p| p["prioclass"] == 0)
        .expect("a default entry");
    let (nrt, nbe) = (u(&rt["clat_ns"]["N"]), u(&be["clat_ns"]["N"]));
    assert_eq!(
        nrt + nbe,
        u(&rd["clat_ns"]["N"]),
        "per-priority N sum to the total"
    );
    let share = nrt as f64 / (nrt + nbe) as f64;
    assert!((0.25..0.35).contains(&share), "RT share {share}");
    // The clat log carries the priority of every I/O in hex.
    let log = std::fs::read_to_string(d.path().join("randread.log_clat.1.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len() as u64, n, "one clat log line per I/O");
    let rt_lines = lines.iter().filter(|l| l.ends_with(", 0x2000")).count();
    assert_eq!(rt_lines as u64, nrt);
    assert!(lines
        .iter()
        .all(|l| l.ends_with(", 0x2000") || l.ends_with(", 0x0000")));
    assert!(
        d.path().join("randread.log_lat.1.log").exists()
            && d.path().join("randread.log_slat.1.log").exists()
    );
}

/// Seed 004: io_uring with SQPOLL, registered files and fixed buffers.
#[test]
fn seed_004_io_uring_sqpoll() {
    let d = tmpdir();
    let base = [
        "-ioengine=io_uring",
        "-sqthread_poll=1",
        "-registerfiles=1",
        "-fixedbufs=1",
        "-direct=1",
        "-filename=dev.img",
        "-size=64m",
        "-bs=4k",
        "-iodepth=8",
        "-rw=randwrite",
        "-time_based",
        "-ramp_time=1",
        "-runtime=2",
        "-name=test",
    ];
    // The seed pins the SQPOLL thread to CPU 65: a clear error here, before any I/O.
    let mut args: Vec<&str> = base.to_vec();
    args.push("-sqthread_poll_cpu=65");
    let r = run_in(d.path(), &args);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("sqthread_poll_cpu") && r.stderr.contains("does not exist"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("dev.img").exists(), "nothing was written");
    // hipri needs a device with poll queues (virtio has none): a clear error too.
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["-hipri=1", "-sqthread_poll_cpu=1"]);
    let r = run_in(d.path(), &args);
    if r.code != 0 {
        assert!(
            r.stderr.contains("IOPOLL") || r.stderr.contains("hipri"),
            "{}",
            r.stderr
        );
    }
    // The rest of the command runs, with sqpoll implying registerfiles and no slat.
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["-sqthread_poll_cpu=1", "--output-format=json"]);
    let t = std::time::Instant::now();
    let (r, v) = run_json(d.path(), &args);
    let wall_ms = t.elapsed().as_millis() as u64;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let w = &job(&v, 0)["write"];
    assert!(u(&w["total_ios"]) > 0);
    assert_eq!(
        u(&w["slat_ns"]["N"]),
        0,
        "sqthread_poll disables slat as in fio"
    );
    // fio 3.33 reports clat in seconds here; clat must not exceed total latency.
    let (clat, lat) = (
        w["clat_ns"]["mean"].as_f64().unwrap(),
        w["lat_ns"]["mean"].as_f64().unwrap(),
    );
    assert!(clat <= lat && clat > 0.0, "clat {clat} lat {lat}");
    // The 1 s ramp is not measured: what is measured is the 2 s runtime, at most what
    // the whole process took after the ramp (a loaded machine may overshoot the
    // deadline, never measure the ramp).
    let runtime = u(&w["runtime"]);
    assert!(
        runtime >= 1900 && runtime < 3000.max(wall_ms.saturating_sub(1000)),
        "ramp_time is not measured: runtime {runtime} ms of a {wall_ms} ms run"
    );
    assert!(
        runtime <= wall_ms.saturating_sub(1000),
        "runtime {runtime} ms measured in a {wall_ms} ms run with a 1 s ramp"
    );
    let (_, dump) = run_json(
        d.path(),
        &[&base[..], &["-sqthread_poll_cpu=1", "--dump-jobs"]].concat(),
    );
    let o = &dump["jobs"][0]["opts"];
    assert_eq!(o["registerfiles"], true);
    assert_eq!(o["fixedbufs"], true);
    assert_eq!(o["sqthread_poll_cpu"], 1);
}

/// The fio-tests template job (seed 003), size 256M and runtime 3, on a temp file.
#[test]
fn seed_003_fio_tests_template() {
    let d = tmpdir();
    let job = "[global]\nname=4k  MIX 70% read / 30% write with iodepth 1 and 1 thread\nthreads=1\ngroup_reporting=1\ntime_based\nioengine=libaio\ndirect=1\nbuffered=0\nnorandommap\nrefill_buffers\n\nbs=4k\nsize=256M\niodepth=1\nnumjobs=1\nfilename=testfile\n\niodepth_batch_submit=4096\niodepth_batch_complete_min=1\niodepth_batch_complete_max=4096\n\nexitall_on_error\ncontinue_on_error=none\n\n\n[randrw]\nrw=randrw\nrwmixread=70\nruntime=3\n";
    std::fs::write(d.path().join("t.fio"), job).unwrap();
    let r = run_in(d.path(), &["t.fio", "--output-format=terse"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fields: Vec<&str> = r.stdout.trim().split(';').collect();
    assert_eq!(fields[0], "3");
    assert_eq!(fields[2], "randrw");
    let (rk, wk): (u64, u64) = (fields[5].parse().unwrap(), fields[46].parse().unwrap());
    assert!(rk > 0 && wk > 0);
    let share = rk as f64 / (rk + wk) as f64;
    assert!((0.6..0.8).contains(&share), "read share {share}");
    assert!(
        fields.len() == 121 || fields.len() == 130,
        "terse v3 has 121 fields, or 130 with one disk: {}",
        fields.len()
    );
}
