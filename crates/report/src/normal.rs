//! fio's normal (human-readable) output.

use crate::calc::{self, DirKind};
use crate::num::{self, Unit};
use ioscope_stats::{DirStats, GroupDir, JobInfo, JobResult, RunResult};

/// The line fio prints for each job before the run (without newline):
/// `NAME: (g=G): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=8`.
pub fn job_header_line(info: &JobInfo, name: &str, groupid: u32) -> String {
    let iec = num::kb_base(info.kb_base) == 1024;
    let bs = |i: usize| {
        let (lo, hi) = info.bs[i];
        format!(
            "{}-{}",
            num::num2str(lo, 4, iec, Unit::Byte),
            num::num2str(hi, 4, iec, Unit::Byte)
        )
    };
    let mut line = format!(
        "{name}: (g={groupid}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
        info.rw,
        bs(0),
        bs(1),
        bs(2),
        info.ioengine,
        info.iodepth
    );
    if let Some(p) = priority(info) {
        line.push_str(", prio=");
        line.push_str(&p);
    }
    line
}

/// `be/3` for a job that sets prio or prioclass (fio's header does not show them; with
/// several priorities in a run, which job has which is what the reader wants to know).
fn priority(info: &JobInfo) -> Option<String> {
    let opt = |k: &str| {
        info.options
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.trim())
    };
    let (class, level) = (opt("prioclass"), opt("prio"));
    if class.is_none() && level.is_none() {
        return None;
    }
    let class = match class {
        Some("1") | Some("rt") => "rt",
        Some("3") | Some("idle") => "idle",
        Some("0") | Some("none") => "none",
        _ => "be",
    };
    Some(format!("{class}/{}", level.unwrap_or("4")))
}

/// The time printed on each job's line and in JSON: the run's timestamp.
fn report_time(run: &RunResult) -> String {
    num::ctime(run.timestamp_ms)
}

