//! The fairness report as text (the seed's table, then the figures) and as JSON.

use super::Dir;
use ioscope_analysis::{jain_index, share_ratio, violations, Model, Table};
use ioscope_report::num;
use ioscope_results::{ResultFile, DIR_NAMES};
use serde_json::{json, Value};

pub struct Report<'a> {
    pub table: &'a Table,
    pub model: &'a Model,
    pub dir: Dir,
    pub results: &'a ResultFile,
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
        let v = violations(t);
        if v.is_empty() {
            out.push("priority order: no violations".into());
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
        out
    }

    pub fn json(&self) -> Value {
        let t = self.table;
        let shares = t.shares();
        let jobs: Vec<Value> = t
            .rows
            .iter()
            .map(|r| {
                json!({"name": r.name, "class": r.prio.class.name(), "prio": r.prio.level,
                    "weight": r.weight, "ideal": r.ideal, "xferred": r.xferred,
                    "diff_pct": r.diff_pct})
            })
            .collect();
        let violations: Vec<Value> = violations(t)
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
        json!({
            "model": self.model.name(),
            "dir": self.dir.name(),
            "total": t.total,
            "total_weight": t.total_weight,
            "jobs": jobs,
            "jain": jain_index(&shares),
            "max_min_ratio": share_ratio(&shares),
            "violations": violations,
            "groups": groups,
        })
    }
}
