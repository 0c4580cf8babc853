//! Replay's tests: iologs parsed, redirected, scaled and skipped; logs recorded.

use super::iolog::parse;
use super::*;

fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
    let mut o = ioscope_options::spec::defaults().clone();
    f(&mut o);
    o
}

#[test]
fn version_2_with_waits_and_version_3_with_times() {
    let v2 = "fio version 2 iolog\n/d/a add\n/d/a open\n/d/a read 0 4096\n/d/a wait 50\n\
              /d/a write 8192 4096\n/d/a wait 1000\n/d/a sync 0 0\n/d/a close\n";
    let t = parse(v2.as_bytes(), &opts(|_| {}), false).unwrap();
    assert_eq!(t.files, [PathBuf::from("/d/a")]);
    assert_eq!(t.ends, [12288]);
    let got: Vec<(Ddir, u64, u32, Option<u64>)> = t
        .entries
        .iter()
        .map(|e| (e.io.ddir, e.io.offset, e.io.len, e.at_us))
        .collect();
    // The 50 µs wait is dropped (below 100), the 1000 µs one is kept.
    assert_eq!(
        got,
        [
            (Ddir::Read, 0, 4096, None),
            (Ddir::Write, 8192, 4096, None),
            (Ddir::Sync, 0, 0, Some(1000)),
        ]
    );
    let v3 = "fio version 3 iolog\n0 a add\n0 b add\n5 a open\n9 b open\n\
              10 a read 4096 512\n20 b trim 1000000 4096\n30 a close\n";
    let t = parse(v3.as_bytes(), &opts(|_| {}), false).unwrap();
    assert_eq!(t.files.len(), 2);
    assert_eq!(t.ends, [4608, 1004096]);
    assert_eq!(t.entries[1].io.file, 1);
    // As fio: the gaps count (none after a line at time 0): 5 → 0, 9 → 4, 10 → 1, 20 → 10.
    assert_eq!(t.entries[0].at_us, Some(5));
    assert_eq!(t.entries[1].at_us, Some(15));
}

/// Timestamps of 2^64−1 (fio replays them at once: the gap after a line at time 0
/// is none) and gaps of more than a year (damaged) never hold the job forever; an I/O
/// of 0 bytes is refused naming its line.
#[test]
fn crafted_times_and_lengths_are_bounded() {
    let max = u64::MAX;
    let v3 =
        format!("fio version 3 iolog\n0 a add\n{max} a open\n{max} a read 0 4096\n{max} a close\n");
    let t = parse(v3.as_bytes(), &opts(|_| {}), false).unwrap();
    assert_eq!(t.entries[0].at_us, Some(0));
    let late = format!("fio version 3 iolog\n1 a add\n2 a read 0 4096\n{max} a read 0 4096\n");
    let e = parse(late.as_bytes(), &opts(|_| {}), false).unwrap_err();
    assert!(
        e.contains("line 4: the log waits") && e.contains("more than a year"),
        "{e}"
    );
    let t = parse(late.as_bytes(), &opts(|o| o.replay_no_stall = true), false).unwrap();
    assert_eq!(t.entries.len(), 2);
    let waits = format!("fio version 2 iolog\na add\na wait {max}\na wait {max}\n");
    let e = parse(waits.as_bytes(), &opts(|_| {}), false).unwrap_err();
    assert!(e.contains("line 3: the log waits"), "{e}");
    let zero = "fio version 2 iolog\na add\na open\na read 0 0\n";
    let e = parse(zero.as_bytes(), &opts(|_| {}), false).unwrap_err();
    assert_eq!(e, "line 4: read of 0 bytes (an I/O needs a length)");
}

#[test]
fn redirect_scale_align_and_skip() {
    let v3 = "fio version 3 iolog\n0 a add\n0 b add\n1 a read 10000 4096\n\
              2 b write 20000 4096\n3 b read 40000 4096\n";
    let o = opts(|o| {
        o.replay_redirect = Some("/dev/x".into());
        o.replay_scale = 2;
        o.replay_align = 4096;
        o.replay_skip = Some(ioscope_options::ReplaySkip {
            write: true,
            ..Default::default()
        });
    });
    let t = parse(v3.as_bytes(), &o, false).unwrap();
    assert_eq!(t.files, [PathBuf::from("/dev/x")]);
    let got: Vec<(u32, u64)> = t.entries.iter().map(|e| (e.io.file, e.io.offset)).collect();
    // 10000/2 = 5000 → 4096; 40000/2 = 20000 → 16384; the write is skipped.
    assert_eq!(got, [(0, 4096), (0, 16384)]);
}

#[test]
fn errors_name_the_line() {
    let bad = [
        ("blktrace\n", "version 2 or 3"),
        (
            "fio version 3 iolog\n0 a add\n1 a frobnicate 0 1\n",
            "line 3: unknown action",
        ),
        (
            "fio version 3 iolog\n0 a add\n1 b read 0 1\n",
            "line 3: file b was not added",
        ),
        (
            "fio version 2 iolog\na add\na read x 1\n",
            "line 3: 'x' is not a number",
        ),
        ("fio version 3 iolog\n", "no file"),
    ];
    for (text, want) in bad {
        let e = parse(text.as_bytes(), &opts(|_| {}), false).unwrap_err();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn recorded_logs_read_back() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("w.log");
    let a = d.path().join("a");
    let mut r = Recorder::create(log.to_str().unwrap(), &[a.as_path()]).unwrap();
    let io = |ddir, offset| Io {
        ddir,
        file: 0,
        offset,
        len: 4096,
        verify: false,
    };
    r.issued(7, &io(Ddir::Write, 8192));
    r.issued(9, &io(Ddir::DataSync, 0));
    r.issued(12, &io(Ddir::Read, 0));
    r.finish().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let name = a.display();
    assert_eq!(
        text,
        format!(
            "fio version 3 iolog\n0 {name} add\n0 {name} open\n7 {name} write 8192 4096\n\
             9 {name} datasync 0 0\n12 {name} read 0 4096\n12 {name} close\n"
        )
    );
    let t = parse(text.as_bytes(), &opts(|_| {}), false).unwrap();
    assert_eq!(t.entries.len(), 3);
    // The gaps, as fio replays them: 7 follows a line at 0 (no wait), then 2, then 3.
    assert_eq!(t.entries[2].at_us, Some(5));
}
