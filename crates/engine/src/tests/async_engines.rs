//! libaio (and the shared async checks for io_uring): round trips, depth-8 batches,
//! per-I/O ioprio, user-space reaping, trim and fsync.

use super::*;

#[test]
fn libaio_round_trip_buffered() {
    round_trip(&Job::new(8, vec![buffered()]), "libaio", 8, 3000);
}

#[test]
fn libaio_round_trip_direct() {
    round_trip(&Job::new(8, vec![direct()]), "libaio", 8, BS);
}

#[test]
fn libaio_depth8_batch_completes_each_unit_once() {
    let job = Job::new(8, vec![direct()]);
    depth8_batch(&job, "libaio");
}

#[test]
fn io_uring_depth8_batch_completes_each_unit_once() {
    let job = Job::new(8, vec![direct()]);
    depth8_batch(&job, "io_uring");
}

/// Queues 8 writes, then 8 reads, each as one commit + getevents(8, 8)
/// (run_batch asserts the counts and that every unit completes exactly once).
pub fn depth8_batch(job: &Job, engine: &str) {
    let writes: Vec<Op> = (0..8)
        .map(|i| Op::write(i * 16384, 16384, i as u8))
        .collect();
    let reads: Vec<Op> = (0..8).map(|i| Op::read(i * 16384, 16384)).collect();
    let out = job.run_ok(engine, &[writes, reads]);
    for (i, (w, r)) in out[0].iter().zip(&out[1]).enumerate() {
        assert_eq!(w.result, 16384, "{engine}: write {i}");
        assert_eq!(r.result, 16384, "{engine}: read {i}");
        let want = pattern(i as u8, i as u64 * 16384, 16384);
        assert!(r.data == want, "{engine}: data of unit {i}");
    }
}

#[test]
fn libaio_best_effort_ioprio_per_io() {
    let prio = (2 << 13) | 4;
    let job = Job::new(4, vec![direct()]);
    let out = job.run_ok(
        "libaio",
        &[
            vec![Op::write(0, BS, 1).prio(prio), Op::write(8192, BS, 2)],
            vec![Op::read(0, BS).prio(prio), Op::read(8192, BS).prio(prio)],
        ],
    );
    assert_eq!(out[0][0].result, BS as i64);
    assert_eq!(out[0][1].result, BS as i64);
    assert_eq!(out[1][0].data, pattern(1, 0, BS as usize));
    assert_eq!(out[1][1].data, pattern(2, 8192, BS as usize));
}

#[test]
fn libaio_userspace_reap() {
    for file in [direct(), buffered()] {
        let mut job = Job::new(8, vec![file]);
        job.opts.userspace_reap = true;
        round_trip(&job, "libaio", 8, BS);
        depth8_batch(&job, "libaio");
    }
}

#[test]
fn libaio_userspace_reap_with_min_zero_polls_the_ring() {
    let mut job = Job::new(8, vec![buffered()]);
    job.opts.userspace_reap = true;
    with_engine("libaio", &job.config(), PollUntilDone { job: &job }).expect("setup");
}

/// Queues 8 writes and reaps them with getevents(0, 3) only, i.e. never waiting in the
/// kernel: with userspace_reap every completion must come from the mapped ring.
struct PollUntilDone<'a> {
    job: &'a Job,
}

impl EngineUser for PollUntilDone<'_> {
    type Output = ();
    fn run<E: Engine>(self, mut e: E) {
        let mut units: Vec<IoUnit> = (0..8)
            .map(|i| IoUnit {
                buf: self.job.buf.at(i * self.job.unit_len),
                buf_len: BS,
                len: BS,
                offset: i as u64 * BS as u64,
                ddir: Ddir::Write,
                ..IoUnit::default()
            })
            .collect();
        for (i, u) in units.iter_mut().enumerate() {
            assert_eq!(e.queue(i as u32, u).expect("queue"), Queued::Queued);
        }
        assert_eq!(e.commit().expect("commit"), 8);
        let mut seen = HashSet::new();
        for _ in 0..1_000_000 {
            let n = e.getevents(0, 3).expect("getevents");
            assert!(n <= 3);
            for j in 0..n {
                let c = e.event(j);
                assert_eq!(c.result, BS as i64);
                assert!(seen.insert(c.unit));
            }
            if seen.len() == 8 {
                return;
            }
        }
        panic!("only {} of 8 completions reaped", seen.len());
    }
}

#[test]
fn libaio_trim_and_busy() {
    trim_test(&Job::new(2, vec![ext4()]), "libaio");
    let job = Job::new(2, vec![buffered()]);
    with_engine(
        "libaio",
        &job.config(),
        BusyAtDepth {
            job: &job,
            depth: 2,
        },
    )
    .expect("setup");
}

#[test]
fn libaio_nowait_result_is_data_or_eagain() {
    let mut job = Job::new(2, vec![ext4()]);
    job.opts.nowait = true;
    let out = job.run_ok(
        "libaio",
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

/// Fills the engine to its depth and checks that one more unit is refused with Busy,
/// then drains.
pub struct BusyAtDepth<'a> {
    pub job: &'a Job,
    pub depth: u32,
}

impl EngineUser for BusyAtDepth<'_> {
    type Output = ();
    fn run<E: Engine>(self, mut e: E) {
        let mk = |i: usize| IoUnit {
            buf: self.job.buf.at(i * self.job.unit_len),
            buf_len: BS,
            len: BS,
            ddir: Ddir::Read,
            ..IoUnit::default()
        };
        let mut units: Vec<IoUnit> = (0..self.depth as usize).map(mk).collect();
        for (i, u) in units.iter_mut().enumerate() {
            assert_eq!(e.queue(i as u32, u).expect("queue"), Queued::Queued);
        }
        let mut extra = mk(0);
        assert_eq!(e.queue(0, &mut extra).expect("queue"), Queued::Busy);
        assert_eq!(e.commit().expect("commit"), self.depth);
        assert_eq!(e.queue(0, &mut extra).expect("queue"), Queued::Busy);
        let n = e.getevents(self.depth, self.depth).expect("getevents");
        assert_eq!(n, self.depth);
    }
}

#[test]
fn libaio_iocb_rejected_by_io_submit_completes_with_its_errno() {
    // io_submit refuses a write on a read-only fd (EBADF) for that iocb alone: it must
    // complete with -EBADF while the rest of the batch is still submitted.
    let job = Job::new(4, vec![test_file("/dev/shm", 0, true)]);
    let out = job.run_ok(
        "libaio",
        &[vec![
            Op::read(0, BS),
            Op::write(0, BS, 1),
            Op::read(BS as u64, BS),
            Op::write(BS as u64, BS, 1),
        ]],
    );
    let results: Vec<i64> = out[0].iter().map(|o| o.result).collect();
    let ebadf = -(libc::EBADF as i64);
    assert_eq!(results, vec![BS as i64, ebadf, BS as i64, ebadf]);
}

#[test]
fn posixaio_round_trip_buffered() {
    round_trip(&Job::new(8, vec![buffered()]), "posixaio", 8, 3000);
}

#[test]
fn posixaio_round_trip_direct() {
    round_trip(&Job::new(8, vec![direct()]), "posixaio", 8, BS);
}

#[test]
fn posixaio_depth8_batch_completes_each_unit_once() {
    let job = Job::new(8, vec![direct()]);
    depth8_batch(&job, "posixaio");
}
