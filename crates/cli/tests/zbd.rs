//! zonemode=zbd over regular files, where zones are emulated (zonesize, zonecapacity),
//! run side by side with fio 3.42 on the same jobs: the same bytes, I/O counts and zone
//! resets in the JSON, and the same blocks written in the file (read back outside both
//! programs). Zoned block devices are tested in the rig (`rig::guest`).

use crate::common::*;
use std::path::Path;

/// Which 4 KiB blocks of `file` hold data (the file starts as zeros).
fn written(file: &Path) -> Vec<bool> {
    let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    data.chunks(4096)
        .map(|c| c.iter().any(|&b| b != 0))
        .collect()
}

/// The written blocks as runs "start-end" (in KiB), for messages.
fn runs(map: &[bool]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < map.len() {
        if map[i] {
            let s = i;
            while i < map.len() && map[i] {
                i += 1;
            }
            out.push(format!("{}-{}k", s * 4, i * 4));
        }
        i += 1;
    }
    out.join(" ")
}

/// What one program did: (write io_bytes, write total_ios, zone_resets, blocks written).
type Did = (u64, u64, u64, Vec<bool>);

/// Run `prog` on a new zeroed file of `size` with zonemode=zbd and `extra`.
fn zbd_run(prog: &Path, dir: &Path, size: &str, extra: &[&str]) -> Did {
    let file = dir.join("zoned");
    let _ = std::fs::remove_file(&file);
    assert!(sh(&format!("truncate -s {size} {}", file.display())).is_some());
    let size_arg = format!("--size={size}");
    let mut args = vec![
        "--name=z",
        "--filename=zoned",
        "--zonemode=zbd",
        "--ioengine=psync",
        "--output-format=json",
        &size_arg,
    ];
    args.extend_from_slice(extra);
    let r = run_tool(prog, dir, &args, &[]);
    assert_eq!(r.code, 0, "{} {extra:?}: {}", prog.display(), r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{} {extra:?}: {e}: {}", prog.display(), r.stdout));
    let j = &v["jobs"][0];
    (
        u(&j["write"]["io_bytes"]),
        u(&j["write"]["total_ios"]),
        u(&j["zone_resets"]),
        written(&file),
    )
}

/// Emulated zones of 1 MiB on a file, each case run by fio 3.42 and by ioscope; the
/// figures on the right are fio's (and so ioscope's):
/// - zonecapacity 768k: a sequential job writes the first 768k of each zone and ends
///   at the end of the region (3 MiB of 4); `loops=2` comes back, resetting each zone;
/// - zonecapacity 100k, bs 64k: one write per zone, whose remainder is finished;
///   `write_zone_remainder=1` writes the 36k left with a shorter write;
/// - random writes with the random map: 16 draws per zone of 12 blocks, so each zone
///   fills and is reset once;
/// - zone_reset_threshold/frequency: once 61 of 128 blocks hold data, every 4th write
///   resets the zone it goes to (the first countdown ends in an empty zone);
/// - the same with zonecapacity 768k and io_size twice the region: once 2 MiB of the
///   3 MiB the zones take hold data (zones 0 and 1 full, 512k in zone 2), every write
///   resets zone 2 again, 12 times for 128 writes; the job stays in zone 2, as it never
///   reaches the region's end (a pass ends there, not after 4 MiB of writes).
#[test]
fn emulated_zones_follow_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    // (file size, options, (bytes, I/Os, resets)).
    type Case<'a> = (&'a str, &'a [&'a str], (u64, u64, u64));
    let cases: &[Case] = &[
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=768k",
                "--rw=write",
                "--bs=64k",
            ],
            (3 << 20, 48, 0),
        ),
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=768k",
                "--rw=write",
                "--bs=64k",
                "--loops=2",
            ],
            (6 << 20, 96, 4),
        ),
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=100k",
                "--rw=write",
                "--bs=64k",
            ],
            (256 << 10, 4, 0),
        ),
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=100k",
                "--rw=write",
                "--bs=64k",
                "--write_zone_remainder=1",
            ],
            (400 << 10, 8, 0),
        ),
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=768k",
                "--rw=randwrite",
                "--bs=64k",
            ],
            (4 << 20, 64, 4),
        ),
        (
            "8m",
            &[
                "--zonesize=1m",
                "--rw=write",
                "--bs=64k",
                "--zone_reset_threshold=0.4765625",
                "--zone_reset_frequency=0.25",
            ],
            (8 << 20, 128, 15),
        ),
        (
            "4m",
            &[
                "--zonesize=1m",
                "--zonecapacity=768k",
                "--rw=write",
                "--bs=64k",
                "--io_size=8m",
                "--zone_reset_threshold=0.5",
                "--zone_reset_frequency=1",
            ],
            (8 << 20, 128, 12),
        ),
    ];
    for (size, extra, want) in cases {
        let fio = zbd_run(&fio342_path(), d.path(), size, extra);
        let ours = zbd_run(&bin(), d.path(), size, extra);
        assert_eq!((fio.0, fio.1, fio.2), *want, "fio 3.42 {extra:?}");
        assert_eq!((ours.0, ours.1, ours.2), *want, "ioscope {extra:?}");
        assert_eq!(
            runs(&ours.3),
            runs(&fio.3),
            "{extra:?}: blocks written (ioscope, then fio)"
        );
    }
}

