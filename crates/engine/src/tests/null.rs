//! null: sync at depth 1, async (queue/commit/getevents) deeper, always result = len.

use super::*;

#[test]
fn depth1_is_sync() {
    let job = Job::new(1, vec![buffered()]);
    let out = job.run_ok("null", &[vec![Op::read(0, 777)], vec![Op::write(0, 5, 1)]]);
    assert_eq!(out[0][0].result, 777);
    assert_eq!(out[1][0].result, 5);
    with_engine("null", &job.config(), IsSync(true)).expect("setup");
}

#[test]
fn depth32_is_async() {
    let job = Job::new(32, vec![buffered()]);
    with_engine("null", &job.config(), IsSync(false)).expect("setup");
    let batch: Vec<Op> = (0..32).map(|i| Op::read(i * 512, 512 + i as u32)).collect();
    // Several rounds, so the ring wraps.
    let out = job.run_ok("null", &[batch.clone(), batch.clone(), batch]);
    for round in out {
        for (i, o) in round.iter().enumerate() {
            assert_eq!(o.result, 512 + i as i64);
        }
    }
    with_engine("null", &job.config(), Partial { job: &job }).expect("setup");
}

struct IsSync(bool);

impl EngineUser for IsSync {
    type Output = ();
    fn run<E: Engine>(self, e: E) {
        assert_eq!(e.is_sync(), self.0);
    }
}

/// Busy at depth, commit counts, getevents honours `max` and keeps FIFO order
/// across partial reaps and a wrapped ring.
struct Partial<'a> {
    job: &'a Job,
}

impl EngineUser for Partial<'_> {
    type Output = ();
    fn run<E: Engine>(self, mut e: E) {
        let mut unit = IoUnit {
            buf: self.job.buf.at(0),
            buf_len: BS,
            len: 100,
            ..IoUnit::default()
        };
        for i in 0..32 {
            assert_eq!(e.queue(i, &mut unit).expect("queue"), Queued::Queued);
        }
        assert_eq!(e.queue(32, &mut unit).expect("queue"), Queued::Busy);
        assert_eq!(
            e.getevents(0, 32).expect("getevents"),
            0,
            "nothing committed"
        );
        assert_eq!(e.commit().expect("commit"), 32);
        assert_eq!(e.getevents(0, 10).expect("getevents"), 10);
        for j in 0..10 {
            assert_eq!(e.event(j).unit, j);
            assert_eq!(e.event(j).result, 100);
        }
        for i in 32..42 {
            assert_eq!(e.queue(i, &mut unit).expect("queue"), Queued::Queued);
        }
        assert_eq!(e.queue(99, &mut unit).expect("queue"), Queued::Busy);
        assert_eq!(e.commit().expect("commit"), 10);
        assert_eq!(e.getevents(1, 64).expect("getevents"), 32);
        for j in 0..32 {
            assert_eq!(e.event(j).unit, 10 + j);
        }
        assert_eq!(e.getevents(0, 64).expect("getevents"), 0);
    }
}
