//! The verbs of `ioscope history`.

use super::args::Args;
use crate::command;
use crate::compare::{inputs, present, Present};
use anyhow::{bail, Result};
use ioscope_analysis::Verdict;
use ioscope_history::{History, Selector, Summary};
use std::path::PathBuf;
use std::process::ExitCode;

/// The one selector a verb takes (None: every run).
fn selector(rest: &[String], verb: &str) -> Result<Selector> {
    match rest {
        [] => Ok(Selector::All),
        [s] => Ok(Selector::parse(s)?),
        _ => bail!("history {verb}: one selector at most (a label, id:N[-M] or time:FROM..TO)"),
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of ms since the Unix epoch.
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

fn num(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{:.*}", digits, x / scale))
}

pub fn list(db: &History, rest: &[String], json: bool) -> Result<ExitCode> {
    let rows = db.list(&selector(rest, "list")?)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>5}  {:19}  {:16}  {:12}  {:>10}  {:>10}  {:>9}  {:>10}  {:>10}  {:>9}",
        "id",
        "time (UTC)",
        "label",
        "host",
        "read IOPS",
        "read MB/s",
        "r p99 us",
        "write IOPS",
        "write MB/s",
        "w p99 us"
    );
    for r in &rows {
        println!("{}", list_line(r));
    }
    Ok(ExitCode::SUCCESS)
}

fn list_line(r: &Summary) -> String {
    format!(
        "{:>5}  {:19}  {:16}  {:12}  {:>10}  {:>10}  {:>9}  {:>10}  {:>10}  {:>9}{}",
        r.id,
        utc(r.unix_ms),
        r.label.as_deref().unwrap_or("-"),
        r.host,
        num(r.read.iops, 1.0, 0),
        num(r.read.bw_bytes, 1e6, 1),
        num(r.read.clat_p99_ns, 1e3, 1),
        num(r.write.iops, 1.0, 0),
        num(r.write.bw_bytes, 1e6, 1),
        num(r.write.clat_p99_ns, 1e3, 1),
        if r.interrupted { "  (interrupted)" } else { "" }
    )
}

