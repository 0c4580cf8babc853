//! `--live=FILE`: the run as JSON Lines while it goes on (docs/live-stream.md has the
//! schema). One line per job per interval with that interval's own counts and
//! latencies, so a job's lines add up to its report; a start line, a line per phase,
//! and an end line with the run's totals. Each line is flushed as it is written, by
//! the monitor thread; a write that fails (a full disk, a closed pipe) ends the stream
//! with one warning, never the run.

use ioscope_runner::LiveInterval;
use ioscope_stats::interval::{DirInterval, LatInterval};
use ioscope_stats::{RunResult, DIR_NAMES};
use serde_json::{json, Map, Value};
use std::io::Write;

/// The schema's version, on the start line: a reader checks it.
pub const SCHEMA: u32 = 1;

/// The percentiles each latency lists (fio's default percentile_list).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The stream's destination and what it remembers between lines.
pub struct LiveStream {
    out: Option<Box<dyn Write + Send>>,
    name: String,
    started: std::time::Instant,
    interval_ms: u64,
    /// Under MPI: every host's intervals since the last aggregate line, summed, and
    /// when that line was written.
    agg: Option<[DirInterval; 3]>,
    agg_t: u64,
}

impl LiveStream {
    /// A stream into `out` (named `name` in warnings); writes the start line.
    pub fn new(out: Box<dyn Write + Send>, name: &str, interval_ms: u64) -> LiveStream {
        let mut s = LiveStream {
            out: Some(out),
            name: name.to_string(),
            started: std::time::Instant::now(),
            interval_ms,
            agg: None,
            agg_t: 0,
        };
        s.line(&json!({
            "type": "start",
            "schema": SCHEMA,
            "t_ms": 0,
            "unix_ms": unix_ms(),
            "interval_ms": interval_ms,
            "host": ioscope_options::jobfile::hostname(),
            "ioscope": env!("CARGO_PKG_VERSION"),
        }));
        s
    }

