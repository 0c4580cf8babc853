//! Side-by-side comparison with fio 3.33: the same job run by fio and by ioscope must give
//! output of the same shape (JSON key paths, terse field counts, kinds of lines in normal
//! output) and, for size-based jobs, the same deterministic I/O counters.
//!
//! Both tools run one after the other in the same temporary directory under /tmp (ext4,
//! O_DIRECT works), each in its own subdirectory so that each has its own files. Every test
//! skips when fio is not installed.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

// ---------------------------------------------------------------------------------------
// Running both tools
// ---------------------------------------------------------------------------------------

impl Pair {
    /// Write the same file into both tools' directories.
    fn write(&self, name: &str, text: &str) {
        fs::write(self.fio_dir.join(name), text).unwrap();
        fs::write(self.ioscope_dir.join(name), text).unwrap();
    }

    /// Run fio, then ioscope, with the same arguments; both must succeed.
    fn run(&self, args: &[&str]) -> (Run, Run) {
        let f = run_fio(&self.fio_dir, args);
        assert_eq!(
            f.code, 0,
            "fio failed for {args:?}:\n{}\n{}",
            f.stdout, f.stderr
        );
        let i = run_in(&self.ioscope_dir, args);
        assert_eq!(
            i.code, 0,
            "ioscope failed for {args:?}:\n{}\n{}",
            i.stdout, i.stderr
        );
        (f, i)
    }

    /// Run both with `--output-format=json` (or json+) and parse the documents.
    fn run_json(&self, args: &[&str], format: &str) -> (Value, Value, Run) {
        let fmt = format!("--output-format={format}");
        let mut all: Vec<&str> = args.to_vec();
        all.push(&fmt);
        let (f, i) = self.run(&all);
        let fv = parse_fio_json(&f.stdout);
        let iv: Value = serde_json::from_str(&i.stdout).unwrap_or_else(|e| {
            panic!(
                "ioscope stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
                i.stdout, i.stderr
            )
        });
        (fv, iv, i)
    }
}

