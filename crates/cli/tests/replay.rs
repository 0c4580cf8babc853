//! I/O replay: write_iolog records what a job issues in fio's iolog format, and
//! read_iolog replays version 2 and 3 iologs — ioscope's and fio's, both ways — at
//! their recorded times unless replay_no_stall, with replay_time_scale, replay_redirect
//! and replay_skip.

use crate::common::*;
use std::path::Path;

/// The I/O lines of an iolog without their timestamps: (file, action, offset, length).
fn actions(log: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"), "{text}");
    lines
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5).then(|| {
                (
                    w[1].to_string(),
                    w[2].to_string(),
                    w[3].parse().unwrap(),
                    w[4].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// Timestamps of an iolog's I/O lines, in µs.
fn times(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().count() == 5)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn write_iolog_records_every_issued_io() {
    let d = tmpdir();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=w",
            "--filename=data",
            "--rw=randrw",
            "--bs=4k",
            "--size=256k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--fsync=8",
            "--write_iolog=w.log",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("w.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "0 data add");
    assert_eq!(lines[2], "0 data open");
    assert!(lines.last().unwrap().ends_with(" data close"), "{text}");
    let a = actions(&d.path().join("w.log"));
    let count = |what: &str| a.iter().filter(|x| x.1 == what).count() as u64;
    assert_eq!(count("read"), u(&job(&v, 0)["read"]["total_ios"]));
    assert_eq!(count("write"), u(&job(&v, 0)["write"]["total_ios"]));
    assert_eq!(count("sync"), u(&job(&v, 0)["sync"]["total_ios"]));
    // The random map: every block once.
    let mut offs: Vec<u64> = a.iter().filter(|x| x.3 > 0).map(|x| x.2).collect();
    offs.sort_unstable();
    assert_eq!(offs, (0..64).map(|b| b * 4096).collect::<Vec<_>>());
    let t = times(&d.path().join("w.log"));
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "times only grow: {t:?}");
}

/// fio's iolog replayed by ioscope issues the same I/O in the same order (checked with
/// ioscope's own write_iolog of the replay), and fio replays ioscope's iolog.
#[test]
fn iologs_replay_both_ways_with_fio() {
    require!(Prereq::Fio333);
    let d = tmpdir();
    let rec = [
        "--name=w",
        "--filename=data",
        "--rw=randrw",
        "--bs=4k",
        "--size=128k",
        "--ioengine=psync",
        "--write_iolog=fio.log",
        "--output-format=json",
    ];
    let f = run_tool(Path::new("fio"), d.path(), &rec, &[]);
    assert_eq!(f.code, 0, "{}", f.stderr);
    let r = run_in(
        d.path(),
        &[
            "--name=r",
            "--read_iolog=fio.log",
            "--write_iolog=ours.log",
            "--replay_no_stall=1",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let theirs = actions(&d.path().join("fio.log"));
    assert_eq!(theirs.len(), 32);
    assert_eq!(actions(&d.path().join("ours.log")), theirs);
    // fio replays ours.
    let f = run_tool(
        Path::new("fio"),
        d.path(),
        &[
            "--name=r",
            "--read_iolog=ours.log",
            "--replay_no_stall=1",
            "--output-format=json",
        ],
        &[],
    );
    assert_eq!(f.code, 0, "{}", f.stderr);
    let v: serde_json::Value = serde_json::from_str(&f.stdout).expect("fio JSON");
    let ios = u(&job(&v, 0)["read"]["total_ios"]) + u(&job(&v, 0)["write"]["total_ios"]);
    assert_eq!(ios, 32, "fio replayed every I/O of ioscope's iolog");
}

/// Recorded times are kept: an I/O is not issued before its time; replay_no_stall
/// ignores the times, replay_time_scale=200 halves them.
#[test]
fn replay_keeps_the_recorded_times() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("t.log"),
        "fio version 3 iolog\n0 data add\n0 data open\n100 data write 0 4096\n\
         200000 data write 4096 4096\n400000 data read 0 4096\n400000 data close\n",
    )
    .unwrap();
    let replay = |extra: &[&str]| {
        let mut a = vec![
            "--name=r",
            "--read_iolog=t.log",
            "--write_iolog=out.log",
            "--output-format=json",
        ];
        a.extend(extra);
        let _ = std::fs::remove_file(d.path().join("out.log"));
        let (r, v) = run_json(d.path(), &a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(u(&job(&v, 0)["write"]["total_ios"]), 2);
        assert_eq!(u(&job(&v, 0)["read"]["total_ios"]), 1);
        times(&d.path().join("out.log"))
    };
    // The first I/O follows a line at time 0, so it waits nothing (as in fio); the
    // gaps after it are kept.
    let t = replay(&[]);
    assert!(t[1] >= 199_900 && t[2] >= 399_900, "{t:?}");
    let t = replay(&["--replay_time_scale=200"]);
    assert!(t[1] >= 99_950 && t[2] >= 199_950, "{t:?}");
    assert!(t[2] < 390_000, "twice as fast: {t:?}");
    let t = replay(&["--replay_no_stall=1"]);
    assert!(t[2] < 200_000, "at once: {t:?}");
}

/// Version 3 times are gaps, as fio reads them: none after a line at time 0 (so a log
/// whose lines start at 0 loses its first gap, and timestamps of 2^64−1 after it
/// replay at once: the run hung), none when time goes back. Both tools' job runtimes
/// within 100 ms of the gaps' sum: half the 200 ms between the readings told apart,
/// room for a loaded machine's late wake-ups.
#[test]
fn iolog_gaps_replay_as_fios() {
    require_fio!();
    let d = tmpdir();
    let max = u64::MAX;
    let logs = [
        (
            "first-at-0.log",
            "0 data write 0 4096\n200000 data write 4096 4096\n400000 data read 0 4096\n",
            200,
        ),
        (
            "first-at-100.log",
            "100 data write 0 4096\n200000 data write 4096 4096\n400000 data read 0 4096\n",
            400,
        ),
        (
            "max.log",
            &format!("{max} data read 0 4096\n{max} data read 4096 4096\n")[..],
            0,
        ),
        (
            "back.log",
            "300000 data read 0 4096\n100 data read 4096 4096\n100100 data read 0 4096\n",
            100,
        ),
    ];
    for (name, body, ms) in logs {
        let text = format!("fio version 3 iolog\n0 data add\n0 data open\n{body}");
        std::fs::write(d.path().join(name), text).unwrap();
        let args = [
            "--name=r",
            &format!("--read_iolog={name}"),
            "--output-format=json",
        ];
        let (r, v) = run_json(d.path(), &args);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
        assert_eq!(f.code, 0, "fio {name}: {}", f.stderr);
        let fio: serde_json::Value = serde_json::from_str(&f.stdout).expect("fio JSON");
        let ours = u(&job(&v, 0)["job_runtime"]);
        let theirs = u(&job(&fio, 0)["job_runtime"]);
        assert!(
            ours.abs_diff(ms) <= 100 && theirs.abs_diff(ms) <= 100,
            "{name}: ioscope {ours} ms, fio {theirs} ms, expected {ms} ms"
        );
    }
}

/// A data I/O of 0 bytes (`read 0 0`) is refused naming its line, before any I/O (fio
/// replays nothing at all from such a log and says nothing).
#[test]
fn an_iolog_io_of_no_bytes_is_refused() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("z.log"),
        "fio version 2 iolog\ndata add\ndata open\ndata read 0 0\ndata read 4096 4096\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["--name=r", "--read_iolog=z.log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("read_iolog=z.log: line 4: read of 0 bytes"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("data").exists(), "no file laid out");
}

/// replay_redirect puts every file of a trace onto one; replay_skip leaves kinds out;
/// version 2 iologs (no times) replay too.
#[test]
fn redirect_skip_and_version_2() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("v2.log"),
        "fio version 2 iolog\n/nonexistent/a add\n/nonexistent/b add\n/nonexistent/a open\n\
         /nonexistent/b open\n/nonexistent/a write 0 8192\n/nonexistent/b write 8192 8192\n\
         /nonexistent/a read 0 8192\n/nonexistent/a close\n/nonexistent/b close\n",
    )
    .unwrap();
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=r",
            "--read_iolog=v2.log",
            "--replay_redirect=target",
            "--write_iolog=out.log",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&job(&v, 0)["write"]["io_bytes"]), 16384);
    let a = actions(&d.path().join("out.log"));
    assert!(a.iter().all(|x| x.0 == "target"), "{a:?}");
    assert_eq!(
        std::fs::metadata(d.path().join("target")).unwrap().len(),
        16384
    );
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=r",
            "--read_iolog=v2.log",
            "--replay_redirect=target",
            "--replay_skip=write",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&job(&v, 0)["write"]["total_ios"]), 0);
    assert_eq!(u(&job(&v, 0)["read"]["total_ios"]), 1);
}