/// What several jobs did: (write io_bytes, read io_bytes, zone_resets), summed over
/// them, and the blocks written.
fn jobs_run(prog: &Path, dir: &Path, extra: &[&str]) -> ((u64, u64, u64), Vec<bool>) {
    let file = dir.join("zoned");
    let _ = std::fs::remove_file(&file);
    assert!(sh(&format!("truncate -s 8m {}", file.display())).is_some());
    let mut args = vec![
        "--name=z",
        "--filename=zoned",
        "--zonemode=zbd",
        "--zonesize=1m",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let r = run_tool(prog, dir, &args, &[]);
    assert_eq!(r.code, 0, "{} {extra:?}: {}", prog.display(), r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{} {extra:?}: {e}: {}", prog.display(), r.stdout));
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2, "{} {extra:?}", prog.display());
    let sum = |f: &dyn Fn(&serde_json::Value) -> u64| jobs.iter().map(f).sum::<u64>();
    let did = (
        sum(&|j| u(&j["write"]["io_bytes"])),
        sum(&|j| u(&j["read"]["io_bytes"])),
        sum(&|j| u(&j["zone_resets"])),
    );
    (did, written(&file))
}

/// Zones with data (of 1 MiB: 256 blocks of 4 KiB).
fn zones_written(map: &[bool]) -> usize {
    map.chunks(256).filter(|z| z.iter().any(|&b| b)).count()
}

/// Two jobs on one file of emulated zones share its zones, as in fio 3.42, each case
/// run by both (figures are fio's, and so ioscope's, whatever the order the two jobs'
/// writes interleave in):
/// - both writing the same 4 zones sequentially, 12 MiB each: every write at a write
///   pointer, so the 24 MiB fill 24 zones' worth and the 20 beyond the first 4 each
///   reset a full zone;
/// - random writes, 2 zones open at most on the device: 2 zones hold the 200 writes
///   (none fills), where two jobs with zones of their own would open 4;
/// - each its own zones (offset_increment): 2 zones each, no resets;
/// - jobs that read and write turn their first reads into writes (every zone is empty
///   at first): they do their 100 I/Os each instead of ending at once.
#[test]
fn jobs_sharing_emulated_zones_as_with_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let seq = [
        "--numjobs=2",
        "--size=4m",
        "--io_size=12m",
        "--rw=write",
        "--bs=64k",
        "--ioengine=libaio",
        "--iodepth=4",
    ];
    let rand = [
        "--numjobs=2",
        "--rw=randwrite",
        "--bs=4k",
        "--number_ios=100",
        "--max_open_zones=2",
        "--ioengine=psync",
    ];
    let own = [
        "--numjobs=2",
        "--size=2m",
        "--offset_increment=2m",
        "--rw=write",
        "--bs=64k",
    ];
    let mixed = [
        "--numjobs=2",
        "--rw=randrw",
        "--bs=4k",
        "--number_ios=100",
        "--size=4m",
    ];
    for prog in [fio342_path(), bin()] {
        let who = prog.display().to_string();
        let (did, map) = jobs_run(&prog, d.path(), &seq);
        assert_eq!(did, (24 << 20, 0, 20), "{who} {seq:?}");
        assert_eq!(runs(&map), "0-4096k", "{who} {seq:?}");
        let (did, map) = jobs_run(&prog, d.path(), &rand);
        assert_eq!(did, (800 << 10, 0, 0), "{who} {rand:?}");
        assert_eq!(zones_written(&map), 2, "{who} {rand:?}: {}", runs(&map));
        assert_eq!(map.iter().filter(|&&b| b).count(), 200, "{who} {rand:?}");
        let (did, map) = jobs_run(&prog, d.path(), &own);
        assert_eq!(did, (4 << 20, 0, 0), "{who} {own:?}");
        assert_eq!(runs(&map), "0-4096k", "{who} {own:?}");
        let (did, _) = jobs_run(&prog, d.path(), &mixed);
        assert_eq!(did.0 + did.1, 200 * 4096, "{who} {mixed:?}");
        assert!(did.1 > 0, "{who} {mixed:?}: {did:?}");
    }
}