    fn t_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Phase `n` starts its I/O (of a sweep's `point`).
    pub fn phase(&mut self, n: usize, point: Option<&str>) {
        let t = self.t_ms();
        let mut v = json!({"type": "phase", "t_ms": t, "phase": n});
        if let Some(p) = point {
            v["point"] = p.into();
        }
        self.line(&v);
    }

    /// One job's interval (of a sweep's `point`).
    pub fn interval(&mut self, iv: &LiveInterval, point: Option<&str>) {
        let ms = iv.ms;
        let mut o = Map::new();
        o.insert("type".into(), "interval".into());
        // The stream's own clock, as its other lines (a sweep's runs each start theirs).
        o.insert("t_ms".into(), self.t_ms().into());
        o.insert("ms".into(), ms.into());
        o.insert("job".into(), iv.job.into());
        o.insert("job_number".into(), iv.number.into());
        o.insert("groupid".into(), iv.groupid.into());
        o.insert("phase".into(), iv.phase.into());
        if let Some(p) = point {
            o.insert("point".into(), p.into());
        }
        if let Some((host, rank)) = iv.host {
            o.insert("host".into(), host.into());
            o.insert("rank".into(), rank.into());
        }
        o.insert("epoch".into(), iv.epoch.into());
        o.insert("ramp".into(), iv.ramp.into());
        o.insert("last".into(), iv.last.into());
        if let Some(n) = iv.inflight {
            o.insert("inflight".into(), n.into());
        }
        for (d, name) in DIR_NAMES.iter().enumerate() {
            o.insert((*name).into(), dir_json(&iv.dirs[d], ms));
        }
        self.line(&Value::Object(o));
        if iv.host.is_some() {
            self.aggregate(iv.dirs);
        }
    }

    /// Under MPI: sum every host's intervals, and write their sum once an interval
    /// has passed since the last (exact: the aggregate lines add up to the run's
    /// totals over all hosts; percentiles from the summed histograms).
    fn aggregate(&mut self, dirs: &[DirInterval; 3]) {
        let agg = self.agg.get_or_insert_with(Default::default);
        for (a, d) in agg.iter_mut().zip(dirs) {
            a.add(d);
        }
        if self.t_ms().saturating_sub(self.agg_t) >= self.interval_ms {
            self.flush_aggregate();
        }
    }

    fn flush_aggregate(&mut self) {
        let Some(agg) = self.agg.take() else {
            return;
        };
        let t = self.t_ms();
        let ms = t.saturating_sub(self.agg_t);
        self.agg_t = t;
        let mut o = Map::new();
        o.insert("type".into(), "aggregate".into());
        o.insert("t_ms".into(), t.into());
        o.insert("ms".into(), ms.into());
        for (d, name) in DIR_NAMES.iter().enumerate() {
            o.insert((*name).into(), dir_json(&agg[d], ms));
        }
        self.line(&Value::Object(o));
    }

    /// The run ended: its totals (what the intervals add up to); a sweep's end has
    /// none (each point has its own report).
    pub fn end(&mut self, r: Option<&RunResult>, interrupted: bool) {
        self.flush_aggregate();
        let mut o = Map::new();
        o.insert("type".into(), "end".into());
        o.insert("t_ms".into(), self.t_ms().into());
        o.insert("interrupted".into(), interrupted.into());
        let Some(r) = r else {
            self.line(&Value::Object(o));
            return;
        };
        for (d, name) in DIR_NAMES.iter().enumerate() {
            let ios: u64 = r.jobs.iter().map(|j| j.dirs[d].total_ios).sum();
            let bytes: u64 = r.jobs.iter().map(|j| j.dirs[d].io_bytes).sum();
            o.insert((*name).into(), json!({"ios": ios, "bytes": bytes}));
        }
        self.line(&Value::Object(o));
    }

    fn line(&mut self, v: &Value) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut text = v.to_string();
        text.push('\n');
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            eprintln!(
                "ioscope: --live={}: {e}; the stream stops here (the run goes on)",
                self.name
            );
            self.out = None;
        }
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A direction's interval: counts, rates over the interval and latencies.
fn dir_json(d: &DirInterval, ms: u64) -> Value {
    let per_s = |n: u64| {
        if ms == 0 {
            0.0
        } else {
            n as f64 * 1000.0 / ms as f64
        }
    };
    let mut o = Map::new();
    o.insert("ios".into(), d.ios.into());
    o.insert("bytes".into(), d.bytes.into());
    o.insert("iops".into(), json!(round3(per_s(d.ios))));
    o.insert("bw_bytes".into(), json!(per_s(d.bytes).round() as u64));
    o.insert("clat_ns".into(), lat_json(&d.clat));
    o.insert("lat_ns".into(), lat_json(&d.lat));
    if !d.prios.is_empty() {
        let prios: Vec<Value> = d
            .prios
            .iter()
            .map(|p| {
                json!({
                    "ioprio": p.ioprio,
                    "class": p.ioprio >> 13,
                    "level": p.ioprio & 7,
                    "ios": p.lat.n,
                    "lat_ns": lat_json(&p.lat),
                })
            })
            .collect();
        o.insert("prios".into(), prios.into());
    }
    Value::Object(o)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A latency over the interval: count and exact mean; min, max and percentiles from
/// the interval's histogram when the job keeps one.
pub fn lat_json(l: &LatInterval) -> Value {
    let mut o = Map::new();
    o.insert("count".into(), l.n.into());
    o.insert("mean".into(), json!(round3(l.mean().unwrap_or(0.0))));
    let Some((h, (lo, hi))) = l.hist.as_ref().and_then(|h| Some((h, h.range()?))) else {
        return Value::Object(o);
    };
    o.insert("min".into(), lo.into());
    o.insert("max".into(), hi.into());
    let mut p = Map::new();
    for (k, v) in PERCENTILES.iter().zip(h.percentiles(&PERCENTILES)) {
        p.insert(format!("{k:.6}"), v.unwrap_or(0).into());
    }
    o.insert("percentile".into(), Value::Object(p));
    Value::Object(o)
}
