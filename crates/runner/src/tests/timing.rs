//! Latency recording and everything that depends on time: ramp, runtime, rate,
//! think time, startdelay.

use super::*;
use crate::testing::Outcome;

#[test]
fn sync_engine_records_the_call_as_clat_and_lat() {
    let s = Script::fixed(100 * US);
    let (r, _) = run_with("[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n", &s);
    let d = &only(&r).dirs[0];
    assert_eq!(d.total_ios, 16);
    assert_eq!((d.clat.stat.min, d.clat.stat.max), (100 * US, 100 * US));
    assert_eq!((d.lat.stat.min, d.lat.stat.max), (100 * US, 100 * US));
    assert_eq!(d.slat.stat.n, 0, "no slat on a synchronous engine");
    assert_eq!(only(&r).runtime_ms, 1, "16 × 100 µs");
}

#[test]
fn async_engine_splits_slat_and_clat() {
    let s = Script::fixed(50 * US).submit_ns(2 * US);
    let (r, _) = run_with(
        "[j]\nioengine=libaio\niodepth=4\nrw=randread\nsize=256k\nbs=4k\n",
        &s,
    );
    let d = &only(&r).dirs[0];
    assert_eq!(d.total_ios, 64);
    assert_eq!((d.slat.stat.min, d.slat.stat.max), (2 * US, 2 * US));
    assert_eq!((d.clat.stat.min, d.clat.stat.max), (50 * US, 50 * US));
    assert_eq!((d.lat.stat.min, d.lat.stat.max), (52 * US, 52 * US));
}

#[test]
fn latency_percentiles_follow_the_scripted_distribution() {
    // 99 fast I/Os and 1 slow one per 100.
    let s = Script::new(|n, _| Outcome::ok(if n % 100 == 99 { 5 * MS } else { 20 * US }));
    let (r, _) = run_with("[j]\nioengine=psync\nrw=read\nsize=4m\nbs=4k\n", &s);
    let d = &only(&r).dirs[0];
    assert_eq!(d.clat.stat.n, 1024);
    assert_eq!(d.clat.stat.max, 5 * MS);
    let h = d.clat.hist.as_ref().expect("clat histogram");
    let p50 = h.percentile(50.0).unwrap_or(0);
    let p995 = h.percentile(99.5).unwrap_or(0);
    assert!((p50 as i64 - 20_000).abs() <= 20, "p50 {p50}");
    assert!((p995 as i64 - 5_000_000).abs() <= 5_000, "p99.5 {p995}");
}

#[test]
fn ramp_time_is_excluded_from_results() {
    let s = Script::fixed(MS);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=20ms\nramp_time=10ms\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.dirs[0].total_ios, 20, "I/Os after the ramp only");
    assert_eq!(j.runtime_ms, 20);
    assert_eq!(s.trace().len(), 30, "the ramp's 10 I/Os were still issued");
}

/// An I/O that outlasts the ramp (here the 10th takes 15 ms) delays the ramp's end to
/// 24 ms; the runtime is still measured in full after it (20 ms, 20 I/Os), not cut to
/// what is left of ramp + runtime from the start (6 ms).
#[test]
fn a_late_ramp_end_still_measures_the_full_runtime() {
    let s = Script::new(|n, _| Outcome::ok(if n == 9 { 15 * MS } else { MS }));
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=20ms\nramp_time=10ms\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.runtime_ms, 20);
    assert_eq!(j.dirs[0].total_ios, 20, "I/Os after the ramp only");
    assert_eq!(s.trace().len(), 30);
}

#[test]
fn time_based_runtime_bounds_the_job() {
    let s = Script::fixed(MS);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=randread\nsize=64k\nbs=4k\ntime_based\nruntime=50ms\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.dirs[0].total_ios, 50);
    assert_eq!(j.runtime_ms, 50);
    // size is 16 blocks: time_based starts new passes (3 full ones, then 2 I/Os).
    let t = s.trace();
    let again = t.iter().filter(|i| i.offset == t[0].offset).count();
    assert!((3..=4).contains(&again), "{again}");
}

