//! What the job issues: offsets, directions, sizes, syncs, priorities, depths.

use super::*;

#[test]
fn sequential_reads_cover_the_region_in_order() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=read\nsize=1m\nbs=16k\noffset=64k\n",
        &s,
    );
    assert_eq!(only(&r).dirs[0].io_bytes, 1 << 20);
    let want: Vec<u64> = (0..64).map(|i| 65536 + i * 16384).collect();
    assert_eq!(offsets(&s.trace()), want);
}

#[test]
fn the_random_map_visits_every_block_once() {
    let s = Script::fixed(US);
    run_with("[j]\nioengine=psync\nrw=randread\nsize=1m\nbs=4k\n", &s);
    let mut o = offsets(&s.trace());
    assert_ne!(o, (0..256).map(|i| i * 4096).collect::<Vec<_>>());
    o.sort_unstable();
    assert_eq!(o, (0..256).map(|i| i * 4096).collect::<Vec<_>>());
}

#[test]
fn rwmixread_splits_directions() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=randrw\nrwmixread=70\nsize=4m\nbs=4k\nnorandommap\n",
        &s,
    );
    let j = only(&r);
    let (rd, wr) = (j.dirs[0].total_ios, j.dirs[1].total_ios);
    assert_eq!(rd + wr, 1024);
    let share = rd as f64 / 1024.0;
    assert!((0.65..0.75).contains(&share), "{share}");
    let t = s.trace();
    let reads = t
        .iter()
        .filter(|i| i.ddir == ioscope_engine::Ddir::Read)
        .count();
    assert_eq!(reads as u64, rd);
}

#[test]
fn bssplit_sizes_follow_their_weights() {
    let s = Script::fixed(US);
    run_with(
        "[j]\nioengine=psync\nrw=randread\nsize=64m\nbssplit=4k/75:64k/25\nnumber_ios=2000\nnorandommap\n",
        &s,
    );
    let t = s.trace();
    let small = t.iter().filter(|i| i.len == 4096).count();
    assert_eq!(t.iter().filter(|i| i.len == 65536).count() + small, 2000);
    let share = small as f64 / 2000.0;
    assert!((0.70..0.80).contains(&share), "{share}");
}

#[test]
fn fsync_every_n_writes_is_a_noop_sync_without_files() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\nfsync=4\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.error, 0);
    assert_eq!(j.dirs[1].total_ios, 16);
    // After writes 4, 8 and 12; none after the last write (fio 3.33: 3 as well).
    assert_eq!(j.sync.total_ios, 3);
}

#[test]
fn sync_file_range_every_n_writes_covers_what_was_written() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\nsync_file_range=wait_before,write:4\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.error, 0);
    assert_eq!(j.dirs[1].total_ios, 16);
    // As fsync: after writes 4, 8 and 12; in the sync latency, not its total_ios (fio).
    assert_eq!(j.sync.total_ios, 0);
    assert_eq!(j.sync.lat.stat.n, 3);
}

/// Pairs of I/Os on the same block issued less than `lat` apart: in flight together.
fn overlapping(s: &Script, lat: u64) -> usize {
    let t = s.trace();
    let mut n = 0;
    for (i, a) in t.iter().enumerate() {
        for b in &t[i + 1..] {
            if b.at_ns >= a.at_ns + lat {
                break;
            }
            n += usize::from(a.offset == b.offset);
        }
    }
    n
}

#[test]
fn serialize_overlap_keeps_overlapping_ios_apart() {
    let job = |on: u32| {
        format!(
            "[j]\nioengine=libaio\niodepth=8\nrw=randwrite\nnorandommap\nsize=32k\nbs=4k\n\
             time_based\nruntime=5ms\nserialize_overlap={on}\n"
        )
    };
    // 8 in flight over 8 blocks: without the option, the same block is often in
    // flight twice.
    let s = Script::fixed(100 * US);
    run_with(&job(0), &s);
    assert!(
        overlapping(&s, 100 * US) > 10,
        "{}",
        overlapping(&s, 100 * US)
    );
    let s = Script::fixed(100 * US);
    let (r, _) = run_with(&job(1), &s);
    assert_eq!(overlapping(&s, 100 * US), 0);
    assert!(only(&r).dirs[1].total_ios > 100, "still runs");
}

