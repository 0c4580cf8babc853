//! fio's JSON and JSON+ output.
//!
//! The document is built as a `serde_json::Value` (insertion-ordered) with fio 3.42's
//! keys in fio's order, then printed the way fio prints it: 2-space indent,
//! `"key" : value`, floats with 6 decimals, `{` and `}` of the top level on lines of
//! their own. ioscope's own data goes under one extra top-level key, `"ioscope"`.

use crate::calc::{self, DirKind};
use crate::num;
use ioscope_stats::hist::fio_value;
use ioscope_stats::{DirStats, Histogram, JobResult, LatStat, RunResult};
use serde_json::{Map, Number, Value};

fn float(v: f64) -> Value {
    Value::Number(Number::from_f64(if v.is_finite() { v } else { 0.0 }).unwrap_or(Number::from(0)))
}

fn obj() -> Map<String, Value> {
    Map::new()
}

/// `{min, max, mean, stddev, N[, percentile][, bins]}` in ns.
fn lat_obj(s: &LatStat, pct: Option<&Histogram>, list: &[f64], plus: bool) -> Value {
    let mut m = obj();
    m.insert("min".into(), s.min().into());
    m.insert("max".into(), s.max.into());
    m.insert("mean".into(), float(s.mean()));
    m.insert("stddev".into(), float(s.stddev()));
    m.insert("N".into(), s.n.into());
    if let Some(h) = pct.filter(|h| s.n > 0 && !h.is_empty()) {
        if let Some(vals) = calc::percentiles(h, list) {
            let mut p = obj();
            for (k, v) in vals {
                p.insert(format!("{k:.6}"), v.into());
            }
            m.insert("percentile".into(), Value::Object(p));
        }
        if plus {
            let mut b = obj();
            for (idx, c) in h.fio_buckets() {
                b.insert(fio_value(idx).to_string(), c.into());
            }
            m.insert("bins".into(), Value::Object(b));
        }
    }
    Value::Object(m)
}

fn dir_obj(run: &RunResult, job: &JobResult, kind: DirKind, d: &DirStats, plus: bool) -> Value {
    let info = &job.info;
    let list = calc::percentile_list(info);
    let bw_bytes = calc::bw_bytes(d);
    let mut m = obj();
    m.insert("io_bytes".into(), d.io_bytes.into());
    m.insert("io_kbytes".into(), (d.io_bytes >> 10).into());
    m.insert("bw_bytes".into(), bw_bytes.into());
    m.insert("bw".into(), (bw_bytes / 1024).into());
    m.insert("iops".into(), float(calc::iops(d)));
    m.insert("runtime".into(), calc::runtime(d).into());
    m.insert("total_ios".into(), d.total_ios.into());
    m.insert("short_ios".into(), d.short_ios.into());
    m.insert("drop_ios".into(), d.drop_ios.into());
    let slat = calc::pct_hist(info.slat_percentiles, &d.slat);
    let clat = calc::pct_hist(info.clat_percentiles, &d.clat);
    let lat = calc::pct_hist(info.lat_percentiles, &d.lat);
    m.insert("slat_ns".into(), lat_obj(&d.slat.stat, slat, &list, plus));
    m.insert("clat_ns".into(), lat_obj(&d.clat.stat, clat, &list, plus));
    m.insert("lat_ns".into(), lat_obj(&d.lat.stat, lat, &list, plus));
    // ioscope's own key, for paced jobs: latency from when each I/O was due.
    if let Some(h) = &d.schedlat.hist {
        m.insert(
            "schedlat_ns".into(),
            lat_obj(&d.schedlat.stat, Some(h), &list, plus),
        );
    }
    let prios = d.shown_prios();
    if !prios.is_empty() {
        let use_lat = calc::prio_uses_lat(info);
        let (key, enabled) = if use_lat {
            ("lat_ns", info.lat_percentiles)
        } else {
            ("clat_ns", info.clat_percentiles)
        };
        let arr: Vec<Value> = prios
            .iter()
            .filter(|p| p.stat.n > 0)
            .map(|p| {
                let mut e = obj();
                e.insert("prioclass".into(), p.class().into());
                e.insert("prio".into(), p.level().into());
                e.insert("priohint".into(), p.hint().into());
                let h = if enabled { Some(&p.hist) } else { None };
                e.insert(key.into(), lat_obj(&p.stat, h, &list, plus));
                Value::Object(e)
            })
            .collect();
        m.insert("prios".into(), Value::Array(arr));
    }
    let agg = calc::group_agg(run, job.groupid, kind);
    let bw = &d.bw;
    m.insert("bw_min".into(), (bw.min as u64).into());
    m.insert("bw_max".into(), (bw.max as u64).into());
    m.insert("bw_agg".into(), float(num::bw_agg_pct(bw, agg)));
    m.insert("bw_mean".into(), float(bw.mean));
    m.insert("bw_dev".into(), float(bw.stddev()));
    m.insert("bw_samples".into(), bw.n.into());
    let io = &d.iops;
    m.insert("iops_min".into(), (io.min as u64).into());
    m.insert("iops_max".into(), (io.max as u64).into());
    m.insert("iops_mean".into(), float(io.mean));
    m.insert("iops_stddev".into(), float(io.stddev()));
    m.insert("iops_samples".into(), io.n.into());
    Value::Object(m)
}

