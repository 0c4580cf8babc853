//! The placement rules, one job and shared.

use super::*;
use place::Zones;

const Z: u64 = 1 << 20;
const B: u64 = 4096;

fn own(m: &ZoneMap) -> &Zones {
    match &m.held {
        Held::Own(z) => z,
        Held::Shared(_) => panic!("shared"),
    }
}

fn own_mut(m: &mut ZoneMap) -> &mut Zones {
    match &mut m.held {
        Held::Own(z) => z,
        Held::Shared(_) => panic!("shared"),
    }
}

fn zones(n: u64, wp: &[u64]) -> Vec<ZoneInfo> {
    (0..n)
        .map(|i| ZoneInfo {
            start: i * Z,
            len: Z,
            capacity: Z,
            wp: i * Z + wp.get(i as usize).copied().unwrap_or(0),
            seq: true,
        })
        .collect()
}

fn rules(max_open: u32) -> ZoneRules {
    ZoneRules {
        max_open,
        min_bs: B,
        ..ZoneRules::default()
    }
}

fn map(n: u64, wp: &[u64], max_open: u32) -> ZoneMap {
    ZoneMap::new(zones(n, wp), rules(max_open))
}

fn at(m: &mut ZoneMap, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<u64> {
    m.place(ddir, offset, len, random).map(|p| p.offset)
}

fn ops(m: &mut ZoneMap, all: bool) -> Vec<ZoneOp> {
    std::iter::from_fn(|| m.next_op(all)).collect()
}

#[test]
fn random_writes_go_to_the_write_pointer_of_their_zone() {
    let mut m = map(4, &[], 0);
    assert_eq!(at(&mut m, Ddir::Write, 2 * Z + 12345, B, true), Some(2 * Z));
    assert_eq!(
        at(&mut m, Ddir::Write, 2 * Z + 8192, B, true),
        Some(2 * Z + B)
    );
    assert_eq!(at(&mut m, Ddir::Write, 100, B, true), Some(0));
    assert!(ops(&mut m, true).is_empty());
}

#[test]
fn the_open_limit_sends_writes_to_open_zones() {
    let mut m = map(4, &[], 2);
    at(&mut m, Ddir::Write, 0, B, true);
    at(&mut m, Ddir::Write, Z, B, true);
    let to = at(&mut m, Ddir::Write, 3 * Z, B, true).expect("placed");
    assert!(to < 2 * Z, "{to}: only zones 0 and 1 are open");
    assert_eq!(own(&m).open.len(), 2);
}

#[test]
fn sequential_writes_append_and_reset_full_zones_they_come_to() {
    let mut m = map(3, &[Z / 2, Z], 0);
    assert_eq!(
        at(&mut m, Ddir::Write, 0, B, false),
        Some(Z / 2),
        "appended"
    );
    assert!(ops(&mut m, false).is_empty());
    // Zone 1 is full: reset before the write that comes to it.
    assert_eq!(at(&mut m, Ddir::Write, Z, B, false), Some(Z));
    assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(Z, Z)]);
    // The last block of a zone: the job goes on at the next zone.
    own_mut(&mut m).zones[2].wp = 3 * Z - B;
    let p = m.place(Ddir::Write, 2 * Z, B, false).expect("placed");
    assert_eq!((p.offset, p.next), (3 * Z - B, 3 * Z));
    assert!(!own(&m).open.contains(&2), "a full zone is not open");
}

#[test]
fn a_remainder_smaller_than_a_block_finishes_the_zone_after_the_write() {
    let cap = 100 << 10;
    let mut z = zones(2, &[]);
    z.iter_mut().for_each(|z| z.capacity = cap);
    let big = ZoneRules {
        min_bs: 64 << 10,
        ..ZoneRules::default()
    };
    let mut m = ZoneMap::new(z.clone(), big);
    let p = m.place(Ddir::Write, 0, 64 << 10, false).expect("placed");
    assert_eq!((p.offset, p.len, p.next), (0, 64 << 10, Z));
    assert!(
        ops(&mut m, false).is_empty(),
        "not before the write completes"
    );
    let p = m.place(Ddir::Write, Z, 64 << 10, false).expect("placed");
    assert_eq!(p.offset, Z);
    assert_eq!(ops(&mut m, false), vec![ZoneOp::Finish(0, Z)]);
    assert_eq!(ops(&mut m, true), vec![ZoneOp::Finish(Z, Z)]);
    // write_zone_remainder: a shorter write fills the zone instead.
    let mut m = ZoneMap::new(
        z,
        ZoneRules {
            write_remainder: true,
            ..big
        },
    );
    m.place(Ddir::Write, 0, 64 << 10, false);
    let p = m
        .place(Ddir::Write, 64 << 10, 64 << 10, false)
        .expect("placed");
    assert_eq!((p.offset, p.len, p.next), (64 << 10, 36 << 10, Z));
    assert!(ops(&mut m, true).is_empty());
}

