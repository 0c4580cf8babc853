//! Results while the run goes on: the `--live` JSON Lines stream (its intervals add up
//! to the report, its percentiles are the interval's own) and the `--metrics`
//! Prometheus endpoint (scraped by a real Prometheus server).

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// The stream's lines, each checked against docs/schema/live-stream.schema.json.
fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the live stream");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            schema::validate("live-stream", &v);
            v
        })
        .collect()
}

fn intervals(l: &[Value]) -> Vec<&Value> {
    l.iter().filter(|v| v["type"] == "interval").collect()
}

/// A job on a file: 2 clones of a mixed random job with 30% of its I/O at another
/// priority, for `secs` seconds, with `extra`.
fn mixed<'a>(secs: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=j",
        "--filename=data",
        "--size=8m",
        "--rw=randrw",
        "--bs=4k",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--numjobs=2",
        "--time_based",
        // Paced: these tests check counts, not speed, and must not starve the
        // scheduler tests that run beside them.
        "--rate_iops=20000",
        "--cmdprio_percentage=30",
        "--cmdprio_class=2",
        "--cmdprio=1",
        "--prioclass=2",
        "--prio=6",
        "--output-format=json",
        "--output=out.json",
    ];
    a.push(secs);
    a.extend_from_slice(extra);
    a
}

