use super::*;
use crate::transport::local;
use ioscope_stats::{JobResult, LatTrack};
use std::sync::atomic::AtomicBool;

static NO_STOP: AtomicBool = AtomicBool::new(false);
static STOPPED: AtomicBool = AtomicBool::new(true);

fn result(rank: u32, ios: u64) -> RunResult {
    let mut j = JobResult {
        name: "j".into(),
        jobs: 1,
        start_unix_ms: 1_000 + rank as u64,
        ..Default::default()
    };
    j.dirs[0].clat = LatTrack::new(true);
    for i in 0..ios {
        j.dirs[0].clat.add(1_000 * (rank as u64 + 1) + i);
    }
    j.dirs[0].total_ios = ios;
    j.dirs[0].io_bytes = ios * 4096;
    j.dirs[0].runtime_ms = 500;
    RunResult {
        jobs: vec![j],
        ..Default::default()
    }
}

/// Run `f` as every rank of a `size`-rank group, each on its own thread; rank 0's
/// return value.
fn on_ranks<T: Send>(size: u32, f: impl Fn(&mut Rank) -> Option<T> + Sync) -> T {
    let ts = local::ranks(size);
    std::thread::scope(|s| {
        let hs: Vec<_> = ts
            .iter()
            .map(|t| {
                let f = &f;
                s.spawn(move || f(&mut Rank::new(t)))
            })
            .collect();
        let mut out = None;
        for h in hs {
            if let Some(v) = h.join().unwrap() {
                out = Some(v);
            }
        }
        out.expect("rank 0 returns")
    })
}

#[test]
fn one_ranks_error_is_every_ranks_verdict() {
    let failed = on_ranks(3, |r| {
        let mine = if r.rank() == 1 {
            Err("job.fio:3: bs: bad value".to_string())
        } else {
            Ok(())
        };
        let f = r.agree(mine);
        assert_eq!(r.hosts(), ["host0", "host1", "host2"]);
        (r.rank() == 2).then_some(f)
    });
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].rank, 1);
    assert_eq!(failed[0].host, "host1");
    assert!(failed[0]
        .error
        .as_deref()
        .unwrap()
        .contains("bs: bad value"));
}

#[test]
fn a_failed_rank_passes_its_gates_and_the_others_results_are_kept() {
    let (c, complete) = on_ranks(3, |r| {
        r.agree(Ok(()));
        let phases = 3;
        let mine = if r.rank() == 2 {
            // Fails preparing its first phase: no gate reached.
            r.finish_gates(phases);
            HostRun {
                rank: 2,
                host: r.host().into(),
                result: None,
                error: Some("open /dev/missing: No such file or directory".into()),
                live_sent: 0,
                interim: Vec::new(),
            }
        } else {
            for _ in 0..phases {
                r.gate();
            }
            HostRun {
                rank: r.rank(),
                host: r.host().into(),
                result: Some(result(r.rank(), 10)),
                error: None,
                live_sent: 0,
                interim: Vec::new(),
            }
        };
        r.collect(mine, &NO_STOP)
    });
    assert!(complete);
    assert!(c.failed());
    assert_eq!(c.hosts.len(), 3);
    assert!(c.hosts[2]
        .error
        .as_deref()
        .unwrap()
        .contains("/dev/missing"));
    let all = &c.all.jobs[0].dirs[0];
    assert_eq!(all.total_ios, 20, "ranks 0 and 1");
    assert_eq!(all.clat.stat.n, 20);
}

#[test]
fn a_rank_that_never_reports_is_named_after_a_stop() {
    let (c, complete) = on_ranks(3, |r| {
        r.agree(Ok(()));
        let mine = HostRun {
            rank: r.rank(),
            host: r.host().into(),
            result: Some(result(r.rank(), 5)),
            error: None,
            live_sent: 0,
            interim: Vec::new(),
        };
        if r.rank() == 1 {
            return None; // killed before it could report
        }
        r.collect(mine, &STOPPED)
    });
    assert!(!complete);
    assert!(c.hosts[1]
        .error
        .as_deref()
        .unwrap()
        .contains("without reporting"));
    assert_eq!(c.hosts[1].host, "host1");
    assert_eq!(c.all.jobs[0].dirs[0].total_ios, 10);
}

#[test]
fn rank_0_sees_every_ranks_progress_and_merged_interims() {
    let (names, interims) = on_ranks(2, |r| {
        r.agree(Ok(()));
        let p = JobProgress {
            name: format!("job-on-{}", r.rank()),
            ..Default::default()
        };
        if r.rank() == 1 {
            r.send_progress(std::slice::from_ref(&p));
            r.interim(0, &result(1, 3));
        }
        r.wait_all();
        if r.rank() == 0 {
            r.interim(0, &result(0, 4));
            let names: Vec<String> = r
                .progress_of_all(&[p])
                .into_iter()
                .map(|p| p.name)
                .collect();
            let interims = r.ready_interims();
            return Some((names, interims));
        }
        None
    });
    assert_eq!(names, ["job-on-0", "job-on-1"]);
    assert_eq!(interims.len(), 1);
    assert_eq!(interims[0].all.jobs[0].dirs[0].total_ios, 7);
}

#[test]
fn every_ranks_live_intervals_reach_rank_0_before_the_end() {
    let got = on_ranks(3, |r| {
        r.agree(Ok(()));
        let mut dirs: [ioscope_stats::interval::DirInterval; 3] = Default::default();
        dirs[0].ios = 10 + r.rank() as u64;
        if r.rank() != 0 {
            for i in 0..4 {
                let iv = LiveInterval {
                    job: "j",
                    number: 1,
                    groupid: 0,
                    phase: 0,
                    ms: 250,
                    epoch: 0,
                    ramp: false,
                    last: i == 3,
                    inflight: None,
                    dirs: &dirs,
                    host: None,
                };
                r.send_live(&iv);
            }
        }
        let mine = HostRun {
            rank: r.rank(),
            host: r.host().into(),
            result: Some(result(r.rank(), 1)),
            error: None,
            live_sent: 0,
            interim: Vec::new(),
        };
        r.collect(mine, &NO_STOP)?;
        Some(r.take_live())
    });
    assert_eq!(got.len(), 8, "4 from each of ranks 1 and 2");
    for rank in [1, 2] {
        let mine: Vec<_> = got.iter().filter(|(_, r, _)| *r == rank).collect();
        assert_eq!(mine.len(), 4);
        assert!(mine
            .iter()
            .all(|(host, _, rec)| *host == format!("host{rank}")
                && rec.dirs[0].ios == 10 + rank as u64));
        assert!(mine.last().is_some_and(|(_, _, rec)| rec.last));
    }
}
