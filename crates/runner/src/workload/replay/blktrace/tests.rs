//! Traces built event by event; the expected I/O is what fio 3.33 replays of the same
//! traces (observed with its --debug=blktrace and strace of the replay).

use super::*;

const Q_READ: u32 = 0x0011_0001;
const Q_READ_PC: u32 = 0x0211_0001;
const Q_WRITE_SYNC: u32 = 0x001a_0001;
const Q_WRITE: u32 = 0x0012_0001;
const Q_DISCARD: u32 = 0x2012_0001;
const Q_FLUSH: u32 = 0x0014_0001;
const Q_WRITE_FLUSH: u32 = 0x0016_0001;
const Q_FS_ONLY: u32 = 0x0100_0001;
const ISSUE_READ: u32 = 0x0041_0007;
const DONE_READ: u32 = 0x0081_0008;
const DONE_WRITE: u32 = 0x0082_0008;
const BACKMERGE_WRITE: u32 = 0x0012_0002;
const PROCESS: u32 = 0x0400_0000;
const LOOP0: u32 = 7 << 20;

/// One event as blktrace writes it (this machine's byte order), with its payload.
fn ev(time_ms: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let r = Record {
        magic: 0x6561_7407,
        time: time_ms * 1_000_000,
        sector,
        bytes,
        action,
        device: LOOP0,
        pdu_len: pdu.len() as u16,
        ..Default::default()
    };
    let mut b = r.encode().to_vec();
    b[46..48].copy_from_slice(&(pdu.len() as u16).to_ne_bytes());
    b.extend_from_slice(pdu);
    b
}

fn trace(events: &[Vec<u8>]) -> Vec<u8> {
    events.concat()
}

fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
    let mut o = ioscope_options::spec::defaults().clone();
    o.name = "r".into();
    f(&mut o);
    o
}

fn loop0(major: u32, minor: u32) -> Option<PathBuf> {
    (major == 7 && minor == 0).then(|| PathBuf::from("/dev/loop0"))
}

fn replay(bytes: &[u8], o: &JobOptions, readonly: bool) -> Result<Trace, String> {
    let swapped = detect(bytes).ok_or("not a blktrace")?;
    parse(Events::new(bytes, swapped), o, readonly, &mut loop0)
}

fn ios(t: &Trace) -> Vec<(Ddir, u64, u32, u64)> {
    t.entries
        .iter()
        .map(|e| (e.io.ddir, e.io.offset, e.io.len, e.at_us.unwrap_or(0)))
        .collect()
}

/// fio's "basic" trace: a process notify, then a read, a write, a discard, a flush and
/// a read, with issue and completion events between them.
fn basic() -> Vec<u8> {
    trace(&[
        ev(0, 0, 0, PROCESS, b"fio-test\0"),
        ev(100, 8, 4096, Q_READ, &[0; 16]),
        ev(100, 8, 4096, ISSUE_READ, &[]),
        ev(100, 8, 4096, DONE_READ, &[]),
        ev(150, 64, 8192, Q_WRITE_SYNC, &[]),
        ev(150, 64, 8192, DONE_WRITE, &[]),
        ev(250, 1024, 65536, Q_DISCARD, &[]),
        ev(300, 0, 0, Q_FLUSH, &[]),
        ev(500, 2048, 16384, Q_READ, &[]),
        ev(500, 2048, 16384, DONE_READ, &[]),
    ])
}

#[test]
fn queue_events_replay_as_fio_replays_them() {
    let t = replay(&basic(), &opts(|_| {}), false).unwrap();
    assert_eq!(t.files, [PathBuf::from("/dev/loop0")]);
    assert_eq!(
        ios(&t),
        [
            (Ddir::Read, 4096, 4096, 0),
            (Ddir::Write, 32768, 8192, 50_000),
            (Ddir::Trim, 524288, 65536, 150_000),
            (Ddir::Sync, 0, 0, 200_000),
            (Ddir::Read, 1048576, 16384, 400_000),
        ]
    );
    assert_eq!(t.depth, Some(1));
    assert_eq!(t.dirs(), [true, true, true]);
    assert_eq!(t.ends, [1048576 + 16384]);
}

