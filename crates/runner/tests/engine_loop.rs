//! The engine's own loop (`RunOptions::engine_loop`, what `ioscope peak` runs) against
//! the general loop, on real io_uring and a real file: the same I/Os counted, timed
//! and written, in the batches asked for; a step the engine's loop does not issue (a
//! sync) handed back to the general loop, which goes on from there.

use ioscope_options::{jobfile, spec, JobSet};
use ioscope_runner::{Observer, RunOptions, Runner};
use ioscope_stats::JobResult;
use std::path::Path;

struct Quiet;
impl Observer for Quiet {
    fn message(&mut self, _: &str) {}
}

fn jobs(text: &str) -> JobSet {
    let mut sections = Vec::new();
    jobfile::parse_text(Path::new("t.fio"), text, &mut sections, 0).expect("job file parses");
    spec::build(&[], &[], &[sections], &[], &jobfile::Keywords::probe()).expect("jobs build")
}

/// Runs `text` with the engine's loop allowed or not; None: io_uring is not
/// available here (a visible skip locally, a failure under CI=true).
fn run(text: &str, engine_loop: bool) -> Option<JobResult> {
    run_with(text, engine_loop, false)
}

fn run_with(text: &str, engine_loop: bool, nop: bool) -> Option<JobResult> {
    let ro = RunOptions {
        engine_loop,
        nop,
        ..Default::default()
    };
    match Runner::new(ro).run_set(&jobs(text), &mut Quiet) {
        Ok(mut r) => Some(r.jobs.remove(0)),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("SKIP engine loop: io_uring unavailable here: {e}");
            None
        }
        Err(e) => panic!("run failed: {e}"),
    }
}

fn job(dir: &Path, extra: &str) -> String {
    format!(
        "[j]\nfilename={}\nioengine=io_uring\nsize=4m\nbs=4k\niodepth=16\n{extra}\n",
        dir.join("f").display()
    )
}

#[test]
fn engine_loop_counts_times_and_batches_as_the_general_loop() {
    // With the random map (the workload's general path) and without (its plain path).
    for map in ["", "norandommap=1"] {
        let d = tempfile::tempdir().expect("tempdir");
        let text = job(
            d.path(),
            &format!(
                "rw=randwrite\nloops=3\nnumber_ios=3000\niodepth_batch_submit=4\n\
                 iodepth_batch_complete_min=4\n{map}"
            ),
        );
        for engine_loop in [true, false] {
            let Some(j) = run(&text, engine_loop) else {
                return;
            };
            let (w, how) = (&j.dirs[1], format!("engine_loop={engine_loop} {map}"));
            assert_eq!(j.error, 0, "{:?}", j.error_text);
            assert_eq!(w.total_ios, 3000, "{how}");
            assert_eq!(w.io_bytes, 3000 * 4096, "{how}");
            assert_eq!(w.clat.stat.n, 3000, "every I/O timed ({how})");
            let hist = w.clat.hist.as_ref().expect("clat histogram");
            assert_eq!(hist.count(), 3000, "{how}");
            assert!(w.clat.stat.min > 0 && w.clat.stat.max >= w.clat.stat.min);
            // Batches of 4 (fio's "4" bucket of the submit distribution), every one.
            let calls: u64 = j.submit.iter().sum();
            assert_eq!(j.submit[1], calls, "{:?} ({how})", j.submit);
            assert!(calls >= 750, "{calls} submit calls for 3000 I/Os in 4s");
        }
        // The writes reached the file: with the random map, each pass covers every
        // block once.
        let data = std::fs::read(d.path().join("f")).expect("file");
        assert_eq!(data.len(), 4 << 20);
        if map.is_empty() {
            assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
        }
    }
}

