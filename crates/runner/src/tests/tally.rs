//! What some jobs count per completion beyond their statistics: `--profile=act`'s
//! latency slices and block_error_percentiles' blocks.

use super::*;
use crate::testing::Outcome;
use ioscope_options::jobfile::{parse_entry, Keywords};
use ioscope_options::{profile, Loc};

/// act's jobs over one scripted "device": every tenth I/O takes 2 ms, the rest 100 µs.
#[test]
fn act_counts_the_latencies_of_its_jobs_per_hour() {
    let mut global: Vec<_> = [
        "profile=act",
        "device-names=dev",
        "test-duration=2",
        "threads-per-queue=2",
        "size=64m",
    ]
    .iter()
    .enumerate()
    .map(|(i, a)| parse_entry(a, Loc::cli(i + 1)))
    .collect();
    let kw = Keywords::probe();
    let file = profile::take(&mut global, &kw).unwrap().unwrap();
    let set = spec::build(&global, &[], &[file], &[], &kw).unwrap();
    let s = Script::new(|seq, _| Outcome::ok(if seq % 10 == 9 { 2 * MS } else { 100 * US }));
    let mut obs = Collect::default();
    let r = Runner::new(RunOptions::default())
        .with_clock(Clock::manual(1_000_000_000))
        .with_stop(stop_flag())
        .with_engine(EngineSource::Scripted(s))
        .run_set(&set, &mut obs)
        .unwrap();
    let j = only(&r);
    let a = j.act.as_ref().expect("act's slices");
    assert_eq!(a.slices.len(), 1, "2 s: one hour-slice");
    let ios = j.dirs[0].total_ios + j.dirs[1].total_ios;
    // How many I/Os fit in the 2 s depends on how the jobs' threads interleave on the
    // shared manual clock (CI once saw 780 under load); the checks below need only
    // enough for a tenth of them to be slow.
    assert!(ios > 200, "{ios}");
    let [n, over1, over8, over64] = a.slices[0];
    assert_eq!(n, ios, "every I/O of every act job");
    // The I/Os over 1 ms (in whole µs), in one of the three columns each, are those
    // the latency histograms have there (sync engine: lat = clat); the jobs share the
    // manual clock, so some take longer than their script says.
    let over = |d: usize| {
        let h = j.dirs[d].clat.hist.as_ref().expect("histogram");
        h.buckets()
            .filter(|&(i, _)| ioscope_stats::hist::lower_bound(i) >= 1_001_000)
            .map(|(_, c)| c)
            .sum::<u64>()
    };
    let slow = over1 + over8 + over64;
    assert_eq!(slow, over(0) + over(1), "{:?} of {ios}", a.slices[0]);
    assert!(
        slow >= ios / 10 - 2,
        "at least every tenth: {slow} of {ios}"
    );
    assert!(!a.passed(), "10% over 1 ms fails act's 5%");
}

/// Sequential trims over 16 blocks, three times; the trim of block 3 fails at once.
#[test]
fn blocks_count_their_trims_until_they_fail() {
    let s = Script::new(|_, u| {
        if u.ddir == ioscope_engine::Ddir::Trim && u.offset == 3 * 4096 {
            Outcome::error(US, libc::EIO)
        } else {
            // Instant trims count too (a latency of 0 is still a completion).
            Outcome::ok(0)
        }
    });
    let (r, _) = run_with(
        "[t]\nioengine=psync\nrw=trim\nbs=4k\nsize=64k\nloops=3\ncontinue_on_error=all\n\
         block_error_percentiles=1\n",
        &s,
    );
    let b = only(&r).block.as_ref().expect("blocks");
    assert_eq!(b.states(), [0, 15, 0, 1, 0]);
    // 15 blocks trimmed 3 times; the failed one (0 trims) sorts last.
    assert_eq!(
        b.percentiles(&[1.0, 50.0, 90.0, 99.99]),
        [(1.0, 3), (50.0, 3), (90.0, 3), (99.99, 0)]
    );
}

#[test]
fn blocks_need_one_file_and_at_most_8192_of_them() {
    let s = Script::fixed(US);
    for (text, want) in [
        (
            "[t]\nrw=trim\nnrfiles=2\nsize=64k\nblock_error_percentiles=1\n",
            "one file, and the job has 2",
        ),
        (
            "[t]\nrw=trim\nbs=512\nsize=8m\nblock_error_percentiles=1\n",
            "cannot count 16384 blocks",
        ),
    ] {
        let e = Runner::new(RunOptions::default())
            .with_clock(Clock::manual(1_000_000_000))
            .with_stop(stop_flag())
            .with_engine(EngineSource::Scripted(s.clone()))
            .run_set(&jobs(text), &mut Collect::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}
