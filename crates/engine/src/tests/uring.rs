//! io_uring: round trips with every option combination that changes the SQE, SQPOLL,
//! setup errors that must name the option, trim and Busy at depth.

use super::async_engines::{depth8_batch, BusyAtDepth};
use super::*;
use crate::UNIT_ASYNC;

#[test]
fn round_trip_buffered_and_direct() {
    round_trip(&Job::new(8, vec![buffered()]), "io_uring", 8, 3000);
    round_trip(&Job::new(8, vec![direct()]), "io_uring", 8, BS);
}

#[test]
fn registerfiles_and_fixedbufs() {
    for file in [direct(), buffered()] {
        let mut job = Job::new(8, vec![file]);
        job.opts.registerfiles = true;
        job.opts.fixedbufs = true;
        round_trip(&job, "io_uring", 8, BS);
        depth8_batch(&job, "io_uring");
    }
}

#[test]
fn fixedbufs_only_and_registerfiles_only() {
    let mut job = Job::new(4, vec![direct()]);
    job.opts.fixedbufs = true;
    round_trip(&job, "io_uring", 4, BS);
    let mut job = Job::new(4, vec![direct()]);
    job.opts.registerfiles = true;
    round_trip(&job, "io_uring", 4, BS);
}

#[test]
fn vectored_readv_writev() {
    let mut job = Job::new(8, vec![direct()]);
    job.opts.nonvectored = 0;
    round_trip(&job, "io_uring", 8, BS);
    depth8_batch(&job, "io_uring");
}

#[test]
fn force_async_and_unit_async() {
    let mut job = Job::new(8, vec![buffered()]);
    job.opts.force_async = 2;
    round_trip(&job, "io_uring", 8, BS);
    let job = Job::new(2, vec![buffered()]);
    let out = job.run_ok(
        "io_uring",
        &[
            vec![Op::write(0, BS, 5).flags(UNIT_ASYNC)],
            vec![Op::read(0, BS).flags(UNIT_ASYNC)],
        ],
    );
    assert_eq!(out[1][0].data, pattern(5, 0, BS as usize));
}

#[test]
fn per_io_ioprio() {
    let job = Job::new(2, vec![direct()]);
    let prio = (2 << 13) | 4;
    let out = job.run_ok(
        "io_uring",
        &[
            vec![Op::write(0, BS, 6).prio(prio)],
            vec![Op::read(0, BS).prio(prio)],
        ],
    );
    assert_eq!(out[0][0].result, BS as i64);
    assert_eq!(out[1][0].data, pattern(6, 0, BS as usize));
}

#[test]
fn nowait_result_is_data_or_eagain() {
    let mut job = Job::new(2, vec![buffered()]);
    job.opts.nowait = true;
    let out = job.run_ok(
        "io_uring",
        &[vec![Op::write(0, BS, 1)], vec![Op::read(0, BS)]],
    );
    let ok = [
        BS as i64,
        -(libc::EAGAIN as i64),
        -(libc::EOPNOTSUPP as i64),
    ];
    assert!(ok.contains(&out[0][0].result), "{:?}", out[0][0].result);
    assert!(ok.contains(&out[1][0].result), "{:?}", out[1][0].result);
}

#[test]
fn sqthread_poll() {
    let mut job = Job::new(8, vec![direct()]);
    job.opts.sqthread_poll = true;
    job.opts.registerfiles = true;
    if let Err(e) = job.run("io_uring", &[]) {
        if let EngineError::Setup { source, .. } = &e {
            if matches!(source.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) {
                super::skip(&format!("io_uring SQPOLL ({e})"));
                return;
            }
        }
        panic!("sqthread_poll setup: {e}");
    }
    round_trip(&job, "io_uring", 8, BS);
    depth8_batch(&job, "io_uring");
}

#[test]
fn sqthread_poll_cpu_invalid_is_a_named_setup_error() {
    let mut job = Job::new(2, vec![buffered()]);
    job.opts.sqthread_poll = true;
    job.opts.sqthread_poll_cpu = Some(4095);
    match job.run("io_uring", &[]) {
        Err(EngineError::Setup { what, .. }) => {
            assert!(what.contains("sqthread_poll_cpu=4095"), "{what}")
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("CPU 4095 accepted"),
    }
}

#[test]
fn hipri_on_buffered_file_is_a_setup_error() {
    let mut job = Job::new(2, vec![ext4()]);
    job.opts.hipri = true;
    match job.run("io_uring", &[]) {
        Err(EngineError::Setup { what, source, .. }) => {
            assert!(what.contains("IOPOLL"), "{what}");
            assert_eq!(source.raw_os_error(), Some(libc::EOPNOTSUPP));
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("IOPOLL accepted on a buffered file"),
    }
}

#[test]
fn trim_and_busy_at_depth() {
    trim_test(&Job::new(2, vec![ext4()]), "io_uring");
    let job = Job::new(4, vec![buffered()]);
    with_engine(
        "io_uring",
        &job.config(),
        BusyAtDepth {
            job: &job,
            depth: 4,
        },
    )
    .expect("setup");
}

#[test]
fn io_error_is_negative_errno() {
    // Writing to a file opened read-only fails in the kernel, in the CQE.
    let job = Job::new(2, vec![test_file("/dev/shm", 0, true)]);
    let out = job.run_ok("io_uring", &[vec![Op::write(0, BS, 1), Op::read(0, BS)]]);
    assert_eq!(out[0][0].result, -(libc::EBADF as i64));
    assert_eq!(out[0][1].result, BS as i64);
}
