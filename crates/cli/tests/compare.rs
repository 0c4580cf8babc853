//! `ioscope compare`: synthetic result directories (fio-shaped JSON written here) with a
//! known change and noise, the output shapes (table, --json, --markdown), a real --run
//! on the null engine, and fio 3.33's own JSON as input.

#[macro_use]
mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// splitmix64 → roughly normal noise (sum of 12 uniforms - 6), reproducible.
struct Noise(u64);
impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

/// A fio-shaped result document of one read job with bandwidth `bw` (bytes/s).
fn fio_doc(bw: f64, bs: &str) -> Value {
    let lat = 1e9 * 4096.0 / bw; // as if one 4k I/O at a time
    json!({
        "fio version": "fio-3.33",
        "jobs": [{
            "jobname": "seq", "groupid": 0,
            "job options": {"rw": "read", "bs": bs},
            "read": {
                "io_bytes": 1u64 << 30, "bw_bytes": bw as u64, "bw": (bw / 1024.0) as u64,
                "iops": bw / 4096.0, "runtime": 1000, "total_ios": 262144,
                "clat_ns": {"mean": lat, "percentile": {"50.000000": lat as u64, "99.000000": (lat * 2.0) as u64}},
                "lat_ns": {"mean": lat * 1.1}
            },
            "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0}
        }]
    })
}

/// `n` result files per side in `dir/a` and `dir/b`: B's bandwidth `gain` higher, each
/// file with relative noise `noise`.
fn sides(dir: &Path, n: usize, gain: f64, noise: f64, seed: u64) -> (String, String) {
    let mut rng = Noise(seed);
    for (side, mean, bs) in [("a", 1e9, "4k"), ("b", 1e9 * (1.0 + gain), "8k")] {
        let d = dir.join(side);
        std::fs::create_dir_all(&d).unwrap();
        for i in 1..=n {
            let bw = mean * (1.0 + noise * rng.normal());
            let text = serde_json::to_string_pretty(&fio_doc(bw, bs)).unwrap();
            std::fs::write(d.join(format!("run-{i}.json")), text).unwrap();
        }
    }
    (
        dir.join("a").display().to_string(),
        dir.join("b").display().to_string(),
    )
}

fn row<'a>(rows: &'a Value, dir: &str, metric: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["direction"] == dir && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {dir} {metric} row in {rows}"))
}

