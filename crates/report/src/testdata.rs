//! Synthetic results shaped like real fio runs, and tests that compare what the
//! writers print with fio 3.33's own output of such runs (captures in `testdata/`).

use ioscope_stats::merge::{group_results, merge_group};
use ioscope_stats::{
    DiskUtil, Histogram, JobInfo, JobResult, LatStat, LatTrack, PrioStat, RunMeta, RunResult,
    SampleStat,
};

/// Deterministic xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
    /// A latency in [lo, hi), with one in 200 ten to forty times longer.
    fn lat(&mut self, lo: u64, hi: u64) -> u64 {
        let v = self.range(lo, hi);
        if self.next() % 200 == 0 {
            v * self.range(10, 40)
        } else {
            v
        }
    }
}

/// How to fill one direction.
#[derive(Clone, Copy)]
struct Spec {
    n: u64,
    bs: u64,
    runtime_ms: u64,
    slat: Option<(u64, u64)>,
    clat: (u64, u64),
    /// Share (percent) of I/Os at RT priority, when priorities are tracked.
    prio_pct: Option<u64>,
    samples: usize,
}

fn info(engine: &str, rw: &str, iodepth: u32, sync: bool) -> JobInfo {
    JobInfo {
        rw: rw.into(),
        bs: [(4096, 4096); 3],
        ioengine: engine.into(),
        iodepth,
        sync_engine: sync,
        slat_enabled: !sync,
        clat_enabled: true,
        lat_enabled: true,
        clat_percentiles: true,
        kb_base: 1024,
        significant_figures: 4,
        options: vec![
            ("name".into(), "t".into()),
            ("ioengine".into(), engine.into()),
            ("rw".into(), rw.into()),
        ],
        ..Default::default()
    }
}

fn new_prio(ioprio: u16) -> PrioStat {
    PrioStat {
        ioprio,
        stat: LatStat::default(),
        hist: Histogram::new(),
    }
}

fn fill(job: &mut JobResult, dir: usize, s: Spec, rng: &mut Rng) {
    let info = job.info.clone();
    let d = &mut job.dirs[dir];
    d.slat = LatTrack::new(info.slat_percentiles);
    d.clat = LatTrack::new(info.clat_percentiles);
    d.lat = LatTrack::new(info.lat_percentiles);
    if s.prio_pct.is_some() {
        d.prios = vec![new_prio(0), new_prio(1 << 13)];
    }
    for _ in 0..s.n {
        let slat = s.slat.map(|(lo, hi)| rng.range(lo, hi)).unwrap_or(0);
        let clat = rng.lat(s.clat.0, s.clat.1);
        let lat = slat + clat + 30;
        if s.slat.is_some() {
            d.slat.add(slat);
        }
        d.clat.add(clat);
        d.lat.add(lat);
        if let Some(pct) = s.prio_pct {
            let i = usize::from(rng.range(0, 100) < pct);
            let v = if info.lat_percentiles { lat } else { clat };
            d.prios[i].stat.add(v);
            d.prios[i].hist.add(v);
        }
    }
    d.total_ios = s.n;
    d.io_bytes = s.n * s.bs;
    d.runtime_ms = s.runtime_ms;
    let kib = if s.runtime_ms > 0 {
        d.io_bytes as f64 * 1000.0 / s.runtime_ms as f64 / 1024.0
    } else {
        0.0
    };
    for i in 0..s.samples {
        let f = 0.95 + 0.05 * i as f64;
        d.bw.add(kib * f);
        d.iops.add(kib * f * 1024.0 / s.bs as f64);
    }
    job.io_depth[(info.iodepth.max(1).ilog2() as usize).min(6)] += s.n;
    job.submit[1] += s.n;
    job.complete[1] += s.n;
}

fn job(name: &str, info: JobInfo, specs: &[(usize, Spec)], seed: u64) -> JobResult {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut j = JobResult {
        name: name.into(),
        jobs: 1,
        pid: 4242,
        start_unix_ms: 1_795_238_519_402,
        elapsed_s: 2,
        info,
        ..Default::default()
    };
    let mut rt = 0;
    for &(dir, s) in specs {
        fill(&mut j, dir, s, &mut rng);
        rt = rt.max(s.runtime_ms);
    }
    j.runtime_ms = rt;
    j.cpu.usr_s = rt as f64 / 1000.0 * 0.04;
    j.cpu.sys_s = rt as f64 / 1000.0 * 0.41;
    j.cpu.ctx = 17603;
    j.cpu.minf = 21;
    j
}

