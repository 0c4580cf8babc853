//! `--bw-log PREFIX`: fairness over time from fio-format bandwidth logs
//! `PREFIX_bw.N.log` (N = 1-based job number, as fio and ioscope name them), one per
//! job of the result, cut into `--window` windows by `ioscope_analysis::timeline`.

use super::dir::Dir;
use anyhow::{bail, Result};
use ioscope_analysis::timeline::{self, Series, Starvation, Window};
use ioscope_analysis::Table;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub struct Timeline {
    /// Where the samples came from, for the heading.
    pub source: String,
    pub window_ms: u64,
    pub windows: Vec<Window>,
    pub starved: Vec<Starvation>,
}

/// The log of job `n` (1-based): fio's `<prefix>_bw.<n>.log`.
pub fn log_path(prefix: &str, n: usize) -> PathBuf {
    ioscope_iolog::log_path(prefix, "", ioscope_iolog::LogKind::Bw, n as u32, true)
}

/// Reads one log per row of `table` and makes the windows with the table's weights.
pub fn build(prefix: &str, table: &Table, dir: Dir, window_ms: u64) -> Result<Timeline> {
    let mut series = Vec::with_capacity(table.rows.len());
    for n in 1..=table.rows.len() {
        let path = log_path(prefix, n);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => bail!(
                "{}: {e} (--bw-log {prefix}: one log per job, {} jobs)",
                path.display(),
                table.rows.len()
            ),
        };
        series.push(parse_log(&path, &text, dir)?);
    }
    let weights: Vec<u64> = table.rows.iter().map(|r| r.weight).collect();
    let windows = timeline::windows(&series, &weights, window_ms);
    let starved = timeline::starvation(&windows, window_ms);
    Ok(Timeline {
        source: format!("{prefix}_bw.N.log"),
        window_ms,
        windows,
        starved,
    })
}

/// The samples of `dir` in a bandwidth log: `time_ms, value, ddir, ...` per line.
pub fn parse_log(path: &Path, text: &str, dir: Dir) -> Result<Series> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() < 3 {
            bail!(
                "{}: expected 'time_ms, value, ddir, bs, prio', got '{line}'",
                at()
            );
        }
        let Ok(t) = f[0].parse::<u64>() else {
            bail!("{}: bad time '{}' (ms, an integer)", at(), f[0]);
        };
        let v = match f[1].parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => v,
            _ => bail!("{}: bad bandwidth '{}' (KiB/s)", at(), f[1]),
        };
        let ddir = match f[2] {
            "0" => Dir::Read,
            "1" => Dir::Write,
            "2" => Dir::All, // trim: counts only for --dir=all
            d => bail!("{}: bad ddir '{d}' (0 read, 1 write, 2 trim)", at()),
        };
        if dir == Dir::All || dir == ddir {
            out.push((t, v));
        }
    }
    Ok(out)
}

/// "3s", "1.5s".
fn secs(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{}", ms / 1000)
    } else {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Short job labels: "be7", or "be4#3" (job number) when the priority is not unique.
pub fn labels(table: &Table) -> Vec<String> {
    let short: Vec<String> = table
        .rows
        .iter()
        .map(|r| format!("{}{}", r.prio.class.name(), r.prio.level))
        .collect();
    short
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if short.iter().filter(|o| *o == s).count() > 1 {
                format!("{s}#{}", i + 1)
            } else {
                s.clone()
            }
        })
        .collect()
}

impl Timeline {
    pub fn text(&self, table: &Table) -> Vec<String> {
        let names = labels(table);
        let mut out = vec![format!(
            "fairness over time ({}, {}s windows; min/max: share of the window's bytes of \
             the jobs least and most served against their weight):",
            self.source,
            secs(self.window_ms)
        )];
        if self.windows.is_empty() {
            out.push("no samples in the logs".into());
        }
        for w in &self.windows {
            let jain = w.jain.map_or("-".into(), |j| format!("{j:.2}"));
            let mut line = format!("t={}s jain={jain}", secs(w.t_ms));
            if let Some((min, max)) = timeline::min_max(w) {
                line.push_str(&format!(
                    " min={} ({:.0}%) max={} ({:.0}%)",
                    names[min], w.share_pct[min], names[max], w.share_pct[max]
                ));
            }
            out.push(line);
        }
        if self.starved.is_empty() && !self.windows.is_empty() {
            out.push(format!(
                "starved: none (no job below {:.0}% of its ideal share in a window)",
                timeline::STARVED_BELOW * 100.0
            ));
        }
        for s in &self.starved {
            let r = &table.rows[s.job];
            out.push(format!(
                "starved: {} ({}) at {}-{} s",
                r.prio,
                r.name,
                secs(s.from_ms),
                secs(s.to_ms)
            ));
        }
        out
    }

    pub fn json(&self, table: &Table) -> (Value, Value) {
        let windows = self
            .windows
            .iter()
            .map(|w| json!({"t_ms": w.t_ms, "jain": w.jain, "share_pct": w.share_pct}))
            .collect();
        let starved = self
            .starved
            .iter()
            .map(|s| {
                let r = &table.rows[s.job];
                json!({"name": r.name, "class": r.prio.class.name(), "prio": r.prio.level,
                    "from_ms": s.from_ms, "to_ms": s.to_ms})
            })
            .collect();
        (Value::Array(windows), Value::Array(starved))
    }
}