fn run_fio(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new("fio")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run fio");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// fio may print lines (the sync-engine "note:") on stdout before the JSON document.
fn parse_fio_json(stdout: &str) -> Value {
    let start = stdout
        .lines()
        .scan(0usize, |pos, l| {
            let at = *pos;
            *pos += l.len() + 1;
            Some((at, l))
        })
        .find(|(_, l)| l.starts_with('{'))
        .map(|(at, _)| at)
        .unwrap_or_else(|| panic!("no JSON document in fio's stdout:\n{stdout}"));
    serde_json::from_str(&stdout[start..])
        .unwrap_or_else(|e| panic!("fio's JSON does not parse ({e}):\n{stdout}"))
}

// ---------------------------------------------------------------------------------------
// The jobs from the issue
// ---------------------------------------------------------------------------------------

const NULL_RANDREAD: &[&str] = &[
    "--name=j",
    "--ioengine=null",
    "--size=64m",
    "--bs=4k",
    "--rw=randread",
];

const PSYNC_RANDRW: &[&str] = &[
    "--name=j",
    "--ioengine=psync",
    "--rw=randrw",
    "--rwmixread=70",
    "--size=16m",
];

const LIBAIO_PCT: &[&str] = &[
    "--name=j",
    "--ioengine=libaio",
    "--iodepth=8",
    "--direct=1",
    "--lat_percentiles=1",
    "--slat_percentiles=1",
    "--rw=randread",
    "--size=16m",
];

const SYNC_QD4: &[&str] = &[
    "--name=j",
    "--ioengine=sync",
    "--iodepth=4",
    "--rw=randread",
    "--size=16m",
];

const NUMJOBS_GROUP: &[&str] = &[
    "--name=j",
    "--numjobs=2",
    "--group_reporting",
    "--rw=randread",
    "--size=16m",
];

const CMDPRIO: &[&str] = &[
    "--name=j",
    "--ioengine=libaio",
    "--cmdprio_percentage=30",
    "--iodepth=8",
    "--direct=1",
    "--rw=randread",
    "--size=16m",
];

/// How a job's outputs may legitimately differ.
#[derive(Clone, Copy, Default)]
struct Allow {
    /// fio has no disk for this job (null engine): disk statistics may be absent on one side.
    diskless: bool,
    /// The read/write split depends on each tool's RNG: compare only totals.
    mixed: bool,
}

const PLAIN: Allow = Allow {
    diskless: false,
    mixed: false,
};

// ---------------------------------------------------------------------------------------
// JSON: key paths
// ---------------------------------------------------------------------------------------

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path of `fio` that `io` lacks, appended to `out`.
fn missing_paths(fio: &Value, io: &Value, path: &str, allow: Allow, out: &mut Vec<String>) {
    match (fio, io) {
        (Value::Object(f), Value::Object(i)) => {
            for (k, fv) in f {
                let p = format!("{path}/{k}");
                if k == "disk_util" && allow.diskless {
                    // One tool may have no disk at all for a diskless engine.
                    continue;
                }
                let Some(iv) = i.get(k) else {
                    out.push(p);
                    continue;
                };
                match k.as_str() {
                    // Bucket keys differ by design (ioscope's histogram is finer): the
                    // map must be there, its keys are not compared.
                    "percentile" | "bins" => {
                        if !iv.is_object() {
                            out.push(format!("{p} (fio: object, ioscope: {})", type_name(iv)));
                        }
                    }
                    // The echo of the user's options is checked on its own (see
                    // json_job_options_* below); here it only has to be present.
                    "job options" => {}
                    _ => missing_paths(fv, iv, &p, allow, out),
                }
            }
        }
        (Value::Array(f), Value::Array(i)) => {
            if path.ends_with("/prios") {
                // One entry per priority in use: the shape of the first is what counts.
                if let Some(f0) = f.first() {
                    match i.first() {
                        Some(i0) => missing_paths(f0, i0, &format!("{path}[0]"), allow, out),
                        None => out.push(format!("{path}[0]")),
                    }
                }
                return;
            }
            if path == "/jobs" && f.len() != i.len() {
                out.push(format!(
                    "{path} (fio has {} jobs, ioscope {})",
                    f.len(),
                    i.len()
                ));
            }
            for (n, fe) in f.iter().enumerate() {
                let p = format!("{path}[{n}]");
                match i.get(n) {
                    Some(ie) => missing_paths(fe, ie, &p, allow, out),
                    None => out.push(p),
                }
            }
        }
        (Value::Object(_), _) | (Value::Array(_), _) => out.push(format!(
            "{path} (fio: {}, ioscope: {})",
            type_name(fio),
            type_name(io)
        )),
        _ => {}
    }
}

fn assert_same_keys(fio: &Value, io: &Value, allow: Allow, what: &str) {
    let mut missing = Vec::new();
    missing_paths(fio, io, "", allow, &mut missing);
    assert!(
        missing.is_empty(),
        "{what}: {} key path(s) fio emits are missing from ioscope's output:\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------
// JSON: deterministic counters
// ---------------------------------------------------------------------------------------

const COUNTERS: [&str; 4] = ["io_bytes", "total_ios", "short_ios", "drop_ios"];
const DIRS: [&str; 3] = ["read", "write", "trim"];

fn counter(job: &Value, dir: &str, key: &str) -> u64 {
    u(&job[dir][key])
}

fn assert_same_counters(fio: &Value, io: &Value, allow: Allow) {
    let fjobs = fio["jobs"].as_array().expect("fio jobs");
    let ijobs = io["jobs"].as_array().expect("ioscope jobs");
    assert_eq!(fjobs.len(), ijobs.len(), "number of jobs");
    let mut diffs = Vec::new();
    for (n, (fj, ij)) in fjobs.iter().zip(ijobs).enumerate() {
        for key in COUNTERS {
            if allow.mixed {
                let f: u64 = DIRS.iter().map(|d| counter(fj, d, key)).sum();
                let i: u64 = DIRS.iter().map(|d| counter(ij, d, key)).sum();
                if f != i {
                    diffs.push(format!("jobs[{n}] total {key}: fio {f}, ioscope {i}"));
                }
            } else {
                for d in DIRS {
                    let (f, i) = (counter(fj, d, key), counter(ij, d, key));
                    if f != i {
                        diffs.push(format!("jobs[{n}].{d}.{key}: fio {f}, ioscope {i}"));
                    }
                }
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "deterministic counters differ from fio's:\n  {}",
        diffs.join("\n  ")
    );
}

fn check_json(args: &[&str], format: &str, allow: Allow) {
    let p = Pair::new();
    let (f, i, _) = p.run_json(args, format);
    assert_eq!(
        i["fio version"],
        Value::from("ioscope-0.1.0"),
        "version field"
    );
    assert_same_keys(&f, &i, allow, &format!("{format} for {args:?}"));
    assert_same_counters(&f, &i, allow);
}

// ---------------------------------------------------------------------------------------
// terse
// ---------------------------------------------------------------------------------------

fn is_numeric_field(s: &str) -> bool {
    let s = s.trim_end_matches('%');
    !s.is_empty() && s.parse::<f64>().is_ok()
}

/// Field counts of the terse lines (fio's "note:" lines dropped). For a diskless job the
/// trailing disk-utilisation groups (a device name and eight numbers) are not counted.
fn terse_counts(stdout: &str, allow: Allow) -> Vec<usize> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("note:"))
        .map(|l| {
            let fields: Vec<&str> = l.split(';').collect();
            let mut n = fields.len();
            if allow.diskless {
                while n > 9
                    && !is_numeric_field(fields[n - 9])
                    && !fields[n - 9].contains('=')
                    && fields[n - 8..n].iter().all(|f| is_numeric_field(f))
                {
                    n -= 9;
                }
            }
            n
        })
        .collect()
}

fn check_terse(args: &[&str], version: Option<&str>, allow: Allow) {
    let p = Pair::new();
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.push("--output-format=terse".into());
    if let Some(v) = version {
        all.push(format!("--terse-version={v}"));
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let (f, i) = p.run(&all);
    let fc = terse_counts(&f.stdout, allow);
    let ic = terse_counts(&i.stdout, allow);
    assert!(!fc.is_empty(), "fio printed no terse line:\n{}", f.stdout);
    assert_eq!(
        fc, ic,
        "terse fields per line differ for {all:?}\nfio:\n{}\nioscope:\n{}",
        f.stdout, i.stdout
    );
    if version != Some("2") {
        // v3+ lines carry the version string in field 2.
        for l in i.stdout.lines().filter(|l| !l.is_empty()) {
            assert_eq!(l.split(';').nth(1), Some("ioscope-0.1.0"), "{l}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// normal
// ---------------------------------------------------------------------------------------

/// `text` with every parenthesised part replaced by "()", digit runs by "N", whitespace
/// collapsed.
fn squash_label(text: &str) -> String {
    let mut s = String::new();
    let mut depth = 0;
    let mut prev_digit = false;
    for c in text.chars() {
        match c {
            '(' => {
                if depth == 0 {
                    s.push('(');
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth == 0 {
                    s.push(')');
                }
            }
            _ if depth > 0 => {}
            c if c.is_ascii_digit() => {
                if !prev_digit {
                    s.push('N');
                }
            }
            c => s.push(c),
        }
        prev_digit = c.is_ascii_digit() && depth == 0;
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `key=` names of a value part, in order ("min= max= avg= stdev=").
fn keys_of(rest: &str) -> String {
    rest.split(|c: char| c == ',' || c == ':' || c.is_whitespace())
        .filter_map(|t| t.split_once('=').map(|(k, _)| format!("{k}=")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The kind of one line of normal output, or None for lines that legitimately differ
/// between runs or tools.
fn line_kind(line: &str, in_disk_stats: bool) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with("note:") || t.contains("Laying out IO file") {
        return None;
    }
    if !t.contains(' ') && (t.starts_with("fio-") || t.starts_with("ioscope-")) {
        return Some("<version>".into());
    }
    if let Some(rest) = t.strip_prefix("Starting ") {
        // ioscope runs jobs as threads ("Starting 2 threads"), fio as processes.
        let n = rest.split_whitespace().next().unwrap_or("");
        assert!(n.parse::<u32>().is_ok(), "odd Starting line {t:?}");
        return Some("Starting N process/thread".into());
    }
    if t == "..." {
        return Some("...".into());
    }
    if t.starts_with('|') {
        // Rows of percentiles: how many values fit on a row depends on their width.
        return Some("| percentile rows".into());
    }
    if in_disk_stats {
        let rest = t.split_once(':').map(|(_, r)| r).unwrap_or(t);
        return Some(format!("<disk>: {}", keys_of(rest)));
    }
    let (label, rest) = t.split_once(':').unwrap_or((t, ""));
    let label = squash_label(label);
    if label == "lat ()" && !rest.trim_start().starts_with("min=") {
        // Latency buckets ("lat (usec)   : 100=0.34%, 250=98.75%"): how many lines and
        // which buckets depends on the run.
        return Some("lat () buckets".into());
    }
    Some(format!("{label}: {}", keys_of(rest)).trim_end().to_string())
}

fn kinds(stdout: &str, allow: Allow) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_disk = false;
    for line in stdout.lines() {
        // fio 3.42's additions to 3.33's lines (and ioscope's schedlat): as 3.33 has them.
        if line.starts_with("    schedlat (") {
            continue;
        }
        let line = &as_fio_333_line(line);
        if line.starts_with("Disk stats") {
            in_disk = true;
            if !allow.diskless {
                out.push("Disk stats ():".into());
            }
            continue;
        }
        if line.trim().is_empty() {
            in_disk = false;
        }
        let Some(k) = line_kind(line, in_disk) else {
            continue;
        };
        if in_disk && allow.diskless {
            continue;
        }
        let collapses = k == "| percentile rows" || k == "lat () buckets";
        if collapses && out.last() == Some(&k) {
            continue;
        }
        out.push(k);
    }
    out
}

/// A line of fio 3.42's normal output as fio 3.33 prints it: no `sectors=` in the disk
/// stats, priorities as class/level (3.42 adds /hint).
fn as_fio_333_line(line: &str) -> String {
    let mut s = line.to_string();
    if let Some(a) = s.find(", sectors=") {
        if let Some(len) = s[a + 2..].find(", ") {
            s.replace_range(a..a + 2 + len, "");
        }
    }
    if let Some(a) = s.find(" prio ") {
        let rest = &s[a + 6..];
        let end = rest
            .find(|c: char| c != '/' && !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let parts: Vec<&str> = rest[..end].split('/').collect();
        if parts.len() == 3 {
            let short = format!("{}/{}", parts[0], parts[1]);
            s.replace_range(a + 6..a + 6 + end, &short);
        }
    }
    s
}

fn is_bw_iops(k: &str) -> bool {
    k.starts_with("bw ():") || k.starts_with("iops:")
}

fn side_by_side(f: &[String], i: &[String]) -> String {
    let n = f.len().max(i.len());
    let mut s = String::new();
    let mut marked = false;
    for idx in 0..n {
        let a = f.get(idx).map(String::as_str).unwrap_or("");
        let b = i.get(idx).map(String::as_str).unwrap_or("");
        let mark = if a != b && !marked {
            marked = true;
            ">>"
        } else {
            "  "
        };
        s.push_str(&format!("{mark} {a:<60} | {b}\n"));
    }
    s
}

/// Compare kinds of lines; `bw (` / `iops` lines are kept only when both tools have the
/// same number of them (fio prints them only once a bandwidth sample was taken, which a
/// short run may not reach).
fn assert_same_kinds(fio_out: &str, io_out: &str, allow: Allow, what: &str) {
    let mut f = kinds(fio_out, allow);
    let mut i = kinds(io_out, allow);
    let fb = f.iter().filter(|k| is_bw_iops(k)).count();
    let ib = i.iter().filter(|k| is_bw_iops(k)).count();
    if fb != ib {
        f.retain(|k| !is_bw_iops(k));
        i.retain(|k| !is_bw_iops(k));
    }
    if std::env::var_os("FIO_COMPARE_DEBUG").is_some() {
        eprintln!("{what}:\n{}", side_by_side(&f, &i));
    }
    assert!(
        f == i,
        "{what}: kinds of lines differ (fio | ioscope):\n{}\nfio output:\n{fio_out}\nioscope output:\n{io_out}",
        side_by_side(&f, &i)
    );
}

fn check_normal(args: &[&str], allow: Allow) -> (Run, Run) {
    let p = Pair::new();
    let mut all: Vec<&str> = args.to_vec();
    all.push("--output-format=normal");
    let (f, i) = p.run(&all);
    assert!(
        i.stdout.lines().any(|l| l == "ioscope-0.1.0"),
        "version line:\n{}",
        i.stdout
    );
    assert_same_kinds(&f.stdout, &i.stdout, allow, &format!("normal for {args:?}"));
    (f, i)
}

// ---------------------------------------------------------------------------------------
// (1) null engine
// ---------------------------------------------------------------------------------------

const NULL_ALLOW: Allow = Allow {
    diskless: true,
    mixed: false,
};

#[test]
fn null_randread_json() {
    require_fio!();
    check_json(NULL_RANDREAD, "json", NULL_ALLOW);
}

#[test]
fn null_randread_json_plus() {
    require_fio!();
    check_json(NULL_RANDREAD, "json+", NULL_ALLOW);
}

#[test]
fn null_randread_terse() {
    require_fio!();
    check_terse(NULL_RANDREAD, None, NULL_ALLOW);
}

#[test]
fn null_randread_terse_versions_2_4_5() {
    require_fio!();
    for v in ["2", "4", "5"] {
        check_terse(NULL_RANDREAD, Some(v), NULL_ALLOW);
    }
}

#[test]
fn null_randread_normal() {
    require_fio!();
    check_normal(NULL_RANDREAD, NULL_ALLOW);
}

/// fio's null engine is diskless: it creates and lays out no file, so it reports no disk
/// statistics.
#[test]
fn null_engine_creates_no_file() {
    require_fio!();
    let p = Pair::new();
    let mut args = NULL_RANDREAD.to_vec();
    args.push("--output-format=normal");
    let (f, i) = p.run(&args);
    let list = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        list(&p.fio_dir),
        Vec::<String>::new(),
        "fio itself created files"
    );
    assert_eq!(
        list(&p.ioscope_dir),
        list(&p.fio_dir),
        "files left by the null engine (fio: none)"
    );
    let disk = |s: &str| s.contains("Disk stats") || s.contains("Laying out IO file");
    assert!(!disk(&f.stdout), "fio:\n{}", f.stdout);
    assert!(
        !disk(&i.stdout) && !i.stderr.contains("Laying out IO file"),
        "ioscope lays out a file / reports disks for the null engine:\nstdout:\n{}\nstderr:\n{}",
        i.stdout,
        i.stderr
    );
}

// ---------------------------------------------------------------------------------------
// (2) psync randrw, mixed 70/30
// ---------------------------------------------------------------------------------------

const MIXED: Allow = Allow {
    diskless: false,
    mixed: true,
};

#[test]
fn psync_randrw_json() {
    require_fio!();
    check_json(PSYNC_RANDRW, "json", MIXED);
}

#[test]
fn psync_randrw_json_plus() {
    require_fio!();
    check_json(PSYNC_RANDRW, "json+", MIXED);
}

#[test]
fn psync_randrw_terse() {
    require_fio!();
    check_terse(PSYNC_RANDRW, None, MIXED);
}

#[test]
fn psync_randrw_terse_versions_2_4_5() {
    require_fio!();
    for v in ["2", "4", "5"] {
        check_terse(PSYNC_RANDRW, Some(v), MIXED);
    }
}

#[test]
fn psync_randrw_normal() {
    require_fio!();
    check_normal(PSYNC_RANDRW, MIXED);
}

// ---------------------------------------------------------------------------------------
// (3) libaio QD8 direct with slat/lat percentiles
// ---------------------------------------------------------------------------------------

#[test]
fn libaio_percentiles_json() {
    require_fio!();
    check_json(LIBAIO_PCT, "json", PLAIN);
}

#[test]
fn libaio_percentiles_json_plus() {
    require_fio!();
    check_json(LIBAIO_PCT, "json+", PLAIN);
}

#[test]
fn libaio_percentiles_terse() {
    require_fio!();
    check_terse(LIBAIO_PCT, None, PLAIN);
}

#[test]
fn libaio_percentiles_terse_versions_2_4_5() {
    require_fio!();
    for v in ["2", "4", "5"] {
        check_terse(LIBAIO_PCT, Some(v), PLAIN);
    }
}

#[test]
fn libaio_percentiles_normal() {
    require_fio!();
    let (_, i) = check_normal(LIBAIO_PCT, PLAIN);
    for label in ["slat percentiles", "clat percentiles", "lat percentiles"] {
        assert!(
            i.stdout.lines().any(|l| l.trim_start().starts_with(label)),
            "{label} missing:\n{}",
            i.stdout
        );
    }
}

// ---------------------------------------------------------------------------------------
// (4) sync engine with iodepth=4 (capped at 1, with a note)
// ---------------------------------------------------------------------------------------

const SYNC_NOTE: &str = "queue depth will be capped at 1";

#[test]
fn sync_qd4_json() {
    require_fio!();
    let p = Pair::new();
    let (f, i, r) = p.run_json(SYNC_QD4, "json");
    assert_same_keys(&f, &i, PLAIN, "json for sync iodepth=4");
    assert_same_counters(&f, &i, PLAIN);
    assert!(r.stderr.contains(SYNC_NOTE), "note on stderr: {}", r.stderr);
}

#[test]
fn sync_qd4_json_plus() {
    require_fio!();
    check_json(SYNC_QD4, "json+", PLAIN);
}

#[test]
fn sync_qd4_terse() {
    require_fio!();
    check_terse(SYNC_QD4, None, PLAIN);
}

#[test]
fn sync_qd4_normal() {
    require_fio!();
    let (f, i) = check_normal(SYNC_QD4, PLAIN);
    // The note: fio prints it on stdout, ioscope on stderr (intended).
    assert!(f.stdout.contains(SYNC_NOTE), "fio:\n{}", f.stdout);
    assert!(
        i.stderr.contains(SYNC_NOTE),
        "ioscope stderr:\n{}",
        i.stderr
    );
    assert!(
        !i.stdout.contains(SYNC_NOTE),
        "ioscope stdout:\n{}",
        i.stdout
    );
}

/// fio caps the depth it runs at but reports the configured one: the job header says
/// `iodepth=4`, the `latency` line `depth=4` and JSON `latency_depth` 4.
#[test]
fn sync_qd4_reports_configured_depth() {
    require_fio!();
    let p = Pair::new();
    let (f, i, _) = p.run_json(SYNC_QD4, "json");
    assert_eq!(
        i["jobs"][0]["latency_depth"], f["jobs"][0]["latency_depth"],
        "JSON latency_depth"
    );
    let mut args = SYNC_QD4.to_vec();
    args.push("--output-format=normal");
    let (f, i) = p.run(&args);
    let pick = |s: &str, needle: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.contains(needle))
            .map(|l| l.rsplit(needle).next().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        pick(&i.stdout, "iodepth="),
        pick(&f.stdout, "iodepth="),
        "job header iodepth\nfio:\n{}\nioscope:\n{}",
        f.stdout,
        i.stdout
    );
    assert_eq!(
        pick(&i.stdout, "depth="),
        pick(&f.stdout, "depth="),
        "latency line depth"
    );
}

// ---------------------------------------------------------------------------------------
// (5) numjobs=2 with group_reporting
// ---------------------------------------------------------------------------------------

#[test]
fn numjobs_group_reporting_json() {
    require_fio!();
    check_json(NUMJOBS_GROUP, "json", PLAIN);
}

#[test]
fn numjobs_group_reporting_json_plus() {
    require_fio!();
    check_json(NUMJOBS_GROUP, "json+", PLAIN);
}

#[test]
fn numjobs_group_reporting_terse() {
    require_fio!();
    check_terse(NUMJOBS_GROUP, None, PLAIN);
}

#[test]
fn numjobs_group_reporting_normal() {
    require_fio!();
    check_normal(NUMJOBS_GROUP, PLAIN);
}

// ---------------------------------------------------------------------------------------
// (6) libaio with cmdprio_percentage: per-priority statistics
// ---------------------------------------------------------------------------------------

#[test]
fn cmdprio_json() {
    require!(Prereq::Fio333, Prereq::IoprioRt);
    let p = Pair::new();
    let (f, i, _) = p.run_json(CMDPRIO, "json");
    assert_same_keys(&f, &i, PLAIN, "json for cmdprio");
    assert_same_counters(&f, &i, PLAIN);
    // Both split the reads into the same priorities (default and RT level 0).
    let prios = |v: &Value| -> Vec<(u64, u64)> {
        v["jobs"][0]["read"]["prios"]
            .as_array()
            .expect("prios")
            .iter()
            .map(|p| (u(&p["prioclass"]), u(&p["prio"])))
            .collect()
    };
    assert_eq!(prios(&i), prios(&f), "priorities in use");
}

#[test]
fn cmdprio_json_plus() {
    require!(Prereq::Fio333, Prereq::IoprioRt);
    check_json(CMDPRIO, "json+", PLAIN);
}

#[test]
fn cmdprio_terse() {
    require!(Prereq::Fio333, Prereq::IoprioRt);
    check_terse(CMDPRIO, None, PLAIN);
}

#[test]
fn cmdprio_normal() {
    require!(Prereq::Fio333, Prereq::IoprioRt);
    let (_, i) = check_normal(CMDPRIO, PLAIN);
    assert!(
        i.stdout.contains("clat prio "),
        "per-priority lines:\n{}",
        i.stdout
    );
}

// ---------------------------------------------------------------------------------------
// Bandwidth and IOPS sample lines (they need a run longer than the averaging interval)
// ---------------------------------------------------------------------------------------

#[test]
fn rated_read_has_bw_and_iops_samples() {
    require_fio!();
    // 16 MiB at 32 MiB/s: half a second, several 100 ms samples.
    let args = [
        "--name=j",
        "--rw=read",
        "--size=16m",
        "--rate=32m",
        "--bwavgtime=100",
        "--iopsavgtime=100",
    ];
    let p = Pair::new();
    let (f, i, _) = p.run_json(&args, "json");
    assert_same_keys(&f, &i, PLAIN, "json for a rated read");
    assert_same_counters(&f, &i, PLAIN);
    for (who, v) in [("fio", &f), ("ioscope", &i)] {
        let r = &v["jobs"][0]["read"];
        assert!(u(&r["bw_samples"]) > 0, "{who} bw_samples: {r}");
        assert!(u(&r["iops_samples"]) > 0, "{who} iops_samples: {r}");
    }
    let mut all = args.to_vec();
    all.push("--output-format=normal");
    let (fo, io) = p.run(&all);
    let f = kinds(&fo.stdout, PLAIN);
    let i = kinds(&io.stdout, PLAIN);
    assert!(
        f.iter().filter(|k| is_bw_iops(k)).count() == 2,
        "fio:\n{}",
        fo.stdout
    );
    assert!(
        f == i,
        "kinds of lines differ (fio | ioscope):\n{}",
        side_by_side(&f, &i)
    );
}

// ---------------------------------------------------------------------------------------
// Sequential mixed job with different read and write block sizes
// ---------------------------------------------------------------------------------------

#[test]
fn seq_rw_split_block_sizes_total_bytes() {
    require_fio!();
    let args = ["--name=j", "--rw=rw", "--bs=4k,8k", "--size=16m"];
    let p = Pair::new();
    let (f, i, _) = p.run_json(&args, "json");
    assert_same_keys(&f, &i, MIXED, "json for rw with bs=4k,8k");
    let total = |v: &Value| -> u64 { DIRS.iter().map(|d| u(&v["jobs"][0][*d]["io_bytes"])).sum() };
    assert_eq!(total(&f), 16 << 20, "fio total bytes");
    assert_eq!(total(&i), total(&f), "total bytes (read + write)");
    // Each direction moves whole blocks of its own size.
    for (d, bs) in [("read", 4096), ("write", 8192)] {
        let r = &i["jobs"][0][d];
        assert_eq!(
            u(&r["io_bytes"]),
            u(&r["total_ios"]) * bs,
            "ioscope {d} bytes vs ios"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Job file: [global] + 2 jobs + stonewall
// ---------------------------------------------------------------------------------------

const STONEWALL_FILE: &str = "\
[global]
size=16m
rw=randread
ioengine=psync

[a]

[b]
stonewall
bs=8k
";

fn groups_and_counts(v: &Value) -> Vec<(String, u64, u64, u64)> {
    v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap_or("").to_string(),
                u(&j["groupid"]),
                u(&j["read"]["total_ios"]),
                u(&j["read"]["io_bytes"]),
            )
        })
        .collect()
}

#[test]
fn jobfile_stonewall_groups_and_counts() {
    require_fio!();
    let p = Pair::new();
    p.write("sw.fio", STONEWALL_FILE);
    let (f, i, _) = p.run_json(&["sw.fio"], "json");
    assert_same_keys(&f, &i, PLAIN, "json for the stonewall job file");
    assert_same_counters(&f, &i, PLAIN);
    let fg = groups_and_counts(&f);
    assert_eq!(
        fg,
        vec![
            ("a".to_string(), 0, 4096, 16 << 20),
            ("b".to_string(), 1, 2048, 16 << 20)
        ],
        "fio"
    );
    assert_eq!(groups_and_counts(&i), fg, "job name, group id, ios, bytes");
    let groups = |v: &Value| -> Vec<u64> {
        v["group_stats"]
            .as_array()
            .map(|a| a.iter().map(|g| u(&g["groupid"])).collect())
            .unwrap_or_default()
    };
    assert_eq!(groups(&i), groups(&f), "group_stats group ids");
}

#[test]
fn jobfile_stonewall_normal_and_terse() {
    require_fio!();
    let p = Pair::new();
    p.write("sw.fio", STONEWALL_FILE);
    let (f, i) = p.run(&["sw.fio", "--output-format=normal"]);
    assert_same_kinds(
        &f.stdout,
        &i.stdout,
        PLAIN,
        "normal for the stonewall job file",
    );
    let runs = |s: &str| s.matches("Run status group").count();
    assert_eq!(runs(&f.stdout), 2, "fio:\n{}", f.stdout);
    assert_eq!(runs(&i.stdout), runs(&f.stdout), "ioscope:\n{}", i.stdout);
    let (f, i) = p.run(&["sw.fio", "--output-format=terse"]);
    assert_eq!(
        terse_counts(&i.stdout, PLAIN),
        terse_counts(&f.stdout, PLAIN),
        "terse fields per line\nfio:\n{}\nioscope:\n{}",
        f.stdout,
        i.stdout
    );
}

// ---------------------------------------------------------------------------------------
// JSON "job options": fio echoes exactly the options the job itself set
// ---------------------------------------------------------------------------------------

fn job_option_keys(v: &Value) -> Vec<Vec<String>> {
    v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            j["job options"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn json_job_options_include_command_line_name() {
    require_fio!();
    let p = Pair::new();
    let (f, i, _) = p.run_json(NULL_RANDREAD, "json");
    assert_eq!(
        job_option_keys(&f),
        vec![vec!["name", "ioengine", "size", "bs", "rw"]],
        "fio"
    );
    assert_eq!(
        job_option_keys(&i),
        job_option_keys(&f),
        "\"job options\" keys"
    );
}

#[test]
fn json_job_options_exclude_global_options() {
    require_fio!();
    let p = Pair::new();
    p.write(
        "g.fio",
        "[global]\nsize=16m\nrw=randread\n\n[a]\n\n[b]\nbs=8k\n",
    );
    let (f, i, _) = p.run_json(&["g.fio"], "json");
    assert_eq!(job_option_keys(&f), vec![vec![], vec!["bs"]], "fio");
    assert_eq!(
        job_option_keys(&i),
        job_option_keys(&f),
        "\"job options\" keys per job"
    );
    assert_eq!(
        i["global options"], f["global options"],
        "\"global options\""
    );
}

// ---------------------------------------------------------------------------------------
// The comparators themselves (so that a passing comparison means something)
// ---------------------------------------------------------------------------------------

#[test]
fn comparators_report_real_differences() {
    require_fio!();
    let fio: Value = serde_json::json!({
        "jobs": [
            {"read": {"clat_ns": {"N": 1, "percentile": {"1.0": 1}}, "prios": [{"prio": 0}]}},
            {"read": {}}
        ],
        "disk_util": [{"name": "vda"}]
    });
    let io: Value = serde_json::json!({
        "jobs": [
            {"read": {"clat_ns": {"percentile": {"1.5": 1}}, "prios": [{}]}}
        ]
    });
    let mut missing = Vec::new();
    missing_paths(&fio, &io, "", PLAIN, &mut missing);
    assert_eq!(
        missing,
        [
            "/jobs (fio has 2 jobs, ioscope 1)",
            "/jobs[0]/read/clat_ns/N",
            "/jobs[0]/read/prios[0]/prio",
            "/jobs[1]",
            "/disk_util",
        ]
    );
    let mut missing = Vec::new();
    let disk_only = serde_json::json!({"disk_util": fio["disk_util"].clone()});
    missing_paths(
        &disk_only,
        &serde_json::json!({}),
        "",
        NULL_ALLOW,
        &mut missing,
    );
    assert!(missing.is_empty(), "diskless: {missing:?}");

    let f =
        "note: x\n  clat (usec): min=1, max=2\n  lat (usec)   : 100=1%\n  lat (msec)   : 2=1%\n";
    let i = "  clat (nsec): min=1, max=2\n  lat (nsec)   : 50=1%\n";
    assert_eq!(kinds(f, PLAIN), kinds(i, PLAIN));
    let i = "  clat (nsec): min=1, avg=2\n";
    assert_ne!(kinds(f, PLAIN), kinds(i, PLAIN));

    let line = "3;fio-3.33;j;0;0;1;2;0.00%;vda;0;0;0;0;0;0;0;0.00%";
    assert_eq!(terse_counts(line, PLAIN), [17]);
    assert_eq!(terse_counts(line, NULL_ALLOW), [8]);
}