fn run(jobs: Vec<JobResult>, disk: bool) -> RunResult {
    let groups = group_results(&jobs);
    RunResult {
        jobs,
        groups,
        disks: if disk {
            vec![DiskUtil {
                name: "vda".into(),
                read_ios: 71329,
                write_ios: 30397,
                read_ticks: 5797,
                write_ticks: 2424,
                in_queue: 8221,
                util: 74.68,
                ..Default::default()
            }]
        } else {
            Vec::new()
        },
        timestamp_ms: 1_795_238_519_402,
        global_options: Vec::new(),
        meta: RunMeta {
            ioscope_version: "0.1.0".into(),
            ..Default::default()
        },
    }
}

const NS: Spec = Spec {
    n: 2000,
    bs: 4096,
    runtime_ms: 2,
    slat: None,
    clat: (20, 60),
    prio_pct: None,
    samples: 0,
};

/// null engine, randrw, iodepth 1: ns latencies, no samples, no disk.
pub fn null_job(name: &str, seed: u64) -> JobResult {
    job(
        name,
        info("null", "randrw", 1, true),
        &[(0, NS), (1, NS)],
        seed,
    )
}

pub fn null_run() -> RunResult {
    run(vec![null_job("t", 1)], false)
}

/// psync randrw on a file: µs reads, fast writes, one sample each, one disk.
pub fn psync_run() -> RunResult {
    let r = Spec {
        n: 9757,
        runtime_ms: 1001,
        clat: (50_000, 300_000),
        samples: 1,
        ..NS
    };
    let w = Spec {
        n: 9734,
        runtime_ms: 1001,
        clat: (2_900, 20_000),
        samples: 1,
        ..NS
    };
    run(
        vec![job(
            "ps",
            info("psync", "randrw", 1, true),
            &[(0, r), (1, w)],
            2,
        )],
        true,
    )
}

/// libaio randrw iodepth 8 with slat and lat percentiles.
pub fn libaio_pct_run() -> RunResult {
    let mut i = info("libaio", "randrw", 8, false);
    i.slat_percentiles = true;
    i.lat_percentiles = true;
    let r = Spec {
        n: 7933,
        runtime_ms: 2001,
        slat: Some((3_000, 30_000)),
        clat: (30_000, 300_000),
        samples: 3,
        ..NS
    };
    let w = Spec { n: 3385, ..r };
    run(vec![job("randrw", i, &[(0, r), (1, w)], 3)], true)
}

/// libaio with cmdprio_percentage=30: two priorities; `lat` tracks them on total
/// latency (lat_percentiles=1, also slat percentiles), else on clat.
pub fn prio_run(lat: bool, rw: bool) -> RunResult {
    let mut i = info("libaio", if rw { "randrw" } else { "randread" }, 8, false);
    i.lat_percentiles = lat;
    i.slat_percentiles = lat;
    i.options.push(("cmdprio_percentage".into(), "30".into()));
    let r = Spec {
        n: 14855,
        runtime_ms: 1001,
        slat: Some((3_000, 30_000)),
        clat: (60_000, 500_000),
        prio_pct: Some(30),
        samples: 2,
        ..NS
    };
    let specs: Vec<(usize, Spec)> = if rw {
        vec![(0, r), (1, r)]
    } else {
        vec![(0, r)]
    };
    run(vec![job("pr", i, &specs, 4)], true)
}

/// Two null jobs merged with group_reporting.
pub fn group_run() -> RunResult {
    let merged = merge_group(&[null_job("g", 5), null_job("g", 6)]);
    run(vec![merged], false)
}

/// A job that did no I/O and failed.
pub fn failed_run() -> RunResult {
    let mut j = JobResult {
        name: "e".into(),
        jobs: 1,
        error: 28,
        error_text: Some("file:io_u.c:1876, func=io_u error, error=No space left on device".into()),
        info: info("psync", "write", 1, true),
        ..Default::default()
    };
    j.io_depth[0] = 1;
    j.submit[1] = 1;
    j.complete = [1, 1, 0, 0, 0, 0, 0];
    run(vec![j], false)
}

