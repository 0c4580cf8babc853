//! Errors and limits: max_latency, errors that end a job or are tolerated, short
//! transfers, number_ios, loops.

use super::*;
use crate::testing::Outcome;

#[test]
fn max_latency_fails_the_job_with_etimedout() {
    let s = Script::new(|n, _| Outcome::ok(if n == 4 { 2 * MS } else { 100 * US }));
    let (r, obs) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\nmax_latency=1ms\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.error, libc::ETIMEDOUT);
    assert_eq!(j.dirs[0].total_ios, 5, "the slow I/O is counted");
    assert_eq!(j.dirs[0].clat.stat.n, 4, "but not timed");
    assert!(
        obs.warnings.iter().any(|w| w.contains("max_latency")),
        "{obs:?}"
    );
    assert_eq!(s.trace().len(), 5, "nothing issued after the failure");
}

#[test]
fn an_io_error_ends_the_job_with_its_errno() {
    let s = Script::new(|n, _| {
        if n == 10 {
            Outcome::error(US, libc::EIO)
        } else {
            Outcome::ok(US)
        }
    });
    let (r, obs) = run_with("[j]\nioengine=psync\nrw=read\nsize=1m\nbs=4k\n", &s);
    let j = only(&r);
    assert_eq!(j.error, libc::EIO);
    assert!(!j.error_tolerated);
    // As fio: the failed I/O is issued and counted, but moves no bytes.
    assert_eq!(j.dirs[0].total_ios, 11);
    assert_eq!(j.dirs[0].io_bytes, 10 * 4096);
    assert_eq!(j.dirs[0].clat.stat.n, 10);
    let text = j.error_text.as_deref().unwrap_or("");
    assert!(text.contains("read offset=40960, buflen=4096"), "{text}");
    assert!(obs.warnings.iter().any(|w| w.contains("io_u error")));
}

#[test]
fn async_errors_end_the_job_after_draining() {
    let s = Script::new(|n, _| {
        if n == 20 {
            Outcome::error(US, libc::EIO)
        } else {
            Outcome::ok(10 * US)
        }
    });
    let (r, _) = run_with(
        "[j]\nioengine=io_uring\niodepth=8\nrw=randread\nsize=1m\nbs=4k\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.error, libc::EIO);
    // In flight when the error was seen: they complete and are counted.
    assert!(j.dirs[0].total_ios >= 21 && j.dirs[0].total_ios < 29);
}

#[test]
fn continue_on_error_counts_and_goes_on() {
    let s = Script::new(|n, _| {
        if n % 10 == 9 {
            Outcome::error(US, libc::EIO)
        } else {
            Outcome::ok(US)
        }
    });
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=400k\nbs=4k\ncontinue_on_error=all\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.total_err, 10);
    assert_eq!(j.first_error, libc::EIO);
    assert_eq!(s.trace().len(), 100, "every I/O was issued");
    // fio: err=5 and the failed I/Os counted in total_ios, but the job did not fail.
    assert_eq!((j.error, j.error_tolerated), (libc::EIO, true));
    assert_eq!(j.dirs[0].total_ios, 100);
    assert_eq!(j.dirs[0].io_bytes, 90 * 4096);
}

#[test]
fn ignore_error_tolerates_only_the_listed_errors() {
    let script = |errno| {
        Script::new(move |n, _| {
            if n == 3 {
                Outcome::error(US, errno)
            } else {
                Outcome::ok(US)
            }
        })
    };
    let job = "[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\nignore_error=EAGAIN\n";
    let s = script(libc::EAGAIN);
    let (r, _) = run_with(job, &s);
    let j = only(&r);
    assert_eq!(
        (j.error, j.error_tolerated, j.total_err),
        (libc::EAGAIN, true, 1)
    );
    let s = script(libc::EIO);
    let (r, _) = run_with(job, &s);
    assert_eq!(only(&r).error, libc::EIO);
}

#[test]
fn short_transfers_are_counted_with_their_bytes() {
    let s = Script::new(|n, _| {
        if n % 2 == 1 {
            Outcome::short(US, 1024)
        } else {
            Outcome::ok(US)
        }
    });
    let (r, _) = run_with("[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n", &s);
    let d = &only(&r).dirs[0];
    assert_eq!(d.short_ios, 8);
    assert_eq!(d.io_bytes, 8 * 4096 + 8 * 1024);
}

#[test]
fn number_ios_stops_after_that_many() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=libaio\niodepth=4\nrw=randread\nsize=1m\nbs=4k\nnumber_ios=7\n",
        &s,
    );
    assert_eq!(only(&r).dirs[0].total_ios, 7);
    assert_eq!(s.trace().len(), 7);
}

#[test]
fn loops_repeat_the_pass() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\nloops=3\n",
        &s,
    );
    assert_eq!(only(&r).dirs[0].total_ios, 48);
    let o = offsets(&s.trace());
    assert_eq!(o[..16], o[16..32]);
    assert_eq!(o[..16], o[32..]);
}
