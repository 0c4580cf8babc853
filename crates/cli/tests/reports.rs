//! The interactive HTML reports (issue 29): rendered in headless Chromium as a user
//! opens them — no console errors, nothing fetched, every chart drawn with its texts
//! inside and apart, a value under the mouse — at any number of series; and `report`
//! summing job clones as fio's group reporting does.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// fio-style results of the null engine: one file per profile, iodepth and numjobs,
/// json+ (with histograms), no group_reporting (clones reported one by one).
fn null_results(dir: &Path, profiles: &[&str], depths: &[u32], jobs: &[u32]) {
    std::fs::create_dir_all(dir).unwrap();
    for rw in profiles {
        for qd in depths {
            for nj in jobs {
                let out = dir.join(format!("{rw}-qd{qd}-nj{nj}.json"));
                let r = run_in(
                    dir,
                    &[
                        "--name=j",
                        "--ioengine=null",
                        "--size=2m",
                        "--bs=4k",
                        &format!("--rw={rw}"),
                        &format!("--iodepth={qd}"),
                        &format!("--numjobs={nj}"),
                        "--output-format=json+",
                        &format!("--output={}", out.display()),
                    ],
                );
                assert_eq!(r.code, 0, "{}", r.stderr);
            }
        }
    }
}

fn charts_in(html: &Path) -> usize {
    std::fs::read_to_string(html)
        .unwrap()
        .matches("<div class=\"chart\" data-spec=")
        .count()
}

/// A point with numjobs=2 is both clones summed: its IOPS, I/Os and bandwidth are the
/// sums of the clones' in the source document, and the page says how it was made.
#[test]
fn report_sums_job_clones_like_group_reporting() {
    let d = tmpdir();
    let res = d.path().join("res");
    null_results(&res, &["randread"], &[1, 4], &[1, 2]);
    let r = run_in(d.path(), &["report", "res", "-o", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let table = json_file(&d.path().join("out/results.json"));
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "a row per point, not per clone: {rows:#?}");
    for qd in ["1", "4"] {
        let src = json_file(&res.join(format!("randread-qd{qd}-nj2.json")));
        let clones = src["jobs"].as_array().unwrap();
        assert_eq!(clones.len(), 2);
        let sum = |k: &str| -> f64 { clones.iter().map(|j| j["read"][k].as_f64().unwrap()).sum() };
        let row = rows
            .iter()
            .find(|r| r["iodepth"] == qd && r["numjobs"] == "2")
            .unwrap_or_else(|| panic!("no row for qd{qd} nj2: {rows:#?}"));
        let iops = row["iops"].as_f64().unwrap();
        assert!(
            (iops - sum("iops")).abs() < 0.01,
            "{iops} vs {}",
            sum("iops")
        );
        assert_eq!(row["io_kib"].as_f64().unwrap(), sum("io_bytes") / 1024.0);
        assert_eq!(sum("total_ios"), 1024.0, "2 clones × 2 MiB of 4k");
        assert!(
            row["aggregation"]
                .as_str()
                .unwrap()
                .starts_with("sum of 2 clones")
                && row["aggregation"]
                    .as_str()
                    .unwrap()
                    .contains("merged json+ histograms"),
            "{row}"
        );
    }
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(html.contains("sum of 2 clones"), "the note is on the page");
}

/// A report of 2 profiles × 7 depths × 2 job counts in Chromium at 1400×1000: small
/// multiples, every chart clean.
#[test]
fn sweep_report_is_interactive_and_clean_in_chromium() {
    require!(Prereq::CHROMIUM);
    let d = tmpdir();
    null_results(
        &d.path().join("res"),
        &["randread", "randwrite"],
        &[1, 2, 4, 8, 16, 32, 64],
        &[1, 2],
    );
    let r = run_in(d.path(), &["report", "res", "-o", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = d.path().join("out/report.html");
    let shot = render::artefacts().join("report-interactive.png");
    let v = browser::view(&html, 1400, 1000, Some(&shot));
    // Per axis (iodepth, numjobs) and metric (4), one panel per profile (2); plus the
    // heatmap per profile.
    assert_eq!(charts_in(&html), 2 * 4 * 2 + 2);
    v.assert_clean("report.html", charts_in(&html), 20);
    let all: Vec<&str> = v
        .charts
        .iter()
        .flat_map(|c| c.texts.iter().map(String::as_str))
        .collect();
    assert!(
        all.contains(&"IOPS against iodepth: randread read"),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|t| t.starts_with("ioengine=null") && t.contains("bs=4k")),
        "a subtitle with the workload: {all:?}"
    );
}

/// Forty lines in one chart (numjobs 1..40 against iodepth): the legend scrolls, the
/// labels stay inside and apart, the tooltip still shows a value.
#[test]
fn forty_series_keep_every_label_inside_the_chart() {
    require!(Prereq::CHROMIUM);
    let d = tmpdir();
    let jobs: Vec<u32> = (1..=40).collect();
    null_results(&d.path().join("res"), &["read"], &[1, 2], &jobs);
    let r = run_in(d.path(), &["report", "res", "-o", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = d.path().join("out/report.html");
    let v = browser::view(&html, 1400, 1000, None);
    v.assert_clean("40 series", charts_in(&html), 20);
    let spec: Vec<Value> = std::fs::read_to_string(&html)
        .unwrap()
        .split("<script type=\"application/json\" id=\"chart-")
        .skip(1)
        .map(|s| {
            let json = &s[s.find('>').unwrap() + 1..s.find("</script>").unwrap()];
            serde_json::from_str(&json.replace("<\\/", "</")).unwrap()
        })
        .collect();
    let widest = spec
        .iter()
        .map(|o| {
            o["series"]
                .as_array()
                .map_or(0, |s| s.iter().filter(|s| s["type"] == "line").count())
        })
        .max()
        .unwrap();
    // 40 lines; 80 on the chart of p99 and p99.9.
    assert_eq!(widest, 80, "one chart draws the 40 series' 80 lines");
}