fn pct_map(labels: &[&str], pcts: &[f64]) -> Value {
    let mut m = obj();
    for (l, p) in labels.iter().zip(pcts) {
        m.insert((*l).to_string(), float(*p));
    }
    Value::Object(m)
}

fn job_obj(run: &RunResult, job: &JobResult, plus: bool) -> Value {
    let info = &job.info;
    let mut m = obj();
    m.insert("jobname".into(), job.name.clone().into());
    m.insert("groupid".into(), job.groupid.into());
    let start = match job.job_start_ms {
        0 => job.start_unix_ms,
        t => t,
    };
    m.insert("job_start".into(), start.into());
    m.insert("error".into(), job.error.into());
    m.insert("eta".into(), i32::MAX.into());
    m.insert("elapsed".into(), job.elapsed_s.into());
    let mut opts = obj();
    for (k, v) in &info.options {
        opts.insert(k.clone(), v.clone().into());
    }
    // As fio: a job with no options of its own has no "job options".
    if !opts.is_empty() {
        m.insert("job options".into(), Value::Object(opts));
    }
    let mode = calc::unified(job);
    let dirs = calc::report_dirs(job);
    for (kind, d) in dirs.iter().filter(|(k, _)| *k != DirKind::Mixed) {
        m.insert(kind.name().into(), dir_obj(run, job, *kind, d, plus));
    }
    if mode != 1 {
        let list = calc::percentile_list(info);
        let mut s = obj();
        s.insert("total_ios".into(), job.sync.total_ios.into());
        let h = calc::pct_hist(true, &job.sync.lat);
        s.insert("lat_ns".into(), lat_obj(&job.sync.lat.stat, h, &list, plus));
        m.insert("sync".into(), Value::Object(s));
    }
    if mode != 0 {
        if let Some((kind, d)) = dirs.iter().find(|(k, _)| *k == DirKind::Mixed) {
            m.insert("mixed".into(), dir_obj(run, job, *kind, d, plus));
        }
    }
    let (usr, sys) = calc::cpu_pct(job);
    m.insert("job_runtime".into(), job.runtime_ms.into());
    m.insert("usr_cpu".into(), float(usr));
    m.insert("sys_cpu".into(), float(sys));
    m.insert("ctx".into(), job.cpu.ctx.into());
    m.insert("majf".into(), job.cpu.majf.into());
    m.insert("minf".into(), job.cpu.minf.into());
    const DEPTH: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCH: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    m.insert(
        "iodepth_level".into(),
        pct_map(&DEPTH, &calc::depth_pct(&job.io_depth)),
    );
    m.insert(
        "iodepth_submit".into(),
        pct_map(&BATCH, &calc::depth_pct(&job.submit)),
    );
    m.insert(
        "iodepth_complete".into(),
        pct_map(&BATCH, &calc::depth_pct(&job.complete)),
    );
    let b = calc::lat_buckets(&job.clat_all());
    m.insert("latency_ns".into(), pct_map(&calc::LAT_LABELS_NS, &b.ns));
    m.insert("latency_us".into(), pct_map(&calc::LAT_LABELS_NS, &b.us));
    m.insert("latency_ms".into(), pct_map(&calc::LAT_LABELS_MS, &b.ms));
    if info.continue_on_error {
        m.insert("total_err".into(), job.total_err.into());
        m.insert("first_error".into(), job.first_error.into());
    }
    let lt = latency_target(info);
    m.insert("latency_depth".into(), lt.depth.into());
    m.insert("latency_target".into(), lt.target_ns.into());
    m.insert("latency_target_ns".into(), lt.target_ns.into());
    m.insert("latency_percentile".into(), float(lt.percentile));
    m.insert("latency_window".into(), lt.window_us.into());
    m.insert("latency_window_us".into(), lt.window_us.into());
    if let Some(desc) = info.description.as_deref().filter(|d| !d.is_empty()) {
        m.insert("desc".into(), desc.into());
    }
    if let Some(b) = job.block.as_ref().filter(|b| b.used()) {
        m.insert("block".into(), block_obj(b, &info.percentile_list));
    }
    if let Some(ss) = &job.steadystate {
        m.insert("steadystate".into(), steadystate_obj(ss));
    }
    if let Some(n) = job.zone_resets {
        m.insert("zone_resets".into(), n.into());
    }
    if let Some(list) = &job.placement {
        // ioscope's own key: the writes of each data placement identifier.
        let placed = list.iter().map(|p| {
            let mut o = obj();
            o.insert("plid".into(), p.plid.into());
            o.insert("ios".into(), p.ios.into());
            o.insert("bytes".into(), p.bytes.into());
            Value::Object(o)
        });
        m.insert("placement".into(), Value::Array(placed.collect()));
    }
    if let Some(v) = &job.verify {
        // ioscope's own key: blocks verified and failures found (fio has no count).
        let mut o = obj();
        o.insert("blocks".into(), v.blocks.into());
        o.insert("errors".into(), v.errors.into());
        m.insert("verify".into(), Value::Object(o));
    }
    Value::Object(m)
}

