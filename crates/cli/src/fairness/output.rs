//! The fairness report as text (the seed's table, then the figures) and as JSON.

use super::dir::Dir;
use super::timeline::Timeline;
use ioscope_analysis::{jain_index, share_ratio, violations, Model, Table};
use ioscope_report::num;
use ioscope_results::{Job, ResultFile, DIR_NAMES};
use serde_json::{json, Value};

pub struct Report<'a> {
    pub table: &'a Table,
    pub model: &'a Model,
    /// Excess (percent) below which a lower job outdoing a higher one is noise.
    pub tolerance_pct: f64,
    pub dir: Dir,
    pub results: &'a ResultFile,
    /// One per row of the table.
    pub latency: &'a [Latency],
    pub timeline: Option<&'a Timeline>,
}

/// A job's latency in one direction: completion latency (clat) when the result has it,
/// else total latency (lat); `None` where the result does not report a figure.
pub struct Latency {
    pub dir: &'static str,
    /// "clat" or "lat".
    pub kind: &'static str,
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p99_9_ns: Option<u64>,
}

impl Latency {
    /// From the job's `dir` bytes; with `all`, the direction with the most I/Os.
    pub fn of(job: &Job, dir: Dir) -> Latency {
        let d = match dir {
            Dir::Read => 0,
            Dir::Write => 1,
            Dir::All => (0..3)
                .rev()
                .max_by_key(|&d| job.dirs[d].total_ios)
                .unwrap_or(0),
        };
        let jd = &job.dirs[d];
        let clat = !jd.clat_pct.is_empty() || jd.clat_mean_ns.is_some();
        let lat = !jd.lat_pct.is_empty() || jd.lat_mean_ns.is_some();
        let (kind, pct, mean) = if clat || !lat {
            ("clat", &jd.clat_pct, jd.clat_mean_ns)
        } else {
            ("lat", &jd.lat_pct, jd.lat_mean_ns)
        };
        let at = |p: f64| {
            pct.iter()
                .find(|(q, _)| (q - p).abs() < 1e-9)
                .map(|&(_, ns)| ns)
        };
        Latency {
            dir: DIR_NAMES[d],
            kind,
            mean_ns: mean,
            p50_ns: at(50.0),
            p99_ns: at(99.0),
            p99_9_ns: at(99.9),
        }
    }

    fn cells(&self) -> [String; 4] {
        let us = |ns: Option<f64>| ns.map_or("-".to_string(), |n| format!("{:.1}", n / 1000.0));
        [
            us(self.mean_ns),
            us(self.p50_ns.map(|n| n as f64)),
            us(self.p99_ns.map(|n| n as f64)),
            us(self.p99_9_ns.map(|n| n as f64)),
        ]
    }

    fn json(&self) -> Value {
        json!({"dir": self.dir, "kind": self.kind, "mean_ns": self.mean_ns,
            "p50_ns": self.p50_ns, "p99_ns": self.p99_ns, "p99_9_ns": self.p99_9_ns})
    }
}

