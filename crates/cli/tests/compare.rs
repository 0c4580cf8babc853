//! `ioscope compare`: synthetic result directories (fio-shaped JSON written here) with a
//! known change and noise, the output shapes (table, --json, --markdown), a real --run
//! on the null engine, and fio 3.33's own JSON as input.

use crate::common::*;
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

/// The exit status compare gives for its rows: 2 when one is significantly worse.
fn exit_for(rows: &Value) -> i32 {
    let worse = rows
        .as_array()
        .is_some_and(|a| a.iter().any(|r| r["verdict"] == "worse"));
    if worse {
        2
    } else {
        0
    }
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
        r.code == 1 && r.stderr.contains("no result to compare"),
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

/// 4 MiB on the null engine, paced at 2000 I/Os a second: the block size alone sets the
/// bandwidth (4k: 8 MB/s over 0.5 s; 64k: 128 MB/s over 32 ms), however busy the machine
/// is — a stall would have to last about half a second to turn the order round (unpaced,
/// a few ms of the 64k side's run on a loaded machine did).
fn null_job(dir: &Path, name: &str, bs: &str) -> String {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("[seq]\nioengine=null\nsize=4m\nrw=read\nbs={bs}\nrate_iops=2000\n"),
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
    // 64k blocks: more bandwidth, and (when significant) fewer IOPS, a regression.
    assert_eq!(r.code, exit_for(&v), "{}", r.stderr);
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
    assert_eq!(r.code, exit_for(&v), "{}", r.stderr);
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
    // Rate-limited, so that B's doubled bandwidth does not depend on the machine: an
    // unlimited null job lasts 1-3 ms, and fio's whole-millisecond runtime can make A
    // and B tie on a busy machine.
    let rated = |name: &str, rate: &str| {
        let p = d.path().join(name);
        let job = format!("[seq]\nioengine=null\nsize=2m\nrw=read\nbs=4k\nrate={rate}\n");
        std::fs::write(&p, job).unwrap();
        p.display().to_string()
    };
    let a = rated("a.fio", "10m");
    let b = rated("b.fio", "20m");
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
    // Real runs: a latency row may come out significantly worse on a loaded machine,
    // and then the status is 2 (the same rows, the same verdicts, in both forms).
    let (_, v) = run_json(d.path(), &["compare", "--json", "a", "b"]);
    let r = run_in(d.path(), &["compare", "a", "b"]);
    assert_eq!(r.code, exit_for(&v), "{}", r.stderr);
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
    assert_eq!(row(&v, "read", "bw")["verdict"], "better");
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["metric"] == "clat_p99.99"));
}

