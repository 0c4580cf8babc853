//! JSON document → [`ResultFile`]. Tolerant of what differs between fio versions and
//! ioscope (missing sections read as empty), strict about what the document must have
//! (a `jobs` array of objects with a `jobname`).

use crate::{Dir, Disk, Job, Meta, Prio, ResultFile, ResultsError, SweepTag, DIR_NAMES};
use serde_json::{Map, Value};
use std::path::Path;

/// Read and parse the result file at `path`.
pub fn read_file(path: &Path) -> Result<ResultFile, ResultsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, path)
}

/// Parse the text of a result file; `origin` names it in errors.
///
/// fio prints error and warning lines on stdout before the document (and some runs
/// append a normal-format report after it), so parsing starts at the first `{` and
/// stops after the first complete JSON value.
pub fn parse_str(text: &str, origin: &Path) -> Result<ResultFile, ResultsError> {
    let start = text.find('{').ok_or_else(|| ResultsError::NoJson {
        path: origin.to_path_buf(),
    })?;
    let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(v)) => v,
        Some(Err(source)) => {
            return Err(ResultsError::Json {
                path: origin.to_path_buf(),
                source,
            })
        }
        None => {
            return Err(ResultsError::NoJson {
                path: origin.to_path_buf(),
            })
        }
    };
    from_value(&value, origin)
}

/// Every JSON document of a file, in order: `--status-interval` output holds one per
/// interval (lines between them, fio's notices, are skipped).
pub fn parse_all(text: &str, origin: &Path) -> Result<Vec<ResultFile>, ResultsError> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let mut it = serde_json::Deserializer::from_str(&rest[start..]).into_iter::<Value>();
        match it.next() {
            Some(Ok(v)) => {
                out.push(from_value(&v, origin)?);
                rest = &rest[start + it.byte_offset()..];
            }
            Some(Err(source)) => {
                return Err(ResultsError::Json {
                    path: origin.to_path_buf(),
                    source,
                })
            }
            None => break,
        }
    }
    if out.is_empty() {
        return Err(ResultsError::NoJson {
            path: origin.to_path_buf(),
        });
    }
    Ok(out)
}

/// Read an already parsed document (ioscope's own `json_value`, for instance).
pub fn from_value(v: &Value, origin: &Path) -> Result<ResultFile, ResultsError> {
    let bad = |why: String| ResultsError::NotAResult {
        path: origin.to_path_buf(),
        why,
    };
    let doc = v
        .as_object()
        .ok_or_else(|| bad("the document is not a JSON object".into()))?;
    let jobs = match (doc.get("jobs"), doc.get("client_stats")) {
        (Some(j), _) => j
            .as_array()
            .ok_or_else(|| bad("\"jobs\" is not an array".into()))?
            .iter()
            .collect(),
        (None, Some(c)) => client_jobs(
            c.as_array()
                .ok_or_else(|| bad("\"client_stats\" is not an array".into()))?,
        ),
        (None, None) => return Err(bad("no \"jobs\" array".into())),
    };
    let jobs = jobs
        .into_iter()
        .enumerate()
        .map(|(i, j)| job(j).map_err(|why| bad(format!("job {}: {why}", i + 1))))
        .collect::<Result<Vec<Job>, ResultsError>>()?;
    Ok(ResultFile {
        version: doc
            .get("fio version")
            .and_then(Value::as_str)
            .map(str::to_string),
        global_options: doc
            .get("global options")
            .and_then(Value::as_object)
            .map(options)
            .unwrap_or_default(),
        groups: crate::groups_of(&jobs),
        jobs,
        disks: doc
            .get("disk_util")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(disk).collect())
            .unwrap_or_default(),
        meta: doc.get("ioscope").and_then(Value::as_object).map(meta),
    })
}

/// The jobs of fio's client/server document (and of ioscope under MPI): the "All
/// clients" aggregate entries when there are any (one per group, over every host),
/// else the one host's entries.
fn client_jobs(entries: &[Value]) -> Vec<&Value> {
    let all = |e: &&Value| {
        ["hostname", "jobname"]
            .iter()
            .any(|k| e.get(*k).and_then(Value::as_str) == Some("All clients"))
    };
    match entries.iter().any(|e| all(&e)) {
        true => entries.iter().filter(all).collect(),
        false => entries.iter().collect(),
    }
}

