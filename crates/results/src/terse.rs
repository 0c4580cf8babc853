//! fio's terse output, version 3 (`--minimal`, `--output-format=terse`): one `;`-separated
//! line per job, turned into the JSON shape fio's `--output-format=json` has, so the
//! rest of ioscope reads old terse campaigns (fio-tests' `.out` files) like any result.
//!
//! Per direction (read from field 6, write from field 47, 1-based) terse v3 has 41
//! fields: KiB, bandwidth (KiB/s), IOPS, runtime (ms); slat, clat min/max/mean/stdev
//! (µs); 20 percentile fields `p%=µs`; lat min/max/mean/stdev (µs); bw min/max/agg
//! %/mean/stdev.

use serde_json::{json, Map, Value};

const READ_BASE: usize = 5;
const WRITE_BASE: usize = 46;
const DIR_FIELDS: usize = 41;

/// One terse v3 line as a JSON result document with one job.
pub fn terse_v3_to_value(line: &str) -> Result<Value, String> {
    let f: Vec<&str> = line.trim().split(';').collect();
    match f.first() {
        Some(&"3") => {}
        Some(v) if v.parse::<u32>().is_ok() => {
            return Err(format!(
                "terse version {v} is not supported yet (version 3 is)"
            ))
        }
        _ => return Err("not a terse line: it does not start with a version number".into()),
    }
    if f.len() < WRITE_BASE + DIR_FIELDS {
        return Err(format!(
            "a terse v3 line has at least {} fields, this one {}",
            WRITE_BASE + DIR_FIELDS,
            f.len()
        ));
    }
    let int = |i: usize| -> Result<u64, String> {
        let t = f[i].trim();
        t.parse::<u64>()
            .or_else(|_| t.parse::<f64>().map(|x| x.max(0.0) as u64))
            .map_err(|_| format!("field {}: '{t}' is not a number", i + 1))
    };
    let job = json!({
        "jobname": f[2],
        "groupid": int(3)?,
        "error": int(4)?,
        "read": direction(&f, READ_BASE)?,
        "write": direction(&f, WRITE_BASE)?,
    });
    Ok(json!({"fio version": f[1], "jobs": [job]}))
}

fn float(f: &[&str], i: usize) -> Result<f64, String> {
    let t = f[i].trim().trim_end_matches('%');
    t.parse::<f64>()
        .map_err(|_| format!("field {}: '{t}' is not a number", i + 1))
}

/// min, max, mean, stdev in µs → fio's `*_ns` object.
fn lat(f: &[&str], i: usize, pct: Option<Map<String, Value>>) -> Result<Value, String> {
    let us = |k: usize| float(f, i + k).map(|v| v * 1000.0);
    let mut m = Map::new();
    m.insert("min".into(), json!(us(0)? as u64));
    m.insert("max".into(), json!(us(1)? as u64));
    m.insert("mean".into(), json!(us(2)?));
    m.insert("stddev".into(), json!(us(3)?));
    if let Some(p) = pct.filter(|p| !p.is_empty()) {
        m.insert("percentile".into(), Value::Object(p));
    }
    Ok(Value::Object(m))
}

fn direction(f: &[&str], b: usize) -> Result<Value, String> {
    let kb = float(f, b)? as u64;
    let bw = float(f, b + 1)?;
    let iops = float(f, b + 2)?;
    let runtime = float(f, b + 3)? as u64;
    let mut pct = Map::new();
    for field in &f[b + 12..b + 32] {
        let Some((p, v)) = field.split_once("%=") else {
            continue;
        };
        let (Ok(p), Ok(v)) = (p.parse::<f64>(), v.trim().parse::<u64>()) else {
            continue;
        };
        if p > 0.0 {
            pct.insert(format!("{p:.6}"), json!(v * 1000));
        }
    }
    Ok(json!({
        "io_bytes": kb * 1024,
        "io_kbytes": kb,
        "bw_bytes": (bw * 1024.0) as u64,
        "bw": bw as u64,
        "iops": iops,
        "runtime": runtime,
        "total_ios": (iops * runtime as f64 / 1000.0).round() as u64,
        "slat_ns": lat(f, b + 4, None)?,
        "clat_ns": lat(f, b + 8, Some(pct))?,
        "lat_ns": lat(f, b + 32, None)?,
        "bw_min": float(f, b + 36)? as u64,
        "bw_max": float(f, b + 37)? as u64,
        "bw_agg": float(f, b + 38)?,
        "bw_mean": float(f, b + 39)?,
        "bw_dev": float(f, b + 40)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real fio 3.33 psync line (its first 60 fields, as in fio-compat.md), padded.
    fn line() -> String {
        let mut f: Vec<String> = "3;fio-3.33;jt2;0;0;8192;90021;22505;91;0;0;0.000000;0.000000;32;1031;43.599788;37.176810;1.000000%=33;5.000000%=34;10.000000%=34;20.000000%=35;30.000000%=35;40.000000%=36;50.000000%=38;60.000000%=40;70.000000%=41;80.000000%=43;90.000000%=50;95.000000%=58;99.000000%=129;99.500000%=216;99.900000%=626;99.950000%=659;99.990000%=1028;0%=0;0%=0;0%=0;32;1031;43.631732;37.178711;0;0;0.000000%;0.000000;0.000000"
            .split(';')
            .map(String::from)
            .collect();
        let write: Vec<String> = "0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000"
            .split(';')
            .map(String::from)
            .chain(std::iter::repeat("0%=0".to_string()).take(20))
            .chain(
                "0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000"
                    .split(';')
                    .map(String::from),
            )
            .collect();
        f.extend(write);
        f.extend(["0.000000%".into(), "43.333333%".into(), "2045".into()]);
        f.join(";")
    }

    #[test]
    fn a_v3_line_reads_as_fio_json() {
        let v = terse_v3_to_value(&line()).unwrap();
        let r = &v["jobs"][0]["read"];
        assert_eq!(v["fio version"], "fio-3.33");
        assert_eq!(v["jobs"][0]["jobname"], "jt2");
        assert_eq!(r["io_bytes"], 8192 * 1024);
        assert_eq!(r["bw_bytes"], 90021 * 1024);
        assert_eq!(r["iops"], 22505.0);
        assert_eq!(r["runtime"], 91);
        assert!((r["clat_ns"]["mean"].as_f64().unwrap() - 43599.788).abs() < 1e-6);
        assert_eq!(r["clat_ns"]["percentile"]["99.000000"], 129_000);
        assert!(r["clat_ns"]["percentile"].get("0.000000").is_none());
        assert_eq!(v["jobs"][0]["write"]["io_bytes"], 0);
        // And the reader takes it as any fio document.
        let rf = crate::from_value(&v, std::path::Path::new("x")).unwrap();
        assert_eq!(rf.jobs[0].dirs[0].metric("clat_p99"), Some(129_000.0));
    }

    #[test]
    fn other_versions_and_garbage_are_refused_by_name() {
        assert!(terse_v3_to_value("2;jt;0;0")
            .unwrap_err()
            .contains("terse version 2 is not supported yet"));
        assert!(terse_v3_to_value("fio: bad option")
            .unwrap_err()
            .contains("not a terse line"));
        assert!(terse_v3_to_value("3;fio-3.33;j")
            .unwrap_err()
            .contains("at least 87 fields"));
    }
}