/// What fio refuses for zonemode=zbd on a file, ioscope refuses too, naming the option.
#[test]
fn emulated_zones_refuse_what_fio_refuses() {
    let d = tmpdir();
    assert!(sh(&format!("truncate -s 4m {}", d.path().join("f").display())).is_some());
    for (extra, says) in [
        (&["--rw=write"][..], "specifying the zone size is mandatory"),
        (
            &["--zonesize=1m", "--zonecapacity=2m"],
            "option 'zonecapacity': 2097152 is larger than the zone size 1048576",
        ),
        (
            &["--zonesize=1m", "--zone_reset_threshold=1.5"],
            "option 'zone_reset_threshold': 1.5 is out of range (0 to 1)",
        ),
    ] {
        let mut args = vec!["--name=z", "--filename=f", "--size=4m", "--zonemode=zbd"];
        args.extend_from_slice(extra);
        for parse_only in [false, true] {
            let mut a = args.clone();
            if parse_only {
                a.push("--parse-only");
            }
            let r = run_in(d.path(), &a);
            assert_eq!(r.code, 1, "{a:?}: {}", r.stderr);
            assert!(r.stderr.contains(says), "{a:?}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{a:?}: {}", r.stdout);
        }
    }
}

/// The zones a write_iolog's I/Os went to, in order, each run of I/Os in one zone
/// written once: "w0 w2 w4 w6 w0 …" (1 MiB zones).
fn zone_path(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut path: Vec<String> = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        // "<time> <file> <action> <offset> <length>"
        let (Some(act), Some(off)) = (f.get(2), f.get(3)) else {
            continue;
        };
        if !["read", "write", "trim"].contains(act) {
            continue;
        }
        let off: u64 = off.parse().expect("offset");
        let step = format!("{}{}", &act[..1], off >> 20);
        if path.last() != Some(&step) {
            path.push(step);
        }
    }
    path.join(" ")
}

/// Jobs run one after another (stonewall) on a new 8 MiB file of 1 MiB emulated zones,
/// 64k blocks: per job its (bytes written, read, trimmed, zone resets) and the zones it
/// went to.
fn skip_run(prog: &Path, dir: &Path, jobs: &[&[&str]]) -> Vec<((u64, u64, u64, u64), String)> {
    let file = dir.join("zoned");
    let _ = std::fs::remove_file(&file);
    assert!(sh(&format!("truncate -s 8m {}", file.display())).is_some());
    let mut args: Vec<String> = [
        "--filename=zoned",
        "--zonemode=zbd",
        "--zonesize=1m",
        "--size=8m",
        "--bs=64k",
        "--ioengine=psync",
        "--output-format=json",
    ]
    .map(String::from)
    .to_vec();
    for (n, job) in jobs.iter().enumerate() {
        // Both programs append to an iolog that exists.
        let _ = std::fs::remove_file(dir.join(format!("log{n}")));
        args.push(format!("--name=j{n}"));
        args.push(format!("--write_iolog=log{n}"));
        args.push("--stonewall".into());
        args.extend(job.iter().map(|s| s.to_string()));
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run_tool(prog, dir, &a, &[]);
    let who = format!("{} {jobs:?}", prog.display());
    assert_eq!(r.code, 0, "{who}: {}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{who}: {e}: {}", r.stdout));
    (0..jobs.len())
        .map(|n| {
            let j = &v["jobs"][n];
            let b = |d: &str| u(&j[d]["io_bytes"]);
            // Jobs that only read report no zone_resets (fio neither).
            let resets = j["zone_resets"].as_u64().unwrap_or(0);
            let did = (b("write"), b("read"), b("trim"), resets);
            (did, zone_path(&dir.join(format!("log{n}"))))
        })
        .collect()
}