fn meta(o: &Map<String, Value>) -> Meta {
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    Meta {
        ioscope_version: s("ioscope_version"),
        kernel: s("kernel"),
        hostname: s("hostname"),
        cpu_model: s("cpu_model"),
        sweep: o.get("sweep").and_then(Value::as_object).map(sweep_tag),
        interrupted: o
            .get("interrupted")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

fn sweep_tag(o: &Map<String, Value>) -> SweepTag {
    let s = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    SweepTag {
        sweep: s("sweep"),
        profile: s("profile"),
        key: s("key"),
        axes: o
            .get("axes")
            .and_then(Value::as_object)
            .map(|a| {
                a.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn job(v: &Value) -> Result<Job, String> {
    let o = v.as_object().ok_or("not a JSON object")?;
    let name = o
        .get("jobname")
        .and_then(Value::as_str)
        .ok_or("no \"jobname\"")?
        .to_string();
    let mut dirs: [Dir; 3] = Default::default();
    for (d, key) in DIR_NAMES.iter().enumerate() {
        if let Some(x) = o.get(*key) {
            dirs[d] = dir(x).map_err(|why| format!("{name}: {key}: {why}"))?;
        }
    }
    Ok(Job {
        groupid: o.get("groupid").and_then(Value::as_u64).unwrap_or(0) as u32,
        options: o
            .get("job options")
            .and_then(Value::as_object)
            .map(options)
            .unwrap_or_default(),
        job_runtime_ms: o.get("job_runtime").and_then(Value::as_u64).unwrap_or(0),
        dirs,
        name,
    })
}

/// fio writes option values as strings; numbers are accepted too (hand-written files).
/// Names are echoed as the user wrote them (`ba=4k`); analyses look them up by their
/// canonical name (`blockalign`), so that both spellings are one option.
fn options(m: &Map<String, Value>) -> Vec<(String, String)> {
    m.iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let name = ioscope_options::table::find(k).map_or(k.as_str(), |d| d.name);
            (name.to_string(), s)
        })
        .collect()
}

fn dir(v: &Value) -> Result<Dir, String> {
    let o = v.as_object().ok_or("not a JSON object")?;
    let io_bytes = match o.get("io_bytes") {
        Some(x) => x.as_u64().ok_or("io_bytes is not a non-negative integer")?,
        // fio 2.x wrote only io_kbytes ("io_bytes" is in KiB there too).
        None => o.get("io_kbytes").and_then(Value::as_u64).unwrap_or(0) * 1024,
    };
    let u = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(Dir {
        io_bytes,
        bw_bytes: match o.get("bw_bytes").and_then(Value::as_u64) {
            Some(b) => b,
            None => u("bw") * 1024,
        },
        iops: o.get("iops").and_then(Value::as_f64).unwrap_or(0.0),
        runtime_ms: u("runtime"),
        total_ios: u("total_ios"),
        clat_pct: percentiles(o.get("clat_ns")),
        lat_pct: percentiles(o.get("lat_ns")),
        clat_mean_ns: o
            .get("clat_ns")
            .and_then(|c| c.get("mean"))
            .and_then(Value::as_f64),
        lat_mean_ns: o
            .get("lat_ns")
            .and_then(|c| c.get("mean"))
            .and_then(Value::as_f64),
        clat_bins: bins(o.get("clat_ns")).map_err(|why| format!("clat_ns: bins: {why}"))?,
        prios: match o.get("prios").and_then(Value::as_array) {
            Some(a) => a.iter().map(prio).collect::<Result<_, _>>()?,
            None => Vec::new(),
        },
    })
}

/// One entry of a direction's `prios`.
fn prio(v: &Value) -> Result<Prio, String> {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
    let lat = v.get("clat_ns").or_else(|| v.get("lat_ns"));
    Ok(Prio {
        class: n("prioclass"),
        level: n("prio"),
        total_ios: lat
            .and_then(|l| l.get("N"))
            .and_then(Value::as_u64)
            .unwrap_or(0),
        pct: percentiles(lat),
        bins: bins(lat).map_err(|why| format!("prios: bins: {why}"))?,
    })
}

/// json+'s `{"bins": {"1234": 5, …}}` (ns → I/Os) → [(1234, 5), …] ascending. A bin
/// that is not a latency with a count is an error: percentiles and confidence
/// intervals are computed from these.
fn bins(lat: Option<&Value>) -> Result<Vec<(u64, u64)>, String> {
    let Some(b) = lat.and_then(|l| l.get("bins")) else {
        return Ok(Vec::new());
    };
    let m = b.as_object().ok_or("not a JSON object")?;
    let mut v = Vec::with_capacity(m.len());
    for (k, n) in m {
        let ns = k
            .parse::<u64>()
            .map_err(|_| format!("\"{k}\" is not a latency in ns"))?;
        let count = n
            .as_u64()
            .ok_or_else(|| format!("\"{k}\": {n} is not a count of I/Os"))?;
        if count > 0 {
            v.push((ns, count));
        }
    }
    v.sort_unstable();
    Ok(v)
}

/// `{"percentile": {"50.000000": 123, …}}` → [(50.0, 123), …] in ascending order.
fn percentiles(lat: Option<&Value>) -> Vec<(f64, u64)> {
    let Some(m) = lat
        .and_then(|l| l.get("percentile"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let mut v: Vec<(f64, u64)> = m
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_u64()?)))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn disk(v: &Value) -> Option<Disk> {
    let o = v.as_object()?;
    let u = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Disk {
        name: o.get("name")?.as_str()?.to_string(),
        read_ios: u("read_ios"),
        write_ios: u("write_ios"),
        util: o.get("util").and_then(Value::as_f64).unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn testdata(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(name)
    }

    #[test]
    fn reads_fio_json_with_prios_and_percentiles() {
        let r = read_file(&testdata("fio333_libaio_cmdprio.json")).expect("parses");
        assert_eq!(r.version.as_deref(), Some("fio-3.33"));
        assert_eq!(r.jobs.len(), 1);
        let j = &r.jobs[0];
        assert_eq!(j.name, "j1");
        assert_eq!(j.dirs[0].io_bytes, 52957184);
        assert_eq!(j.dirs[0].bw_bytes, 52904279);
        assert_eq!(j.dirs[0].runtime_ms, 1001);
        assert_eq!(j.option("cmdprio_class", &r), Some("1"));
        assert_eq!(j.options_with_prefix("cmdprio").count(), 2);
        assert!(j.dirs[0]
            .clat_pct
            .iter()
            .any(|&(p, ns)| p == 50.0 && ns == 72192));
        // fio's per-priority latency: the job's own (none/0) and cmdprio's rt/0.
        let prios = &j.dirs[0].prios;
        assert_eq!(prios.len(), 2);
        assert_eq!((prios[1].name(), prios[1].total_ios), ("rt/0".into(), 3965));
        assert!(prios[0].pct.iter().any(|&(p, ns)| p == 50.0 && ns == 82432));
        assert!(prios[1].pct.iter().any(|&(p, ns)| p == 50.0 && ns == 52992));
        assert_eq!(r.disks[0].name, "vda");
        // One job: min = max = its own bandwidth (bytes * 1000 / runtime).
        let g = &r.groups[0].dirs[0];
        assert_eq!(g.min_bw, 52957184 * 1000 / 1001);
        assert_eq!(g.min_bw, g.max_bw);
    }

    /// json+ bins with a negative, fractional or non-numeric count, or a key that is
    /// not a latency, are refused naming the bin (they were dropped, skewing the
    /// percentiles computed from the rest).
    #[test]
    fn bad_json_plus_bins_are_refused() {
        let doc = |bins: &str| {
            format!(
                r#"{{"jobs": [{{"jobname": "j", "read": {{"io_bytes": 1, "clat_ns": {{"bins": {bins}}}}}}}]}}"#
            )
        };
        let ok = parse_str(&doc(r#"{"2000": 3, "1000": 1, "5": 0}"#), Path::new("x")).unwrap();
        assert_eq!(ok.jobs[0].dirs[0].clat_bins, [(1000, 1), (2000, 3)]);
        for (bins, why) in [
            (r#"{"1000": -5}"#, r#""1000": -5 is not a count of I/Os"#),
            (
                r#"{"1000": "many"}"#,
                r#""1000": "many" is not a count of I/Os"#,
            ),
            (r#"{"1000": 1.5}"#, r#""1000": 1.5 is not a count of I/Os"#),
            (r#"{"fast": 1}"#, r#""fast" is not a latency in ns"#),
            ("[1, 2]", "not a JSON object"),
        ] {
            let e = parse_str(&doc(bins), Path::new("x"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("read: clat_ns: bins: {why}")), "{e}");
        }
    }

    #[test]
    fn client_documents_read_as_their_aggregate() {
        let entry = |host: &str, name: &str, ios: u64| {
            format!(
                r#"{{"jobname": "{name}", "groupid": 0, "hostname": "{host}", "port": 0,
                    "read": {{"io_bytes": {b}, "bw_bytes": 1, "iops": 1.0, "runtime": 1, "total_ios": {ios}}}}}"#,
                b = ios * 4096
            )
        };
        let many = format!(
            r#"{{"client_stats": [{}, {}, {}]}}"#,
            entry("h1", "j", 10),
            entry("h2", "j", 20),
            entry("All clients", "All clients", 30)
        );
        let r = parse_str(&many, Path::new("c.json")).expect("parses");
        assert_eq!(r.jobs.len(), 1, "the aggregate, not the hosts");
        assert_eq!(r.jobs[0].name, "All clients");
        assert_eq!(r.jobs[0].dirs[0].total_ios, 30);
        let one = format!(r#"{{"client_stats": [{}]}}"#, entry("h1", "j", 10));
        let r = parse_str(&one, Path::new("c.json")).expect("parses");
        assert_eq!(r.jobs.len(), 1, "one host: its entry");
        assert_eq!(r.jobs[0].name, "j");
        let neither = parse_str("{}", Path::new("c.json")).expect_err("no jobs");
        assert!(neither.to_string().contains("no \"jobs\""), "{neither}");
    }

    #[test]
    fn reads_ioscope_metadata_and_none_for_fio() {
        let text = r#"{"jobs": [], "ioscope": {"kernel": "6.1.0", "hostname": "h", "ioscope_version": "0.1"}}"#;
        let r = parse_str(text, Path::new("x.json")).expect("parses");
        let m = r.meta.expect("meta");
        assert_eq!(m.kernel.as_deref(), Some("6.1.0"));
        assert_eq!(m.hostname.as_deref(), Some("h"));
        assert_eq!(m.cpu_model, None);
        let r = read_file(&testdata("fio333_null_jsonplus.json")).expect("parses");
        assert_eq!(r.meta, None);
    }

    #[test]
    fn metrics_by_name() {
        let r = read_file(&testdata("fio333_libaio_cmdprio.json")).expect("parses");
        let d = &r.jobs[0].dirs[0];
        assert_eq!(d.metric("bw"), Some(52904279.0));
        assert_eq!(d.metric("clat_p50"), Some(72192.0));
        assert!(d.metric("clat_mean").is_some());
        assert_eq!(d.metric("clat_p42"), None);
        assert_eq!(d.metric("nonsense"), None);
    }

    #[test]
    fn reads_json_plus() {
        let r = read_file(&testdata("fio333_null_jsonplus.json")).expect("parses");
        assert_eq!(r.jobs[0].name, "jp");
        assert_eq!(r.jobs[0].dirs[0].io_bytes, 65536);
    }

    #[test]
    fn skips_error_lines_before_the_document() {
        let text = "fio: some error on stdout\n{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": 5}}]}\ntrailing";
        let r = parse_str(text, Path::new("x.json")).expect("parses");
        assert_eq!(r.jobs[0].dirs[0].io_bytes, 5);
    }

    #[test]
    fn errors_name_the_file() {
        let p = Path::new("bad.json");
        for text in [
            "no json here",
            "{\"jobs\": [",
            "{\"foo\": 1}",
            "{\"jobs\": [1]}",
        ] {
            let e = parse_str(text, p).expect_err(text).to_string();
            assert!(e.starts_with("bad.json: "), "{e}");
        }
        let e = read_file(Path::new("/nonexistent/r.json")).expect_err("missing");
        assert!(e.to_string().contains("/nonexistent/r.json"), "{e}");
    }

    #[test]
    fn groups_take_min_and_max_over_jobs() {
        let text = r#"{"jobs": [
            {"jobname": "a", "groupid": 0, "read": {"io_bytes": 1000, "runtime": 1000}},
            {"jobname": "b", "groupid": 0, "read": {"io_bytes": 4000, "runtime": 2000}},
            {"jobname": "c", "groupid": 1, "read": {"io_bytes": 7, "runtime": 1}}]}"#;
        let r = parse_str(text, Path::new("g.json")).expect("parses");
        assert_eq!(r.groups.len(), 2);
        let g = &r.groups[0].dirs[0];
        assert_eq!((g.min_bw, g.max_bw, g.agg_bw), (1000, 2000, 2500));
        assert_eq!((g.min_run_ms, g.max_run_ms), (1000, 2000));
    }

    #[test]
    fn global_options_apply_to_jobs() {
        let text = r#"{"global options": {"prioclass": "2"},
            "jobs": [{"jobname": "a", "job options": {"prio": 3}}]}"#;
        let r = parse_str(text, Path::new("g.json")).expect("parses");
        let j = &r.jobs[0];
        assert_eq!(j.option("prio", &r), Some("3"));
        assert_eq!(j.option("prioclass", &r), Some("2"));
        assert_eq!(j.option("ioscheduler", &r), None);
    }
}