#[test]
fn the_other_byte_order_reads_alike() {
    let swap = |b: &[u8]| -> Vec<u8> {
        // Swap each field of each 48-byte header (payload-free events only).
        let mut out = Vec::new();
        for rec in b.chunks(RECORD) {
            for (at, len) in [
                (0, 4),
                (4, 4),
                (8, 8),
                (16, 8),
                (24, 4),
                (28, 4),
                (32, 4),
                (36, 4),
                (40, 4),
                (44, 2),
                (46, 2),
            ] {
                out.extend(rec[at..at + len].iter().rev());
            }
        }
        out
    };
    let native = trace(&[ev(10, 8, 4096, Q_READ, &[]), ev(20, 16, 8192, Q_WRITE, &[])]);
    let be = swap(&native);
    assert_eq!(detect(&be), Some(true));
    let a = replay(&native, &opts(|_| {}), false).unwrap();
    let b = replay(&be, &opts(|_| {}), false).unwrap();
    assert_eq!(ios(&a), ios(&b));
    assert_eq!(ios(&b)[1], (Ddir::Write, 8192, 8192, 10_000));
}

/// fio's "odd" trace: a zero-byte read (dropped, said once, yet moving the time base),
/// a PC read (kept), a time that goes backwards (no wait), a write with a pre-flush (a
/// sync only), an odd-sized write, an event with neither read nor write (a read).
fn odd() -> Vec<u8> {
    trace(&[
        ev(10, 8, 4096, Q_READ, &[]),
        ev(20, 16, 0, Q_READ, &[]),
        ev(30, 24, 4096, Q_READ_PC, &[]),
        ev(40, 32, 4096, Q_READ, &[]),
        ev(35, 40, 4096, Q_READ, &[]),
        ev(60, 48, 4096, Q_WRITE_FLUSH, &[]),
        ev(70, 57, 1000, Q_WRITE, &[]),
        ev(80, 64, 4096, Q_FS_ONLY, &[]),
    ])
}

#[test]
fn odd_events_as_fio() {
    let t = replay(&odd(), &opts(|_| {}), false).unwrap();
    let at: Vec<(Ddir, u64, u32)> = ios(&t).iter().map(|x| (x.0, x.1, x.2)).collect();
    assert_eq!(
        at,
        [
            (Ddir::Read, 4096, 4096),
            (Ddir::Read, 12288, 4096),
            (Ddir::Read, 16384, 4096),
            (Ddir::Read, 20480, 4096),
            (Ddir::Sync, 0, 0),
            (Ddir::Write, 29184, 1000),
            (Ddir::Read, 32768, 4096),
        ]
    );
    // fio's delays: 0, 10000, 10000, 0 (backwards), 25000, 10000, 10000.
    let times: Vec<u64> = ios(&t).iter().map(|x| x.3).collect();
    assert_eq!(times, [0, 20_000, 30_000, 30_000, 55_000, 65_000, 75_000]);
    assert_eq!(
        t.notes,
        ["blktrace: ignoring zero byte trace: action=110001"]
    );
}

#[test]
fn scale_align_skip_and_readonly() {
    let offsets = |o: &JobOptions| -> Vec<(u64, u32)> {
        let t = replay(&odd(), o, false).unwrap();
        t.entries
            .iter()
            .filter(|e| e.io.ddir.is_data())
            .map(|e| (e.io.offset, e.io.len))
            .collect()
    };
    let scaled = offsets(&opts(|o| o.replay_scale = 2));
    let want: Vec<u64> = vec![2048, 6144, 8192, 10240, 14592, 16384];
    assert_eq!(scaled.iter().map(|x| x.0).collect::<Vec<_>>(), want);
    let aligned = offsets(&opts(|o| o.replay_align = 8192));
    assert_eq!(
        aligned,
        [
            (0, 8192),
            (8192, 8192),
            (16384, 8192),
            (16384, 8192),
            (24576, 8192),
            (32768, 8192)
        ]
    );
    let t = replay(
        &odd(),
        &opts(|o| {
            o.replay_skip = Some(ioscope_options::ReplaySkip {
                sync: true,
                read: true,
                ..Default::default()
            })
        }),
        false,
    )
    .unwrap();
    assert_eq!(
        ios(&t).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        [(Ddir::Write, 29184)]
    );
    assert!(
        t.notes.is_empty(),
        "a skipped zero-byte read is not noted: {:?}",
        t.notes
    );
    // --readonly: the write with a pre-flush counts as a write, so no sync either.
    let t = replay(&odd(), &opts(|_| {}), true).unwrap();
    assert!(t.entries.iter().all(|e| e.io.ddir == Ddir::Read));
    assert_eq!(t.entries.len(), 5);
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("skips replay of 2 writes")),
        "{:?}",
        t.notes
    );
}

