//! The workload's own tests: the offsets, sizes and directions it hands out.

use super::*;
use ioscope_options::spec::defaults;

fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
    let mut o = defaults().clone();
    f(&mut o);
    o
}

fn all(w: &mut Workload) -> Vec<Io> {
    std::iter::from_fn(|| w.next_io())
        .take(10_000_000)
        .collect()
}

/// The common case's shortcut issues what the general path issues: the same
/// offsets from the same generator, the same counts, loops and ends.
#[test]
fn the_plain_shortcut_matches_the_general_path() {
    for (mode, loops, number_ios, time_based) in [
        (RwMode::RandRead, 1, 0, false),
        (RwMode::RandWrite, 3, 0, false),
        (RwMode::RandTrim, 1, 37, false),
        (RwMode::RandRead, 1, 0, true),
    ] {
        let o = opts(|o| {
            o.rw.mode = mode;
            o.norandommap = true;
            o.loops = loops;
            o.number_ios = number_ios;
            o.time_based = time_based;
        });
        let mut fast = Workload::new(&o, &[(8192, 256 * 1024 + 100)], 7);
        assert!(fast.plain.is_some(), "{mode:?} takes the shortcut");
        let mut slow = Workload::new(&o, &[(8192, 256 * 1024 + 100)], 7);
        slow.plain = None;
        let (a, b): (Vec<Io>, Vec<Io>) = if time_based {
            let a = (0..1000).map_while(|_| fast.next_io()).collect();
            let b = (0..1000).map_while(|_| slow.next_io()).collect();
            (a, b)
        } else {
            (all(&mut fast), all(&mut slow))
        };
        assert_eq!(a, b, "{mode:?}");
        assert_eq!(fast.passes, slow.passes);
        assert_eq!(fast.finished(), slow.finished());
        assert!(a
            .iter()
            .all(|io| io.offset >= 8192 && io.offset + 4096 <= 8192 + 256 * 1024));
    }
    // Not the common case: the general path alone.
    for f in [
        |o: &mut JobOptions| o.norandommap = false,
        |o: &mut JobOptions| o.fsync = 4,
        |o: &mut JobOptions| o.rw.mode = RwMode::RandRw,
    ] {
        let o = opts(|o| {
            o.rw.mode = RwMode::RandRead;
            o.norandommap = true;
            f(o);
        });
        assert!(Workload::new(&o, &[(0, 65536)], 1).plain.is_none());
    }
}

#[test]
fn sequential_read() {
    let o = opts(|_| {});
    let v = all(&mut Workload::new(&o, &[(0, 64 * 1024)], 1));
    assert_eq!(v.len(), 16);
    assert!(v
        .iter()
        .enumerate()
        .all(|(i, io)| io.offset == i as u64 * 4096 && io.len == 4096));
}

#[test]
fn random_map_covers_each_block_once() {
    let o = opts(|o| o.rw.mode = RwMode::RandWrite);
    let v = all(&mut Workload::new(&o, &[(0, 1 << 20)], 7));
    assert_eq!(v.len(), 256);
    let mut offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len(), 256);
}

#[test]
fn norandommap_repeats() {
    let o = opts(|o| {
        o.rw.mode = RwMode::RandRead;
        o.norandommap = true;
    });
    let v = all(&mut Workload::new(&o, &[(0, 4 << 20)], 7));
    assert_eq!(v.len(), 1024);
    let mut offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
    offs.sort_unstable();
    offs.dedup();
    assert!(
        offs.len() < 1024,
        "no repeats without the random map is wildly unlikely"
    );
}

#[test]
fn mixed_io_size_loops_number_ios() {
    let o = opts(|o| {
        o.rw.mode = RwMode::RandRw;
        o.rwmixread = 70;
        o.loops = 2;
    });
    let v = all(&mut Workload::new(&o, &[(0, 4 << 20)], 3));
    assert_eq!(v.len(), 2048);
    let reads = v.iter().filter(|i| i.ddir == Ddir::Read).count();
    assert!((1300..1560).contains(&reads), "{reads}");
    let o = opts(|o| o.number_ios = 10);
    assert_eq!(all(&mut Workload::new(&o, &[(0, 4 << 20)], 3)).len(), 10);
    let o = opts(|o| o.io_size = Some(ioscope_options::SizePct::Bytes(12 << 20)));
    assert_eq!(all(&mut Workload::new(&o, &[(0, 4 << 20)], 3)).len(), 3072);
}

