//! fio's terse (`--minimal`, `--output-format=terse`) output, versions 2 to 5.
//!
//! One `;`-separated line per reported job. Field layout (fio 3.33, measured):
//! - v2: `2;name;groupid;error`, then read, write, trim blocks of 41 fields;
//!   no disk fields; a description goes on its own line as `;desc`.
//! - v3 (default): `3;version;name;groupid;error`, read and write blocks, disk fields.
//! - v4: as v3 plus a trim block.
//! - v5: as v4 with 47 fields per block (bw samples, IOPS min/max/mean/stdev/samples).
//!
//! Then cpu (5), IO depths (7), latency µs (10) and ms (12) shares, per disk 9 fields
//! (v3+), `total_err;first_error` with continue_on_error, and the description.
//! unified_rw_reporting=mixed prints one mixed block; `both` adds it after the others.

use crate::calc::{self, DirKind};
use ioscope_stats::{DirStats, JobResult, RunResult};

/// Write one terse line per job. Versions other than 2, 4 and 5 print version 3.
pub fn write_terse(run: &RunResult, version: u32, out: &mut String) {
    let version = match version {
        2 | 4 | 5 => version,
        _ => 3,
    };
    for job in &run.jobs {
        write_job(run, job, version, out);
    }
}

fn us(ns: u64) -> u64 {
    ns / 1000
}

fn f6(v: f64) -> String {
    format!("{:.6}", if v.is_finite() { v } else { 0.0 })
}

fn lat_fields(f: &mut Vec<String>, s: &ioscope_stats::LatStat) {
    f.push(us(s.min()).to_string());
    f.push(us(s.max).to_string());
    f.push(f6(s.mean() / 1000.0));
    f.push(f6(s.stddev() / 1000.0));
}

fn dir_fields(
    run: &RunResult,
    job: &JobResult,
    kind: DirKind,
    d: &DirStats,
    v5: bool,
    f: &mut Vec<String>,
) {
    let info = &job.info;
    f.push((d.io_bytes >> 10).to_string());
    f.push((calc::bw_bytes(d) / 1024).to_string());
    f.push(calc::iops_int(d).to_string());
    f.push(calc::runtime(d).to_string());
    lat_fields(f, &d.slat.stat);
    lat_fields(f, &d.clat.stat);
    // Percentiles: of lat with lat_percentiles, else of clat, else none.
    let list = calc::percentile_list(info);
    let src = if info.lat_percentiles {
        Some(&d.lat)
    } else if info.clat_percentiles {
        Some(&d.clat)
    } else {
        None
    };
    let mut n = 0;
    if let Some(t) = src.filter(|t| t.hist.is_some()) {
        let vals = t
            .hist
            .as_ref()
            .and_then(|h| calc::percentiles(h, &list))
            .unwrap_or_else(|| list.iter().map(|&p| (p, 0)).collect());
        for (p, v) in vals {
            f.push(format!("{}%={}", f6(p), us(v)));
            n += 1;
        }
    }
    for _ in n..calc::MAX_PERCENTILES {
        f.push("0%=0".to_string());
    }
    lat_fields(f, &d.lat.stat);
    let bw = &d.bw;
    let agg = calc::group_agg(run, job.groupid, kind);
    f.push((bw.min as u64).to_string());
    f.push((bw.max as u64).to_string());
    f.push(format!("{}%", f6(crate::num::bw_agg_pct(bw, agg))));
    f.push(f6(bw.mean));
    f.push(f6(bw.stddev()));
    if v5 {
        f.push(bw.n.to_string());
        let io = &d.iops;
        f.push((io.min as u64).to_string());
        f.push((io.max as u64).to_string());
        f.push(f6(io.mean));
        f.push(f6(io.stddev()));
        f.push(io.n.to_string());
    }
}

/// The directions of one terse line, per version and unified_rw_reporting.
fn terse_dirs(job: &JobResult, version: u32) -> Vec<(DirKind, std::borrow::Cow<'_, DirStats>)> {
    calc::report_dirs(job)
        .into_iter()
        .filter(|(k, _)| !(version == 3 && *k == DirKind::Trim))
        .collect()
}

fn write_job(run: &RunResult, job: &JobResult, version: u32, out: &mut String) {
    let mut f: Vec<String> = Vec::with_capacity(200);
    f.push(version.to_string());
    if version != 2 {
        f.push(crate::formats::version_string(run));
    }
    f.push(job.name.clone());
    f.push(job.groupid.to_string());
    f.push(job.error.to_string());
    for (kind, d) in terse_dirs(job, version) {
        dir_fields(run, job, kind, &d, version == 5, &mut f);
    }
    let (usr, sys) = calc::cpu_pct(job);
    f.push(format!("{}%", f6(usr)));
    f.push(format!("{}%", f6(sys)));
    f.push(job.cpu.ctx.to_string());
    f.push(job.cpu.majf.to_string());
    f.push(job.cpu.minf.to_string());
    for p in calc::depth_pct(&job.io_depth) {
        f.push(format!("{p:3.1}%"));
    }
    let b = calc::lat_buckets(&job.clat_all());
    // The ns buckets are all below 2 µs: they count in the first µs field.
    let mut us_counts = b.counts_us;
    us_counts[0] += b.counts_ns.iter().sum::<u64>();
    for p in calc::dist_pct(&us_counts, b.total, 0.01) {
        f.push(format!("{p:3.2}%"));
    }
    for p in &b.ms {
        f.push(format!("{p:3.2}%"));
    }
    if version >= 3 {
        for d in &run.disks {
            f.push(d.name.clone());
            f.push(d.read_ios.to_string());
            f.push(d.write_ios.to_string());
            f.push(d.read_merges.to_string());
            f.push(d.write_merges.to_string());
            f.push(d.read_ticks.to_string());
            f.push(d.write_ticks.to_string());
            f.push(d.in_queue.to_string());
            f.push(format!(
                "{:3.2}%",
                if d.util.is_finite() { d.util } else { 0.0 }
            ));
        }
    }
    if job.info.continue_on_error {
        f.push(job.total_err.to_string());
        f.push(job.first_error.to_string());
    }
    out.push_str(&f.join(";"));
    if let Some(desc) = job.info.description.as_deref().filter(|d| !d.is_empty()) {
        if version == 2 {
            out.push('\n');
        }
        out.push(';');
        out.push_str(desc);
    }
    out.push('\n');
}
