//! The runner's parts on their own: planning, sampling, rate_min, steady state.

use super::*;
use crate::phase::sampling::{MinRate, Sampler};
use crate::phase::steady::SteadyTracker;
use crate::plan::Plan;
use crate::record::{Shared, STATE_RUNNING};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

#[test]
fn plan_numbers_clones_and_groups_them() {
    let set = jobs("[a]\nnumjobs=2\nsize=1m\n[b]\nnew_group\nsize=1m\n[c]\nstonewall\nsize=1m\n");
    let p = Plan::new(&set, &RunOptions::default()).expect("plans");
    assert_eq!(p.phases.len(), 2);
    let v: Vec<(u32, u32, u32)> = p.clones().map(|c| (c.number, c.clone, c.groupid)).collect();
    assert_eq!(v, [(1, 0, 0), (2, 1, 0), (3, 0, 1), (4, 0, 2)]);
    assert_eq!(p.total_jobs(), 4);
}

#[test]
fn plan_refuses_more_jobs_than_the_limit() {
    let set = jobs("[a]\nnumjobs=5000\nsize=1m\n");
    let e = Plan::new(&set, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("5000 jobs exceed the limit of 4096"), "{e}");
    let ro = RunOptions {
        max_jobs: Some(8000),
        ..Default::default()
    };
    assert!(Plan::new(&set, &ro).is_ok());
}

#[test]
fn plan_refuses_jobs_that_do_not_fit_in_memory() {
    let set = jobs("[a]\nbs=64m\niodepth=1024\nsize=1g\nnumjobs=64\n");
    let e = Plan::new(&set, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("MiB of memory before their first I/O"), "{e}");
    let small = jobs("[a]\nbs=4k\niodepth=32\nsize=1g\nnumjobs=4\n");
    let m = crate::plan::resolve::resolve(&small.jobs[0], 1, None)
        .unwrap()
        .memory;
    // 32 × 4 KiB of buffers and the clat histogram (no syncs: no sync histogram).
    assert_eq!(m, 32 * 4096 + ioscope_stats::hist::BUCKETS as u64 * 8);
}

/// 200 jobs logging every I/O in a 2 GiB cgroup: the log chunks shrink so the phase
/// fits (the default 20 MiB each would need 4 GiB); what cannot fit is refused naming
/// what limits it.
#[test]
fn log_buffers_shrink_to_fit_a_memory_cgroup() {
    use crate::plan::resolve::{fit_into, resolve};
    use crate::sys::mem::Available;
    let set = jobs("[a]\nnumjobs=200\nsize=1m\nwrite_lat_log=lat\n");
    let mut clones: Vec<_> = (1..=200)
        .map(|n| resolve(&set.jobs[0], n, None).unwrap())
        .collect();
    let full = clones[0].memory;
    assert_eq!(clones[0].log_records, crate::record::log::CHUNK_RECORDS);
    let cgroup = Available {
        bytes: 2 << 30,
        by: "the memory cgroup /pod (limit 2048 MiB, 0 MiB in use)".into(),
    };
    fit_into(&mut clones.iter_mut().collect::<Vec<_>>(), &cgroup).unwrap();
    let total: u64 = clones.iter().map(|c| c.memory).sum();
    // The logs take at most half of what the buffers leave.
    assert!(200 * full > 2 << 30 && total <= 3 << 29, "{total}");
    let r = clones[0].log_records;
    assert!(
        (4096..crate::record::log::CHUNK_RECORDS).contains(&r),
        "{r}"
    );
    let tiny = Available {
        bytes: 64 << 20,
        ..cgroup
    };
    let e = fit_into(&mut clones.iter_mut().collect::<Vec<_>>(), &tiny)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("only 64 MiB are available (the memory cgroup /pod"),
        "{e}"
    );
}

#[test]
fn plan_refuses_values_not_implemented_yet() {
    for (job, what) in [
        (
            "mem=cudamalloc",
            "option mem=cudamalloc is not supported yet",
        ),
        (
            "ioengine=e4defrag",
            "ioengine=e4defrag is not supported yet",
        ),
        (
            "ioengine=sg\nstream_id=1",
            "option stream_id is not supported yet",
        ),
    ] {
        let set = jobs(&format!("[a]\nsize=1m\n{job}\n"));
        let e = Plan::new(&set, &RunOptions::default())
            .unwrap_err()
            .to_string();
        let line = format!("t.fio:{}", 2 + job.lines().count());
        assert!(e.contains(what) && e.contains(&line), "{job}: {e}");
    }
    // Offload works with the engines that can be offloaded, as in fio.
    let set = jobs("[a]\nsize=1m\nio_submit_mode=offload\nioengine=io_uring\n");
    let e = Plan::new(&set, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("io_uring: can't be used with offloaded submit"),
        "{e}"
    );
    let set = jobs("[a]\nsize=1m\nio_submit_mode=offload\nioengine=psync\n");
    assert!(Plan::new(&set, &RunOptions::default()).is_ok());
}

#[test]
fn plan_refuses_writes_when_readonly() {
    let set = jobs("[a]\nsize=1m\nrw=randwrite\n");
    let ro = RunOptions {
        readonly: true,
        ..Default::default()
    };
    let e = Plan::new(&set, &ro).unwrap_err().to_string();
    assert!(e.contains("refused by --readonly"), "{e}");
}

fn shared_running() -> Arc<Shared> {
    let s = Arc::new(Shared::default());
    s.state.store(STATE_RUNNING, Relaxed);
    s
}