/// Holes past the end of the file: fio 3.33's offsets (its write_iolog) for these
/// jobs. An I/O that ends at the end of the file ends the pass; a hole that runs
/// past it wraps to the start and the pass goes on until its bytes are done.
#[test]
fn holes_wrap_or_end_the_pass_as_fios_do() {
    let holed = |hole: i64, mode: RwMode| {
        opts(move |o| {
            o.rw = ioscope_options::RwSpec { mode, nr: 1, hole };
        })
    };
    let offs = |o: &JobOptions, size: u64| -> Vec<u64> {
        all(&mut Workload::new(o, &[(0, size)], 1))
            .iter()
            .map(|i| i.offset >> 10)
            .collect()
    };
    // read:8k on 64k: the sixth read ends at 64k; 24k read in all.
    assert_eq!(
        offs(&holed(8192, RwMode::Read), 64 << 10),
        [0, 12, 24, 36, 48, 60]
    );
    // read:4k: 56k+4k+4k reaches 64k: back to 0 until 64k are read.
    let v = offs(&holed(4096, RwMode::Read), 64 << 10);
    assert_eq!(v.len(), 16);
    assert_eq!(&v[..9], [0, 8, 16, 24, 32, 40, 48, 56, 0]);
    // cross-stripe-verify's write:112k with 16k blocks on 4 MiB: 4 MiB written, the
    // 32 blocks at 128k strides eight times over.
    let mut o = holed(112 << 10, RwMode::Write);
    o.bs = ioscope_options::PerDir([16 << 10; 3]);
    let v = offs(&o, 4 << 20);
    assert_eq!(v.len(), 256);
    assert!(v.chunks(32).all(|c| c == &v[..32]), "{:?}", &v[..40]);
    // A file larger than the region: the hole passes the region's end first, and
    // the pass ends there (fio wraps only at the end of the file).
    let o = holed(4096, RwMode::Read);
    let mut w = Workload::new(&o, &[(0, 64 << 10)], 1);
    w.set_file_ends(&[1 << 20]);
    assert_eq!(all(&mut w).len(), 8);
}

#[test]
fn backwards_and_fsync() {
    let o = opts(|o| {
        o.rw = ioscope_options::RwSpec {
            mode: RwMode::Read,
            nr: 1,
            hole: -8192,
        }
    });
    let v = all(&mut Workload::new(&o, &[(0, 16384)], 1));
    // fio 3.33's offsets for this job (its write_iolog): 0, 8k, 4k, 0.
    let offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
    assert_eq!(offs, [0, 8192, 4096, 0]);
    let o = opts(|o| {
        o.rw.mode = RwMode::Write;
        o.fsync = 2;
    });
    let v = all(&mut Workload::new(&o, &[(0, 16384)], 1));
    // 4 writes, a sync after the second; none after the last (as fio).
    assert_eq!(v.iter().filter(|i| i.ddir == Ddir::Sync).count(), 1);
    // sync_file_range: over what was written since the last one.
    let o = opts(|o| {
        o.rw.mode = RwMode::Write;
        o.sync_file_range = Some(ioscope_options::SyncFileRange { flags: 2, every: 2 });
    });
    let v = all(&mut Workload::new(&o, &[(0, 24576)], 1));
    let syncs: Vec<(u64, u32)> = v
        .iter()
        .filter(|i| i.ddir == Ddir::DataSync)
        .map(|i| (i.offset, i.len))
        .collect();
    assert_eq!(syncs, [(0, 8192), (8192, 8192)]);
}

/// The largest block size of a choice that fits what is left of a region: fio issues
/// no sequential I/O that does not fit (end to end: fio_342.rs
/// no_io_runs_past_the_end_of_its_region).
#[test]
fn the_last_sequential_io_fits_or_is_not_issued() {
    use super::bs::BsChoice;
    assert_eq!(BsChoice::Fixed(4096).largest_within(4095), None);
    assert_eq!(BsChoice::Fixed(4096).largest_within(4096), Some(4096));
    let r = BsChoice::Range {
        lo: 512 << 10,
        hi: 1 << 20,
        step: 512 << 10,
    };
    assert_eq!(r.largest_within(700 << 10), Some(512 << 10));
    assert_eq!(r.largest_within(400 << 10), None);
    assert_eq!(r.largest_within(4 << 20), Some(1 << 20));
    let s = BsChoice::Split {
        table: vec![(40, 64 << 10), (100, 1 << 20)],
        total: 100,
    };
    assert_eq!(s.largest_within(500 << 10), Some(64 << 10));
    assert_eq!(s.largest_within(32 << 10), None);
}