#[test]
fn random_writes_reset_a_full_zone_they_draw() {
    let mut m = map(2, &[Z, 0], 0);
    assert_eq!(at(&mut m, Ddir::Write, 4 * B, B, true), Some(0));
    assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(0, Z)]);
}

/// As observed with fio 3.42 (8 zones of 1 MiB, bs=64k, rw=write): the countdown
/// runs only while the threshold is exceeded, starts again at 1/frequency after
/// each reset it asks for, and resets nothing in an empty zone.
#[test]
fn the_reset_threshold_resets_every_nth_write_once_exceeded() {
    let bs = 64 << 10;
    let r = ZoneRules {
        min_bs: bs,
        reset_threshold: 61.0 / 128.0,
        reset_every: 4,
        ..ZoneRules::default()
    };
    let mut m = ZoneMap::new(zones(8, &[]), r);
    let mut pos = 0;
    let mut resets = Vec::new();
    for n in 1..=80 {
        let p = m.place(Ddir::Write, pos, bs, false).expect("placed");
        pos = p.next;
        if !ops(&mut m, false).is_empty() {
            resets.push(n);
        }
    }
    // Exceeded from write 62; the countdown ends at 65 (zone 4, empty) and 69.
    assert_eq!(resets, vec![69, 73, 77]);
}

#[test]
fn trims_reset_zones_with_data() {
    let mut m = map(2, &[8192], 0);
    assert_eq!(at(&mut m, Ddir::Trim, 0, Z, false), Some(0));
    assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(0, Z)]);
    assert_eq!(own(&m).zones[0].wp, 0);
    assert_eq!(at(&mut m, Ddir::Trim, Z, Z, false), Some(Z));
    assert!(ops(&mut m, false).is_empty(), "an empty zone is not reset");
}

#[test]
fn random_trims_go_to_the_nearest_zone_with_data_and_end_with_none() {
    let mut m = map(5, &[B, 0, 0, 0, B], 0);
    // Zone 2 is empty: zones 3 and 1 are as near, the one after is taken first (fio's
    // order); both empty, so zone 4, after, and then zone 0, before.
    assert_eq!(at(&mut m, Ddir::Trim, 2 * Z, Z, true), Some(4 * Z));
    assert_eq!(at(&mut m, Ddir::Trim, 2 * Z, Z, true), Some(0));
    assert_eq!(
        ops(&mut m, false),
        vec![ZoneOp::Reset(4 * Z, Z), ZoneOp::Reset(0, Z)]
    );
    assert_eq!(
        at(&mut m, Ddir::Trim, 2 * Z, Z, true),
        None,
        "no zone has data"
    );
}

#[test]
fn random_trims_never_reset_a_conventional_zone() {
    let mut z = zones(3, &[0, 0, B]);
    z[1].seq = false;
    let mut m = ZoneMap::new(z, rules(0));
    // Zone 0 is empty; zone 1, as near, is conventional: zone 2 is reset.
    assert_eq!(at(&mut m, Ddir::Trim, 0, Z, true), Some(2 * Z));
    assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(2 * Z, Z)]);
    assert_eq!(at(&mut m, Ddir::Trim, 0, Z, true), None, "no zone has data");
}

#[test]
fn reads_stay_below_the_write_pointer() {
    let mut m = map(3, &[0, 16384], 0);
    // Zone 0 is empty: the read moves to zone 1, inside its data less a block.
    assert_eq!(at(&mut m, Ddir::Read, 4096, 4096, true), Some(Z + 4096));
    assert_eq!(
        at(&mut m, Ddir::Read, Z + 65536, 4096, true),
        Some(Z + 65536 % 12288)
    );
    assert_eq!(
        at(&mut m, Ddir::Read, 0, 4096, false),
        Some(Z),
        "next zone with data"
    );
    assert_eq!(
        at(&mut m, Ddir::Read, Z + 12288, 4096, false),
        Some(Z + 12288)
    );
    assert_eq!(
        at(&mut m, Ddir::Read, Z + 16384, 4096, false),
        None,
        "past the data"
    );
    let mut beyond = ZoneMap::new(
        zones(3, &[]),
        ZoneRules {
            read_beyond_wp: true,
            ..rules(0)
        },
    );
    assert_eq!(at(&mut beyond, Ddir::Read, 4096, 4096, true), Some(4096));
    let mut empty = map(3, &[], 0);
    assert_eq!(at(&mut empty, Ddir::Read, 4096, 4096, true), None);
}