/// --svg and --html, rendered by Chromium: one chart per job and direction with a bar
/// per metric, the verdict colours, and the table in the page.
#[test]
fn charts_render_in_chromium() {
    require!(Prereq::CHROMIUM);
    let d = tmpdir();
    let (a, b) = sides(d.path(), 5, 0.066, 0.01, 1);
    let svg = d.path().join("cmp.svg");
    let html = d.path().join("cmp.html");
    let r = run_in(
        d.path(),
        &[
            "compare",
            "--svg",
            &svg.display().to_string(),
            "--html",
            &html.display().to_string(),
            &a,
            &b,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    // The bw bar is green (better); a whisker per bar.
    assert!(text.contains("fill=\"#009E73\""), "no green bar in the SVG");
    let shown = render::render_svg(&svg, "compare-svg");
    shown.assert_drawn("compare --svg", 20);
    let texts = shown.texts();
    for want in ["bw", "iops", "clat_p99", "change, %"] {
        assert!(texts.contains(&want), "{want} not drawn: {texts:?}");
    }
    assert!(
        texts.iter().any(|t| t.starts_with("seq read: B against A")),
        "{texts:?}"
    );
    let page = render::render_html(&html, "compare-html");
    page.assert_drawn("compare --html", 20);
    let html_text = std::fs::read_to_string(&html).unwrap();
    assert!(html_text.contains("<td>better</td>"), "table missing");
    assert!(html_text.contains("option bs: A 4k, B 8k"));
    assert!(
        !html_text.contains("<script src") && !html_text.contains("<link"),
        "the report must be self-contained"
    );
    // The change, every repetition, and (json+ on both sides) the distributions.
    let charts = browser::specs(&html).len();
    assert!((2..=3).contains(&charts), "{charts} charts");
    browser::view(&html, 1400, 1000, None).assert_clean("compare --html", charts, 10);
}

/// --vary: one job file, one option set to two values in every job, both planned before
/// any run; the results say which value each side ran with.
#[test]
fn vary_runs_one_job_file_with_two_values() {
    let d = tmpdir();
    let job = null_job(d.path(), "j.fio", "4k");
    let (r, v) = run_json(
        d.path(),
        &[
            "compare",
            "--vary",
            "bs=4k,64k",
            "--repeat",
            "4",
            "-o",
            "out",
            "--json",
            &job,
        ],
    );
    // 64k blocks: more bandwidth, fewer IOPS and longer latencies; a row that is worse
    // is a regression (exit 2).
    let worse = v
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["verdict"] == "worse");
    assert_eq!(r.code, if worse { 2 } else { 0 }, "{}", r.stderr);
    assert_eq!(row(&v, "read", "bw")["verdict"], "better");
    assert!(r.stderr.contains("option bs: A 4k, B 64k"), "{}", r.stderr);
    assert!(r.stderr.contains("run 1/4 of b: "), "{}", r.stderr);
    let b4: Value = json_file(&d.path().join("out/b-4.json"));
    assert_eq!(b4["jobs"][0]["job options"]["bs"], "64k");
    // json+: the latency bins are kept for the shape test.
    assert!(b4["jobs"][0]["read"]["clat_ns"]["bins"].is_object(), "{b4}");
    // Bad values fail before any run, naming the value.
    let r = run_in(
        d.path(),
        &["compare", "--vary", "bs=4k,huge", "-o", "bad", &job],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("bs=huge"), "{}", r.stderr);
    assert!(
        !d.path().join("bad/a-1.json").exists(),
        "ran before checking B"
    );
    let r = run_in(d.path(), &["compare", "--vary", "nosuch=1,2", &job]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("nosuch"), "{}", r.stderr);
    let r = run_in(d.path(), &["compare", "--vary", "bs=4k", &job]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("exactly two values"), "{}", r.stderr);
}

/// A json+-shaped document of one read job whose completion latencies are `bins`
/// (ns → I/Os), with the mean and percentiles that fio would print for them.
fn jsonplus_doc(bins: &[(u64, u64)]) -> Value {
    let n: u64 = bins.iter().map(|b| b.1).sum();
    let mean = bins.iter().map(|&(v, c)| v as f64 * c as f64).sum::<f64>() / n as f64;
    let pct = |q: f64| {
        let rank = (q / 100.0 * n as f64).ceil() as u64;
        let mut seen = 0;
        bins.iter()
            .find(|&&(_, c)| {
                seen += c;
                seen >= rank
            })
            .map(|b| b.0)
            .unwrap()
    };
    let bins_obj: serde_json::Map<String, Value> = bins
        .iter()
        .map(|&(v, c)| (v.to_string(), json!(c)))
        .collect();
    json!({
        "fio version": "fio-3.33",
        "jobs": [{
            "jobname": "lat", "groupid": 0, "job options": {"rw": "randread"},
            "read": {
                "io_bytes": n * 4096, "bw_bytes": 400_000_000u64, "iops": 100000.0,
                "runtime": 1000, "total_ios": n,
                "clat_ns": {
                    "mean": mean,
                    "percentile": {"50.000000": pct(50.0), "99.000000": pct(99.0), "99.900000": pct(99.9)},
                    "bins": bins_obj
                }
            },
            "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0}
        }]
    })
}

/// Same mean, fatter tail: B's body is 2 us faster and 2% of its I/Os take ~2x. The
/// mean cannot tell them apart; the shape test and the tail rows do, and with one run
/// per side the percentile intervals come from the bins.
#[test]
fn a_fatter_tail_under_the_same_mean_is_reported() {
    let d = tmpdir();
    let a: Vec<(u64, u64)> = (90..110).map(|us| (us * 1000, 500)).collect();
    let mut b: Vec<(u64, u64)> = (88..108).map(|us| (us * 1000, 490)).collect();
    b.push((197_500, 200));
    for (name, bins) in [("a.json", &a), ("b.json", &b)] {
        let text = serde_json::to_string(&jsonplus_doc(bins)).unwrap();
        std::fs::write(d.path().join(name), text).unwrap();
    }
    let (r, v) = run_json(d.path(), &["compare", "--json", "a.json", "b.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mean = row(&v, "read", "clat_mean");
    assert!(mean["delta_pct"].as_f64().unwrap().abs() < 0.01, "{mean}");
    let shape = row(&v, "read", "clat_shape");
    assert_eq!(shape["verdict"], "shape differs", "{shape}");
    assert_eq!(shape["means_agree"], true);
    let d_ks = shape["ks_d"].as_f64().unwrap();
    assert!((0.05..0.15).contains(&d_ks), "{shape}");
    assert!(shape["p_value"].as_f64().unwrap() < 1e-6, "{shape}");
    assert!(shape["p99_9_delta_pct"].as_f64().unwrap() > 50.0, "{shape}");
    // One run per side: the p99 interval is the within-run one, and excludes 0.
    let p99 = row(&v, "read", "clat_p99");
    assert_eq!(p99["ci_source"], "bins", "{p99}");
    assert!(p99["ci_low_pct"].as_f64().unwrap() > 0.0, "{p99}");
    assert_eq!(p99["verdict"], "not enough repetitions");
    let r = run_in(d.path(), &["compare", "a.json", "b.json"]);
    assert!(
        r.stdout
            .contains("latency shape lat read: shape differs (KS D=")
            && r.stdout
                .contains("the means are within 1% but the distributions differ"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("* within-run interval"), "{}", r.stdout);
    // A side against itself: same shape.
    let (_, v) = run_json(d.path(), &["compare", "--json", "a.json", "a.json"]);
    assert_eq!(row(&v, "read", "clat_shape")["verdict"], "same shape");
}

/// One run per side, B's latencies five times A's: the mean row says "not enough
/// repetitions", and the shape line must not call the means equal (it said "the means
/// agree" next to clat_mean +394.7%).
#[test]
fn the_shape_line_follows_the_mean_rows_verdict() {
    let d = tmpdir();
    let a: Vec<(u64, u64)> = (90..110).map(|us| (us * 1000, 500)).collect();
    let b: Vec<(u64, u64)> = (90..110).map(|us| (us * 5000, 500)).collect();
    for (name, bins) in [("a.json", &a), ("b.json", &b)] {
        let text = serde_json::to_string(&jsonplus_doc(bins)).unwrap();
        std::fs::write(d.path().join(name), text).unwrap();
    }
    let (r, v) = run_json(d.path(), &["compare", "--json", "a.json", "b.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mean = row(&v, "read", "clat_mean");
    assert_eq!(mean["verdict"], "not enough repetitions", "{mean}");
    assert!(mean["delta_pct"].as_f64().unwrap() > 390.0, "{mean}");
    let shape = row(&v, "read", "clat_shape");
    assert_eq!(shape["means_agree"], false, "{shape}");
    let r = run_in(d.path(), &["compare", "a.json", "b.json"]);
    assert!(!r.stdout.contains("means agree"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("the means differ by +400.0% as well (too few repetitions to test it)"),
        "{}",
        r.stdout
    );
}

/// `compare --run` stopped by SIGINT: the repetitions that finished are compared and
/// printed, the one cut short is left out and named, and the exit status is 130 (it
/// exited 1 with no table).
#[test]
fn an_interrupted_compare_run_prints_what_finished() {
    let d = tmpdir();
    for (name, bs) in [("a.fio", "4k"), ("b.fio", "8k")] {
        let job = format!(
            "[j]\nioengine=null\nsize=1g\nbs={bs}\nrate_iops=2000\nruntime=1\ntime_based\n"
        );
        std::fs::write(d.path().join(name), job).unwrap();
    }
    // The signal comes once the first pair has finished (b-1.json appears whole, by a
    // rename), during the second pair.
    let child = std::process::Command::new(bin())
        .args([
            "compare",
            "--run",
            "--repeat=5",
            "-o",
            "out",
            "a.fio",
            "b.fio",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !d.path().join("out/b-1.json").exists() {
        assert!(
            started.elapsed().as_secs() < 120,
            "the first pair never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signals a child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("ioscope compare: interrupted; comparing the"),
        "{stderr}"
    );
    assert!(
        stdout.contains("A: a.fio (") && stdout.contains("iops"),
        "the table: {stdout}"
    );
    let cut = stderr
        .lines()
        .any(|l| l.contains("skipped: the run was interrupted"));
    let pairs = std::fs::read_dir(d.path().join("out")).unwrap().count();
    assert!(cut || pairs % 2 == 0, "a run cut short is named: {stderr}");
}

#[test]
fn a_significant_regression_exits_2_and_an_improvement_0() {
    let d = tmpdir();
    // B 6.6% slower, five repetitions a side with 1% noise: worse, beyond the noise.
    let (a, b) = sides(d.path(), 5, -0.066, 0.01, 1);
    let r = run_in(d.path(), &["compare", &a, &b]);
    assert_eq!(r.code, 2, "a regression: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.contains(" bw ") && l.ends_with("worse")),
        "{}",
        r.stdout
    );
    let (r, v) = run_json(d.path(), &["compare", "--json", &a, &b]);
    assert_eq!(r.code, 2);
    assert_eq!(row(&v, "read", "bw")["verdict"], "worse");
    // The other way round it is an improvement.
    let r = run_in(d.path(), &["compare", &b, &a]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Within the noise (two repetitions): no verdict, no regression.
    let e = tmpdir();
    let (a, b) = sides(e.path(), 2, -0.066, 0.10, 3);
    let r = run_in(e.path(), &["compare", &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// `compare` of two sides whose bandwidth differs clearly, with a pseudo-terminal on
/// stdout when `tty` (util-linux's script), and environment `env`.
fn compare_output(
    dir: &Path,
    a: &str,
    b: &str,
    flags: &[&str],
    tty: bool,
    env: &[(&str, &str)],
) -> String {
    let mut args: Vec<String> = vec!["compare".into(), a.into(), b.into()];
    args.extend(flags.iter().map(|f| f.to_string()));
    let mut cmd = if tty {
        let line = std::iter::once(bin().display().to_string())
            .chain(args)
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &line, "/dev/null"]);
        c
    } else {
        let mut c = std::process::Command::new(bin());
        c.args(&args);
        c
    };
    cmd.current_dir(dir).env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run compare");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn colour_follows_the_flag_no_color_and_the_terminal() {
    require!(Prereq::Program {
        name: "script",
        package: "util-linux"
    });
    let d = tmpdir();
    let (a, b) = sides(d.path(), 5, 0.066, 0.01, 1);
    let coloured = |flags: &[&str], tty: bool, env: &[(&str, &str)]| {
        compare_output(d.path(), &a, &b, flags, tty, env).contains("\x1b[")
    };
    // A terminal gets colour; a pipe does not.
    assert!(coloured(&[], true, &[]));
    assert!(!coloured(&[], false, &[]));
    // NO_COLOR (set, not empty) turns it off; an empty one does not.
    assert!(!coloured(&[], true, &[("NO_COLOR", "1")]));
    assert!(coloured(&[], true, &[("NO_COLOR", "")]));
    // The flag wins over both.
    assert!(coloured(&["--color=always"], false, &[("NO_COLOR", "1")]));
    assert!(!coloured(&["--color=never"], true, &[]));
    assert!(!coloured(&["--colour=never"], true, &[]));
    // The fio face and every other command take it too; a wrong word is refused.
    let r = run_in(
        d.path(),
        &["--color=never", "--name=x", "--ioengine=null", "--size=1m"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for cmd in [
        "quick", "sweep", "report", "plot", "log", "fairness", "peak", "help",
    ] {
        let r = run_in(d.path(), &[cmd, "--color=sometimes"]);
        assert_eq!(r.code, 1, "{cmd}");
        assert!(
            r.stderr
                .contains("--color=sometimes: use auto, always or never"),
            "{cmd}: {}",
            r.stderr
        );
    }
}

#[test]
fn status_lines_never_go_into_files_or_pipes() {
    let d = tmpdir();
    // A run long enough for the status line to be due, stdout and stderr both pipes.
    let r = run_in(
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--bs=4k",
            "--time_based",
            "--runtime=2500ms",
            "--rate_iops=2000",
            "--output=out.txt",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = std::fs::read_to_string(d.path().join("out.txt")).unwrap();
    for (what, text) in [
        ("stdout", &r.stdout),
        ("stderr", &r.stderr),
        ("--output", &file),
    ] {
        assert!(
            !text.contains('\r') && !text.contains('\x1b'),
            "a status line in {what}: {text:?}"
        );
    }
}
