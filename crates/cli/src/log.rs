//! `ioscope log convert|summary|percentiles`: what fio ships as separate scripts, for
//! ioscope's logs and fio's alike.

use crate::command::{self, Context as Cx, Flag};
use anyhow::{anyhow, bail, Context, Result};
use ioscope_analysis::histlog::{self, HistRow};
use ioscope_iolog::binary::{Reader, Rec};
use ioscope_iolog::read as logs;
use ioscope_iolog::text;
use ioscope_iolog::LogKind;
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_stats::hist::Histogram;
use ioscope_stats::LatStat;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use FlagValue::{None as NoVal, Required as ReqVal};

/// `ioscope log`'s arguments.
#[derive(Default)]
pub struct Args {
    output: Option<String>,
    interval: Option<String>,
    percentiles: Option<String>,
    divisor: Option<String>,
    decimals: Option<String>,
    directions: Option<String>,
    noweight: bool,
    json: bool,
    force: bool,
    operands: Vec<String>,
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.operands.push(word);
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: FlagDef {
            aliases: &["o"],
            ..flag("output", ReqVal, "DIR", "convert: write the text logs into DIR (default: beside the binary log, under the names it records)")
        },
        verbs: &["convert"],
        set: |a, v| {
            a.output = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            aliases: &["i"],
            ..flag("interval", ReqVal, "MS", "percentiles: width of each output interval in ms (default 1000)")
        },
        verbs: &["percentiles"],
        set: |a, v| {
            a.interval = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("percentiles", ReqVal, "LIST", "percentiles: the percentiles after the median, separated by ':' or ',' (default 90:95:99); summary: which to print (default 50:90:99:99.9:99.99)"),
        verbs: &["percentiles", "summary"],
        set: |a, v| {
            a.percentiles = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            aliases: &["d"],
            ..flag("divisor", ReqVal, "N", "percentiles: divide the latencies by N (1000: us)")
        },
        verbs: &["percentiles"],
        set: |a, v| {
            a.divisor = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("decimals", ReqVal, "N", "percentiles: decimal places (default 3)"),
        verbs: &["percentiles"],
        set: |a, v| {
            a.decimals = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("directions", ReqVal, "LETTERS", "percentiles: also per direction: any of r, w, t, m (m = all merged)"),
        verbs: &["percentiles"],
        set: |a, v| {
            a.directions = Some(v.unwrap_or("").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("noweight", NoVal, "", "percentiles: put each row whole into one interval instead of spreading it"),
        verbs: &["percentiles"],
        set: |a, _| {
            a.noweight = true;
            Ok(())
        },
    },
    Flag {
        def: flag("json", NoVal, "", "summary: print JSON"),
        verbs: &["summary"],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: flag("force", NoVal, "", "convert: replace text logs that exist (default: refuse)"),
        verbs: &["convert"],
        set: |a, _| {
            a.force = true;
            Ok(())
        },
    },
];

pub fn main(cx: &Cx, args: &[OsString]) -> Result<ExitCode> {
    let Some(p) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some((verb, files)) = p.operands.split_first() else {
        bail!("log: give a verb: convert, summary or percentiles (see ioscope log --help)");
    };
    if !["convert", "summary", "percentiles"].contains(&verb.as_str()) {
        bail!("log: unknown verb '{verb}': convert, summary or percentiles");
    }
    if files.is_empty() {
        bail!("log {verb}: give the log files");
    }
    let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    match verb.as_str() {
        "convert" => convert(&files, p.output.as_deref().map(Path::new), p.force),
        "summary" => summary(&files, &p),
        _ => percentiles(&files, &p),
    }
}

/// Binary logs to the text logs their run would have written: each into `-o DIR` or
/// beside its binary log, under the name its header records (never elsewhere, never
/// over an existing file unless `--force`), written to new temporary files and renamed
/// into place once all of a log's text is written.
fn convert(files: &[PathBuf], dir: Option<&Path>, force: bool) -> Result<ExitCode> {
    for f in files {
        let reader = Reader::open(f).map_err(|e| anyhow!(e))?;
        let beside = f.parent().filter(|d| !d.as_os_str().is_empty());
        let into = dir.or(beside).unwrap_or(Path::new("."));
        let mut temps: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut outs: Vec<Option<BufWriter<File>>> = Vec::new();
        for log in reader.meta.logs.clone() {
            let Some(p) = log else {
                outs.push(None);
                continue;
            };
            let dest = destination(f, into, &p, force)?;
            let (tmp, file) = ioscope_fs::create_temp(&dest)
                .with_context(|| format!("{}: cannot create a file beside it", dest.display()))?;
            temps.push((tmp, dest));
            outs.push(Some(BufWriter::with_capacity(1 << 20, file)));
        }
        let mut last = std::time::Instant::now();
        let mut progress = |done: u64, total: u64| {
            if last.elapsed().as_secs() >= 2 {
                last = std::time::Instant::now();
                eprintln!("ioscope log: {}: {done} of {total} I/Os", f.display());
            }
        };
        drop(reader);
        if let Err(e) = text::convert(f, outs, &mut progress) {
            for (tmp, _) in &temps {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(anyhow!(e)).with_context(|| f.display().to_string());
        }
        for (tmp, dest) in temps {
            std::fs::rename(&tmp, &dest).with_context(|| dest.display().to_string())?;
            println!("{}", dest.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a text log recorded as `recorded` goes: its file name, in `into`.
fn destination(bin: &Path, into: &Path, recorded: &Path, force: bool) -> Result<PathBuf> {
    let Some(name) = recorded.file_name().filter(|n| *n != ".." && *n != ".") else {
        bail!(
            "{}: its header names the log '{}', which is not a file name",
            bin.display(),
            recorded.display()
        );
    };
    let dest = into.join(name);
    if !force && std::fs::symlink_metadata(&dest).is_ok() {
        bail!(
            "{}: exists; give --force to replace it (or -o DIR to write elsewhere)",
            dest.display()
        );
    }
    Ok(dest)
}

/// One group of latencies: a file's log kind, direction and priority.
#[derive(Default)]
struct Group {
    stat: LatStat,
    hist: Histogram,
}

type Key = (String, &'static str, u8, u32);

fn add(groups: &mut BTreeMap<Key, Group>, key: Key, v: u64) {
    let g = groups.entry(key).or_insert_with(|| Group {
        stat: LatStat::default(),
        hist: Histogram::new(),
    });
    g.stat.add(v);
    g.hist.add(v);
}

/// Counts, min, mean, max and percentiles per file, log, direction and priority.
fn summary(files: &[PathBuf], p: &Args) -> Result<ExitCode> {
    let pcts = pct_list(p.percentiles.as_deref().unwrap_or("50:90:99:99.9:99.99"))?;
    let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
    for f in files {
        let name = f.display().to_string();
        if let Ok(mut r) = Reader::open(f) {
            let kinds: Vec<usize> = (0..3).filter(|&k| r.meta.logs[k].is_some()).collect();
            let mut buf = vec![Rec::default(); 1 << 16];
            loop {
                let n = r.read(&mut buf).with_context(|| name.clone())?;
                if n == 0 {
                    break;
                }
                for rec in &buf[..n] {
                    for &k in &kinds {
                        if let Some(l) = text::record_line(rec, k, 0) {
                            add(
                                &mut groups,
                                (
                                    name.clone(),
                                    ["lat", "slat", "clat"][k],
                                    l.ddir,
                                    u32::from(l.prio),
                                ),
                                l.value,
                            );
                        }
                    }
                }
            }
            continue;
        }
        let kind = match LogKind::of(f) {
            Some(k @ (LogKind::Lat | LogKind::Clat | LogKind::Slat)) => k.name(),
            Some(k) => bail!("{name}: a {} log holds no latencies (summary reads lat, clat and slat logs)", k.name()),
            None => bail!("{name}: not a latency log by its name (NAME_lat|clat|slat[.N].log) nor an ioscope binary log"),
        };
        logs::for_each(f, logs::parse_entry, |e| {
            add(&mut groups, (name.clone(), kind, e.ddir, e.prio), e.value)
        })?;
    }
    if groups.is_empty() {
        bail!("log summary: the logs hold no I/O");
    }
    let dirs = ["read", "write", "trim"];
    if p.json {
        let rows: Vec<serde_json::Value> = groups
            .iter()
            .map(|((f, kind, d, prio), g)| {
                let pc: serde_json::Map<String, serde_json::Value> = pcts
                    .iter()
                    .zip(g.hist.percentiles(&pcts))
                    .map(|(p, v)| (format!("{p}"), serde_json::json!(v)))
                    .collect();
                serde_json::json!({"file": f, "log": kind, "direction": dirs[*d as usize], "prio": prio,
                    "count": g.stat.n, "min_ns": g.stat.min(), "mean_ns": g.stat.mean(),
                    "max_ns": g.stat.max, "percentiles_ns": pc})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut head = vec!["file", "log", "dir", "prio", "count", "min", "mean", "max"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    head.extend(pcts.iter().map(|p| format!("p{p}")));
    println!("latencies in ns; percentiles from a histogram with at most 0.1% error");
    println!("{}", head.join("\t"));
    for ((f, kind, d, prio), g) in &groups {
        let mut row = vec![
            f.clone(),
            kind.to_string(),
            dirs[*d as usize].to_string(),
            ioscope_iolog::read::prio_name(*prio),
            g.stat.n.to_string(),
            g.stat.min().to_string(),
            format!("{:.1}", g.stat.mean()),
            g.stat.max.to_string(),
        ];
        row.extend(
            g.hist
                .percentiles(&pcts)
                .iter()
                .map(|v| v.map_or("-".into(), |v| v.to_string())),
        );
        println!("{}", row.join("\t"));
    }
    Ok(ExitCode::SUCCESS)
}

fn pct_list(s: &str) -> Result<Vec<f64>> {
    s.split([':', ','])
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=100.0).contains(v))
                .ok_or_else(|| anyhow!("--percentiles: '{t}' is not a percentage"))
        })
        .collect()
}

/// fiologparser_hist.py's output from clat_hist logs.
fn percentiles(files: &[PathBuf], p: &Args) -> Result<ExitCode> {
    let num = |flag: &str, v: &Option<String>, default: u64| -> Result<u64> {
        match v.as_deref() {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| anyhow!("--{flag}={v}: a whole number")),
        }
    };
    let interval = num("interval", &p.interval, 1000)?.max(1);
    let divisor = num("divisor", &p.divisor, 1)?.max(1);
    let decimals = num("decimals", &p.decimals, 3)? as usize;
    let pct_text = p.percentiles.as_deref().unwrap_or("90:95:99");
    let pcts = pct_list(pct_text)?;
    let labels: Vec<String> = pct_text
        .split([':', ','])
        .filter(|t| !t.trim().is_empty())
        .map(|t| format!("{}%", t.trim()))
        .collect();
    let mut rows: Vec<HistRow> = Vec::new();
    for f in files {
        logs::for_each(f, logs::parse_hist_row, |r| {
            rows.push(HistRow {
                t_ms: r.t_ms,
                ddir: r.ddir,
                bins: r.bins,
            })
        })?;
    }
    if let Some(n) = rows.first().map(|r| r.bins.len()) {
        if let Some(bad) = rows.iter().find(|r| r.bins.len() != n) {
            bail!(
                "log percentiles: rows with {n} and {} bins (different log_hist_coarseness)",
                bad.bins.len()
            );
        }
    }
    rows.sort_by_key(|r| r.t_ms);
    let o = histlog::Options {
        interval_ms: interval,
        percentiles: pcts,
        noweight: p.noweight,
    };
    let dirs: Vec<char> = match p.directions.as_deref() {
        Some(d) => {
            let mut v: Vec<char> = d.chars().collect();
            if let Some(c) = v.iter().find(|c| !"rwtm".contains(**c)) {
                bail!("--directions={d}: '{c}' is not r, w, t or m");
            }
            v.sort_unstable();
            v.dedup();
            v
        }
        None => Vec::new(),
    };
    let mut head = vec!["end-time".to_string()];
    if !dirs.is_empty() {
        head.push("dir".into());
    }
    head.extend(["samples", "min", "avg", "median"].map(String::from));
    head.extend(labels);
    head.push("max".into());
    println!("{}", head.join(", "));
    let per_dir: Vec<(Option<char>, Vec<histlog::Interval>)> = if dirs.is_empty() {
        vec![(None, histlog::intervals(&rows, &o))]
    } else {
        dirs.iter()
            .map(|&c| {
                let sel: Vec<HistRow> = rows
                    .iter()
                    .filter(|r| match c {
                        'r' => r.ddir == 0,
                        'w' => r.ddir == 1,
                        't' => r.ddir == 2,
                        _ => true,
                    })
                    .cloned()
                    .collect();
                (Some(c), histlog::intervals(&sel, &o))
            })
            .collect()
    };
    // Rows by end time, the directions of one time together, in letter order.
    let mut lines: Vec<(u64, char, String)> = Vec::new();
    for (c, ivs) in &per_dir {
        for iv in ivs {
            let d = divisor as f64;
            let lat = |v: f64| format!("{:.*}", decimals, v / d);
            let edge = |v: f64| {
                if divisor > 1 {
                    lat(v)
                } else {
                    format!("{}", v.trunc() as i64)
                }
            };
            let mut cols = vec![iv.end_ms.to_string()];
            if let Some(c) = c {
                cols.push(c.to_string());
            }
            cols.push(iv.samples.to_string());
            cols.push(edge(iv.min));
            cols.push(lat(iv.avg));
            cols.extend(iv.pcts.iter().map(|&v| lat(v)));
            cols.push(edge(iv.max));
            lines.push((iv.end_ms, c.unwrap_or(' '), cols.join(", ")));
        }
    }
    lines.sort_by_key(|l| (l.0, l.1));
    for (_, _, l) in lines {
        println!("{l}");
    }
    Ok(ExitCode::SUCCESS)
}
