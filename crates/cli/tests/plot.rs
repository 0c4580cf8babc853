//! `ioscope plot`: graphs of one run from its logs and JSON results, rendered.

use crate::common::*;

/// A rate-limited mixed run with every kind of log, json+ and interim reports: one
/// panel per kind, a line per direction, and the page renders.
#[test]
fn logs_and_results_become_panels() {
    let d = tmpdir();
    let job = [
        "--name=p",
        "--ioengine=null",
        "--size=1g",
        "--rw=randrw",
        "--bs=4k",
        "--rate_iops=2000,1000",
        "--runtime=2",
        "--time_based",
        "--write_bw_log=p",
        "--write_iops_log=p",
        "--write_lat_log=p",
        "--write_hist_log=p",
        "--log_hist_msec=200",
    ];
    let mut a: Vec<&str> = job.to_vec();
    a.extend(["--output-format=json+", "--output=p.json"]);
    let r = run_in(d.path(), &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut a: Vec<&str> = job.to_vec();
    a.extend(["--status-interval=1", "--output-format=json"]);
    let r = run_in(d.path(), &a);
    std::fs::write(d.path().join("interim.json"), &r.stdout).unwrap();
    let r = run_in(
        d.path(),
        &[
            "plot",
            "p_bw.1.log",
            "p_iops.1.log",
            "p_clat.1.log",
            "p_slat.1.log",
            "p_clat_hist.1.log",
            "p.json",
            "interim.json",
            "-o",
            "p.svg",
            "--html",
            "p.html",
            "--window",
            "250ms",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let svg = std::fs::read_to_string(d.path().join("p.svg")).unwrap();
    for title in [
        "Bandwidth over time",
        "IOPS over time",
        "Latency over time (mean per window)",
        "Completion latency percentiles over time (per hist-log row)",
        "Completion latency CDF (json+ bins)",
        "IOPS per interval (interim reports)",
    ] {
        assert!(svg.contains(title), "{title} missing");
    }
    for series in [
        "p_iops.1.log read",
        "p_iops.1.log write",
        "p_clat.1.log read clat",
        "p_clat_hist.1.log write p99.9",
        "p.json p read",
    ] {
        assert!(svg.contains(series), "{series} missing");
    }
    if available!(Prereq::CHROMIUM) {
        let html = d.path().join("p.html");
        let shown = browser::view(&html, 1400, 1000, None);
        // Lines, heatmaps (clat and hist per direction), percentiles, CDF, histogram.
        let charts = browser::specs(&html).len();
        assert!(charts >= 12, "{charts} charts");
        shown.assert_clean("plot --html", charts, 20);
        // IOPS over time holds the rates: tick labels up to about 2000.
        let texts: Vec<&str> = shown
            .charts
            .iter()
            .flat_map(|c| c.texts.iter().map(String::as_str))
            .collect();
        assert!(texts.contains(&"2,000"), "{texts:?}");
    }
}

#[test]
fn bad_inputs_are_named() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("x_bw.1.log"),
        "0, 10, 0, 4096, 0\n5, ten, 0, 4096, 0\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["plot", "x_bw.1.log", "-o", "x.svg"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("x_bw.1.log:2: field 2: 'ten' is not a number"),
        "{}",
        r.stderr
    );
    std::fs::write(
        d.path().join("one.json"),
        "{\"jobs\": [{\"jobname\": \"j\"}]}",
    )
    .unwrap();
    let r = run_in(d.path(), &["plot", "one.json", "-o", "x.svg"]);
    assert!(
        r.stderr.contains("one.json: nothing to draw"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["plot", "one.json"]);
    assert!(r.stderr.contains("-o FILE.svg"), "{}", r.stderr);
    let r = run_in(d.path(), &["plot", "one.json", "-o", "/nonexistent/x.svg"]);
    assert!(
        r.code == 1 && r.stderr.contains("/nonexistent/x.svg"),
        "{}",
        r.stderr
    );
}