#[test]
fn live_intervals_add_up_to_the_report_per_direction_and_priority() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &mixed(
            "--runtime=3",
            &[
                "--live=live.jsonl",
                "--live-interval=500ms",
                "--ramp_time=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let l = lines(&d.path().join("live.jsonl"));
    let report = json_file(&d.path().join("out.json"));
    assert_eq!(l[0]["type"], "start");
    assert_eq!(l[1]["type"], "phase");
    assert_eq!(l.last().unwrap()["type"], "end");
    let iv = intervals(&l);
    for n in [1, 2] {
        let mine: Vec<_> = iv.iter().filter(|v| v["job_number"] == n).collect();
        // 4 s of a job at 500 ms intervals: a loaded machine may miss some, never most.
        assert!(mine.len() >= 3, "job {n}: {} intervals in 4 s", mine.len());
        assert_eq!(mine.iter().filter(|v| v["last"] == true).count(), 1);
        assert_eq!(mine.last().unwrap()["last"], true);
        // The ramp's intervals count nothing.
        for v in mine.iter().filter(|v| v["ramp"] == true) {
            assert_eq!((u(&v["read"]["ios"]), u(&v["write"]["ios"])), (0, 0));
        }
    }
    for (i, job) in report["jobs"].as_array().unwrap().iter().enumerate() {
        // The measurement starts afresh when the ramp ends: epoch 1 adds up.
        let mine: Vec<_> = iv
            .iter()
            .filter(|v| v["job_number"] == (i + 1) as u64 && v["epoch"] == 1)
            .collect();
        let ms: u64 = mine.iter().map(|v| u(&v["ms"])).sum();
        assert_eq!(ms, u(&job["job_runtime"]), "job {i}: measured time");
        for dir in ["read", "write"] {
            let sum = |k: &str| mine.iter().map(|v| u(&v[dir][k])).sum::<u64>();
            let rep = &job[dir];
            assert_eq!(sum("ios"), u(&rep["total_ios"]), "job {i} {dir} ios");
            assert_eq!(sum("bytes"), u(&rep["io_bytes"]), "job {i} {dir} bytes");
            assert_eq!(
                mine.iter()
                    .map(|v| u(&v[dir]["clat_ns"]["count"]))
                    .sum::<u64>(),
                u(&rep["clat_ns"]["N"])
            );
            let prios = rep["prios"]
                .as_array()
                .expect("two priorities in the report");
            assert_eq!(prios.len(), 2);
            for p in prios {
                let ioprio = (u(&p["prioclass"]) << 13) | u(&p["prio"]);
                let n: u64 = mine
                    .iter()
                    .flat_map(|v| v[dir]["prios"].as_array().unwrap().iter())
                    .filter(|x| u(&x["ioprio"]) == ioprio)
                    .map(|x| u(&x["ios"]))
                    .sum();
                assert_eq!(n, u(&p["clat_ns"]["N"]), "job {i} {dir} ioprio {ioprio}");
            }
        }
    }
    let end = l.last().unwrap();
    for dir in ["read", "write"] {
        let total: u64 = report["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| u(&j[dir]["total_ios"]))
            .sum();
        assert_eq!(u(&end[dir]["ios"]), total);
    }
}

/// fio's bucket of a value: 64 linear buckets per power of two, exact below 128.
fn fio_bucket(v: u64) -> usize {
    if v < 128 {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - 6;
    (((shift + 1) as u64) * 64 + ((v >> shift) & 63)) as usize
}

#[test]
fn an_intervals_percentiles_are_its_own_as_its_clat_hist_log_has_them() {
    let d = tmpdir();
    // One interval for the whole run (the interval is longer than the run), and one
    // histogram-log window for the whole run: the same I/Os.
    let r = run_in(
        d.path(),
        &[
            "--name=j",
            "--filename=data",
            "--size=32m",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--number_ios=3000",
            "--live=live.jsonl",
            "--live-interval=1h",
            "--write_hist_log=h",
            "--log_hist_msec=3600000",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = lines(&d.path().join("live.jsonl"));
    let iv = intervals(&l);
    assert_eq!(iv.len(), 1, "{l:?}");
    let live = &iv[0]["read"]["clat_ns"];
    let report = json_file(&d.path().join("out.json"));
    let rep = &report["jobs"][0]["read"]["clat_ns"];
    assert_eq!(u(&live["count"]), 3000);
    // The same histogram as the report's: the same percentiles, min and max within
    // one bucket of the exact ones.
    assert_eq!(live["percentile"], rep["percentile"]);
    let near = |a: u64, b: u64| a.abs_diff(b) as f64 <= b as f64 / 1000.0 + 1.0;
    assert!(near(u(&live["min"]), u(&rep["min"])), "{live} {rep}");
    assert!(near(u(&live["max"]), u(&rep["max"])), "{live} {rep}");
    // And the clat_hist log's window: each percentile falls in the bucket the log's
    // counts put it in.
    let hist = std::fs::read_to_string(d.path().join("h_clat_hist.1.log")).expect("hist log");
    let row: Vec<u64> = hist
        .lines()
        .find(|l| l.split(',').nth(1).map(str::trim) == Some("0"))
        .expect("a read window")
        .split(',')
        .skip(3)
        .map(|x| x.trim().parse().unwrap())
        .collect();
    let n: u64 = row.iter().sum();
    assert_eq!(n, 3000);
    for (k, v) in live["percentile"].as_object().unwrap() {
        let p: f64 = k.parse().unwrap();
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut cum = 0;
        let bucket = row.iter().position(|&c| {
            cum += c;
            cum >= rank
        });
        assert_eq!(Some(fio_bucket(u(v))), bucket, "p{k} = {v}");
    }
}

#[test]
fn live_on_stdout_needs_the_report_elsewhere() {
    let d = tmpdir();
    let job = [
        "--name=j",
        "--ioengine=null",
        "--size=1m",
        "--rw=read",
        "--live=-",
    ];
    let r = run_in(d.path(), &job);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("--live=-") && r.stderr.contains("--output"),
        "{}",
        r.stderr
    );
    let mut with = job.to_vec();
    with.push("--output=report.txt");
    let r = run_in(d.path(), &with);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let types: Vec<String> = r
        .stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            schema::validate("live-stream", &v);
            v["type"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(types, ["start", "phase", "interval", "end"]);
    let report = std::fs::read_to_string(d.path().join("report.txt")).unwrap();
    assert!(report.contains("Run status group 0"), "{report}");
}

/// A free loopback port (bound and released: another process could take it first,
/// which the test then reports as such).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

/// The value of the series `name` whose labels contain each of `labels`.
fn series(text: &str, name: &str, labels: &[&str]) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| labels.iter().all(|x| l.contains(x)))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64)
        .sum()
}

#[test]
fn metrics_end_at_the_reports_totals_and_linger_for_a_last_scrape() {
    let d = tmpdir();
    let addr = format!("127.0.0.1:{}", free_port());
    let m = format!("--metrics={addr}");
    let mut args = mixed("--runtime=2", &[&m, "--metrics-linger=30s"]);
    args.retain(|a| !a.starts_with("--cmdprio") && !a.starts_with("--prio"));
    let child = std::process::Command::new(bin())
        .current_dir(d.path())
        .args(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The report is written before the linger: then the counters are final.
    let out = d.path().join("out.json");
    let started = std::time::Instant::now();
    while json_ready(&out).is_none() {
        assert!(started.elapsed().as_secs() < 60, "no report after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let text = http_get(&addr, "/metrics").expect("the endpoint lingers after the run");
    let report = json_ready(&out).unwrap();
    assert!(
        text.starts_with("HTTP/1.") && text.contains(" 200 "),
        "{text}"
    );
    assert!(
        text.contains("ioscope_running{") && text.contains("} 0\n"),
        "{text}"
    );
    for (i, job) in report["jobs"].as_array().unwrap().iter().enumerate() {
        let n = format!("job_number=\"{}\"", i + 1);
        for dir in ["read", "write"] {
            let dl = format!("direction=\"{dir}\"");
            let ios = series(&text, "ioscope_ios_total", &[&n, &dl]);
            assert_eq!(ios, u(&job[dir]["total_ios"]), "{n} {dir}");
            let bytes = series(&text, "ioscope_bytes_total", &[&n, &dl]);
            assert_eq!(bytes, u(&job[dir]["io_bytes"]), "{n} {dir}");
            let inf = series(
                &text,
                "ioscope_clat_seconds_bucket",
                &[&n, &dl, "le=\"+Inf\""],
            );
            assert_eq!(inf, ios);
        }
    }
    let not_found = http_get(&addr, "/").unwrap();
    assert!(not_found.contains(" 404 "), "{not_found}");
    kill_and_wait(child);
}

fn json_ready(p: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

fn kill_and_wait(mut child: std::process::Child) {
    // SAFETY: a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "a Ctrl-C in the linger ends it cleanly: {status}"
    );
}

#[test]
fn metrics_refuse_a_taken_port_before_any_io() {
    let d = tmpdir();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let m = format!("--metrics={addr}");
    let r = run_in(
        d.path(),
        &["--name=j", "--filename=data", "--size=1m", "--rw=write", &m],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains(&m), "{}", r.stderr);
    assert!(r.stderr.to_lowercase().contains("in use"), "{}", r.stderr);
    assert!(
        !d.path().join("data").exists(),
        "no I/O before the port is ours"
    );
}

/// A Prometheus server on a loopback port, scraping `target` every second; killed on
/// drop.
struct Prometheus {
    child: std::process::Child,
    addr: String,
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        let conf = dir.join("prometheus.yml");
        std::fs::write(
            &conf,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  \
                 - job_name: ioscope\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("prometheus");
        let p = Prometheus { child, addr };
        let started = std::time::Instant::now();
        while !http_get(&p.addr, "/-/ready").is_some_and(|r| r.contains(" 200 ")) {
            let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
            assert!(
                started.elapsed().as_secs() < 60,
                "prometheus not ready in 60 s:\n{log}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        p
    }

    /// The value of an instant query (None while it has no result).
    fn query(&self, q: &str) -> Option<f64> {
        let enc: String = q
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '_' => c.to_string(),
                _ => format!("%{:02X}", c as u32),
            })
            .collect();
        let resp = http_get(&self.addr, &format!("/api/v1/query?query={enc}"))?;
        let body = resp.split("\r\n\r\n").nth(1)?;
        let v: Value = serde_json::from_str(body).ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn prometheus_stores_the_runs_totals() {
    require!(Prereq::Program {
        name: "prometheus",
        package: "prometheus",
    });
    let d = tmpdir();
    let target = format!("127.0.0.1:{}", free_port());
    let prom = Prometheus::start(d.path(), &target);
    let m = format!("--metrics={target}");
    let mut args = mixed("--runtime=10", &[&m, "--metrics-linger=5s"]);
    args.retain(|a| !a.starts_with("--cmdprio") && !a.starts_with("--prio"));
    let r = run_in(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = json_file(&d.path().join("out.json"));
    let total = |k: &str| -> u64 {
        let jobs = report["jobs"].as_array().unwrap();
        let dirs = ["read", "write", "trim"];
        jobs.iter()
            .flat_map(|j| dirs.iter().map(move |d| u(&j[d][k])))
            .sum()
    };
    let (ios, bytes) = (total("total_ios"), total("io_bytes"));
    // The last scrapes (in the 5 s linger) hold the totals; the target is gone since,
    // so the query looks back over the run rather than at a stale "now".
    let q_ios = "sum(max_over_time(ioscope_ios_total[10m]))";
    let q_bytes = "sum(max_over_time(ioscope_bytes_total[10m]))";
    let (got_ios, got_bytes) = (prom.query(q_ios), prom.query(q_bytes));
    assert_eq!(
        got_ios,
        Some(ios as f64),
        "{q_ios}: the report's total_ios is {ios}"
    );
    assert_eq!(
        got_bytes,
        Some(bytes as f64),
        "{q_bytes}: the report's io_bytes is {bytes}"
    );
    // Scraped during the run too, not only at its end.
    let during = prom.query("sum_over_time(ioscope_running[10m])");
    assert!(
        during.unwrap_or(0.0) >= 3.0,
        "scrapes while running: {during:?}"
    );
}

#[test]
fn a_sweep_streams_each_point_and_records_each_in_the_history() {
    let d = tmpdir();
    let f = d.path().join("s.toml");
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"8m\"\n[defaults]\nioengine = \"psync\"\n\
             [[sweep]]\nname = \"s\"\nprofiles = [\"randread\"]\n\
             fixed = {{ runtime = \"1s\", time_based = 1 }}\naxes = {{ iodepth = [1, 2] }}\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut child = std::process::Command::new(bin())
        .current_dir(d.path())
        .args([
            "sweep",
            "run",
            &f.display().to_string(),
            "-o",
            "out",
            "--live=live.jsonl",
            "--live-interval=250ms",
            "--history=h.db",
            "--label=k1",
            &format!("--metrics={addr}"),
            "--metrics-linger=60s",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The report is announced before the linger: then the counters are final.
    let stdout = child.stdout.take().unwrap();
    let mut said = String::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("report:") {
            break;
        }
    }
    assert!(said.contains("report:"), "{said}");
    let scraped = http_get(&addr, "/metrics").expect("the endpoint lingers");
    kill_and_wait(child);
    let l = lines(&d.path().join("live.jsonl"));
    assert_eq!(l.last().unwrap()["type"], "end");
    let points = ioscope_points(&d.path().join("out/points"));
    assert_eq!(points.len(), 2, "{points:?}");
    for (id, doc) in &points {
        let mine: Vec<_> = intervals(&l)
            .into_iter()
            .filter(|v| v["point"] == id.as_str())
            .collect();
        assert!(
            mine.len() >= 2,
            "{id}: {} intervals in 1 s at 250 ms",
            mine.len()
        );
        let ios: u64 = mine.iter().map(|v| u(&v["read"]["ios"])).sum();
        assert_eq!(ios, u(&doc["jobs"][0]["read"]["total_ios"]), "{id}");
        let point = format!("point=\"{id}\"");
        let m = series(
            &scraped,
            "ioscope_ios_total",
            &[&point, "direction=\"read\""],
        );
        assert_eq!(m, ios, "{id}: {scraped}");
        let phases = l
            .iter()
            .filter(|v| v["type"] == "phase" && v["point"] == id.as_str())
            .count();
        assert_eq!(phases, 1, "{id}");
    }
    let r = run_in(d.path(), &["history", "--db=h.db", "list", "--json"]);
    let rows: Value = serde_json::from_str(&r.stdout).unwrap();
    let mut labels: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    let mut want: Vec<String> = points.keys().map(|id| format!("k1/{id}")).collect();
    want.sort();
    assert_eq!(labels, want);
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["kind"] == "point"));
}

/// A sweep's point results: id → document.
fn ioscope_points(dir: &Path) -> std::collections::BTreeMap<String, Value> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let id = p.file_name()?.to_str()?.strip_suffix(".json")?.to_string();
            Some((id, json_file(&p)))
        })
        .collect()
}

#[test]
fn quick_and_peak_stream_too() {
    // Both run flat out.
    let _alone = CPU_BOUND.lock().unwrap_or_else(|e| e.into_inner());
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "peak",
            "--nop",
            "--runtime=1",
            "--live=peak.jsonl",
            "--live-interval=250ms",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = lines(&d.path().join("peak.jsonl"));
    let ios: u64 = intervals(&l).iter().map(|v| u(&v["read"]["ios"])).sum();
    let end = l.last().unwrap();
    assert_eq!(end["type"], "end");
    assert!(ios > 0);
    assert_eq!(
        ios,
        u(&end["read"]["ios"]),
        "the intervals add up to peak's run"
    );
    let r = run_in(
        d.path(),
        &[
            "quick",
            "--size=16m",
            "--runtime=1",
            "--live=quick.jsonl",
            ".",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = lines(&d.path().join("quick.jsonl"));
    let points: std::collections::BTreeSet<&str> = intervals(&l)
        .iter()
        .filter_map(|v| v["point"].as_str())
        .collect();
    assert_eq!(points.len(), 6, "one per test and direction: {points:?}");
    assert!(points.contains("RND4K Q32T1 write"), "{points:?}");
    let r = run_in(d.path(), &["quick", "--live=-", "."]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--live=-"), "{}", r.stderr);
}

#[test]
fn a_job_that_measures_afresh_adds_up_in_its_last_epoch() {
    // latency_target's search runs the device flat out.
    let _alone = CPU_BOUND.lock().unwrap_or_else(|e| e.into_inner());
    // latency_target ends its depth search by measuring a final window afresh: the
    // stream says so with a new epoch, whose intervals are the report's.
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=j",
            "--filename=data",
            "--size=16m",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--time_based",
            "--runtime=3",
            "--latency_target=50",
            "--latency_window=300ms",
            "--latency_percentile=99",
            "--live=live.jsonl",
            "--live-interval=250ms",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = lines(&d.path().join("live.jsonl"));
    let iv = intervals(&l);
    let last = iv.iter().map(|v| u(&v["epoch"])).max().unwrap();
    let ios: u64 = iv
        .iter()
        .filter(|v| u(&v["epoch"]) == last)
        .map(|v| u(&v["read"]["ios"]))
        .sum();
    let report = json_file(&d.path().join("out.json"));
    assert_eq!(
        ios,
        u(&report["jobs"][0]["read"]["total_ios"]),
        "epoch {last}"
    );
}
