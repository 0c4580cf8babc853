//! zonemode=strided (fio's t/strided.py and its zone options): sequential jobs issue
//! exactly fio 3.33's offsets (read from both programs' write_iolog), and random jobs keep
//! every offset inside the current zone range, each block once per range — the checks
//! t/strided.py makes on fio's iops log.

use crate::common::*;
use std::path::Path;

/// (direction, offset in KiB) of each I/O in an iolog.
fn offsets(log: &Path) -> Vec<(String, u64)> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && ["read", "write"].contains(&w[2]))
                .then(|| (w[2].to_string(), w[3].parse::<u64>().unwrap() / 1024))
        })
        .collect()
}

/// Run `prog` on a 64 KiB file with these options and return its offsets.
fn walk(prog: &Path, dir: &Path, extra: &[&str]) -> Vec<(String, u64)> {
    let log = dir.join(format!(
        "{}.log",
        prog.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_file(&log);
    let log_arg = format!("--write_iolog={}", log.display());
    let mut args = vec![
        "--name=z",
        "--filename=data",
        "--filesize=64k",
        "--bs=4k",
        "--ioengine=psync",
        "--output-format=json",
        &log_arg,
    ];
    args.extend_from_slice(extra);
    let r = run_tool(prog, dir, &args, &[]);
    assert_eq!(r.code, 0, "{} {extra:?}: {}", prog.display(), r.stderr);
    offsets(&log)
}

#[test]
fn sequential_zones_issue_fios_offsets() {
    require!(Prereq::Fio333);
    let d = tmpdir();
    let cases: &[&[&str]] = &[
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=8k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=16k",
        ],
        &["--rw=read", "--zonemode=strided", "--zonesize=8k"],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zoneskip=8k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--io_size=128k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=8k",
            "--io_size=128k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=16k",
            "--zonerange=8k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--bs=8k",
        ],
        &[
            "--rw=write",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--offset=8k",
        ],
        &[
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--loops=2",
        ],
        &[
            "--rw=rw",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
        ],
    ];
    for extra in cases {
        let fio = walk(Path::new("fio"), d.path(), extra);
        let ours = walk(&bin(), d.path(), extra);
        assert!(!fio.is_empty(), "{extra:?}");
        if extra.contains(&"--rw=rw") {
            // The direction of each I/O is random: compare the offsets of the walk.
            let strip = |v: &[(String, u64)]| v.iter().map(|x| x.1).collect::<Vec<_>>();
            assert_eq!(ours.len(), fio.len(), "{extra:?}");
            check_zone_bounds(&strip(&ours), 0, 8, 16, 0, 64);
        } else {
            assert_eq!(ours, fio, "{extra:?}");
        }
    }
}

/// t/strided.py's range check: after every zonesize/bs I/Os the zone moves zonerange +
/// zoneskip on (wrapping at the file size); each offset lies in [zone, zone + zonerange).
fn check_zone_bounds(offs: &[u64], start: u64, size: u64, range: u64, skip: u64, file: u64) {
    let per_zone = (size / 4).max(1) as usize;
    let mut zone = start;
    for (i, &o) in offs.iter().enumerate() {
        if i > 0 && i % per_zone == 0 {
            zone += range + skip;
            if zone >= file {
                zone = start;
            }
        }
        assert!(
            o >= zone && o < zone + range,
            "I/O {i} at {o}k is outside the zone [{zone}k, {}k): {offs:?}",
            zone + range
        );
    }
}

#[test]
fn random_zones_stay_in_range_and_cover_each_block_once() {
    let d = tmpdir();
    // (zonesize, zonerange, zoneskip, norandommap) in KiB, on a 64 KiB file.
    for (size, range, skip, norandommap) in [
        (16, 16, 0, false),
        (8, 16, 0, false),
        (4, 16, 0, false),
        (16, 16, 16, false),
        (8, 16, 0, true),
    ] {
        let (zs, zr, zk) = (
            format!("--zonesize={size}k"),
            format!("--zonerange={range}k"),
            format!("--zoneskip={skip}k"),
        );
        let mut extra = vec![
            "--rw=randread",
            "--zonemode=strided",
            &zs,
            &zr,
            &zk,
            "--io_size=256k",
        ];
        if norandommap {
            extra.push("--norandommap");
        }
        let offs: Vec<u64> = walk(&bin(), d.path(), &extra)
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(offs.len(), 64, "{extra:?}");
        check_zone_bounds(&offs, 0, size, range, skip, 64);
        if norandommap {
            continue;
        }
        // With the random map, each run of zonerange/bs I/Os in a zone is every block once.
        let blocks = (range / 4) as usize;
        let per_zone = (size / 4) as usize;
        // No block twice within one pass over a range (a whole range when the zone
        // covers it, else one zone's I/Os).
        for chunk in offs.chunks(per_zone.min(blocks)) {
            let distinct: std::collections::BTreeSet<_> = chunk.iter().collect();
            assert_eq!(
                distinct.len(),
                chunk.len(),
                "a block repeats: {chunk:?} of {offs:?}"
            );
        }
    }
}

#[test]
fn zone_options_need_their_mode() {
    let d = tmpdir();
    for (args, needle) in [
        (&["--zonesize=8k"][..], "zonesize': needs zonemode=strided"),
        (&["--zoneskip=8k"][..], "zoneskip': needs zonemode=strided"),
        (
            &["--zonemode=strided"][..],
            "zonemode=strided needs zonesize",
        ),
        (
            &["--zonemode=zbd"][..],
            "zonemode=zbd on data, which is not a zoned block device: specifying the zone \
             size is mandatory",
        ),
        (
            &["--zonemode=zbd", "--zonesize=16k", "--zoneskip=8k"][..],
            "zoneskip': 8192 is not a multiple of the zone size 16384",
        ),
    ] {
        let mut a = vec!["--name=z", "--filename=data", "--size=64k", "--parse-only"];
        a.extend_from_slice(args);
        let r = run_in(d.path(), &a);
        assert!(
            r.code != 0 && r.stderr.contains(needle),
            "{args:?}: {}",
            r.stderr
        );
    }
}