#[test]
fn cmdprio_marks_a_share_of_ios_and_splits_stats_by_priority() {
    let s = Script::fixed(10 * US);
    let (r, _) = run_with(
        "[j]\nioengine=io_uring\niodepth=4\nrw=randread\nsize=4m\nbs=4k\ncmdprio_percentage=30\ncmdprio_class=1\ncmdprio=2\n",
        &s,
    );
    let t = s.trace();
    let rt = t.iter().filter(|i| i.ioprio == (1 << 13 | 2)).count();
    let share = rt as f64 / t.len() as f64;
    assert!((0.25..0.35).contains(&share), "{share}");
    let prios = &only(&r).dirs[0].prios;
    let n: u64 = prios.iter().map(|p| p.stat.n).sum();
    assert_eq!(n, 1024);
    let rt_n = prios
        .iter()
        .find(|p| p.ioprio == (1 << 13 | 2))
        .map(|p| p.stat.n);
    assert_eq!(rt_n, Some(rt as u64));
}

#[test]
fn a_deep_queue_is_kept_full() {
    let s = Script::fixed(100 * US);
    let (r, _) = run_with(
        "[j]\nioengine=libaio\niodepth=8\nrw=randread\nsize=4m\nbs=4k\n",
        &s,
    );
    let j = only(&r);
    let total: u64 = j.io_depth.iter().sum();
    assert!(
        j.io_depth[3] as f64 / total as f64 > 0.95,
        "{:?}",
        j.io_depth
    );
    // 1024 I/Os of 100 µs, 8 at a time: 12.8 ms.
    assert_eq!(j.runtime_ms, 12);
}

#[test]
fn iodepth_batch_submit_groups_submissions() {
    let s = Script::fixed(100 * US);
    let (r, _) = run_with(
        "[j]\nioengine=libaio\niodepth=16\niodepth_batch_submit=8\niodepth_batch_complete_min=8\nrw=randread\nsize=4m\nbs=4k\n",
        &s,
    );
    let j = only(&r);
    // Submissions of 8 fall in fio's 5-8 bucket; so do reaps of at least 8.
    let subs: u64 = j.submit.iter().sum();
    assert!(j.submit[2] as f64 / subs as f64 > 0.9, "{:?}", j.submit);
    let reaps: u64 = j.complete.iter().sum();
    assert!(
        j.complete[2] as f64 / reaps as f64 > 0.9,
        "{:?}",
        j.complete
    );
}

#[test]
fn a_synchronous_engine_runs_at_depth_one() {
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=psync\niodepth=32\nrw=randread\nsize=64k\nbs=4k\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.io_depth[0], 16, "{:?}", j.io_depth);
}

#[test]
fn num_range_gathers_the_next_trims_into_one_io() {
    // Sequential trims of 4k, four to a command: each I/O covers the next 16k as four
    // ranges, counts once, and number_ios counts commands (as fio's).
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=io_uring_cmd\nfilename=/dev/ng0n1\nrw=trim\nsize=64k\nbs=4k\nnum_range=4\n",
        &s,
    );
    let j = only(&r);
    assert_eq!(j.dirs[2].total_ios, 4);
    assert_eq!(j.dirs[2].io_bytes, 64 << 10);
    let t = s.trace();
    assert_eq!(t.len(), 4);
    for (k, io) in t.iter().enumerate() {
        let base = k as u64 * 16384;
        assert_eq!((io.offset, io.len, io.ranges), (base, 16384, 4), "{io:?}");
        let want: Vec<(u64, u64)> = (0..4).map(|i| (base + i * 4096, 4096)).collect();
        assert_eq!(io.first_ranges.to_vec(), want, "{io:?}");
    }
    let s = Script::fixed(US);
    let (r, _) = run_with(
        "[j]\nioengine=io_uring_cmd\nfilename=/dev/ng0n1\nrw=randtrim\nsize=1m\nbs=4k\nnum_range=3\nnumber_ios=5\n",
        &s,
    );
    assert_eq!(only(&r).dirs[2].total_ios, 5, "number_ios counts commands");
    assert_eq!(only(&r).dirs[2].io_bytes, 5 * 3 * 4096);
}