#[test]
fn the_depth_is_the_deepest_queue_between_completions() {
    let t = trace(&[
        ev(1, 0, 4096, Q_READ, &[]),
        ev(2, 8, 4096, Q_READ, &[]),
        ev(3, 16, 4096, Q_READ, &[]),
        ev(4, 16, 4096, DONE_READ, &[]),
        ev(5, 100, 4096, Q_WRITE, &[]),
        ev(6, 108, 4096, Q_WRITE, &[]),
        ev(7, 108, 4096, BACKMERGE_WRITE, &[]),
        ev(8, 108, 8192, DONE_WRITE, &[]),
    ]);
    assert_eq!(replay(&t, &opts(|_| {}), false).unwrap().depth, Some(3));
    // No completions at all: depth 1.
    let t = trace(&[ev(1, 0, 4096, Q_READ, &[]), ev(2, 8, 4096, Q_READ, &[])]);
    assert_eq!(replay(&t, &opts(|_| {}), false).unwrap().depth, Some(1));
}

#[test]
fn bad_traces_are_refused_and_a_cut_off_end_is_the_end() {
    let mut cut = basic();
    cut.extend_from_slice(&[0x55; 30]);
    assert_eq!(replay(&cut, &opts(|_| {}), false).unwrap().entries.len(), 5);
    let mut zeros = basic();
    zeros.extend_from_slice(&[0; RECORD]);
    let e = replay(&zeros, &opts(|_| {}), false).unwrap_err();
    assert!(e.contains("event 11: bad magic 0x0"), "{e}");
    let mut v6 = ev(1, 0, 4096, Q_READ, &[]);
    v6[0] = 6;
    let e = replay(&v6, &opts(|_| {}), false).unwrap_err();
    assert!(e.contains("blktrace version 6"), "{e}");
    let notify_only = ev(0, 0, 0, PROCESS, b"x\0");
    let e = replay(&notify_only, &opts(|_| {}), false).unwrap_err();
    assert!(e.contains("found no I/O"), "{e}");
    assert_eq!(
        detect(&basic()[..20]),
        None,
        "shorter than an event: not a blktrace"
    );
    assert_eq!(
        detect(b"fio version 3 iolog\n0 a add\n0 a open\n0 a read 0 1\n"),
        None
    );
    // A device this machine does not have.
    let mut sda = ev(1, 0, 4096, Q_READ, &[]);
    sda[36..40].copy_from_slice(&(8u32 << 20).to_ne_bytes());
    let e = replay(&sda, &opts(|_| {}), false).unwrap_err();
    assert!(e.contains("device 8:0 is not a block device"), "{e}");
}

#[test]
fn devices_become_files_and_redirect_makes_them_one() {
    let on = |mut b: Vec<u8>, minor: u32| {
        b[36..40].copy_from_slice(&((7u32 << 20) | minor).to_ne_bytes());
        b
    };
    let t = trace(&[
        on(ev(1, 8, 4096, Q_READ, &[]), 0),
        on(ev(2, 16, 4096, Q_WRITE, &[]), 2),
        on(ev(3, 24, 4096, Q_READ, &[]), 0),
        on(ev(4, 32, 8192, Q_READ, &[]), 2),
    ]);
    let two = |major: u32, minor: u32| -> Option<PathBuf> {
        (major == 7).then(|| PathBuf::from(format!("/dev/loop{minor}")))
    };
    let swapped = detect(&t).unwrap();
    let got = parse(Events::new(&t[..], swapped), &opts(|_| {}), false, &mut {
        two
    })
    .unwrap();
    assert_eq!(
        got.files,
        [PathBuf::from("/dev/loop0"), PathBuf::from("/dev/loop2")]
    );
    let files: Vec<u32> = got.entries.iter().map(|e| e.io.file).collect();
    assert_eq!(files, [0, 1, 0, 1]);
    assert_eq!(got.ends, [16384, 24576]);
    let mut to_one = |_: u32, _: u32| Some(PathBuf::from("/tmp/target"));
    let got = parse(
        Events::new(&t[..], swapped),
        &opts(|_| {}),
        false,
        &mut to_one,
    )
    .unwrap();
    assert_eq!(got.files, [PathBuf::from("/tmp/target")]);
    assert!(got.entries.iter().all(|e| e.io.file == 0));
}

#[test]
fn this_machines_block_devices_are_found_by_number() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // Every machine ioscope runs on has one (a disk, or the loop devices' nodes).
    let dev = std::fs::read_dir("/dev")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_block_device()))
        .expect("a block device under /dev");
    let rdev = std::fs::metadata(&dev).unwrap().rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let found = find_device(major, minor).expect("found");
    assert_eq!(std::fs::metadata(&found).unwrap().rdev(), rdev);
    assert_eq!(find_device(4095, 0xf_fff0), None);
}