#[test]
fn rate_iops_paces_issues() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=1s\nrate_iops=1000\n",
        &s,
    );
    let n = only(&r).dirs[0].total_ios;
    assert!((999..=1001).contains(&n), "{n} I/Os at 1000 IOPS for 1 s");
    let t = s.trace();
    let gap = t[11].at_ns - t[10].at_ns;
    assert!((999 * US..=1001 * US).contains(&gap), "gap {gap}");
}

#[test]
fn rate_in_bytes_paces_issues() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=write\nsize=1m\nbs=4k\ntime_based\nruntime=1s\nrate=2m\n",
        &s,
    );
    let b = only(&r).dirs[1].io_bytes;
    assert!(
        (2 * 1024 * 1024 - 8192..=2 * 1024 * 1024 + 8192).contains(&b),
        "{b} bytes at 2 MiB/s"
    );
}

#[test]
fn thinktime_spaces_io_blocks() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=100ms\nthinktime=990\nthinktime_blocks=4\n",
        &s,
    );
    // Each cycle: 4 × 10 µs of I/O, then 990 µs of thinking = 1.03 ms per 4 I/Os.
    let n = only(&r).dirs[0].total_ios;
    assert!((385..=395).contains(&n), "{n}");
    let t = s.trace();
    assert_eq!(t[1].at_ns - t[0].at_ns, 10 * US);
    assert_eq!(t[4].at_ns - t[3].at_ns, 10 * US + 990 * US);
}

/// Issues before the first pause of at least `gap` ns.
fn issued_before_pause(s: &Script, gap: u64) -> usize {
    let t = s.trace();
    (1..t.len())
        .find(|&i| t[i].at_ns - t[i - 1].at_ns >= gap)
        .unwrap_or(t.len())
}

#[test]
fn thinktime_blocks_type_counts_issues_or_completions() {
    let job = |ty: &str| {
        format!(
            "[j]\nioengine=libaio\niodepth=8\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=20ms\n\
             thinktime=2000\nthinktime_blocks=4\nthinktime_blocks_type={ty}\n"
        )
    };
    // complete: the queue fills (8); each of the first 3 completions frees a unit that
    // is refilled at once; the 4th calls for a pause, and the rest drain first.
    let s = Script::fixed(10 * US);
    run_with(&job("complete"), &s);
    assert_eq!(issued_before_pause(&s, 2 * MS), 8 + 3);
    // issue: 4 issued, they complete, then the pause.
    let s = Script::fixed(10 * US);
    run_with(&job("issue"), &s);
    assert_eq!(issued_before_pause(&s, 2 * MS), 4);
    let t = s.trace();
    assert!(
        t[4].at_ns - t[3].at_ns >= 2 * MS + 10 * US,
        "in flight drained first"
    );
}

#[test]
fn thinktime_iotime_thinks_after_that_much_io() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=30ms\n\
         thinktime=2000\nthinktime_iotime=1ms\n",
        &s,
    );
    // 1 ms of 10 µs I/Os (the one issued at the 1 ms mark included), then 2 ms of thinking.
    assert_eq!(issued_before_pause(&s, 2 * MS), 101);
    let n = only(&r).dirs[0].total_ios;
    assert!((990..=1020).contains(&n), "{n} I/Os in 10 cycles of 3 ms");
}

#[test]
fn rate_ignore_thinktime_resumes_at_the_rate_instead_of_catching_up() {
    let job = |ignore: u32| {
        format!(
            "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=150ms\n\
             rate_iops=1000\nthinktime=5000\nthinktime_blocks=10\nrate_ignore_thinktime={ignore}\n"
        )
    };
    // By default the 5 ms of thinking are made up afterwards: 1000 IOPS over the run.
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(&job(0), &s);
    let n = only(&r).dirs[0].total_ios;
    assert!((148..=152).contains(&n), "{n} I/Os: the rate is kept");
    // Ignored: 10 I/Os 1 ms apart, then 5 ms of thinking — 15 ms per 10 I/Os.
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(&job(1), &s);
    let n = only(&r).dirs[0].total_ios;
    assert!((99..=101).contains(&n), "{n} I/Os: 10 cycles of 15 ms");
    let t = s.trace();
    assert_eq!(t[11].at_ns - t[10].at_ns, MS, "no burst after the pause");
}