#[test]
fn the_sampler_takes_bandwidth_samples_every_interval() {
    let c = Clock::manual(0);
    let s = shared_running();
    let mut sm = Sampler::new(500, 500, false, c);
    let dirs = [true, false, false];
    for step in 0..=10u64 {
        // 1 MiB and 256 I/Os per 500 ms.
        s.bytes[0].store(step * (1 << 20), Relaxed);
        s.ios[0].store(step * 256, Relaxed);
        sm.tick(&s, step * 500 * MS, c, &dirs);
    }
    assert_eq!(sm.bw[0].n, 10);
    assert!(
        (sm.bw[0].mean - 2048.0).abs() < 1e-6,
        "KiB/s {}",
        sm.bw[0].mean
    );
    assert!((sm.iops[0].mean - 512.0).abs() < 1e-6);
    assert_eq!(sm.bw[1].n, 0, "unused directions get no samples");
}

#[test]
fn rate_min_fails_a_slow_cycle_only() {
    let c = Clock::manual(0);
    let o = jobs("[a]\nsize=1m\nrate_min=1m\nrate_cycle=1000\n").jobs[0]
        .opts
        .clone();
    let mut m = MinRate::new(&o, c).expect("rate_min set");
    let s = shared_running();
    let dirs = [true, false, false];
    assert!(m.check(&s, 0, &dirs).is_none());
    s.bytes[0].store(2 << 20, Relaxed);
    assert!(m.check(&s, 1000 * MS, &dirs).is_none(), "2 MiB/s is enough");
    s.bytes[0].store((2 << 20) + 4096, Relaxed);
    let msg = m.check(&s, 2000 * MS, &dirs).expect("too slow");
    assert!(
        msg.contains("min rate 1048576 B/s not met for read"),
        "{msg}"
    );
}

#[test]
fn rate_min_judges_a_slowly_paced_job_over_the_gap_between_its_ios() {
    // fio's example 1mbs_clients.fio: rate=1250 B/s, ratemin=1024 B/s, 4 KiB I/Os: one
    // I/O every 3.3 s. As fio, the rate is judged when I/O completes, over the gap.
    let c = Clock::manual(0);
    let o = jobs("[a]\nsize=1m\nrate_min=1024\n").jobs[0].opts.clone();
    let mut m = MinRate::new(&o, c).expect("rate_min set");
    let s = shared_running();
    let dirs = [true, false, false];
    assert!(m.check(&s, 0, &dirs).is_none());
    for ms in [1000, 2000, 3000] {
        assert!(
            m.check(&s, ms * MS, &dirs).is_none(),
            "no I/O yet at {ms} ms"
        );
    }
    s.bytes[0].store(4096, Relaxed);
    assert!(
        m.check(&s, 3277 * MS, &dirs).is_none(),
        "1250 B/s over the gap"
    );
    s.bytes[0].store(8192, Relaxed);
    let msg = m.check(&s, 9000 * MS, &dirs).expect("718 B/s is too slow");
    assert!(msg.contains("min rate 1024 B/s not met for read"), "{msg}");
}

fn tracker(spec: &str, dur_s: u64) -> SteadyTracker {
    let set = jobs(&format!("[a]\nsize=1m\nss={spec}\nss_dur={dur_s}\n"));
    let o = &set.jobs[0].opts;
    SteadyTracker::new(
        o.steadystate.clone(),
        o.steadystate_duration,
        0,
        1_000_000,
        vec![0],
        Clock::manual(0),
    )
}

/// Feed `iops` per second to a tracker; the second at which it declared steady state.
fn steady_at(t: &mut SteadyTracker, iops: &[u64]) -> Option<usize> {
    let s = shared_running();
    let mut total = 0;
    t.tick(0, &[&s]);
    for (i, &v) in iops.iter().enumerate() {
        total += v;
        s.ios[0].store(total, Relaxed);
        s.bytes[0].store(total * 4096, Relaxed);
        t.tick((i as u64 + 1) * 1000 * MS, &[&s]);
        if s.stop.load(Relaxed) {
            return Some(i + 1);
        }
    }
    None
}

#[test]
fn steady_state_is_declared_when_the_window_is_flat() {
    let mut t = tracker("iops:5%", 5);
    let series = [100, 300, 600, 1000, 1000, 1010, 990, 1000, 1005, 1000];
    // Seconds 4-8 (1000, 1000, 1010, 990, 1000) deviate by at most 1% of their mean.
    assert_eq!(steady_at(&mut t, &series), Some(8));
    assert!(t.result().attained);
}

#[test]
fn steady_state_is_not_declared_while_climbing() {
    let mut t = tracker("iops_slope:1%", 3);
    let series: Vec<u64> = (1..=20).map(|i| i * 100).collect();
    assert_eq!(steady_at(&mut t, &series), None);
    assert!(!t.result().attained);
}

#[test]
fn observer_hears_layout_messages_and_errors_separately() {
    let s = crate::testing::Script::new(|n, _| {
        if n == 1 {
            crate::testing::Outcome::error(US, libc::EIO)
        } else {
            crate::testing::Outcome::ok(US)
        }
    });
    let (_, obs) = run_with("[j]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\n", &s);
    assert!(obs.messages.iter().all(|m| !m.contains("io_u error")));
    assert_eq!(
        obs.warnings
            .iter()
            .filter(|w| w.contains("io_u error"))
            .count(),
        1
    );
}