#[test]
fn a_sync_ends_the_engine_loop_and_the_general_loop_goes_on() {
    let d = tempfile::tempdir().expect("tempdir");
    let text = job(d.path(), "rw=write\nfsync=64\nnumber_ios=1000");
    let (Some(a), Some(b)) = (run(&text, true), run(&text, false)) else {
        return;
    };
    for (j, engine_loop) in [(&a, true), (&b, false)] {
        assert_eq!(j.error, 0, "{:?}", j.error_text);
        assert_eq!(j.dirs[1].total_ios, 1000, "engine_loop={engine_loop}");
        assert_eq!(j.dirs[1].io_bytes, 1000 * 4096, "engine_loop={engine_loop}");
        assert_eq!(j.dirs[1].clat.stat.n, 1000, "engine_loop={engine_loop}");
        assert_eq!(j.sync.total_ios, 1000 / 64, "engine_loop={engine_loop}");
    }
}

#[test]
fn nops_taken_a_batch_at_a_time_stop_exactly_at_every_limit() {
    // NOPs are counted a batch at a time (`peak --nop`): the job's size, its loops
    // and number_ios must still end it at exactly the I/O the general loop ends it at,
    // also where a limit falls inside a batch (1001 is no multiple of 8; 4m of 12k
    // blocks leaves a partial last block: 8m of them is 683 I/Os, as fio counts).
    let d = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("number_ios=1001", 1001, 1001 * 4096),
        ("loops=3", 3 * 1024, 3 * (4 << 20)),
        ("bs=12k\nloops=2", 683, 683 * 12288),
        ("io_size=1m\nloops=3", 3 * 256, 3 * (1 << 20)),
    ];
    // With submission latencies (units, one at a time) and without them (as `peak`
    // runs: no unit at all, NOPs tagged by batch).
    let slat = ["", "disable_slat=1\ndisable_lat=1"];
    for ((extra, ios, bytes), slat) in cases.iter().flat_map(|c| slat.map(|s| (*c, s))) {
        let text = job(
            d.path(),
            &format!("rw=randread\nnorandommap=1\niodepth_batch_submit=8\n{extra}\n{slat}"),
        );
        for engine_loop in [true, false] {
            let Some(j) = run_with(&text, engine_loop, true) else {
                return;
            };
            let r = &j.dirs[0];
            let how = format!("{extra} engine_loop={engine_loop}");
            assert_eq!(j.error, 0, "{:?} ({how})", j.error_text);
            assert_eq!(r.total_ios, ios, "{how}");
            assert_eq!(r.io_bytes, bytes, "{how}");
            assert_eq!(r.clat.stat.n, ios, "every NOP timed ({how})");
        }
    }
}

#[test]
fn nops_without_units_go_a_batch_per_call_and_are_reaped_after_it() {
    // Without submission latencies (as `peak` runs) the engine's NOP loop takes over:
    // each call submits a batch of 8 and what completed in it is reaped right after,
    // as t/io_uring's rounds do, so every reap returns 8 (fio's "8" bucket) where the
    // unit loop fills the queue of 16 first and reaps 16 at a time.
    let d = tempfile::tempdir().expect("tempdir");
    let text = job(
        d.path(),
        "rw=randread\nnorandommap=1\niodepth_batch_submit=8\niodepth_batch_complete_min=8\n\
         number_ios=4000\nloops=4\ndisable_slat=1\ndisable_lat=1",
    );
    let Some(j) = run_with(&text, true, true) else {
        return;
    };
    let r = &j.dirs[0];
    assert_eq!(j.error, 0, "{:?}", j.error_text);
    assert_eq!((r.total_ios, r.io_bytes), (4000, 4000 * 4096));
    assert_eq!(r.clat.stat.n, 4000, "every NOP timed");
    let hist = r.clat.hist.as_ref().expect("clat histogram");
    assert_eq!(hist.count(), 4000);
    assert!(r.clat.stat.min > 0 && r.clat.stat.max >= r.clat.stat.min);
    let (submits, reaps): (u64, u64) = (j.submit.iter().sum(), j.complete.iter().sum());
    assert_eq!((j.submit[2], submits), (500, 500), "{:?}", j.submit);
    assert_eq!((j.complete[2], reaps), (500, 500), "{:?}", j.complete);
}