/// Two jobs' maps over the same zones, shared.
fn shared(n: u64, max_open: u32) -> (ZoneMap, ZoneMap) {
    let (mut a, mut b) = (map(n, &[], max_open), map(n, &[], max_open));
    share(&mut [&mut a, &mut b]);
    (a, b)
}

#[test]
fn shared_zones_interleave_writes_at_the_write_pointer() {
    let (mut a, mut b) = shared(2, 0);
    assert_eq!(at(&mut a, Ddir::Write, 0, B, false), Some(0));
    // a's write is in flight: b waits for it, then writes after it.
    assert_eq!(at(&mut b, Ddir::Write, 0, B, false), None);
    assert!(b.blocked());
    a.write_done(0);
    assert_eq!(at(&mut b, Ddir::Write, 0, B, false), Some(B));
    assert!(!b.blocked());
    b.write_done(B);
    // a's own writes in flight never hold a back.
    assert_eq!(at(&mut a, Ddir::Write, B, B, false), Some(2 * B));
    assert_eq!(at(&mut a, Ddir::Write, 2 * B, B, false), Some(3 * B));
}

#[test]
fn a_zone_one_job_resets_waits_until_the_reset_is_issued() {
    let (mut a, mut b) = shared(2, 0);
    // a fills zone 0, then comes back to it: a reset is due before its next write.
    for k in 0..Z / B {
        assert_eq!(at(&mut a, Ddir::Write, k * B, B, false), Some(k * B));
        a.write_done(k * B);
    }
    assert_eq!(at(&mut a, Ddir::Write, 0, B, false), Some(0));
    let op = a.next_op(false).expect("a reset");
    assert_eq!(op, ZoneOp::Reset(0, Z));
    assert_eq!(at(&mut b, Ddir::Write, 0, B, false), None, "reset due");
    assert!(b.blocked());
    a.op_done(op);
    a.write_done(0);
    assert_eq!(at(&mut b, Ddir::Write, 0, B, false), Some(B));
    // A random write drawn in a zone with another job's write in flight waits too.
    assert_eq!(at(&mut a, Ddir::Write, 5, B, true), None);
    assert!(a.blocked());
}

#[test]
fn shared_zones_count_the_device_and_the_job_open_limits() {
    let (mut a, mut b) = (
        map(4, &[], 2),
        ZoneMap::new(
            zones(4, &[]),
            ZoneRules {
                job_max_open: 1,
                ..rules(2)
            },
        ),
    );
    share(&mut [&mut a, &mut b]);
    at(&mut a, Ddir::Write, 0, B, true);
    a.write_done(0);
    // b may open one zone of the device's two.
    assert_eq!(at(&mut b, Ddir::Write, 2 * Z, B, true), Some(2 * Z));
    b.write_done(2 * Z);
    let to = at(&mut b, Ddir::Write, 3 * Z, B, true).expect("placed");
    assert!(
        to < Z || (2 * Z..3 * Z).contains(&to),
        "{to}: only zones 0 and 2 are open"
    );
    b.write_done(to);
    let to = at(&mut a, Ddir::Write, Z, B, true).expect("placed");
    assert!(
        to < Z || (2 * Z..3 * Z).contains(&to),
        "{to}: the device's limit is 2"
    );
}

#[test]
fn a_read_of_a_job_that_writes_is_a_write_until_its_first_write() {
    let r = ZoneRules {
        write_first: true,
        ..rules(0)
    };
    let mut m = ZoneMap::new(zones(2, &[]), r);
    let p = m.place(Ddir::Read, Z + 8192, B, true).expect("placed");
    assert_eq!((p.ddir, p.offset), (Ddir::Write, Z));
    let p = m.place(Ddir::Read, Z + 8192, B, true).expect("placed");
    assert_eq!((p.ddir, p.offset), (Ddir::Read, Z));
}