#[test]
fn five_reps_with_1_pct_noise_show_the_6_6_pct_gain_as_better() {
    let d = tmpdir();
    let (a, b) = sides(d.path(), 5, 0.066, 0.01, 1);
    let r = run_in(d.path(), &["compare", &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bw = r
        .stdout
        .lines()
        .find(|l| l.starts_with("seq") && l.contains(" bw "))
        .unwrap_or_else(|| panic!("no bw row:\n{}", r.stdout));
    assert!(bw.ends_with("better"), "{bw}");
    // No terminal: no colour codes.
    assert!(!r.stdout.contains('\x1b'), "{}", r.stdout);
    // What differs besides the results, and what fio's JSON cannot say.
    assert!(
        r.stdout.contains("job 'seq' option bs: A 4k, B 8k"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("kernel: A unknown (fio's JSON does not record it)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("version: same (fio-3.33)"),
        "{}",
        r.stdout
    );
    // The numbers: the interval holds the true 6.6%.
    let (_, v) = run_json(d.path(), &["compare", "--json", &a, &b]);
    let bw = row(&v, "read", "bw");
    let (lo, hi) = (
        bw["ci_low_pct"].as_f64().unwrap(),
        bw["ci_high_pct"].as_f64().unwrap(),
    );
    assert!(lo < 6.6 && 6.6 < hi, "{bw}");
    assert_eq!(bw["verdict"], "better");
    // Latency went down with the higher bandwidth: lower is better.
    assert_eq!(row(&v, "read", "clat_p50")["verdict"], "better");
    assert_eq!(row(&v, "read", "lat_mean")["verdict"], "better");
}

#[test]
fn two_reps_with_10_pct_noise_are_not_enough() {
    let d = tmpdir();
    let (a, b) = sides(d.path(), 2, 0.066, 0.10, 2);
    let (r, v) = run_json(d.path(), &["compare", "--json", &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bw = row(&v, "read", "bw");
    assert_eq!(bw["verdict"], "not enough repetitions", "{bw}");
    assert!(bw["p_value"].is_null());
    assert!(bw["reps_needed"].as_u64().unwrap() > 2, "{bw}");
    let r = run_in(d.path(), &["compare", &a, &b]);
    assert!(
        r.stdout.contains("not enough repetitions (need ~"),
        "{}",
        r.stdout
    );
}

#[test]
fn json_and_markdown_shapes() {
    let d = tmpdir();
    let (a, b) = sides(d.path(), 5, 0.066, 0.01, 3);
    let (_, v) = run_json(d.path(), &["compare", "--json", &a, &b]);
    let rows = v.as_array().unwrap();
    // bw, iops, lat_mean, clat_mean, clat_p50, clat_p99 of the read direction only
    // (write moved no data; p90 and p99.9 are not in these documents).
    let metrics: Vec<&str> = rows.iter().map(|r| r["metric"].as_str().unwrap()).collect();
    assert_eq!(
        metrics,
        [
            "bw",
            "iops",
            "lat_mean",
            "clat_mean",
            "clat_p50",
            "clat_p99"
        ]
    );
    for r in rows {
        for k in [
            "job",
            "direction",
            "metric",
            "a",
            "b",
            "delta_pct",
            "ci_low_pct",
            "ci_high_pct",
            "p_value",
            "verdict",
            "n_a",
            "n_b",
        ] {
            assert!(r.get(k).is_some(), "{k} missing in {r}");
        }
        assert_eq!((r["n_a"].as_u64(), r["n_b"].as_u64()), (Some(5), Some(5)));
        assert_eq!(r["job"], "seq");
        assert_eq!(r["direction"], "read");
    }
    let r = run_in(d.path(), &["compare", "--markdown", &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("| job |"))
        .expect("markdown header");
    assert_eq!(
        lines[head],
        "| job | dir | metric | A | B | delta % | 95% CI | p | verdict |"
    );
    assert!(lines[head + 1].starts_with("|---|"));
    assert!(
        lines[head + 2].starts_with("| seq | read | bw |")
            && lines[head + 2].ends_with("| better |")
    );
    assert!(lines[..head]
        .iter()
        .any(|l| l.starts_with("- job 'seq' option bs")));
}

#[test]
fn errors_name_the_file() {
    let d = tmpdir();
    let (a, _) = sides(d.path(), 1, 0.0, 0.0, 4);
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"jobs\": 3}").unwrap();
    let r = run_in(d.path(), &["compare", &a, bad.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
    let r = run_in(d.path(), &["compare", &a, "missing.json"]);
    assert!(
        r.code == 1 && r.stderr.contains("missing.json"),
        "{}",
        r.stderr
    );
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let r = run_in(d.path(), &["compare", &a, empty.to_str().unwrap()]);
    assert!(
        r.code == 1 && r.stderr.contains("no *.json"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["compare", &a]);
    assert!(
        r.code == 1 && r.stderr.contains("two operands"),
        "{}",
        r.stderr
    );
}

fn null_job(dir: &Path, name: &str, bs: &str) -> String {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("[seq]\nioengine=null\nsize=64m\nrw=read\nbs={bs}\n"),
    )
    .unwrap();
    p.display().to_string()
}

/// --repeat 3 as in the brief can never be significant with an exact rank test (its
/// smallest two-sided p for 3 vs 3 is 0.1), so it says "not enough repetitions";
/// --repeat 4 (smallest p 0.029) shows B's 16x larger blocks as better bandwidth.
#[test]
fn run_interleaves_two_job_files_and_keeps_the_results() {
    let d = tmpdir();
    let a = null_job(d.path(), "a.fio", "4k");
    let b = null_job(d.path(), "b.fio", "64k");
    let (r, v) = run_json(
        d.path(),
        &[
            "compare", "--run", "--repeat", "3", "-o", "out", "--json", &a, &b,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bw = row(&v, "read", "bw");
    assert_eq!(bw["verdict"], "not enough repetitions", "{bw}");
    assert!(bw["delta_pct"].as_f64().unwrap() > 0.0, "{bw}");
    assert!((bw["p_value"].as_f64().unwrap() - 0.1).abs() < 1e-9, "{bw}");
    let order: Vec<&str> = r
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("ioscope compare: run "))
        .collect();
    assert_eq!(order.len(), 6, "{}", r.stderr);
    assert!(
        order[0].contains("of a") && order[1].contains("of b"),
        "{order:?}"
    );
    for f in ["a-1", "b-1", "a-3", "b-3"] {
        assert!(
            d.path().join("out").join(format!("{f}.json")).is_file(),
            "{f}"
        );
    }
    let (r, v) = run_json(
        d.path(),
        &[
            "compare",
            "--run",
            "--repeat=4",
            "--output=out4",
            "--json",
            &a,
            &b,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(row(&v, "read", "bw")["verdict"], "better");
    assert_eq!(row(&v, "read", "bw")["n_a"], 4);
    assert!(r.stderr.contains("bs: A 4k, B 64k"), "{}", r.stderr);
    // ioscope's own documents know the kernel.
    assert!(r.stderr.contains("kernel: same ("), "{}", r.stderr);
    // The saved results compare again, as directories.
    let (_, again) = run_json(d.path(), &["compare", "--json", "out4", "out4"]);
    assert_eq!(row(&again, "read", "bw")["delta_pct"], 0.0);
}

#[test]
fn reads_fio_333_json() {
    if !available!(Prereq::Fio333) {
        return;
    }
    let d = tmpdir();
    let a = null_job(d.path(), "a.fio", "4k");
    let b = null_job(d.path(), "b.fio", "64k");
    for (side, job) in [("a", &a), ("b", &b)] {
        let dir = d.path().join(side);
        std::fs::create_dir(&dir).unwrap();
        for i in 1..=4 {
            let out = dir.join(format!("{i}.json"));
            let r = run_tool(
                Path::new("fio"),
                d.path(),
                &[
                    "--output-format=json",
                    &format!("--output={}", out.display()),
                    job,
                ],
                &[],
            );
            assert_eq!(r.code, 0, "fio: {}", r.stderr);
        }
    }
    let r = run_in(d.path(), &["compare", "a", "b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("version: same (fio-3.33)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("hostname: A unknown (fio's JSON does not record it)"),
        "{}",
        r.stdout
    );
    let (_, v) = run_json(d.path(), &["compare", "--json", "a", "b"]);
    assert_eq!(row(&v, "read", "bw")["verdict"], "better");
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["metric"] == "clat_p99.99"));
}