/// fio's "block" object of block_error_percentiles: trims per block at each
/// percentile, and the blocks in each state.
fn block_obj(b: &ioscope_stats::block::BlockStates, list: &[f64]) -> Value {
    let mut p = obj();
    for (pct, n) in b.percentiles(list) {
        p.insert(format!("{pct:.6}"), n.into());
    }
    let mut s = obj();
    for (name, n) in ioscope_stats::block::STATE_NAMES.iter().zip(b.states()) {
        s.insert((*name).into(), n.into());
    }
    let mut o = obj();
    o.insert("percentiles".into(), Value::Object(p));
    o.insert("states".into(), Value::Object(s));
    Value::Object(o)
}

/// fio's "steadystate" object (data oldest first, bw in bytes/s).
fn steadystate_obj(ss: &ioscope_stats::SteadyState) -> Value {
    let mut m = obj();
    m.insert("ss".into(), ss.ss.clone().into());
    m.insert("duration".into(), ss.duration_s.into());
    m.insert("attained".into(), u8::from(ss.attained).into());
    let crit = if ss.pct {
        format!("{:.6}%", ss.criterion)
    } else {
        format!("{:.6}", ss.criterion)
    };
    m.insert("criterion".into(), crit.into());
    m.insert("max_deviation".into(), float(ss.max_deviation));
    m.insert("slope".into(), float(ss.slope));
    let mut data = obj();
    data.insert("bw_mean".into(), ss.bw_mean.into());
    data.insert("iops_mean".into(), ss.iops_mean.into());
    if let Some(m) = ss.lat_mean {
        // fio 3.42, with a latency criterion: the mean and each interval's, in ns.
        data.insert("lat_mean".into(), m.into());
        data.insert(
            "lat_ns".into(),
            Value::Array(ss.lat.iter().map(|&v| v.into()).collect()),
        );
    }
    data.insert(
        "iops".into(),
        Value::Array(ss.iops.iter().map(|&v| v.into()).collect()),
    );
    data.insert(
        "bw".into(),
        Value::Array(ss.bw.iter().map(|&v| v.into()).collect()),
    );
    m.insert("data".into(), Value::Object(data));
    Value::Object(m)
}