pub fn show(db: &History, rest: &[String], json: bool) -> Result<ExitCode> {
    let id: i64 = match rest {
        [id] => id
            .trim_start_matches("id:")
            .parse()
            .map_err(|_| anyhow::anyhow!("history show: '{id}' is no run id"))?,
        _ => bail!("history show: give one run id"),
    };
    let Some(r) = db.records(&Selector::Ids(id, id))?.pop() else {
        bail!("history show: no run {id} in {}", db.path().display());
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("run {} at {} UTC", r.id, utc(r.unix_ms));
    println!("label      {}", r.label.as_deref().unwrap_or("-"));
    println!(
        "host       {} (kernel {}), ioscope {}",
        r.host, r.kernel, r.ioscope_version
    );
    println!("command    {}", r.command.join(" "));
    for d in r.devices.as_array().into_iter().flatten() {
        let f = |k: &str| d[k].as_str().unwrap_or("-").to_string();
        println!(
            "device     {} ({}, disk {}, model {}, serial {}, firmware {})",
            f("path"),
            f("kind"),
            f("disk"),
            f("model"),
            f("serial"),
            f("firmware")
        );
    }
    if let Some(f) = &r.results_file {
        println!("results    {f}");
    }
    for (name, d) in [("read", &r.read), ("write", &r.write)] {
        if d.iops.is_some() {
            println!(
                "{name:<10} {} IOPS, {} MB/s, clat p99 {} us",
                num(d.iops, 1.0, 0),
                num(d.bw_bytes, 1e6, 1),
                num(d.clat_p99_ns, 1e3, 1)
            );
        }
    }
    if r.interrupted {
        println!("(interrupted)");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(db: &History, rest: &[String], format: Option<&str>) -> Result<ExitCode> {
    let sel = selector(rest, "export")?;
    match format.unwrap_or("csv") {
        "json" => println!("{}", serde_json::to_string_pretty(&db.records(&sel)?)?),
        "csv" => {
            println!("id,unix_ms,label,kind,host,kernel,interrupted,read_iops,read_bw_bytes,read_clat_p99_ns,write_iops,write_bw_bytes,write_clat_p99_ns");
            for r in db.list(&sel)? {
                let n = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
                println!(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    r.id,
                    r.unix_ms,
                    csv(r.label.as_deref().unwrap_or("")),
                    csv(&r.kind),
                    csv(&r.host),
                    csv(&r.kernel),
                    u8::from(r.interrupted),
                    n(r.read.iops),
                    n(r.read.bw_bytes),
                    n(r.read.clat_p99_ns),
                    n(r.write.iops),
                    n(r.write.bw_bytes),
                    n(r.write.clat_p99_ns)
                );
            }
        }
        f => bail!("history export --format={f}: csv or json"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A CSV field, quoted when it must be.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The runs a selector names, as one side of a comparison (interrupted runs left out).
fn side(db: &History, spec: &str) -> Result<inputs::Side> {
    let sel = Selector::parse(spec)?;
    let mut reps = Vec::new();
    for r in db.records(&sel)? {
        let origin = PathBuf::from(format!("{}#{}", db.path().display(), r.id));
        if r.interrupted {
            eprintln!(
                "ioscope history: run {} ({spec}) was interrupted: left out",
                r.id
            );
            continue;
        }
        let f = ioscope_results::from_value(&r.document, &origin)?;
        reps.push((origin, f));
    }
    if reps.is_empty() {
        bail!(
            "history: no finished run matches '{spec}' in {}",
            db.path().display()
        );
    }
    Ok(inputs::Side::new(spec.to_string(), reps, Vec::new()))
}

pub fn compare(db: &History, rest: &[String], a: &Args) -> Result<ExitCode> {
    let [x, y] = rest else {
        bail!("history compare: give two selectors, A and B (labels, id:N[-M] or time:FROM..TO)");
    };
    let (sa, sb) = (side(db, x)?, side(db, y)?);
    let p = Present {
        json: a.json,
        markdown: a.markdown,
        svg_out: None,
        html_out: None,
    };
    present(p, &sa, &sb, false)
}

/// The metrics `check` judges unless told.
const CHECKED: &[&str] = &["bw", "iops", "clat_mean", "clat_p99"];

pub fn check(db: &History, rest: &[String], a: &Args) -> Result<ExitCode> {
    if !rest.is_empty() {
        bail!("history check: the runs are given by --baseline and --candidate");
    }
    let Some(base) = a.baseline.as_deref() else {
        bail!("history check: give --baseline (a label, id:N[-M] or time:FROM..TO)");
    };
    let cand = match &a.candidate {
        Some(c) => c.clone(),
        None => {
            let not = Selector::parse(base)?;
            let skip = match &not {
                Selector::Label(l) => Some(l.as_str()),
                _ => None,
            };
            let Some(l) = db.latest_label(skip)? else {
                bail!("history check: no labelled run besides the baseline: give --candidate");
            };
            l
        }
    };
    let metrics: Vec<String> = match &a.metric {
        Some(m) => m.split(',').map(|s| s.trim().to_string()).collect(),
        None => CHECKED.iter().map(|s| s.to_string()).collect(),
    };
    for m in &metrics {
        if !ioscope_results::METRICS.contains(&m.as_str()) {
            bail!(
                "history check --metric: '{m}' is not one of {}",
                ioscope_results::METRICS.join(", ")
            );
        }
    }
    let threshold = a.threshold.unwrap_or(5.0);
    let (sa, sb) = (side(db, base)?, side(db, &cand)?);
    let rows: Vec<inputs::Row> = inputs::rows(&sa, &sb)
        .into_iter()
        .filter(|r| metrics.iter().any(|m| m == r.metric))
        .collect();
    if rows.is_empty() {
        bail!("history check: no job of '{base}' matches one of '{cand}' by name and group");
    }
    let regressions: Vec<&inputs::Row> = rows
        .iter()
        .filter(|r| {
            r.cmp.verdict == Verdict::Worse && r.cmp.delta_pct.is_some_and(|d| d.abs() >= threshold)
        })
        .collect();
    let head = format!(
        "baseline {base} ({} runs), candidate {cand} ({} runs); metrics {}; a regression is a significant change for the worse of at least {threshold}%",
        sa.reps.len(),
        sb.reps.len(),
        metrics.join(",")
    );
    // With --json, stdout is the JSON document alone (as compare's); the rest is
    // said on stderr.
    let say = |line: &str| {
        if a.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(&head);
    if a.json {
        let doc = crate::compare::output::json(&rows, &[]);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if a.markdown {
        print!("{}", crate::compare::output::markdown(&rows));
    } else {
        print!(
            "{}",
            crate::compare::output::table(&rows, crate::term::colour::stdout())
        );
    }
    for r in &regressions {
        say(&format!(
            "REGRESSION: {} {} {}: {:+.1}% (p = {})",
            r.job.name,
            r.dir,
            r.metric,
            r.cmp.delta_pct.unwrap_or(0.0),
            r.cmp.p_value.map_or("-".into(), |p| format!("{p:.3}"))
        ));
    }
    Ok(if regressions.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(command::REGRESSION)
    })
}