/// zoneskip with zonemode=zbd, each case run by fio 3.42 and by ioscope (the figures are
/// fio's, and so ioscope's): a sequential job skips zoneskip bytes once it has written a
/// zone full, read all of a zone's data or trimmed it, and goes on from the region's
/// start past its end, until it has done its bytes — a zone it comes back to full is
/// reset. A zone finished with room left (capacity 100k, 64k writes) is not skipped
/// from; random jobs ignore zoneskip. Emulated zones keep their write pointers from one
/// job to the next, as fio's do: the readers read what the writers wrote.
#[test]
fn zoneskip_as_with_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    const M: u64 = 1 << 20;
    let twice = "w0 w2 w4 w6 w0 w2 w4 w6";
    type Case<'a> = (&'a [&'a [&'a str]], &'a [((u64, u64, u64, u64), &'a str)]);
    let cases: &[Case] = &[
        (
            &[&["--rw=write", "--zoneskip=1m"]],
            &[((8 * M, 0, 0, 4), twice)],
        ),
        (
            &[&["--rw=write", "--zoneskip=2m"]],
            &[((8 * M, 0, 0, 5), "w0 w3 w6 w0 w3 w6 w0 w3")],
        ),
        (
            &[&["--rw=write", "--zoneskip=1m", "--zonecapacity=768k"]],
            &[((8 * M, 0, 0, 7), "w0 w2 w4 w6 w0 w2 w4 w6 w0 w2 w4")],
        ),
        (
            &[&["--rw=write", "--zoneskip=1m", "--zonecapacity=100k"]],
            &[((M / 2, 0, 0, 0), "w0 w1 w2 w3 w4 w5 w6 w7")],
        ),
        (
            &[&["--rw=write", "--zoneskip=1m", "--loops=2"]],
            &[(
                (16 * M, 0, 0, 12),
                "w0 w2 w4 w6 w0 w2 w4 w6 w0 w2 w4 w6 w0 w2 w4 w6",
            )],
        ),
        (
            &[
                &["--rw=write", "--zoneskip=1m", "--io_size=2560k"],
                &["--rw=read", "--zoneskip=1m"],
            ],
            &[
                ((2560 << 10, 0, 0, 0), "w0 w2 w4"),
                ((0, 2560 << 10, 0, 0), "r0 r2 r4"),
            ],
        ),
        (
            &[
                &["--rw=write", "--io_size=4m"],
                &["--rw=read", "--zoneskip=1m"],
            ],
            &[
                ((4 * M, 0, 0, 0), "w0 w1 w2 w3"),
                ((0, 2 * M, 0, 0), "r0 r2"),
            ],
        ),
        (
            &[&["--rw=write"], &["--rw=trim", "--bs=1m", "--zoneskip=1m"]],
            &[
                ((8 * M, 0, 0, 0), "w0 w1 w2 w3 w4 w5 w6 w7"),
                ((0, 0, 8 * M, 4), "t0 t2 t4 t6 t0 t2 t4 t6"),
            ],
        ),
        (
            &[
                &["--rw=write", "--io_size=1m"],
                &["--rw=write", "--zoneskip=1m", "--io_size=3m"],
            ],
            &[((M, 0, 0, 0), "w0"), ((3 * M, 0, 0, 1), "w0 w2 w4")],
        ),
    ];
    for (jobs, want) in cases {
        for prog in [fio342_path(), bin()] {
            let did = skip_run(&prog, d.path(), jobs);
            let got: Vec<_> = did.iter().map(|(n, p)| (*n, p.as_str())).collect();
            assert_eq!(got, *want, "{} {jobs:?}", prog.display());
        }
    }
    let rand: &[&[&str]] = &[&["--rw=randwrite", "--zoneskip=1m"]];
    for prog in [fio342_path(), bin()] {
        let did = skip_run(&prog, d.path(), rand);
        assert_eq!(did[0].0, (8 * M, 0, 0, 0), "{}: randwrite", prog.display());
    }
    // A region that starts past the first zone: fio 3.42 aborts (an assertion in its
    // zone locking, skipping past the region's end); ioscope goes round the region's
    // zones 1-4 as it does round the whole file's.
    let off: &[&[&str]] = &[&["--rw=write", "--zoneskip=1m", "--offset=1m", "--size=4m"]];
    let did = skip_run(&bin(), d.path(), off);
    assert_eq!(did[0], ((4 * M, 0, 0, 2), "w1 w3 w1 w3".into()));
}