#[test]
fn startdelay_postpones_the_first_io() {
    let s = Script::fixed(US);
    let (_, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=8k\nbs=4k\nstartdelay=5ms\n",
        &s,
    );
    assert!(s.trace()[0].at_ns >= 1_000_000_000 + 5 * MS);
}

#[test]
fn clat_can_exceed_seventeen_seconds() {
    // fio clamps its histogram at ~17 s; ioscope does not.
    let s = Script::fixed(30_000 * MS);
    let (r, _) = run_with("[j]\nioengine=psync\nrw=read\nsize=8k\nbs=4k\n", &s);
    let d = &only(&r).dirs[0];
    let p = d
        .clat
        .hist
        .as_ref()
        .expect("hist")
        .percentile(99.0)
        .unwrap_or(0);
    assert!((p as f64 / 30e9 - 1.0).abs() < 0.001, "{p}");
}

#[test]
fn each_direction_of_a_mixed_job_keeps_its_own_rate() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=randrw\nsize=64m\nbs=4k\ntime_based\nruntime=1s\nrate=4m,2m\n",
        &s,
    );
    let j = only(&r);
    let (rd, wr) = (j.dirs[0].io_bytes, j.dirs[1].io_bytes);
    let near = |got: u64, want: u64| got.abs_diff(want) <= want / 50;
    assert!(near(rd, 4 << 20), "read {rd} B in 1 s at rate 4 MiB/s");
    assert!(near(wr, 2 << 20), "write {wr} B in 1 s at rate 2 MiB/s");
}

/// schedlat: latency from when the rate's schedule made each I/O due. A device that
/// stalls half a second hides the wait of the I/Os queued behind it from clat (each
/// still takes 100 µs once issued); schedlat shows it.
#[test]
fn schedlat_counts_the_wait_behind_a_stall_and_clat_does_not() {
    let s = Script::new(|n, _| Outcome::ok(if n == 100 { 500 * MS } else { 100 * US }));
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=64m\nbs=4k\ntime_based\nruntime=2s\nrate_iops=1000\n",
        &s,
    );
    let d = &only(&r).dirs[0];
    let clat = d.clat.hist.as_ref().expect("clat histogram");
    let sched = d
        .schedlat
        .hist
        .as_ref()
        .expect("a paced job keeps schedlat");
    assert_eq!(d.schedlat.stat.n, d.clat.stat.n, "one schedlat per I/O");
    let pct = |h: &ioscope_stats::Histogram, p: f64| h.percentile(p).unwrap_or(0);
    // clat: one slow I/O in ~2000; its 99th percentile is the device's 100 µs.
    assert!(pct(clat, 99.0) <= 101 * US, "clat p99 {}", pct(clat, 99.0));
    // The ~550 I/Os due during the stall and the catch-up waited 0-500 ms each.
    let (p90, max) = (pct(sched, 90.0), d.schedlat.stat.max);
    assert!(p90 >= 100 * MS, "schedlat p90 {p90} ns");
    assert!(
        (500 * MS..=502 * MS).contains(&max),
        "schedlat max {max} ns"
    );
    let backlog: u64 = sched
        .buckets()
        .filter(|&(i, _)| ioscope_stats::hist::lower_bound(i) > 10 * MS)
        .map(|(_, c)| c)
        .sum();
    assert!(
        (450..=600).contains(&backlog),
        "{backlog} I/Os waited over 10 ms"
    );
    // Without a stall every I/O goes when due: schedlat is its latency.
    let s = Script::fixed(100 * US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=64m\nbs=4k\ntime_based\nruntime=200ms\nrate_iops=1000\n",
        &s,
    );
    let d = &only(&r).dirs[0];
    assert!(
        d.schedlat.stat.max <= 100 * US + 1,
        "{}",
        d.schedlat.stat.max
    );
    assert_eq!(d.schedlat.stat.min, 100 * US);
}

#[test]
fn unpaced_jobs_keep_no_schedlat() {
    let s = Script::fixed(100 * US);
    let (r, _) = run_with("[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n", &s);
    let d = &only(&r).dirs[0];
    assert!(d.schedlat.hist.is_none());
    assert_eq!(d.schedlat.stat.n, 0);
}