#[allow(dead_code)]
pub fn sample_stat(vals: &[f64]) -> SampleStat {
    let mut s = SampleStat::default();
    for &v in vals {
        s.add(v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{json, normal, terse};
    use serde_json::Value;

    fn normal(run: &RunResult) -> String {
        let mut s = String::new();
        normal::write_normal(run, &mut s);
        s
    }

    fn replace_between(s: &str, start: &str, end: &str, with: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find(start) {
            match rest[i..].find(end) {
                Some(j) => {
                    out.push_str(&rest[..i]);
                    out.push_str(with);
                    rest = &rest[i + j + end.len()..];
                }
                None => break,
            }
        }
        out.push_str(rest);
        out
    }

    /// What kind of line this is, with units, priorities and values taken out.
    fn kind(line: &str) -> String {
        if line.is_empty() {
            return "<blank>".into();
        }
        if line.starts_with("     |") {
            return "|".into();
        }
        if line.contains("(groupid=") {
            return "<job>".into();
        }
        if line.contains(": ios=") {
            return "<disk>".into();
        }
        let mut l = line.to_string();
        for u in ["(nsec)", "(usec)", "(msec)"] {
            l = l.replace(u, "(U)");
        }
        for b in ["(  KiB/s)", "(  MiB/s)", "(   kB/s)", "(   MB/s)"] {
            l = l.replace(b, "(bw)");
        }
        l = replace_between(&l, "prio ", " (", "prio C/L (");
        l = replace_between(&l, "(", "% of IOs)", "(P% of IOs)");
        let cut = l.find([':', '=']).map(|i| i + 1).unwrap_or(l.len());
        l[..cut].to_string()
    }

    /// Line kinds from the first job block on, consecutive repeats collapsed.
    fn kinds(text: &str) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        let start = text
            .find("(groupid=")
            .map(|i| text[..i].rfind('\n').map_or(0, |j| j + 1));
        let text = &text[start.unwrap_or(0)..];
        for line in text.lines() {
            let k = kind(line);
            if v.last() != Some(&k) {
                v.push(k);
            }
        }
        v
    }

    fn same_kinds(ours: &str, fio: &str) {
        let (a, b) = (kinds(ours), kinds(fio));
        assert_eq!(a, b, "\n--- ours:\n{ours}\n--- fio 3.33:\n{fio}");
    }

    #[test]
    fn normal_matches_fio_captures() {
        same_kinds(
            &normal(&psync_run()),
            include_str!("../testdata/fio333_psync_randrw.txt"),
        );
        same_kinds(
            &normal(&libaio_pct_run()),
            include_str!("../testdata/fio333_libaio_slat_lat_pct.txt"),
        );
        same_kinds(
            &normal(&prio_run(false, false)),
            include_str!("../testdata/fio333_cmdprio_read.txt"),
        );
        same_kinds(
            &normal(&prio_run(true, true)),
            include_str!("../testdata/fio333_libaio_latprio.txt"),
        );
        same_kinds(
            &normal(&group_run()),
            include_str!("../testdata/fio333_null_group2.txt"),
        );
        let mut r = null_run();
        r.jobs[0].info.continue_on_error = true;
        same_kinds(&normal(&r), include_str!("../testdata/fio333_null_coe.txt"));
    }

    #[test]
    fn normal_details() {
        let out = normal(&prio_run(false, false));
        assert!(
            out.starts_with("\npr: (groupid=0, jobs=1): err= 0: pid=4242: "),
            "{out}"
        );
        assert!(out.contains("    clat prio 0/0/0 ("), "{out}");
        assert!(out.contains("    clat prio 1/0/0 ("), "{out}");
        assert!(out.contains("% of IOs) percentiles ("), "{out}");
        assert!(out.contains("\n   READ: bw="), "{out}");
        assert!(out.contains(
            "  vda: ios=71329/30397, sectors=0/0, merge=0/0, ticks=5797/2424, in_queue=8221, util=74.68%\n"
        ));
        let g = normal(&group_run());
        assert!(g.contains("(groupid=0, jobs=2)"), "{g}");
        assert!(
            g.contains("issued rwts: total=4000,4000,0,0 short=0,0,0,0 dropped=0,0,0,0"),
            "{g}"
        );
        // Failed job without I/O: like fio, only the job line and the job-wide lines.
        let f = normal(&failed_run());
        assert!(f.contains(
            "err=28 (file:io_u.c:1876, func=io_u error, error=No space left on device): pid=0"
        ));
        assert!(!f.contains("IOPS="), "{f}");
        assert!(
            f.contains("     complete  : 0=50.0%, 4=50.0%, 8=0.0%"),
            "{f}"
        );
        assert!(f.ends_with("Run status group 0 (all jobs):\n"), "{f}");
        // Description and unified reporting.
        let mut r = null_run();
        r.jobs[0].info.description = Some("hello".into());
        r.jobs[0].info.unified_rw_reporting = 1;
        let m = normal(&r);
        assert!(
            m.contains("\n  Description  : [hello]\n  mixed: IOPS="),
            "{m}"
        );
        assert!(m.contains("issued rwts: total=4000,0,0,0"), "{m}");
        assert!(m.contains("\n  MIXED: bw="), "{m}");
        assert!(!m.contains("READ"), "{m}");
        r.jobs[0].info.unified_rw_reporting = 2;
        let b = normal(&r);
        for l in [
            "\n  read: IOPS=",
            "\n  write: IOPS=",
            "\n  mixed: IOPS=",
            "\n   READ:",
            "\n  WRITE:",
            "\n  MIXED:",
        ] {
            assert!(b.contains(l), "{l} in {b}");
        }
    }

    #[test]
    fn header_line() {
        let mut i = info("libaio", "randrw", 8, false);
        assert_eq!(
            normal::job_header_line(&i, "randrw", 0),
            "randrw: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=8"
        );
        i.bs = [(131072, 131072), (16384, 16384), (512, 1048576)];
        assert_eq!(
            normal::job_header_line(&i, "x", 3),
            "x: (g=3): rw=randrw, bs=(R) 128KiB-128KiB, (W) 16.0KiB-16.0KiB, (T) 512B-1024KiB, ioengine=libaio, iodepth=8"
        );
        // kb_base=1000 (fio: --kb_base=1000 --bs=16k,8k).
        i.kb_base = 1000;
        i.bs = [(16000, 16000), (8000, 8000), (8000, 8000)];
        assert!(
            normal::job_header_line(&i, "k", 0).contains("bs=(R) 16.0kB-16.0kB, (W) 8000B-8000B")
        );
        // A job that sets its priority shows it; one that does not, prints as fio does.
        assert!(!normal::job_header_line(&i, "k", 0).contains("prio"));
        i.options = vec![("prio".into(), "3".into())];
        assert!(normal::job_header_line(&i, "k", 0).ends_with(", iodepth=8, prio=be/3"));
        i.options = vec![
            ("prioclass".into(), "1".into()),
            ("prio".into(), "0".into()),
        ];
        assert!(normal::job_header_line(&i, "k", 0).ends_with(", prio=rt/0"));
        i.options = vec![("prioclass".into(), "3".into())];
        assert!(normal::job_header_line(&i, "k", 0).ends_with(", prio=idle/4"));
    }

    fn terse(run: &RunResult, v: u32) -> String {
        let mut s = String::new();
        terse::write_terse(run, v, &mut s);
        s
    }

    fn nfields(line: &str) -> usize {
        line.split(';').count()
    }

    #[test]
    fn terse_field_counts_match_fio() {
        // Counted on fio 3.33 output: null engine (no disk) and psync on a file (one disk).
        let null = null_run();
        let disk = psync_run();
        for (v, diskless, with_disk) in [(2, 161, 161), (3, 121, 130), (4, 162, 171), (5, 180, 189)]
        {
            let t = terse(&null, v);
            assert_eq!(t.lines().count(), 1);
            assert_eq!(nfields(t.trim_end()), diskless, "v{v} diskless: {t}");
            assert_eq!(nfields(terse(&disk, v).trim_end()), with_disk, "v{v} disk");
        }
        // unified_rw_reporting=mixed and =both.
        for (mode, counts) in [(1, [79, 80, 80, 86]), (2, [202, 162, 203, 227])] {
            let mut r = null_run();
            r.jobs[0].info.unified_rw_reporting = mode;
            for (v, n) in (2..=5).zip(counts) {
                assert_eq!(nfields(terse(&r, v).trim_end()), n, "mode {mode} v{v}");
            }
        }
        // continue_on_error adds total_err;first_error, a description one field
        // (v2: on a line of its own).
        let mut r = null_run();
        r.jobs[0].info.continue_on_error = true;
        assert_eq!(nfields(terse(&r, 3).trim_end()), 123);
        assert_eq!(nfields(terse(&r, 2).trim_end()), 163);
        r.jobs[0].info.description = Some("my desc".into());
        assert!(terse(&r, 3).trim_end().ends_with(";0;0;my desc"));
        assert_eq!(nfields(terse(&r, 3).trim_end()), 124);
        let mut r = null_run();
        r.jobs[0].info.description = Some("hello".into());
        for (v, n) in [(3, 122), (4, 163), (5, 181)] {
            assert_eq!(nfields(terse(&r, v).trim_end()), n, "desc v{v}");
        }
        let t2 = terse(&r, 2);
        let lines: Vec<&str> = t2.lines().collect();
        assert_eq!(
            (lines.len(), nfields(lines[0]), lines[1]),
            (2, 161, ";hello")
        );
        // Group of two, failed job: still one line each, right count.
        assert_eq!(nfields(terse(&group_run(), 3).trim_end()), 121);
        assert_eq!(nfields(terse(&failed_run(), 3).trim_end()), 121);
    }

    /// Class of a terse field, for comparing layouts.
    fn class(f: &str) -> &'static str {
        if f.contains("%=") {
            "pct="
        } else if f.ends_with('%') {
            "pct"
        } else if f.parse::<u64>().is_ok() {
            "int"
        } else if f.parse::<f64>().is_ok() {
            "float"
        } else {
            "str"
        }
    }

    #[test]
    fn terse_fields_line_up_with_fio() {
        for v in 2..=5 {
            let pairs = [
                (
                    psync_run(),
                    match v {
                        2 => include_str!("../testdata/fio333_psync_terse_v2.txt"),
                        3 => include_str!("../testdata/fio333_psync_terse_v3.txt"),
                        4 => include_str!("../testdata/fio333_psync_terse_v4.txt"),
                        _ => include_str!("../testdata/fio333_psync_terse_v5.txt"),
                    },
                ),
                (
                    null_run(),
                    match v {
                        2 => include_str!("../testdata/fio333_null_terse_v2.txt"),
                        3 => include_str!("../testdata/fio333_null_terse_v3.txt"),
                        4 => include_str!("../testdata/fio333_null_terse_v4.txt"),
                        _ => include_str!("../testdata/fio333_null_terse_v5.txt"),
                    },
                ),
            ];
            for (r, fio) in pairs {
                let ours = terse(&r, v);
                let a: Vec<&str> = ours.trim_end().split(';').map(class).collect();
                let b: Vec<&str> = fio.trim_end().split(';').map(class).collect();
                assert_eq!(a.len(), b.len(), "v{v}");
                for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                    // A name made of digits, or a float field printed as an integer, is fine.
                    let ok =
                        x == y || (*x == "int" && *y == "float") || (*x == "float" && *y == "int");
                    assert!(ok, "v{v} field {}: ours {x} fio {y}\n{ours}\n{fio}", i + 1);
                }
            }
        }
        let t = terse(&psync_run(), 3);
        assert!(t.starts_with("3;ioscope-0.1.0;ps;0;0;"), "{t}");
        assert!(
            t.trim_end()
                .ends_with(";vda;71329;30397;0;0;5797;2424;8221;74.68%"),
            "{t}"
        );
    }

    fn json(run: &RunResult, plus: bool) -> Value {
        let mut s = String::new();
        json::write_json(run, plus, &mut s);
        assert!(s.starts_with("{\n"));
        assert!(s.ends_with("\n}\n"));
        match serde_json::from_str(&s) {
            Ok(v) => v,
            Err(e) => panic!("invalid JSON ({e}):\n{s}"),
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    // Key sets of fio 3.42's JSON: fio 3.33's from real runs (psync/libaio/null engines)
    // plus the keys 3.42 added (`as_342`).
    const TOP: [&str; 6] = [
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "jobs",
        "disk_util",
    ];
    const JOB: [&str; 29] = [
        "jobname",
        "groupid",
        "job_start",
        "error",
        "eta",
        "elapsed",
        "job options",
        "read",
        "write",
        "trim",
        "sync",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "majf",
        "minf",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
        "latency_depth",
        "latency_target",
        "latency_target_ns",
        "latency_percentile",
        "latency_window",
        "latency_window_us",
    ];
    const DIR: [&str; 23] = [
        "io_bytes",
        "io_kbytes",
        "bw_bytes",
        "bw",
        "iops",
        "runtime",
        "total_ios",
        "short_ios",
        "drop_ios",
        "slat_ns",
        "clat_ns",
        "lat_ns",
        "bw_min",
        "bw_max",
        "bw_agg",
        "bw_mean",
        "bw_dev",
        "bw_samples",
        "iops_min",
        "iops_max",
        "iops_mean",
        "iops_stddev",
        "iops_samples",
    ];
    const LAT: [&str; 5] = ["min", "max", "mean", "stddev", "N"];
    const DISK: [&str; 11] = [
        "name",
        "read_ios",
        "write_ios",
        "read_sectors",
        "write_sectors",
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
        "util",
    ];
    const DEPTH: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCH: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    const LAT_NS: [&str; 10] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    const LAT_MS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];

    fn with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    }

    #[test]
    fn json_keys_match_fio() {
        let v = json(&psync_run(), false);
        assert_eq!(keys(&v), with(&TOP, &["ioscope"]));
        assert_eq!(v["fio version"], "ioscope-0.1.0");
        let j = &v["jobs"][0];
        assert_eq!(keys(j), JOB);
        for d in ["read", "write", "trim"] {
            assert_eq!(keys(&j[d]), DIR, "{d}");
            assert_eq!(keys(&j[d]["slat_ns"]), LAT);
            assert_eq!(keys(&j[d]["lat_ns"]), LAT);
        }
        assert_eq!(keys(&j["read"]["clat_ns"]), with(&LAT, &["percentile"]));
        assert_eq!(
            keys(&j["trim"]["clat_ns"]),
            LAT,
            "no percentiles without samples"
        );
        assert_eq!(keys(&j["sync"]), ["total_ios", "lat_ns"]);
        assert_eq!(keys(&j["sync"]["lat_ns"]), LAT);
        assert_eq!(keys(&j["iodepth_level"]), DEPTH);
        assert_eq!(keys(&j["iodepth_submit"]), BATCH);
        assert_eq!(keys(&j["iodepth_complete"]), BATCH);
        assert_eq!(keys(&j["latency_ns"]), LAT_NS);
        assert_eq!(keys(&j["latency_us"]), LAT_NS);
        assert_eq!(keys(&j["latency_ms"]), LAT_MS);
        assert_eq!(keys(&v["disk_util"][0]), DISK);
        assert_eq!(keys(&j["read"]["clat_ns"]["percentile"]).len(), 17);
        assert_eq!(keys(&j["read"]["clat_ns"]["percentile"])[0], "1.000000");

        // Diskless: no disk_util.
        let v = json(&null_run(), false);
        assert_eq!(
            keys(&v),
            [
                "fio version",
                "timestamp",
                "timestamp_ms",
                "time",
                "jobs",
                "ioscope"
            ]
        );

        // json+ with slat/lat percentiles and two priorities tracked on lat.
        let v = json(&prio_run(true, true), true);
        let r = &v["jobs"][0]["read"];
        let dir_prios: Vec<&str> = DIR[..12]
            .iter()
            .chain(&["prios"])
            .chain(&DIR[12..])
            .copied()
            .collect();
        assert_eq!(keys(r), dir_prios);
        for l in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(keys(&r[l]), with(&LAT, &["percentile", "bins"]), "{l}");
        }
        assert_eq!(
            keys(&r["prios"][0]),
            ["prioclass", "prio", "priohint", "lat_ns"]
        );
        assert_eq!(
            keys(&r["prios"][0]["lat_ns"]),
            with(&LAT, &["percentile", "bins"])
        );
        let v = json(&prio_run(false, true), false);
        assert_eq!(
            keys(&v["jobs"][0]["write"]["prios"][1]),
            ["prioclass", "prio", "priohint", "clat_ns"]
        );
        assert_eq!(
            keys(&v["jobs"][0]["write"]["prios"][1]["clat_ns"]),
            with(&LAT, &["percentile"])
        );

        // continue_on_error, description, global options.
        let mut r = null_run();
        r.jobs[0].info.continue_on_error = true;
        r.jobs[0].info.description = Some("hello".into());
        r.global_options = vec![("bs".into(), "4k".into())];
        let v = json(&r, false);
        assert_eq!(
            keys(&v),
            [
                "fio version",
                "timestamp",
                "timestamp_ms",
                "time",
                "global options",
                "jobs",
                "ioscope"
            ]
        );
        let mut job = JOB.to_vec();
        job.splice(23..23, ["total_err", "first_error"]);
        job.push("desc");
        assert_eq!(keys(&v["jobs"][0]), job);

        // unified_rw_reporting: mixed replaces read/write/trim/sync, both appends it.
        let mut r = null_run();
        r.jobs[0].info.unified_rw_reporting = 1;
        let v = json(&r, false);
        let mut job: Vec<&str> = JOB.to_vec();
        job.splice(7..11, ["mixed"]);
        assert_eq!(keys(&v["jobs"][0]), job);
        assert_eq!(keys(&v["jobs"][0]["mixed"]), DIR);
        assert_eq!(v["jobs"][0]["mixed"]["total_ios"], 4000);
        r.jobs[0].info.unified_rw_reporting = 2;
        let v = json(&r, false);
        let mut job: Vec<&str> = JOB.to_vec();
        job.insert(11, "mixed");
        assert_eq!(keys(&v["jobs"][0]), job);
    }

    /// (path, ordered keys) of every object, numeric-keyed maps and job options skipped.
    fn shape(v: &Value, path: &str, out: &mut Vec<(String, Vec<String>)>) {
        match v {
            Value::Object(o) => {
                out.push((path.to_string(), o.keys().cloned().collect()));
                for (k, e) in o {
                    if ["percentile", "bins", "job options", "ioscope"].contains(&k.as_str()) {
                        continue;
                    }
                    shape(e, &format!("{path}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, e) in a.iter().enumerate() {
                    shape(e, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    /// Insert `new` after `after` in an object, keeping the order.
    fn insert_after(o: &mut Value, after: &str, new: &str) {
        let Some(m) = o.as_object_mut() else { return };
        if !m.contains_key(after) {
            return;
        }
        let old = std::mem::take(m);
        for (k, v) in old {
            let hit = k == after;
            m.insert(k, v);
            if hit {
                m.insert(new.into(), Value::from(0));
            }
        }
    }

    /// A fio 3.33 document with the keys fio 3.42 added, where 3.42 puts them.
    fn as_342(mut fio: Value) -> Value {
        if let Some(jobs) = fio.get_mut("jobs").and_then(Value::as_array_mut) {
            for j in jobs {
                insert_after(j, "groupid", "job_start");
                insert_after(j, "latency_target", "latency_target_ns");
                insert_after(j, "latency_window", "latency_window_us");
                for d in ["read", "write", "trim"] {
                    if let Some(prios) = j.get_mut(d).and_then(|d| d.get_mut("prios")) {
                        for p in prios.as_array_mut().into_iter().flatten() {
                            insert_after(p, "prio", "priohint");
                        }
                    }
                }
            }
        }
        if let Some(disks) = fio.get_mut("disk_util").and_then(Value::as_array_mut) {
            for d in disks {
                insert_after(d, "write_ios", "read_sectors");
                insert_after(d, "read_sectors", "write_sectors");
            }
        }
        fio
    }

    fn same_shape(ours: &Value, fio: &str) {
        let fio = as_342(serde_json::from_str(fio).unwrap_or(Value::Null));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut ours = ours.clone();
        if let Some(o) = ours.as_object_mut() {
            o.shift_remove("ioscope");
        }
        shape(&ours, "", &mut a);
        shape(&fio, "", &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn json_shape_matches_fio_files() {
        // fio --ioengine=psync --rw=randrw --output-format=json+ on a file.
        same_shape(
            &json(&psync_run(), true),
            include_str!("../testdata/fio333_psync_jsonplus.json"),
        );
        // libaio randrw, cmdprio_percentage=30, plain json.
        same_shape(
            &json(&prio_run(false, true), false),
            include_str!("../testdata/fio333_libaio_cmdprio.json"),
        );
        // null engine randread, json+.
        let mut r = null_run();
        r.jobs[0].dirs[1] = Default::default();
        r.groups = group_results(&r.jobs);
        same_shape(
            &json(&r, true),
            include_str!("../testdata/fio333_null_jsonplus.json"),
        );
    }

    #[test]
    fn printer_reproduces_fio_layout() {
        for fio in [
            include_str!("../testdata/fio333_psync_jsonplus.json"),
            include_str!("../testdata/fio333_libaio_cmdprio.json"),
            include_str!("../testdata/fio333_null_jsonplus.json"),
        ] {
            let v: Value = serde_json::from_str(fio).unwrap_or(Value::Null);
            let mut s = String::new();
            json::print_value(&v, 0, &mut s);
            s.push('\n');
            assert_eq!(s, fio);
        }
    }

    #[test]
    fn jsonplus_bins_and_prios_add_up() {
        for r in [
            psync_run(),
            prio_run(true, true),
            prio_run(false, false),
            libaio_pct_run(),
            group_run(),
        ] {
            let v = json(&r, true);
            for (job, src) in v["jobs"].as_array().into_iter().flatten().zip(&r.jobs) {
                for (name, d) in ["read", "write", "trim"].iter().zip(&src.dirs) {
                    for l in ["slat_ns", "clat_ns", "lat_ns"] {
                        let o = &job[*name][l];
                        let n = o["N"].as_u64().unwrap_or(u64::MAX);
                        if let Some(bins) = o.get("bins").and_then(Value::as_object) {
                            let sum: u64 = bins.values().filter_map(Value::as_u64).sum();
                            assert_eq!(sum, n, "{name} {l}");
                            // Keys are fio bucket values, ascending.
                            let k: Vec<u64> = bins.keys().filter_map(|k| k.parse().ok()).collect();
                            assert!(k.windows(2).all(|w| w[0] < w[1]));
                        }
                    }
                    if let Some(prios) = job[*name].get("prios").and_then(Value::as_array) {
                        let key = if src.info.lat_percentiles {
                            "lat_ns"
                        } else {
                            "clat_ns"
                        };
                        let sum: u64 = prios.iter().filter_map(|p| p[key]["N"].as_u64()).sum();
                        assert_eq!(sum, job[*name][key]["N"].as_u64().unwrap_or(0));
                        assert_eq!(sum, d.total_ios);
                        let bins: u64 = prios
                            .iter()
                            .filter_map(|p| p[key]["bins"].as_object())
                            .flat_map(|b| b.values().filter_map(Value::as_u64))
                            .sum();
                        assert_eq!(bins, sum);
                    }
                }
            }
        }
    }

    #[test]
    fn empty_and_degenerate_runs_do_not_panic() {
        let runs = [RunResult::default(), failed_run(), {
            let mut r = psync_run();
            r.groups.clear();
            r.jobs[0].runtime_ms = 0;
            for d in r.jobs[0].dirs.iter_mut() {
                d.runtime_ms = 0;
            }
            r.disks[0].util = f64::NAN;
            r
        }];
        for r in runs {
            for f in [
                vec![crate::OutputFormat::Normal],
                vec![crate::OutputFormat::Terse],
                vec![crate::OutputFormat::JsonPlus],
            ] {
                for v in 2..=5 {
                    let s = crate::run::render(&r, &f, v);
                    if f[0] == crate::OutputFormat::JsonPlus {
                        assert!(serde_json::from_str::<Value>(&s).is_ok(), "{s}");
                    }
                }
            }
        }
        let v = json(&failed_run(), true);
        assert_eq!(v["jobs"][0]["error"], 28);
        assert_eq!(v["jobs"][0]["write"]["clat_ns"]["min"], 0);
    }

    #[test]
    fn render_order_is_fios() {
        use crate::formats::OutputFormat::*;
        let r = null_run();
        let s = crate::run::render(&r, &[Normal, Json, Terse], 3);
        let t = s.find("3;ioscope").unwrap_or(usize::MAX);
        let j = s.find("{\n").unwrap_or(usize::MAX);
        let n = s.find("\n\nt: (groupid=").unwrap_or(usize::MAX);
        assert!(t == 0 && t < j && j < n, "{s}");
        assert!(s.contains("\n}\n\nt: (groupid="));
        let s = crate::run::render(&r, &[Json, JsonPlus], 3);
        assert!(s.contains("\"bins\""));
        assert_eq!(s.matches("\"fio version\"").count(), 1);
    }
}