impl Report<'_> {
    pub fn text(&self) -> Vec<String> {
        let t = self.table;
        let mut out = t.lines();
        out.push(String::new());
        let shares = t.shares();
        out.push(format!(
            "model: {}, bytes: {}",
            self.model.name(),
            self.dir.name()
        ));
        if matches!(self.model, Model::IoWeight) {
            let w: Vec<String> = t.rows.iter().map(|r| r.weight.to_string()).collect();
            out.push(format!(
                "cgroup weights: {} (100 where unset)",
                w.join(", ")
            ));
        }
        out.push(match jain_index(&shares) {
            Some(j) => {
                format!("jain index: {j:.4} (xferred/weight; 1 = fair, 1/n = one job got all)")
            }
            None => "jain index: - (nothing transferred)".into(),
        });
        out.push(match share_ratio(&shares) {
            Some(r) => format!("max/min share: {r:.2} (xferred/weight, best served over worst)"),
            None => "max/min share: - (a job transferred nothing)".into(),
        });
        let v = violations(t, self.tolerance_pct);
        if v.is_empty() {
            out.push(format!(
                "priority order: no violations (tolerance {}%)",
                self.tolerance_pct
            ));
        }
        for x in &v {
            out.push(format!("violation: {}", x.text(t)));
        }
        for g in &self.results.groups {
            for (d, gd) in g.dirs.iter().enumerate() {
                if gd.io_bytes == 0 {
                    continue;
                }
                // fio's "Run status group" line: aggregate, then the slowest and fastest job.
                let (agg, agg2) = num::bw_pair(gd.agg_bw, 4, 1024, 8);
                let (min, min2) = num::bw_pair(gd.min_bw, 4, 1024, 8);
                let (max, max2) = num::bw_pair(gd.max_bw, 4, 1024, 8);
                out.push(format!(
                    "group {} {}: bw={agg} ({agg2}), {min}-{max} ({min2}-{max2}), run={}-{}msec",
                    g.groupid,
                    DIR_NAMES[d].to_uppercase(),
                    gd.min_run_ms,
                    gd.max_run_ms
                ));
            }
        }
        out.push(String::new());
        out.push("latency (usec; clat = completion, lat = submission to completion):".into());
        out.push("class\tprio\tdir\tlat\tmean\tp50\tp99\tp99.9".into());
        for (r, l) in t.rows.iter().zip(self.latency) {
            let [mean, p50, p99, p999] = l.cells();
            out.push(format!(
                "{}\t{}\t{}\t{}\t{mean}\t{p50}\t{p99}\t{p999}",
                r.prio.class.name(),
                r.prio.level,
                l.dir,
                l.kind
            ));
        }
        if let Some(tl) = self.timeline {
            out.push(String::new());
            out.extend(tl.text(t));
        }
        out
    }

    pub fn json(&self) -> Value {
        let t = self.table;
        let shares = t.shares();
        let jobs: Vec<Value> = t
            .rows
            .iter()
            .zip(self.latency)
            .map(|(r, l)| {
                json!({"name": r.name, "class": r.prio.class.name(), "prio": r.prio.level,
                    "weight": r.weight, "ideal": r.ideal, "xferred": r.xferred,
                    "diff_pct": r.diff_pct, "latency": l.json()})
            })
            .collect();
        let violations: Vec<Value> = violations(t, self.tolerance_pct)
            .iter()
            .map(|v| {
                json!({"higher": t.rows[v.higher].name, "lower": t.rows[v.lower].name,
                    "text": v.text(t)})
            })
            .collect();
        let groups: Vec<Value> = self
            .results
            .groups
            .iter()
            .map(|g| {
                let mut m = serde_json::Map::new();
                m.insert("groupid".into(), g.groupid.into());
                for (d, gd) in g.dirs.iter().enumerate().filter(|(_, gd)| gd.io_bytes > 0) {
                    m.insert(
                        DIR_NAMES[d].into(),
                        json!({"io_bytes": gd.io_bytes, "agg_bw": gd.agg_bw,
                            "min_bw": gd.min_bw, "max_bw": gd.max_bw,
                            "min_run_ms": gd.min_run_ms, "max_run_ms": gd.max_run_ms}),
                    );
                }
                Value::Object(m)
            })
            .collect();
        let mut doc = json!({
            "model": self.model.name(),
            "dir": self.dir.name(),
            "total": t.total,
            "total_weight": t.total_weight,
            "jobs": jobs,
            "jain": jain_index(&shares),
            "max_min_ratio": share_ratio(&shares),
            "violations": violations,
            "groups": groups,
        });
        if let (Some(tl), Some(m)) = (self.timeline, doc.as_object_mut()) {
            let (windows, starved) = tl.json(t);
            m.insert("window_ms".into(), tl.window_ms.into());
            m.insert("windows".into(), windows);
            m.insert("starved".into(), starved);
        }
        doc
    }
}