/// Trims are zone resets, alone or each followed by its write (trimwrite), as in fio
/// 3.42: jobs one after another (stonewall) on 8 emulated zones of 1 MiB, each job's
/// trims, writes and resets equal to fio's, which the list spells out:
/// - 5 zones written, then 3 random trims: each drawn in an empty zone goes to the
///   nearest zone with data, so 3 resets; a random trim job without a count then
///   resets the 2 zones left with data and ends (no zone has data to trim);
/// - 3 zones written again, then trimwrite twice over the 8 zones: 16 trims and 16
///   writes, 3 + 8 resets (the second pass finds every zone written by the first);
/// - 3 random trims: 3 resets.
#[test]
fn trims_and_trimwrite_as_with_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let job = "[global]\nfilename=zoned\nzonemode=zbd\nzonesize=1m\nioengine=psync\n\
               size=8m\nbs=1m\n\
               [w]\nrw=write\nsize=5m\n\
               [t]\nstonewall\nrw=randtrim\nnumber_ios=3\n\
               [t2]\nstonewall\nrw=randtrim\n\
               [w2]\nstonewall\nrw=write\nsize=3m\n\
               [tw]\nstonewall\nrw=trimwrite\nloops=2\n\
               [t3]\nstonewall\nrw=randtrim\nnumber_ios=3\n";
    std::fs::write(d.path().join("trims.fio"), job).expect("job file");
    const M: u64 = 1 << 20;
    // Per job: (trim io_bytes, trim I/Os, write io_bytes, write I/Os, zone_resets).
    let want: Vec<(u64, u64, u64, u64, u64)> = vec![
        (0, 0, 5 * M, 5, 0),
        (3 * M, 3, 0, 0, 3),
        (2 * M, 2, 0, 0, 2),
        (0, 0, 3 * M, 3, 0),
        (16 * M, 16, 16 * M, 16, 11),
        (3 * M, 3, 0, 0, 3),
    ];
    for prog in [fio342_path(), bin()] {
        let did: Vec<_> = job_file_run(&prog, d.path(), "trims.fio")
            .iter()
            .map(|j| {
                (
                    u(&j["trim"]["io_bytes"]),
                    u(&j["trim"]["total_ios"]),
                    u(&j["write"]["io_bytes"]),
                    u(&j["write"]["total_ios"]),
                    u(&j["zone_resets"]),
                )
            })
            .collect();
        assert_eq!(did, want, "{}", prog.display());
    }
}

/// Reads that come to the end of the data, as in fio 3.42: 2 MiB written over 8
/// emulated zones of 1 MiB, then (jobs stonewalled, figures in 64 KiB blocks, fio's
/// and so ioscope's) a sequential read with io_size=6m reads the 2 MiB three times
/// (each pass ends where the data ends, and io_size asks for more); without io_size it
/// reads them once; loops=2 twice; random reads with io_size=3m do 48 blocks.
#[test]
fn reads_past_the_data_start_a_new_pass_as_with_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let job = "[global]\nfilename=zoned\nzonemode=zbd\nzonesize=1m\nioengine=psync\n\
               size=8m\nbs=64k\n\
               [w]\nrw=write\nsize=2m\n\
               [r]\nstonewall\nrw=read\nio_size=6m\n\
               [r2]\nstonewall\nrw=read\n\
               [r3]\nstonewall\nrw=read\nloops=2\n\
               [rr]\nstonewall\nrw=randread\nio_size=3m\n";
    std::fs::write(d.path().join("reads.fio"), job).expect("job file");
    // Per job: (read blocks, write blocks).
    let want: Vec<(u64, u64)> = vec![(0, 32), (96, 0), (32, 0), (64, 0), (48, 0)];
    for prog in [fio342_path(), bin()] {
        let did: Vec<_> = job_file_run(&prog, d.path(), "reads.fio")
            .iter()
            .map(|j| {
                (
                    u(&j["read"]["io_bytes"]) >> 16,
                    u(&j["write"]["io_bytes"]) >> 16,
                )
            })
            .collect();
        assert_eq!(did, want, "{}", prog.display());
    }
}

/// Run `prog` on the job file `name` in `dir` over a new zeroed 8 MiB file `zoned`:
/// its jobs' JSON.
fn job_file_run(prog: &Path, dir: &Path, name: &str) -> Vec<serde_json::Value> {
    let file = dir.join("zoned");
    let _ = std::fs::remove_file(&file);
    assert!(sh(&format!("truncate -s 8m {}", file.display())).is_some());
    let r = run_tool(prog, dir, &[name, "--output-format=json"], &[]);
    assert_eq!(r.code, 0, "{}: {}", prog.display(), r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", prog.display(), r.stdout));
    v["jobs"].as_array().expect("jobs").clone()
}