#[test]
fn a_bad_iolog_is_refused_before_any_io_with_its_line() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("bad.log"),
        "fio version 3 iolog\n0 data add\n5 data scribble 0 4096\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["--name=r", "--read_iolog=bad.log"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("read_iolog=bad.log: line 3: unknown action 'scribble'"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("data").exists(), "no file laid out");
    let r = run_in(
        d.path(),
        &["--name=r", "--read_iolog=bad.log", "--replay_skip=writes"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("option 'replay_skip': 'writes' is not one of"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["--name=r", "--read_iolog=missing.log"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("read_iolog=missing.log"), "{}", r.stderr);
}

/// A blktrace of `events` (time in ms, sector, bytes, action) on device `dev`.
fn blktrace(path: &Path, dev: (u32, u32), events: &[(u64, u64, u32, u32)]) {
    let bytes: Vec<u8> = events
        .iter()
        .flat_map(|&(ms, sector, len, action)| {
            blktrace_event(ms * 1_000_000, sector, len, action, dev)
        })
        .collect();
    std::fs::write(path, bytes).expect("trace");
}

/// A read, its completion, a write, a flush, a read and an odd-sized write.
const MIXED: &[(u64, u64, u32, u32)] = &[
    (100, 8, 4096, BT_QUEUE_READ),
    (100, 8, 4096, BT_DONE_READ),
    (150, 64, 8192, BT_QUEUE_WRITE),
    (300, 0, 0, BT_QUEUE_FLUSH),
    (500, 2048, 16384, BT_QUEUE_READ),
    (510, 57, 1000, BT_QUEUE_WRITE),
];

fn io_counts(v: &serde_json::Value) -> [u64; 5] {
    let j = job(v, 0);
    [
        u(&j["read"]["total_ios"]),
        u(&j["read"]["io_bytes"]),
        u(&j["write"]["total_ios"]),
        u(&j["write"]["io_bytes"]),
        u(&j["sync"]["total_ios"]),
    ]
}

/// A blktrace replayed onto a file (replay_redirect): the I/O fio 3.33 issues for the
/// same trace — its queue events, sectors × 512, a flush as a sync — at the trace's
/// times (never before them).
#[test]
fn blktrace_replays_as_fio_replays_it() {
    let d = tmpdir();
    blktrace(&d.path().join("t.bin"), (8, 0), MIXED);
    std::fs::write(d.path().join("target"), vec![0u8; 4 << 20]).expect("target");
    let args = [
        "--name=r",
        "--read_iolog=t.bin",
        "--replay_redirect=target",
        "--ioengine=psync",
        "--output-format=json",
    ];
    let mut ours = args.to_vec();
    ours.extend(["--replay_no_stall=1", "--write_iolog=ours.log"]);
    let (r, v) = run_json(d.path(), &ours);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = |a: &str, off: u64, len: u64| ("target".to_string(), a.to_string(), off, len);
    assert_eq!(
        actions(&d.path().join("ours.log")),
        [
            t("read", 4096, 4096),
            t("write", 32768, 8192),
            t("sync", 0, 0),
            t("read", 1048576, 16384),
            t("write", 29184, 1000),
        ]
    );
    assert_eq!(io_counts(&v), [2, 20480, 2, 9192, 1]);
    if fio_usable() {
        let mut theirs = args.to_vec();
        theirs.push("--replay_no_stall=1");
        let f = run_tool(Path::new("fio"), d.path(), &theirs, &[]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        let fv: serde_json::Value = serde_json::from_str(&f.stdout).expect("fio JSON");
        assert_eq!(io_counts(&fv), io_counts(&v), "fio replays the same I/O");
    }
    // At the trace's pace: the read at 100 ms goes at once, the rest that much later.
    std::fs::remove_file(d.path().join("ours.log")).expect("rm");
    let mut timed = args.to_vec();
    timed.push("--write_iolog=ours.log");
    let (r, _) = run_json(d.path(), &timed);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let at = times(&d.path().join("ours.log"));
    let due = [0, 50_000, 200_000, 400_000, 410_000];
    assert_eq!(at.len(), due.len(), "{at:?}");
    for (got, want) in at.iter().zip(due) {
        assert!(*got >= want, "issued at {got} µs, due at {want} µs: {at:?}");
    }
}

/// On the traced device itself (found by its major:minor under /dev), with a discard;
/// --readonly leaves the writes and discards out and says so, and the device is
/// untouched.
#[test]
fn blktrace_replays_on_its_own_device() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::new("16M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(&lp.dev).expect("loop device").rdev();
    let dev = (libc::major(rdev), libc::minor(rdev));
    let d = tmpdir();
    let mut events = MIXED.to_vec();
    events.push((600, 1024, 65536, BT_QUEUE_DISCARD));
    blktrace(&d.path().join("t.bin"), dev, &events);
    let args = [
        "--name=r",
        "--read_iolog=t.bin",
        "--replay_no_stall=1",
        "--ioengine=psync",
        "--output-format=json",
    ];
    let mut ro = args.to_vec();
    ro.push("--readonly");
    let (r, v) = run_json(d.path(), &ro);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("skips replay of 3 writes and trims due to --readonly"),
        "{}",
        r.stderr
    );
    assert_eq!(
        io_counts(&v),
        [2, 20480, 0, 0, 1],
        "the reads and the flush"
    );
    let image = std::fs::read(lp.backing()).expect("backing file");
    assert!(image.iter().all(|&b| b == 0), "--readonly wrote nothing");
    let (r, v) = run_json(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.is_empty() || !r.stderr.contains("error"),
        "{}",
        r.stderr
    );
    let trims = u(&job(&v, 0)["trim"]["total_ios"]);
    assert_eq!((io_counts(&v), trims), ([2, 20480, 2, 9192, 1], 1));
    let image = std::fs::read(lp.backing()).expect("backing file");
    assert!(
        image[32768..32768 + 8192].iter().any(|&b| b != 0),
        "the write reached the device"
    );
    if fio_usable() {
        let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        let fv: serde_json::Value = serde_json::from_str(&f.stdout).expect("fio JSON");
        assert_eq!(io_counts(&fv), io_counts(&v), "fio replays the same I/O");
        assert_eq!(u(&job(&fv, 0)["trim"]["total_ios"]), trims);
    }
}

/// merge_blktrace_file: two traces merged by time (the second at twice its speed) and
/// replayed as one.
#[test]
fn merged_blktraces_replay_in_time_order() {
    let d = tmpdir();
    let reads: Vec<(u64, u64, u32, u32)> = (0..3)
        .map(|i| (1 + 2 * i, 8 * i, 4096, BT_QUEUE_READ))
        .collect();
    let writes: Vec<(u64, u64, u32, u32)> = (0..2)
        .map(|i| (4 + 4 * i, 1000 + 8 * i, 4096, BT_QUEUE_WRITE))
        .collect();
    blktrace(&d.path().join("a.bin"), (8, 0), &reads);
    blktrace(&d.path().join("b.bin"), (8, 16), &writes);
    std::fs::write(d.path().join("target"), vec![0u8; 1 << 20]).expect("target");
    let (r, v) = run_json(
        d.path(),
        &[
            "--name=r",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=m.bin",
            "--merge_blktrace_scalars=100:50",
            "--replay_redirect=target",
            "--replay_no_stall=1",
            "--write_iolog=ours.log",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // a: reads at 1, 3, 5 ms; b: writes at 4, 8 ms, halved: 2, 4 ms.
    let t = |a: &str, off: u64| ("target".to_string(), a.to_string(), off, 4096);
    assert_eq!(
        actions(&d.path().join("ours.log")),
        [
            t("read", 0),
            t("write", 512000),
            t("read", 4096),
            t("write", 516096),
            t("read", 8192),
        ]
    );
    assert_eq!(io_counts(&v), [3, 12288, 2, 8192, 0]);
    assert_eq!(
        std::fs::metadata(d.path().join("m.bin"))
            .expect("merged")
            .len(),
        5 * 48
    );
}
