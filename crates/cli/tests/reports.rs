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

/// Results with two priorities (cmdprio's rt/0 beside the job's own) get a row per
/// priority at each point (its I/Os' rate and latency, no bytes: fio counts only I/Os)
/// and a facet per priority in the charts.
#[test]
fn report_has_rows_and_facets_per_priority() {
    let d = tmpdir();
    let res = d.path().join("res");
    std::fs::create_dir_all(&res).unwrap();
    let data = d.path().join("data");
    for qd in [1, 4] {
        let out = res.join(format!("randread-qd{qd}-nj1.json"));
        let r = run_in(
            d.path(),
            &[
                "--name=j",
                "--ioengine=libaio",
                &format!("--filename={}", data.display()),
                "--size=4m",
                "--rw=randread",
                "--bs=4k",
                &format!("--iodepth={qd}"),
                "--cmdprio_percentage=30",
                "--cmdprio_class=1",
                "--output-format=json+",
                &format!("--output={}", out.display()),
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = run_in(d.path(), &["report", "res", "-o", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let table = json_file(&d.path().join("out/results.json"));
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        6,
        "a row per point and one per priority: {rows:#?}"
    );
    for qd in ["1", "4"] {
        let at = |prio: &str| {
            rows.iter()
                .find(|r| r["iodepth"] == qd && r["prio"] == prio)
                .unwrap_or_else(|| panic!("no row qd{qd} prio '{prio}': {rows:#?}"))
        };
        let (all, rt, none) = (at(""), at("rt/0"), at("none/0"));
        let iops = |r: &Value| r["iops"].as_f64().unwrap();
        // The priorities' rates add up to the direction's.
        assert!(
            (iops(rt) + iops(none) - iops(all)).abs() <= iops(all) * 0.01,
            "qd{qd}: {} + {} vs {}",
            iops(rt),
            iops(none),
            iops(all)
        );
        assert!(iops(rt) > 0.0 && rt["clat_p99_ns"].as_f64().unwrap() > 0.0);
        assert_eq!(rt["bw_kib_s"], "", "no bytes per priority");
    }
    let specs = browser::specs(&d.path().join("out/report.html"));
    let titles: Vec<&str> = specs
        .iter()
        .filter_map(|o| o["title"]["text"].as_str())
        .collect();
    for prio in ["rt/0", "none/0"] {
        let facet = format!("prio {prio}");
        assert!(
            titles.iter().any(|t| t.contains(&facet)),
            "a facet for {prio}: {titles:?}"
        );
    }
}

/// A report of 2 profiles × 7 depths × 2 job counts in Chromium at 1400×1000: small
/// multiples, every chart clean. The page carries ECharts gzipped: under 700 KB in
/// all (ECharts alone is 1.1 MB unpacked).
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
    let bytes = std::fs::metadata(&html).unwrap().len();
    assert!(bytes < 700_000, "report.html is {bytes} bytes");
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
    let spec = browser::specs(&html);
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

/// The series of a chart option named `name` exactly.
fn series_named<'a>(o: &'a Value, name: &str) -> Vec<&'a Value> {
    o["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == name)
        .collect()
}

fn titled<'a>(specs: &'a [Value], title: &str) -> Vec<&'a Value> {
    specs
        .iter()
        .filter(|o| o["title"]["text"].as_str().unwrap().starts_with(title))
        .collect()
}

/// `plot` shows the tail: percentiles on a log axis, a histogram whose bars hold every
/// I/O, latency-over-time heatmaps whose every window adds up to all of its I/Os, a line
/// per priority from a log_prio log, and two jobs of one name told apart.
#[test]
fn plot_draws_the_tail_heatmaps_and_priorities() {
    let d = tmpdir();
    let f = d.path().join("data");
    let fname = f.display().to_string();
    let job = |log: bool| {
        let mut a = vec![
            "--name=p".to_string(),
            "--ioengine=libaio".into(),
            format!("--filename={fname}"),
            "--size=8m".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--iodepth=2".into(),
            "--rate_iops=500".into(),
            "--runtime=2".into(),
            "--time_based".into(),
            "--cmdprio_percentage=30".into(),
            "--cmdprio_class=1".into(),
        ];
        if log {
            a.extend([
                "--write_lat_log=p".to_string(),
                "--write_hist_log=p".into(),
                "--log_hist_msec=250".into(),
                "--log_prio=1".into(),
            ]);
        }
        a
    };
    let mut a = job(true);
    a.extend(job(false));
    a.extend(["--output-format=json+".into(), "--output=p.json".into()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = run_in(d.path(), &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_in(
        d.path(),
        &[
            "plot",
            "p_clat.1.log",
            "p_clat_hist.1.log",
            "p.json",
            "-o",
            "p.svg",
            "--html",
            "p.html",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = d.path().join("p.html");
    let specs = browser::specs(&html);

    // A line per priority: cmdprio's rt/0 and the job's own (0).
    let mean = titled(&specs, "Latency over time (mean per window)");
    assert_eq!(mean.len(), 1);
    let prios: Vec<&str> = mean[0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        prios.contains(&"p_clat.1.log read clat prio rt/0")
            && prios.contains(&"p_clat.1.log read clat prio 0"),
        "{prios:?}"
    );

    // Heatmaps from the per-I/O log and the hist log: every window's shares add to 100%.
    let heat = titled(&specs, "Latency over time: ");
    assert_eq!(heat.len(), 2, "one from each log");
    for h in heat {
        let columns = h["xAxis"]["data"].as_array().unwrap().len();
        assert!((2..=120).contains(&columns), "{columns} columns");
        let mut sums = vec![0.0; columns];
        for cell in h["series"][0]["data"].as_array().unwrap() {
            sums[cell[0].as_u64().unwrap() as usize] += cell[2].as_f64().unwrap();
        }
        // A window without I/O (a loaded machine can stall the job) has no cells at all.
        let full = sums.iter().filter(|s| (**s - 100.0).abs() < 1e-6).count();
        let empty = sums.iter().filter(|s| **s == 0.0).count();
        assert!(
            full + empty == columns && full >= 2,
            "shares per window: {sums:?}"
        );
    }

    // Percentiles on a log axis from p50 on; the two jobs of one name apart.
    let pct = titled(&specs, "Completion latency percentiles (log)");
    assert_eq!(pct[0]["yAxis"]["type"], "log");
    assert_eq!(pct[0]["ioscope"]["xNames"][0][1], "p50");
    assert_eq!(series_named(pct[0], "p.json p read").len(), 1);
    assert_eq!(series_named(pct[0], "p.json p#2 read").len(), 1);
    // And a line per priority of each (cmdprio's rt/0 beside the job's own).
    for job in ["p", "p#2"] {
        for prio in ["none/0", "rt/0"] {
            let s = format!("p.json {job} read prio {prio}");
            assert_eq!(series_named(pct[0], &s).len(), 1, "{s}");
        }
    }

    // The histogram's bars hold every I/O of each job: 100% each.
    let hist = titled(&specs, "Completion latency histogram");
    for s in hist[0]["series"].as_array().unwrap() {
        let total: f64 = s["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_f64)
            .sum();
        assert!((total - 100.0).abs() < 1e-6, "{}: {total}", s["name"]);
    }
    if available!(Prereq::CHROMIUM) {
        let v = browser::view(&html, 1400, 1000, None);
        v.assert_clean("plot", charts_in(&html), 10);
    }
}

/// `compare --html` shows every repetition as a dot (three per side and metric, as a
/// share of A's mean) and A's and B's latency distributions over each other.
#[test]
fn compare_shows_every_repetition_and_both_distributions() {
    let d = tmpdir();
    for (side, bs) in [("a", "4k"), ("b", "16k")] {
        let dir = d.path().join(side);
        std::fs::create_dir_all(&dir).unwrap();
        for rep in 1..=3 {
            let out = dir.join(format!("r{rep}.json"));
            let r = run_in(
                d.path(),
                &[
                    "--name=j",
                    "--ioengine=null",
                    "--size=8m",
                    "--rw=randread",
                    &format!("--bs={bs}"),
                    "--output-format=json+",
                    &format!("--output={}", out.display()),
                ],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
    }
    let r = run_in(d.path(), &["compare", "a", "b", "--html", "c.html"]);
    assert!(r.code == 0 || r.code == 2, "{}", r.stderr);
    let html = d.path().join("c.html");
    let specs = browser::specs(&html);
    let reps = titled(&specs, "j read: every repetition");
    assert_eq!(reps.len(), 1);
    let metrics = reps[0]["ioscope"]["xNames"].as_array().unwrap().len();
    assert!(metrics >= 4, "{metrics} metrics");
    for side in ["A", "B"] {
        let s = series_named(reps[0], side);
        assert_eq!(s[0]["type"], "scatter");
        assert_eq!(
            s[0]["data"].as_array().unwrap().len(),
            3 * metrics,
            "{side}"
        );
    }
    // A's dots sit around 100% of A's mean.
    let a = &series_named(reps[0], "A")[0]["data"];
    let mean: f64 = a
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_f64().unwrap())
        .sum::<f64>()
        / (3 * metrics) as f64;
    assert!((mean - 100.0).abs() < 1e-6, "{mean}");
    let cdf = titled(&specs, "j read: completion latency, A and B");
    assert_eq!(cdf.len(), 1);
    for side in ["A", "B"] {
        let pts = series_named(cdf[0], side)[0]["data"]
            .as_array()
            .unwrap()
            .clone();
        let last = pts.last().unwrap()[1].as_f64().unwrap();
        assert!((last - 100.0).abs() < 1e-9, "{side} ends at {last}%");
    }
    if available!(Prereq::CHROMIUM) {
        let v = browser::view(&html, 1400, 1000, None);
        v.assert_clean("compare", charts_in(&html), 10);
    }
}

/// Jobs with two priorities (cmdprio's rt/0 beside the job's own): compare adds rows
/// per priority (mean and percentiles of that priority's I/Os), in the table, the JSON
/// and the charts, each with its own A/B latency distributions.
#[test]
fn compare_has_rows_per_priority() {
    let d = tmpdir();
    let data = d.path().join("data");
    for side in ["a", "b"] {
        let dir = d.path().join(side);
        std::fs::create_dir_all(&dir).unwrap();
        for rep in 1..=2 {
            let out = dir.join(format!("r{rep}.json"));
            let r = run_in(
                d.path(),
                &[
                    "--name=j",
                    "--ioengine=libaio",
                    &format!("--filename={}", data.display()),
                    "--size=4m",
                    "--rw=randread",
                    "--bs=4k",
                    "--iodepth=2",
                    "--cmdprio_percentage=30",
                    "--cmdprio_class=1",
                    "--output-format=json+",
                    &format!("--output={}", out.display()),
                ],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
    }
    let (r, v) = run_json(d.path(), &["compare", "a", "b", "--json"]);
    assert!(r.code == 0 || r.code == 2, "{}", r.stderr);
    let rows = v.as_array().unwrap();
    for prio in ["rt/0", "none/0"] {
        let metrics: Vec<&str> = rows
            .iter()
            .filter(|x| x["prio"] == prio)
            .filter_map(|x| x["metric"].as_str())
            .collect();
        assert_eq!(
            metrics,
            ["clat_mean", "clat_p50", "clat_p99", "clat_p99.9"],
            "{prio}"
        );
    }
    // The job's own rows have no priority.
    assert!(rows
        .iter()
        .any(|x| x["metric"] == "iops" && x["prio"].is_null()));
    let r = run_in(d.path(), &["compare", "a", "b", "--html", "c.html"]);
    assert!(r.code == 0 || r.code == 2, "{}", r.stderr);
    let specs = browser::specs(&d.path().join("c.html"));
    for prio in ["rt/0", "none/0"] {
        let title = format!("j prio {prio} read: completion latency, A and B");
        assert_eq!(titled(&specs, &title).len(), 1, "{title}");
    }
    let text = std::fs::read_to_string(d.path().join("c.html")).unwrap();
    assert!(
        text.contains("<td>j prio rt/0</td>"),
        "table row per priority"
    );
}
