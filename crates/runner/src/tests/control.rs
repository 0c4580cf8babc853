//! Job control across jobs: groups, stonewall, wait_for, exitall, stop, numjobs.

use super::*;
use crate::testing::Outcome;
use std::sync::atomic::Ordering::Relaxed;

#[test]
fn numjobs_clones_run_and_group_reporting_merges_them() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\nnumjobs=4\ngroup_reporting\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.dirs[0].total_ios, 64);
    assert_eq!(j.dirs[0].clat.stat.n, 64, "histograms merged exactly");
    assert_eq!(r.groups.len(), 1);
    assert_eq!(s.trace().len(), 64);
}

#[test]
fn stonewall_runs_phases_in_order_and_new_groups() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[a]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n[b]\nstonewall\nioengine=psync\nrw=read\nsize=64k\nbs=4k\noffset=1m\n",
        &s,
    );
    assert_eq!(r.jobs.len(), 2);
    assert_eq!((r.jobs[0].groupid, r.jobs[1].groupid), (0, 1));
    let o = offsets(&s.trace());
    assert!(o[..16].iter().all(|&x| x < 1 << 20));
    assert!(o[16..].iter().all(|&x| x >= 1 << 20));
}

#[test]
fn wait_for_starts_a_job_after_the_named_one() {
    let s = Script::fixed(US);
    run_with(
        "[a]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n[b]\nwait_for=a\nioengine=psync\nrw=read\nsize=64k\nbs=4k\noffset=1m\n",
        &s,
    );
    let o = offsets(&s.trace());
    assert_eq!(o.len(), 32);
    assert!(o[..16].iter().all(|&x| x < 1 << 20), "{o:?}");
}

#[test]
fn exitall_ends_the_other_jobs() {
    let s = Script::fixed(MS);
    let (r, _) = run_with(
        "[short]\nioengine=psync\nrw=read\nsize=16k\nbs=4k\nexitall\n[long]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=100000s\n",
        &s,
    );
    assert_eq!(r.jobs.len(), 2);
    assert_eq!(r.jobs[0].dirs[0].total_ios, 4);
    assert!(
        r.jobs[1].dirs[0].total_ios < 100_000_000,
        "the long job was ended"
    );
    assert_eq!(r.jobs[1].error, 0);
}

#[test]
fn exit_what_all_skips_later_phases() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[a]\nioengine=psync\nrw=read\nsize=16k\nbs=4k\nexitall\nexit_what=all\n[b]\nstonewall\nioengine=psync\nrw=read\nsize=16k\nbs=4k\n",
        &s,
    );
    assert_eq!(r.jobs.len(), 1, "phase 2 never started");
    assert!(!r.meta.interrupted);
}

#[test]
fn the_stop_flag_ends_the_run_with_valid_results() {
    let stop = stop_flag();
    let s = Script::new(move |n, _| {
        if n == 99 {
            stop.store(true, Relaxed);
        }
        Outcome::ok(US)
    });
    let (r, _) = run_opts(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\n",
        &s,
        RunOptions::default(),
        stop,
    );
    assert_eq!(only(&r).dirs[0].total_ios, 100);
    assert_eq!(only(&r).error, 0);
    assert!(r.meta.interrupted, "the result says it was cut short");
}

#[test]
fn exitall_on_error_stops_every_job() {
    let s = Script::new(|n, u| {
        if n == 5 && u.offset < 1 << 20 {
            Outcome::error(US, libc::EIO)
        } else {
            Outcome::ok(MS)
        }
    });
    let (r, _) = run_with(
        "[bad]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\nexitall_on_error\n[other]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\noffset=1m\ntime_based\nruntime=100000s\n",
        &s,
    );
    assert_eq!(r.jobs[0].error, libc::EIO);
    assert!(r.jobs[1].dirs[0].total_ios < 100_000_000);
    assert!(!r.meta.interrupted, "an error is not an interruption");
}

#[test]
fn stats_zero_leaves_a_job_out_of_the_report() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[hidden]\nioengine=psync\nrw=read\nsize=16k\nbs=4k\nstats=0\n[shown]\nioengine=psync\nrw=read\nsize=16k\nbs=4k\n",
        &s,
    );
    assert_eq!(r.jobs.len(), 1);
    assert_eq!(r.jobs[0].name, "shown");
    assert_eq!(s.trace().len(), 8, "both jobs ran");
}