/// The whole JSON (or JSON+) document as a value.
pub fn json_value(run: &RunResult, plus: bool) -> Value {
    let mut m = obj();
    m.insert(
        "fio version".into(),
        crate::formats::version_string(run).into(),
    );
    m.insert("timestamp".into(), (run.timestamp_ms / 1000).into());
    m.insert("timestamp_ms".into(), run.timestamp_ms.into());
    m.insert("time".into(), num::ctime(run.timestamp_ms).into());
    if !run.global_options.is_empty() {
        let mut g = obj();
        for (k, v) in &run.global_options {
            g.insert(k.clone(), v.clone().into());
        }
        m.insert("global options".into(), Value::Object(g));
    }
    let jobs: Vec<Value> = run.jobs.iter().map(|j| job_obj(run, j, plus)).collect();
    m.insert("jobs".into(), Value::Array(jobs));
    if !run.disks.is_empty() {
        let disks: Vec<Value> = run
            .disks
            .iter()
            .map(|d| {
                let mut o = obj();
                o.insert("name".into(), d.name.clone().into());
                o.insert("read_ios".into(), d.read_ios.into());
                o.insert("write_ios".into(), d.write_ios.into());
                o.insert("read_sectors".into(), d.read_sectors.into());
                o.insert("write_sectors".into(), d.write_sectors.into());
                o.insert("read_merges".into(), d.read_merges.into());
                o.insert("write_merges".into(), d.write_merges.into());
                o.insert("read_ticks".into(), d.read_ticks.into());
                o.insert("write_ticks".into(), d.write_ticks.into());
                o.insert("in_queue".into(), d.in_queue.into());
                o.insert("util".into(), float(d.util));
                Value::Object(o)
            })
            .collect();
        m.insert("disk_util".into(), Value::Array(disks));
    }
    if let Ok(meta) = serde_json::to_value(&run.meta) {
        m.insert("ioscope".into(), meta);
    }
    Value::Object(m)
}

/// Write the JSON (or, with `plus`, JSON+) document, newline-terminated.
pub fn write_json(run: &RunResult, plus: bool, out: &mut String) {
    print_value(&json_value(run, plus), 0, out);
    out.push('\n');
}

fn indent(n: usize, out: &mut String) {
    out.push_str(&" ".repeat(n));
}

/// Print a value in fio's layout.
pub fn print_value(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else {
                let f = n.as_f64().filter(|f| f.is_finite()).unwrap_or(0.0);
                out.push_str(&format!("{f:.6}"));
            }
        }
        Value::String(s) => out.push_str(&string(s)),
        Value::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, e) in a.iter().enumerate() {
                indent(level + 2, out);
                print_value(e, level + 2, out);
                out.push_str(if i + 1 < a.len() { ",\n" } else { "\n" });
            }
            indent(level, out);
            out.push(']');
        }
        Value::Object(o) => {
            if o.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, (k, e)) in o.iter().enumerate() {
                indent(level + 2, out);
                out.push_str(&string(k));
                out.push_str(" : ");
                print_value(e, level + 2, out);
                out.push_str(if i + 1 < o.len() { ",\n" } else { "\n" });
            }
            indent(level, out);
            out.push('}');
        }
    }
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// The job's latency_target search, or fio's values for a job without one.
pub(crate) fn latency_target(info: &ioscope_stats::JobInfo) -> ioscope_stats::LatencyTarget {
    info.latency_target.unwrap_or(ioscope_stats::LatencyTarget {
        target_ns: 0,
        window_us: 0,
        percentile: 100.0,
        depth: info.iodepth,
    })
}