/// A sequential job's path through the zones: each I/O placed where the last one's
/// `next` points, as the workload does.
fn walk(m: &mut ZoneMap, ddir: Ddir, len: u64, n: usize) -> Vec<u64> {
    let mut pos = 0;
    let mut out = Vec::new();
    for _ in 0..n {
        let Some(p) = m.place(ddir, pos, len, false) else {
            break;
        };
        out.push(p.offset);
        pos = p.next;
    }
    out
}

fn skipping(n: u64, wp: &[u64], skip: u64) -> ZoneMap {
    let r = ZoneRules { skip, ..rules(0) };
    ZoneMap::new(zones(n, wp), r)
}

#[test]
fn zoneskip_skips_after_a_full_zone_and_wraps_to_the_first() {
    // 8 zones, skip one: zones 0, 2, 4, 6, then 0 again (reset: it is full).
    let mut m = skipping(8, &[], Z);
    let offs = walk(&mut m, Ddir::Write, Z / 2, 10);
    let zones: Vec<u64> = offs.iter().map(|o| o / Z).collect();
    assert_eq!(zones, [0, 0, 2, 2, 4, 4, 6, 6, 0, 0]);
    assert_eq!(ops(&mut m, false), [ZoneOp::Reset(0, Z)]);
    // Skipping two: 0, 3, 6, then 0 (not 1: the region starts again).
    let mut m = skipping(8, &[], 2 * Z);
    let offs = walk(&mut m, Ddir::Write, Z, 4);
    assert_eq!(offs, [0, 3 * Z, 6 * Z, 0]);
}

#[test]
fn zoneskip_reads_all_of_a_zones_data_then_skips() {
    // Zones with half their data: the reads stop at each write pointer and skip.
    let half = [Z / 2; 8];
    let mut m = skipping(8, &half, Z);
    let offs = walk(&mut m, Ddir::Read, Z / 4, 10);
    let zones: Vec<u64> = offs.iter().map(|o| o / Z).collect();
    assert_eq!(zones, [0, 0, 2, 2, 4, 4, 6, 6, 0, 0]);
    // Zones 0-3 full, 4-7 empty: zones 0 and 2, then nothing to read from zone 4 on.
    let mut m = skipping(8, &[Z, Z, Z, Z], Z);
    let offs = walk(&mut m, Ddir::Read, Z, 10);
    assert_eq!(offs, [0, 2 * Z]);
}

#[test]
fn zoneskip_does_not_skip_from_a_zone_finished_with_room_left() {
    // Capacity 100k, 64k writes: each zone is finished after one write, and the job
    // goes on to the next zone, as fio does.
    let mut zs = zones(4, &[]);
    for z in &mut zs {
        z.capacity = 100 << 10;
    }
    let r = ZoneRules {
        skip: Z,
        min_bs: 64 << 10,
        ..rules(0)
    };
    let mut m = ZoneMap::new(zs, r);
    let offs = walk(&mut m, Ddir::Write, 64 << 10, 4);
    assert_eq!(offs, [0, Z, 2 * Z, 3 * Z]);
}

#[test]
fn a_failed_write_asks_for_its_zone_to_be_recovered_once() {
    let r = ZoneRules {
        recover: true,
        ..rules(0)
    };
    let mut m = ZoneMap::new(zones(4, &[]), r);
    let offs = walk(&mut m, Ddir::Write, 64 << 10, 4);
    assert_eq!(offs, [0, 64 << 10, 128 << 10, 192 << 10]);
    // Three writes in flight fail: one recovery of the zone, to the last one's end.
    for off in [64 << 10, 192 << 10, 128 << 10] {
        assert!(m.write_failed(off, 64 << 10));
    }
    assert!(m.ops_due());
    assert_eq!(ops(&mut m, false), [ZoneOp::Recover(0, 256 << 10)]);
    // The next write goes on from there: the zone map's write pointer is not moved back.
    assert_eq!(at(&mut m, Ddir::Write, 0, 64 << 10, false), Some(256 << 10));
    // A write to a conventional zone has no write pointer to recover.
    own_mut(&mut m).zones[2].seq = false;
    assert!(!m.write_failed(2 * Z, 64 << 10));
    // Without recover_zbd_write_error, nothing is due.
    let mut m = map(4, &[], 0);
    walk(&mut m, Ddir::Write, 64 << 10, 1);
    assert!(!m.write_failed(0, 64 << 10));
    assert!(ops(&mut m, true).is_empty());
}