/// Write the per-job blocks, the "Run status group" lines and the disk stats.
/// Starts with the blank line fio prints before the first job.
pub fn write_normal(run: &RunResult, out: &mut String) {
    out.push('\n');
    let when = report_time(run);
    for job in &run.jobs {
        write_job(run, job, &when, out);
    }
    for g in &run.groups {
        out.push_str(&format!("\nRun status group {} (all jobs):\n", g.groupid));
        let mode = run
            .jobs
            .iter()
            .find(|j| j.groupid == g.groupid)
            .map(calc::unified)
            .unwrap_or(0);
        let sig = run
            .jobs
            .iter()
            .find(|j| j.groupid == g.groupid)
            .map(|j| num::sig_figs(j.info.significant_figures))
            .unwrap_or(4);
        if mode != 1 {
            for (i, label) in ["READ", "WRITE", "TRIM"].iter().enumerate() {
                group_line(label, &g.dirs[i], sig, g.kb_base, g.unit_base, out);
            }
        }
        if mode != 0 {
            let m = calc::mixed_group(run, g.groupid);
            group_line("MIXED", &m, sig, g.kb_base, g.unit_base, out);
        }
    }
    if !run.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &run.disks {
            out.push_str(&format!(
                "  {}: ios={}/{}, sectors={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%\n",
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_sectors,
                d.write_sectors,
                d.read_merges,
                d.write_merges,
                d.read_ticks,
                d.write_ticks,
                d.in_queue,
                finite(d.util)
            ));
        }
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn group_line(label: &str, g: &GroupDir, sig: usize, kb: u32, unit_base: u32, out: &mut String) {
    if g.io_bytes == 0 {
        return;
    }
    let (agg, agg2) = num::bw_pair(g.agg_bw, sig, kb, unit_base);
    let (min, min2) = num::bw_pair(g.min_bw, sig, kb, unit_base);
    let (max, max2) = num::bw_pair(g.max_bw, sig, kb, unit_base);
    let (io, io2) = num::bytes_pair(g.io_bytes, sig, kb);
    out.push_str(&format!(
        "{label:>7}: bw={agg} ({agg2}), {min}-{max} ({min2}-{max2}), io={io} ({io2}), run={}-{}msec\n",
        g.min_run_ms, g.max_run_ms
    ));
}

fn write_job(run: &RunResult, job: &JobResult, when: &str, out: &mut String) {
    let info = &job.info;
    let err = if job.error != 0 {
        let text = job
            .error_text
            .clone()
            .unwrap_or_else(|| num::strerror(job.error));
        format!("{:2} ({text})", job.error)
    } else {
        format!("{:2}", job.error)
    };
    out.push_str(&format!(
        "{}: (groupid={}, jobs={}): err={err}: pid={}: {when}\n",
        job.name,
        job.groupid,
        job.jobs.max(1),
        job.pid
    ));
    if let Some(desc) = info.description.as_deref().filter(|d| !d.is_empty()) {
        out.push_str(&format!("  Description  : [{desc}]\n"));
    }
    for (kind, d) in calc::report_dirs(job) {
        if calc::has_io(&d) {
            write_dir(run, job, kind, &d, out);
        }
    }
    write_lat_buckets(job, out);
    write_sync(job, out);
    let (usr, sys) = calc::cpu_pct(job);
    out.push_str(&format!(
        "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf={}, minf={}\n",
        job.cpu.ctx, job.cpu.majf, job.cpu.minf
    ));
    let dist = |labels: &[&str], counts: &[u64; 7]| {
        calc::depth_pct(counts)
            .iter()
            .zip(labels)
            .map(|(p, l)| format!("{l}={p:3.1}%"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    const DEPTH: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCH: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    out.push_str(&format!(
        "  IO depths    : {}\n",
        dist(&DEPTH, &job.io_depth)
    ));
    out.push_str(&format!("     submit    : {}\n", dist(&BATCH, &job.submit)));
    out.push_str(&format!(
        "     complete  : {}\n",
        dist(&BATCH, &job.complete)
    ));
    let [iss, short, drop] = calc::issued(job);
    out.push_str(&format!(
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0\n",
        iss[0],
        iss[1],
        iss[2],
        job.sync.total_ios,
        short[0],
        short[1],
        short[2],
        drop[0],
        drop[1],
        drop[2]
    ));
    if info.continue_on_error {
        out.push_str(&format!(
            "     errors    : total={}, first_error={}/<{}>\n",
            job.total_err,
            job.first_error,
            num::strerror(job.first_error)
        ));
    }
    if let Some(v) = &job.verify {
        // ioscope's own line (fio counts verified blocks nowhere).
        out.push_str(&format!(
            "     verify    : blocks={}, errors={}\n",
            v.blocks, v.errors
        ));
    }
    let lt = crate::json::latency_target(info);
    out.push_str(&format!(
        "     latency   : target={}, window={}, percentile={:.2}%, depth={}\n",
        lt.target_ns, lt.window_us, lt.percentile, lt.depth
    ));
    if let Some(b) = &job.block {
        crate::profiles::block_section(b, &info.percentile_list, out);
    }
    if let Some(ss) = &job.steadystate {
        out.push_str(&steadystate_line(job, ss));
    }
}

/// `  steadystate  : attained=yes, bw=19.5MiB/s (20.0MB/s), iops=5001, iops mean dev=0.013%`
fn steadystate_line(job: &JobResult, ss: &ioscope_stats::SteadyState) -> String {
    let info = &job.info;
    let sig = num::sig_figs(info.significant_figures);
    let (bw, bw2) = num::bw_pair(ss.bw_mean, sig, info.kb_base, info.unit_base);
    let what = match ss.metric.as_str() {
        "iops" => "iops mean dev",
        "bw" => "bw mean dev",
        "iops_slope" => "iops slope",
        "lat" => "lat mean dev",
        "lat_slope" => "lat slope",
        _ => "bw slope",
    };
    // fio 3.42 adds the mean completion latency with a latency criterion.
    let lat = ss.lat_mean.map_or(String::new(), |m| {
        format!("lat={}nsec, ", num::num2str(m, sig, false, num::Unit::None))
    });
    let value = if ss.pct {
        format!("{:.3}%", ss.criterion)
    } else {
        format!("{:.3}", ss.criterion)
    };
    format!(
        "  steadystate  : attained={}, bw={bw} ({bw2}), iops={}, {lat}{what}={value}\n",
        if ss.attained { "yes" } else { "no" },
        ss.iops_mean
    )
}

fn write_dir(run: &RunResult, job: &JobResult, kind: DirKind, d: &DirStats, out: &mut String) {
    let info = &job.info;
    let sig = num::sig_figs(info.significant_figures);
    let iops = num::num2str(calc::iops_int(d), sig, false, Unit::None);
    let (bw, bw2) = num::bw_pair(calc::bw_bytes(d), sig, info.kb_base, info.unit_base);
    let (io, _) = num::bytes_pair(d.io_bytes, sig, info.kb_base);
    // fio's zoned-device count, on every write line and, with zonemode=zbd, on the
    // trim line.
    let suffix = match (kind, job.zone_resets) {
        (DirKind::Write, n) => format!("; {} zone resets", n.unwrap_or(0)),
        (DirKind::Trim, Some(n)) => format!("; {n} zone resets"),
        _ => String::new(),
    };
    out.push_str(&format!(
        "  {}: IOPS={iops}, BW={bw} ({bw2})({io}/{}msec){suffix}\n",
        kind.name(),
        calc::runtime(d)
    ));
    let mut push = |s: Option<String>| {
        if let Some(s) = s {
            out.push_str(&s);
        }
    };
    if !info.sync_engine {
        push(num::lat_line("slat", &d.slat.stat));
    }
    push(num::lat_line("clat", &d.clat.stat));
    push(num::lat_line(" lat", &d.lat.stat));
    // A paced job's latency from when each I/O was due (ioscope's own line).
    if d.schedlat.hist.is_some() {
        push(num::lat_line("schedlat", &d.schedlat.stat));
    }
    let use_lat = calc::prio_uses_lat(info);
    let pname = if use_lat { "lat" } else { "clat" };
    let prios = d.shown_prios();
    for p in prios {
        push(num::lat_line(
            &format!("{pname} prio {}/{}/{}", p.class(), p.level(), p.hint()),
            &p.stat,
        ));
    }
    let list = calc::percentile_list(info);
    let prec = num::precision(&list);
    let block = |name: &str, h: Option<&ioscope_stats::Histogram>| -> String {
        h.and_then(|h| calc::percentiles(h, &list))
            .map(|v| num::percentile_block(name, &v, prec))
            .unwrap_or_default()
    };
    let mut s = String::new();
    if !info.sync_engine {
        s.push_str(&block(
            "slat",
            calc::pct_hist(info.slat_percentiles, &d.slat),
        ));
    }
    s.push_str(&block(
        "clat",
        calc::pct_hist(info.clat_percentiles, &d.clat),
    ));
    s.push_str(&block("lat", calc::pct_hist(info.lat_percentiles, &d.lat)));
    let prio_pct = if use_lat {
        info.lat_percentiles
    } else {
        info.clat_percentiles
    };
    if prio_pct {
        let total: u64 = prios.iter().map(|p| p.stat.n).sum();
        for p in prios.iter().filter(|p| p.stat.n > 0) {
            let share = p.stat.n as f64 * 100.0 / total.max(1) as f64;
            let name = format!(
                "{pname} prio {}/{}/{} ({share:.2}% of IOs)",
                p.class(),
                p.level(),
                p.hint()
            );
            s.push_str(&block(&name, Some(&p.hist)));
        }
    }
    out.push_str(&s);
    let agg = calc::group_agg(run, job.groupid, kind);
    if let Some(l) = num::bw_line(&d.bw, agg, info.kb_base) {
        out.push_str(&l);
    }
    if let Some(l) = num::iops_line(&d.iops) {
        out.push_str(&l);
    }
}

fn write_lat_buckets(job: &JobResult, out: &mut String) {
    let h = job.clat_all();
    if h.is_empty() {
        return;
    }
    let b = calc::lat_buckets(&h);
    let groups: [(&str, &[f64], &[&str]); 3] = [
        ("nsec", &b.ns, &calc::LAT_LABELS_NS),
        ("usec", &b.us, &calc::LAT_LABELS_NS),
        ("msec", &b.ms, &calc::LAT_LABELS_MS),
    ];
    for (unit, pcts, labels) in groups {
        let items: Vec<String> = pcts
            .iter()
            .zip(labels.iter())
            .filter(|(p, _)| **p > 0.0)
            .map(|(p, l)| format!("{l}={p:3.2}%"))
            .collect();
        for chunk in items.chunks(5) {
            out.push_str(&format!("  lat ({unit})   : {}\n", chunk.join(", ")));
        }
    }
}

fn write_sync(job: &JobResult, out: &mut String) {
    let s = &job.sync;
    if s.total_ios == 0 && s.lat.stat.n == 0 {
        return;
    }
    out.push_str("  fsync/fdatasync/sync_file_range:\n");
    if let Some(l) = num::lat_line("sync", &s.lat.stat) {
        out.push_str(&l);
    }
    let list = calc::percentile_list(&job.info);
    if let Some(v) = calc::pct_hist(true, &s.lat).and_then(|h| calc::percentiles(h, &list)) {
        out.push_str(&num::percentile_block("sync", &v, num::precision(&list)));
    }
}
