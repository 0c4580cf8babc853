//! `ioscope sweep` and `ioscope report`: the issue's example end to end (interrupted
//! halfway, resumed, equal to a clean run), early stop, failed points, steady state,
//! the report's files and their rendering, and reports of plain fio result directories.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The README's example (docs/examples/sweep.toml; the README shows it verbatim).
const EXAMPLE: &str = include_str!("../../../docs/examples/sweep.toml");

/// The example on a file of `dir`, 16 MiB, 250 ms a point.
fn short_example(dir: &Path) -> String {
    let f = dir.join("sweep.toml");
    let text = EXAMPLE
        .replace(
            "/tmp/sweep-demo/data",
            &dir.join("data").display().to_string(),
        )
        .replace("256m", "16m")
        .replace("\"2s\"", "\"250ms\"");
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

fn journal(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .inspect(schema::check)
        .collect()
}

fn events<'a>(j: &'a [Value], kind: &str) -> Vec<&'a Value> {
    j.iter().filter(|e| e["event"] == kind).collect()
}

fn csv(dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(dir.join("results.csv")).expect("results.csv");
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let head = lines.next().expect("header");
    (head, lines.collect())
}

/// What a run directory records, independent of timing: per point file, its job
/// options; the set of (profile, iodepth, numjobs, direction) rows of the CSV.
fn record(dir: &Path) -> (Vec<(String, Value)>, BTreeSet<Vec<String>>) {
    let mut files: Vec<(String, Value)> = std::fs::read_dir(dir.join("points"))
        .expect("points/")
        .filter_map(|e| e.ok())
        .map(|e| {
            let v: Value = json_file(&e.path());
            let name = e.file_name().to_string_lossy().into_owned();
            (name, v["jobs"][0]["job options"].clone())
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let (head, rows) = csv(dir);
    let col = |n: &str| {
        head.iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("column {n}"))
    };
    let keys: Vec<usize> = ["profile", "iodepth", "numjobs", "direction", "status"]
        .iter()
        .map(|c| col(c))
        .collect();
    let set: BTreeSet<Vec<String>> = rows
        .iter()
        .map(|r| keys.iter().map(|&k| r[k].clone()).collect())
        .collect();
    assert_eq!(
        set.len(),
        rows.len(),
        "no duplicate rows in {}",
        dir.display()
    );
    (files, set)
}

/// The issue's "done when": 2 profiles × iodepth 1..64 × numjobs 1,2 on a file,
/// interrupted with SIGINT halfway, resumed; the resumed directory records what a
/// clean run records (points, options, no duplicates), and the report renders.
#[test]
fn the_example_interrupted_halfway_resumes_to_what_a_clean_run_records() {
    let d = tmpdir();
    let sweep = short_example(d.path());
    // A clean run.
    let r = run_in(d.path(), &["sweep", "run", &sweep, "-o", "clean"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("28 points: 28 run, 0 finished before, 0 failed, 0 pruned, 0 not run"),
        "{}",
        r.stdout
    );
    let clean = d.path().join("clean");
    assert_eq!(events(&journal(&clean), "finish").len(), 28);
    // The same, stopped with SIGINT once 12 points have finished.
    let out = d.path().join("resumed");
    let child = std::process::Command::new(bin())
        .args(["sweep", "run", &sweep, "-o", &out.display().to_string()])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let t = Instant::now();
    while events(&journal(&out), "finish").len() < 12 {
        assert!(t.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stdout}{stderr}");
    assert!(
        stderr.contains("interrupted; finished points are saved"),
        "{stderr}"
    );
    let j = journal(&out);
    let done_before = events(&j, "finish").len();
    assert!(
        (12..28).contains(&done_before),
        "{done_before} finished before the stop"
    );
    // The signal may land between two points (nothing cut short) or in one, which is
    // then journaled as interrupted.
    let started = events(&j, "start").len();
    assert_eq!(
        events(&j, "interrupted").len(),
        started - done_before,
        "the point cut short is journaled"
    );
    // A report of what finished exists already.
    let (_, partial) = record(&out);
    assert!(partial.iter().any(|r| r[4] == "not run"), "{partial:?}");
    // Resume: the same command.
    let r = run_in(d.path(), &["sweep", "run", &sweep, "-o", "resumed"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "28 points: {} run, {done_before} finished before",
            28 - done_before
        )),
        "{}",
        r.stdout
    );
    let j = journal(&out);
    let finished: Vec<&str> = events(&j, "finish")
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&str> = finished.iter().copied().collect();
    assert_eq!(finished.len(), 28, "each point finished exactly once");
    assert_eq!(unique.len(), 28);
    let (files_a, rows_a) = record(&clean);
    let (files_b, rows_b) = record(&out);
    assert_eq!(files_a.len(), 28);
    assert_eq!(files_a, files_b, "same point files with the same options");
    assert_eq!(rows_a, rows_b, "same rows");
    // A third run has nothing left to do.
    let r = run_in(d.path(), &["sweep", "run", &sweep, "-o", "resumed"]);
    assert!(
        r.stdout.contains("28 points: 0 run, 28 finished before"),
        "{}",
        r.stdout
    );
    // status
    let r = run_in(d.path(), &["sweep", "status", "resumed"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("28 points: 28 done, 0 failed, 0 pruned, 0 left"),
        "{}",
        r.stdout
    );
    report_files_and_rendering(&out);
}

/// results.csv's columns, the graphs and report.html rendered in Chromium with every
/// graph present.
fn report_files_and_rendering(dir: &Path) {
    let (head, rows) = csv(dir);
    for c in [
        "sweep",
        "profile",
        "iodepth",
        "numjobs",
        "direction",
        "status",
        "iops",
        "bw_kib_s",
        "clat_mean_ns",
        "clat_p99_ns",
    ] {
        assert!(head.iter().any(|h| h == c), "column {c} in {head:?}");
    }
    // randread: one direction; randrw: two. 14 + 28 rows.
    assert_eq!(rows.len(), 42);
    let iops = head.iter().position(|h| h == "iops").unwrap();
    assert!(
        rows.iter()
            .all(|r| r[iops].parse::<f64>().is_ok_and(|v| v > 0.0)),
        "{rows:?}"
    );
    let json: Value = json_file(&dir.join("results.json"));
    assert_eq!(json["rows"].as_array().map(Vec::len), Some(42));
    assert_eq!(json["units"]["bw_kib_s"], "KiB/s");
    let graphs: Vec<String> = std::fs::read_dir(dir.join("graphs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for want in [
        "qd-by-jobs-bw-vs-iodepth.svg",
        "qd-by-jobs-iops-vs-iodepth.svg",
        "qd-by-jobs-clat-mean-vs-iodepth.svg",
        "qd-by-jobs-clat-p99-vs-iodepth.svg",
        "qd-by-jobs-iops-vs-numjobs.svg",
        "qd-by-jobs-heatmap-iodepth-numjobs.svg",
    ] {
        assert!(graphs.iter().any(|g| g == want), "{want} in {graphs:?}");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("Best points") && !html.contains("<script src") && !html.contains("<link"),
        "self-contained page"
    );
    if !available!(Prereq::CHROMIUM) {
        return;
    }
    let page = browser::view(&dir.join("report.html"), 1400, 1000, None);
    let charts = html.matches("<div class=\"chart\" data-spec=").count();
    assert!(
        charts >= graphs.len(),
        "every graph is in the page: {charts} charts"
    );
    page.assert_clean("sweep report.html", charts, 10);
    let texts: Vec<&str> = page
        .charts
        .iter()
        .flat_map(|s| s.texts.iter().map(String::as_str))
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("qd-by-jobs: IOPS against iodepth")),
        "{texts:?}"
    );
    assert!(
        html.contains("best lat"),
        "best-point labels (shown on hover)"
    );
}

/// The example exactly as the README shows it parses, plans and passes every check.
#[test]
fn the_readme_example_plans_as_written() {
    let readme = include_str!("../../../README.md");
    assert!(
        readme.contains(&format!("```toml\n{EXAMPLE}```")),
        "README.md shows docs/examples/sweep.toml as it is"
    );
    let d = tmpdir();
    let f = d.path().join("sweep.toml");
    std::fs::write(&f, EXAMPLE).unwrap();
    let data_existed = Path::new("/tmp/sweep-demo/data").exists();
    let r = run_in(
        d.path(),
        &["sweep", "plan", "--check", &f.display().to_string()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("sweep qd-by-jobs: 28 points = 2 profile(s) x iodepth (7) x numjobs (2)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("points: 28, planned time: 56s"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("every point passes the checks a run makes"),
        "{}",
        r.stdout
    );
    // --check writes nothing: no data file laid out, nothing beside the sweep file.
    if !data_existed {
        assert!(
            !Path::new("/tmp/sweep-demo/data").exists(),
            "--check laid out the target"
        );
    }
    let beside: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["sweep.toml"], "--check wrote files");
    // --emit: one job file per point, each a valid fio job file.
    let r = run_in(
        d.path(),
        &["sweep", "plan", "--emit", "jobs", &f.display().to_string()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let jobs: Vec<_> = std::fs::read_dir(d.path().join("jobs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(jobs.len(), 28);
    let one = d
        .path()
        .join("jobs/qd-by-jobs.randrw-70-30.iodepth-16.numjobs-2.fio");
    let text = std::fs::read_to_string(&one).unwrap();
    assert!(
        text.contains("rwmixread=70\niodepth=16\nnumjobs=2\n"),
        "{text}"
    );
    let r = run_in(d.path(), &["--parse-only", &one.display().to_string()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (r, v) = run_json(
        d.path(),
        &["sweep", "plan", "--json", &f.display().to_string()],
    );
    assert_eq!(r.code, 0);
    assert_eq!(v["points"], 28);
    assert_eq!(v["planned_seconds"], 56.0);
    assert_eq!(v["ids"][27], "qd-by-jobs.randrw-70-30.iodepth-64.numjobs-2");
}

/// Bad sweep files and bad verbs: clear errors with the file and line, before any I/O.
#[test]
fn errors_name_the_sweep_file_and_line() {
    let d = tmpdir();
    let f = d.path().join("bad.toml");
    let bad = EXAMPLE.replace("bs = \"4k\"", "bs = \"4q\"");
    std::fs::write(&f, bad).unwrap();
    let r = run_in(
        d.path(),
        &["sweep", "plan", "--check", &f.display().to_string()],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("bad.toml:8: option 'bs'"), "{}", r.stderr);
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "x"],
    );
    assert_eq!(r.code, 1);
    assert!(
        !d.path().join("x").exists(),
        "nothing written before the checks pass"
    );
    std::fs::write(&f, EXAMPLE.replace("pow2:1..64", "pow2:1..")).unwrap();
    let r = run_in(d.path(), &["sweep", "plan", &f.display().to_string()]);
    assert!(
        r.stderr
            .contains("bad.toml:22: sweep 'qd-by-jobs': axes.iodepth: 'pow2:1..' is not a range"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["sweep", "frobnicate", "x"]);
    assert!(
        r.code == 1 && r.stderr.contains("unknown verb 'frobnicate'"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["sweep", "status", "--emit", "x", "dir"]);
    assert!(
        r.stderr.contains("--emit goes with sweep plan"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["sweep", "run", &f.display().to_string()]);
    assert!(r.stderr.contains("-o DIR"), "{}", r.stderr);
    let r = run_in(d.path(), &["sweep", "status", d.path().to_str().unwrap()]);
    assert!(r.code == 1, "{}", r.stderr);
}

/// The guard prunes exactly the expected points: rate-limited null jobs whose IOPS
/// peak at rate 2000 and then fall; with drop 10% and patience 2, the points after
/// the second one below 1800 IOPS are pruned, recorded, and shown by status.
#[test]
fn the_guard_prunes_the_rest_of_an_axis() {
    let d = tmpdir();
    let f = d.path().join("g.toml");
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"1g\"\n[defaults]\nioengine = \"null\"\nruntime = \"400ms\"\ntime_based = 1\n\
             [[sweep]]\nname = \"g\"\nprofiles = [\"randread\"]\n\
             axes = {{ rate_iops = [1000, 2000, 1500, 1200, 1100, 900] }}\n\
             guard = {{ axis = \"rate_iops\", metric = \"iops\", drop = 0.1, patience = 2 }}\n",
            d.path().join("nul").display()
        ),
    )
    .unwrap();
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("6 points: 4 run, 0 finished before, 0 failed, 2 pruned"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let j = journal(&d.path().join("out"));
    let pruned: Vec<&str> = events(&j, "prune")
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        pruned,
        ["g.randread.rate_iops-1100", "g.randread.rate_iops-900"]
    );
    assert!(events(&j, "prune")[0]["reason"]
        .as_str()
        .unwrap()
        .contains("iops stayed below 90% of the best"));
    let r = run_in(d.path(), &["sweep", "status", "out"]);
    assert!(
        r.stdout
            .contains("6 points: 4 done, 0 failed, 2 pruned, 0 left"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("pruned: g.randread.rate_iops-900:"),
        "{}",
        r.stdout
    );
    // Resuming prunes the same points again, without running them.
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert!(
        r.stdout
            .contains("6 points: 0 run, 4 finished before, 0 failed, 2 pruned"),
        "{}",
        r.stdout
    );
    let (_, rows) = csv(&d.path().join("out"));
    assert_eq!(
        rows.iter()
            .filter(|r| r.contains(&"pruned".to_string()))
            .count(),
        2
    );
}

/// A point that fails is journaled with its error, flagged in the CSV and on the
/// graphs, skipped on resume and run again with --retry-failed.
#[test]
fn a_failed_point_is_flagged_skipped_and_retried() {
    let d = tmpdir();
    let f = d.path().join("f.toml");
    // bs=3000 with O_DIRECT: EINVAL on every filesystem.
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"4m\"\n[defaults]\nioengine = \"psync\"\ndirect = 1\nruntime = \"200ms\"\ntime_based = 1\n\
             [[sweep]]\nname = \"f\"\nprofiles = [\"randread\"]\naxes = {{ bs = [\"4k\", \"3000\", \"8k\"] }}\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert_eq!(r.code, 1, "a failed point fails the run: {}", r.stdout);
    assert!(
        r.stdout
            .contains("3 points: 2 run, 0 finished before, 1 failed"),
        "{}",
        r.stdout
    );
    let j = journal(&d.path().join("out"));
    let fails = events(&j, "fail");
    assert_eq!(fails.len(), 1);
    assert_eq!(fails[0]["id"], "f.randread.bs-3000");
    assert!(
        fails[0]["error"].as_str().unwrap().contains("err=22"),
        "{}",
        fails[0]
    );
    let (head, rows) = csv(&d.path().join("out"));
    let status = head.iter().position(|h| h == "status").unwrap();
    let failed: Vec<&Vec<String>> = rows.iter().filter(|r| r[status] == "failed").collect();
    assert_eq!(failed.len(), 1);
    // Skipped on resume, retried on request.
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert!(
        r.stdout.contains("0 run, 2 finished before, 1 failed"),
        "{}",
        r.stdout
    );
    assert_eq!(events(&journal(&d.path().join("out")), "start").len(), 3);
    let r = run_in(
        d.path(),
        &[
            "sweep",
            "run",
            "--retry-failed",
            &f.display().to_string(),
            "-o",
            "out",
        ],
    );
    assert!(
        // Retried and failed again: it counts as failed (the summary's groups partition
        // the points), and the journal shows the second start.
        r.stdout.contains("0 run, 2 finished before, 1 failed"),
        "{}",
        r.stdout
    );
    assert_eq!(
        events(&journal(&d.path().join("out")), "start").len(),
        4,
        "retried"
    );
}

/// Preconditioning and SNIA steady state: a fill pass, then rounds of a rate-limited
/// workload (flat, so steady at the 5th round); the rounds are journaled, each kept as
/// a result, the convergence chart drawn, and a resumed run does not repeat them.
#[test]
fn preconditioning_and_steady_state_rounds() {
    let d = tmpdir();
    let f = d.path().join("s.toml");
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"8m\"\n[defaults]\nioengine = \"psync\"\n\
             [precondition]\npasses = 1\nbs = \"1m\"\n\
             [steady_state]\nwindow = 5\nrounds = 8\n\
             workload = {{ rw = \"randwrite\", bs = \"4k\", rate_iops = 500, runtime = \"300ms\", time_based = 1 }}\n\
             [[sweep]]\nname = \"s\"\nprofiles = [\"randread\"]\nfixed = {{ runtime = \"200ms\", time_based = 1 }}\naxes = {{ iodepth = [1, 2] }}\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let r = run_in(d.path(), &["sweep", "plan", &f.display().to_string()]);
    assert!(r.stdout.contains("before the points: 1 sequential write pass(es) of 1m blocks; steady state: rounds of 300ms, 5..8 rounds (1s..2s)"), "{}", r.stdout);
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("steady state reached at round 5"),
        "{}",
        r.stderr
    );
    let out = d.path().join("out");
    let j = journal(&out);
    assert_eq!(events(&j, "precondition").len(), 2, "fill start and done");
    let rounds = events(&j, "round");
    assert_eq!(rounds.len(), 5);
    assert_eq!(rounds[4]["steady"], true);
    assert!(
        rounds
            .iter()
            .all(|r| (r["value"].as_f64().unwrap() - 500.0).abs() < 50.0),
        "{rounds:?}"
    );
    assert_eq!(
        std::fs::metadata(d.path().join("data")).unwrap().len(),
        8 << 20,
        "filled"
    );
    assert!(out.join("precondition/round-05.json").is_file());
    assert!(out.join("graphs/steady-state.svg").is_file());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("steady at round 5"), "evidence in the report");
    // Resumed: conditioned already, nothing repeated.
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert!(
        r.stderr.contains("preconditioning: done in an earlier run"),
        "{}",
        r.stderr
    );
    assert_eq!(events(&journal(&out), "round").len(), 5);
    if available!(Prereq::CHROMIUM) {
        let svg = render::render_svg(&out.join("graphs/steady-state.svg"), "steady-state");
        svg.assert_drawn("steady-state.svg", 5);
        assert!(
            svg.texts()
                .iter()
                .any(|t| t.starts_with("Steady state (SNIA")),
            "{:?}",
            svg.texts()
        );
    }
}

/// `ioscope report` on a plain directory of fio 3.33 results: the axes are the options
/// that vary, the graphs and page are written.
#[test]
fn report_reads_a_directory_of_fio_results() {
    require!(Prereq::Fio333);
    let d = tmpdir();
    let res = d.path().join("res");
    std::fs::create_dir(&res).unwrap();
    for qd in [1, 2, 4] {
        let out = res.join(format!("qd{qd}.json"));
        let r = run_tool(
            Path::new("fio"),
            d.path(),
            &[
                "--name=r",
                "--ioengine=null",
                "--size=64m",
                "--rw=randread",
                &format!("--iodepth={qd}"),
                "--output-format=json",
                &format!("--output={}", out.display()),
            ],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = run_in(d.path(), &["report", "res", "-o", "rep", "--ssv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (head, rows) = csv(&d.path().join("rep"));
    assert_eq!(&head[..4], ["sweep", "profile", "iodepth", "direction"]);
    assert_eq!(rows.len(), 3);
    assert!(d.path().join("rep/graphs/iops-vs-iodepth.svg").is_file());
    // fio-tests' columns: x, read bw, read IOPS, read clat, write bw, write IOPS, write clat.
    let ssv = std::fs::read_to_string(d.path().join("rep/ssv/randread.ssv")).unwrap();
    let lines: Vec<Vec<&str>> = ssv.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| l.len() == 7), "{ssv}");
    assert_eq!(
        lines.iter().map(|l| l[0]).collect::<Vec<_>>(),
        ["1", "2", "4"]
    );
    if available!(Prereq::CHROMIUM) {
        render::render_html(&d.path().join("rep/report.html"), "report-fio")
            .assert_drawn("report of fio results", 10);
    }
}

/// Safety on devices: a sweep that writes to a device carrying a file system is refused
/// as a whole before anything runs, unless --allow-destructive; a disk of another model
/// is refused; purge=discard needs both the permission and a named disk.
#[test]
fn devices_are_protected_and_identified() {
    require!(Prereq::Root, Prereq::LOSETUP, Prereq::MKFS_EXT4);
    let Some(lp) = LoopDev::new("64M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    sh(&format!("mkfs.ext4 -q -F {}", lp.dev)).expect("mkfs.ext4");
    let d = tmpdir();
    let f = d.path().join("dev.toml");
    let write = |extra_target: &str, extra: &str| {
        std::fs::write(
            &f,
            format!(
                "[target]\nfilename = \"{}\"\nsize = \"8m\"\n{extra_target}\n[defaults]\nioengine = \"psync\"\ndirect = 1\n\
                 runtime = \"100ms\"\ntime_based = 1\n{extra}\n[[sweep]]\nname = \"d\"\nprofiles = [\"seqwrite\"]\naxes = {{ bs = [\"4k\", \"64k\"] }}\n",
                lp.dev
            ),
        )
        .unwrap();
    };
    let fs = f.display().to_string();
    write("", "");
    let r = run_in(d.path(), &["sweep", "run", &fs, "-o", "a"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("carries an ext") && r.stderr.contains("refused"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("a/points").exists(), "nothing ran");
    // The disk's identity: a loop device is named by its backing file.
    let r = run_in(d.path(), &["sweep", "plan", &fs]);
    assert!(
        r.stdout.contains("(block device, disk loop")
            && r.stdout.contains("model loop device over /dev/shm/"),
        "{}",
        r.stdout
    );
    write("expect_model = \"Samsung SSD 990\"", "");
    let r = run_in(
        d.path(),
        &["sweep", "run", "--allow-destructive", &fs, "-o", "a"],
    );
    assert!(
        r.stderr.contains("expects model 'Samsung SSD 990'")
            && r.stderr.contains("refusing to touch another disk"),
        "{}",
        r.stderr
    );
    // Purge: refused without a named disk, then done with one.
    write("", "[precondition]\npurge = \"discard\"\npasses = 0\n");
    let r = run_in(
        d.path(),
        &["sweep", "run", "--allow-destructive", &fs, "-o", "b"],
    );
    assert!(
        r.stderr
            .contains("purge=discard: name the disk in [target]"),
        "{}",
        r.stderr
    );
    let backing = r_backing(&lp.dev);
    // A marker beyond the 8 MiB the points write: only the purge can clear it.
    let dev = std::fs::OpenOptions::new()
        .write(true)
        .open(&lp.dev)
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&dev, b"MARK", 40 << 20).unwrap();
    dev.sync_all().unwrap();
    drop(dev);
    write(
        &format!("expect_model = \"loop device over {backing}\""),
        "[precondition]\npurge = \"discard\"\npasses = 0\n",
    );
    let r = run_in(
        d.path(),
        &["sweep", "run", "--allow-destructive", &fs, "-o", "c"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 points: 2 run"), "{}", r.stdout);
    let j = journal(&d.path().join("c"));
    assert_eq!(
        events(&j, "precondition").len(),
        2,
        "purge start and done: {j:?}"
    );
    // The discard cleared the whole device, the marker too.
    let mut m = [0u8; 4];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(&lp.dev).unwrap(),
        &mut m,
        40 << 20,
    )
    .unwrap();
    assert_eq!(m, [0; 4], "the device was discarded");
}

fn r_backing(dev: &str) -> String {
    std::fs::read_to_string(format!(
        "/sys/block/{}/loop/backing_file",
        dev.trim_start_matches("/dev/")
    ))
    .unwrap()
    .trim()
    .to_string()
}

/// A fio-tests tree (job files with .out terse v3 lines, .res six-number files, a
/// failed run, a dry run, a result without job file) imports as sweep points: the
/// profile from rw/rwmixread, the iodepth axis, figures equal to the terse fields.
#[test]
fn a_fio_tests_tree_imports() {
    let d = tmpdir();
    let tree = d.path().join("fio-tests/tests/0001-basic-tests");
    let rr = tree.join("0004-randread");
    let mix = tree.join("0005-randwrite-70-30");
    std::fs::create_dir_all(&rr).unwrap();
    std::fs::create_dir_all(&mix).unwrap();
    let terse = |rw: &str, qd: u32| {
        let r = run_in(
            d.path(),
            &[
                "--name=t",
                "--ioengine=null",
                "--size=16m",
                &format!("--rw={rw}"),
                "--rwmixread=70",
                &format!("--iodepth={qd}"),
                "--output-format=terse",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
            .lines()
            .find(|l| l.starts_with("3;"))
            .expect("terse v3")
            .to_string()
    };
    let point = |dir: &Path, n: u32, qd: u32, rw: &str, mix: Option<u32>| -> Vec<String> {
        let base = dir.join(format!("{n:04}-bs4k-1j-{qd}qd-{rw}.ini"));
        let mut ini = format!("[global]\nthreads=1\ngroup_reporting=1\nbs=4k\niodepth={qd}\nnumjobs=1\n[job]\nrw={rw}\n");
        if let Some(m) = mix {
            ini.push_str(&format!("rwmixread={m}\n"));
        }
        std::fs::write(&base, ini).unwrap();
        let line = terse(rw, qd);
        std::fs::write(format!("{}.out", base.display()), format!("{line}\n")).unwrap();
        let f: Vec<String> = line.split(';').map(String::from).collect();
        let res = [7, 8, 16, 48, 49, 57]
            .iter()
            .map(|&i| f[i - 1].clone())
            .collect::<Vec<_>>()
            .join(",");
        std::fs::write(format!("{}.res", base.display()), res).unwrap();
        std::fs::write(format!("{}.OK", base.display()), "0").unwrap();
        f
    };
    let qd1 = point(&rr, 1, 1, "randread", None);
    point(&rr, 2, 2, "randread", None);
    point(&mix, 1, 1, "randrw", Some(70));
    point(&mix, 2, 4, "randrw", Some(70));
    // A run that failed, a dry run, and a .res alone (name and six numbers only).
    std::fs::write(rr.join("0003-bs4k-1j-4qd-randread.ini.res"), "1,2,3,0,0,0").unwrap();
    std::fs::write(rr.join("0003-bs4k-1j-4qd-randread.ini.BAD"), "1").unwrap();
    std::fs::write(rr.join("0005-bs4k-1j-16qd-randread.ini.res"), "0,0,0,0,0,0").unwrap();
    std::fs::write(
        rr.join("0004-bs4k-1j-8qd-randread.ini.res"),
        "4000,1000,120.5,0,0,0\n",
    )
    .unwrap();
    let r = run_in(
        d.path(),
        &["sweep", "import", "fio-tests/tests", "-o", "imp"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("imported 5 point(s)")
            && r.stdout
                .contains("1 failed in fio-tests and left out, 1 never run"),
        "{}",
        r.stdout
    );
    let (head, rows) = csv(&d.path().join("imp"));
    let col = |n: &str| {
        head.iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("{n} in {head:?}"))
    };
    let find = |profile: &str, qd: &str, dir: &str| {
        rows.iter()
            .find(|r| {
                r[col("profile")] == profile
                    && r[col("iodepth")] == qd
                    && r[col("direction")] == dir
            })
            .unwrap_or_else(|| panic!("{profile} {qd} {dir} in {rows:?}"))
    };
    let row = find("randread", "1", "read");
    assert_eq!(row[col("sweep")], "basic-tests");
    assert_eq!(
        row[col("iops")].parse::<f64>().unwrap().round(),
        qd1[7].parse::<f64>().unwrap().round()
    );
    assert_eq!(row[col("bw_kib_s")], qd1[6]);
    find("randrw-70-30", "4", "write");
    let only_res = find("randread", "8", "read");
    assert_eq!(only_res[col("iops")], "1000");
    assert_eq!(only_res[col("clat_mean_ns")], "120500");
    assert!(d
        .path()
        .join("imp/graphs/basic-tests-iops-vs-iodepth.svg")
        .is_file());
    // Imported results compare with new ones: `ioscope report` reads the directory again.
    let r = run_in(d.path(), &["report", "imp"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Steady state by fio's own ss= (parity with fio-tests): one run that fio's criterion
/// ends once it holds; the verdict is fio's `attained`.
#[test]
fn steady_state_by_fio_ss() {
    let d = tmpdir();
    let f = d.path().join("ss.toml");
    let text = |ss_dur: &str| {
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"8m\"\n[defaults]\nioengine = \"psync\"\n\
             [steady_state]\nmode = \"fio\"\nss = \"iops:20%\"\n\
             workload = {{ rw = \"randwrite\", bs = \"4k\", rate_iops = 500, runtime = \"8s\", time_based = 1{ss_dur} }}\n\
             [[sweep]]\nname = \"s\"\nprofiles = [\"randread\"]\nfixed = {{ runtime = \"100ms\", time_based = 1 }}\naxes = {{ iodepth = [1] }}\n",
            d.path().join("data").display()
        )
    };
    std::fs::write(&f, text("")).unwrap();
    let r = run_in(d.path(), &["sweep", "plan", &f.display().to_string()]);
    assert!(
        r.code == 1 && r.stderr.contains("needs its window: add ss_dur"),
        "{}",
        r.stderr
    );
    std::fs::write(&f, text(", ss_dur = \"2s\"")).unwrap();
    let t = std::time::Instant::now();
    let r = run_in(
        d.path(),
        &["sweep", "run", &f.display().to_string(), "-o", "out"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "fio's criterion ended the round early"
    );
    let j = journal(&d.path().join("out"));
    let rounds = events(&j, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["steady"], true);
    let round: Value = json_file(&d.path().join("out/precondition/round-01.json"));
    assert_eq!(round["jobs"][0]["steadystate"]["attained"], 1);
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(
        html.contains("steady at round 1") && html.contains("fio&#39;s ss="),
        "{html}"
    );
}

/// A small sweep on the null engine in `dir` (points finish at once): `size` per point,
/// iodepth 1 and 2.
fn null_sweep(dir: &Path, name: &str, size: &str) -> String {
    let f = dir.join(name);
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"{size}\"\n[defaults]\nioengine = \"null\"\n\
             [[sweep]]\nname = \"n\"\nprofiles = [\"randread\"]\naxes = {{ iodepth = [1, 2] }}\n",
            dir.join("data").display()
        ),
    )
    .unwrap();
    f.display().to_string()
}

fn sweep_run(dir: &Path, file: &str, out: &str) -> Run {
    run_in(dir, &["sweep", "run", file, "-o", out])
}

/// A crash or a full disk mid-append leaves the journal's last line torn: the next
/// run cuts it off before it appends, and `sweep run`, `sweep status` and `report`
/// read the campaign from then on (they failed for good: "not a journal entry").
#[test]
fn a_torn_journal_line_is_cut_before_the_next_append() {
    let d = tmpdir();
    let f = null_sweep(d.path(), "s.toml", "1m");
    assert_eq!(sweep_run(d.path(), &f, "out").code, 0);
    let jf = d.path().join("out/journal.jsonl");
    let mut text = std::fs::read_to_string(&jf).unwrap();
    text.push_str("{\"event\":\"fin");
    std::fs::write(&jf, &text).unwrap();
    let r = sweep_run(d.path(), &f, "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("0 run, 2 finished before"),
        "{}",
        r.stdout
    );
    let after = std::fs::read_to_string(&jf).unwrap();
    assert!(
        after
            .lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "every line an entry:\n{after}"
    );
    let s = run_in(d.path(), &["sweep", "status", "out"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(s.stdout.contains("2 done"), "{}", s.stdout);
    let r = run_in(d.path(), &["report", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Edit a sweep (size 1m → 2m), run it into the same directory, run the first again:
/// its points' result files hold the other version's points, so they run again and
/// the run says so (they were skipped as finished and results.csv showed the other
/// campaign's numbers).
#[test]
fn a_point_whose_result_is_another_campaigns_runs_again() {
    let d = tmpdir();
    let a = null_sweep(d.path(), "a.toml", "1m");
    let b = null_sweep(d.path(), "b.toml", "2m");
    assert_eq!(sweep_run(d.path(), &a, "out").code, 0);
    assert_eq!(sweep_run(d.path(), &b, "out").code, 0);
    let r = sweep_run(d.path(), &a, "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("2 points: 2 run, 0 finished before"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("holds a point of another version of the sweep or another target"),
        "{}",
        r.stderr
    );
    for id in ["n.randread.iodepth-1", "n.randread.iodepth-2"] {
        let p = d.path().join(format!("out/points/{id}.json"));
        let v: Value = json_file(&p);
        assert_eq!(
            u(&v["jobs"][0]["read"]["io_bytes"]),
            1 << 20,
            "{id}: a.toml's size"
        );
    }
}

/// Two `sweep run` on one directory: the second fails at once, naming the first's
/// pid (both measured the same point on the same device at the same time).
#[test]
fn a_second_run_on_one_directory_fails_naming_the_first() {
    let d = tmpdir();
    let f = d.path().join("slow.toml");
    std::fs::write(
        &f,
        format!(
            "[target]\nfilename = \"{}\"\nsize = \"1m\"\n[defaults]\nioengine = \"null\"\n\
             rate_iops = 100\nruntime = \"30s\"\ntime_based = 1\n\
             [[sweep]]\nname = \"s\"\nprofiles = [\"randread\"]\naxes = {{ iodepth = [1] }}\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let first = std::process::Command::new(bin())
        .args(["sweep", "run", &f.display().to_string(), "-o", "out"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (up to 60 s on a loaded machine) for the first run's point to start.
    let started = Instant::now();
    while events(&journal(&d.path().join("out")), "start").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = sweep_run(d.path(), &f.display().to_string(), "out");
    // SAFETY: kill with a pid this test spawned.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let mut first = first;
    let _ = first.wait();
    assert_eq!(second.code, 1, "{}", second.stderr);
    let want = format!("in use by another ioscope (pid {})", first.id());
    assert!(second.stderr.contains(&want), "{}", second.stderr);
    assert_eq!(
        events(&journal(&d.path().join("out")), "start").len(),
        1,
        "the second run started nothing"
    );
}

/// A relative `[template] file`, run from another directory: the template is read once
/// (relative to the sweep file) and kept with the run, so the report is written and
/// `report` and `sweep status` read the run later (they failed, and the run printed
/// "no report" and exited 0).
#[test]
fn a_relative_template_is_kept_with_the_run() {
    let d = tmpdir();
    let conf = d.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    std::fs::write(
        conf.join("t.fio"),
        "[global]\nioengine=null\nsize=1m\n[qd${QD}]\nrw=randread\niodepth=${QD}\n",
    )
    .unwrap();
    std::fs::write(
        conf.join("s.toml"),
        format!(
            "[target]\nfilename = \"{}\"\n[template]\nfile = \"t.fio\"\n[[sweep]]\nname = \"t\"\n\
             axes = {{ QD = [1, 4] }}\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let r = sweep_run(d.path(), "conf/s.toml", "out");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("report: out/report.html"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(d.path().join("out/template.fio")).unwrap(),
        std::fs::read_to_string(conf.join("t.fio")).unwrap()
    );
    std::fs::remove_dir_all(&conf).unwrap();
    let s = run_in(d.path(), &["sweep", "status", "out"]);
    assert!(
        s.code == 0 && s.stdout.contains("2 done"),
        "{}{}",
        s.stdout,
        s.stderr
    );
    let r = run_in(d.path(), &["report", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// `iodepth = "1..4096"` by `numjobs = "1..4096"`: each axis is within its cap, the
/// whole is 16.7 million points, refused at once (sweep plan allocated 7.7 GB).
#[test]
fn a_sweep_of_millions_of_points_is_refused() {
    let d = tmpdir();
    let f = d.path().join("big.toml");
    std::fs::write(
        &f,
        "[target]\nfilename = \"/tmp/x\"\nsize = \"1m\"\n[[sweep]]\nname = \"b\"\n\
         profiles = [\"randread\"]\naxes = { iodepth = \"1..4096\", numjobs = \"1..4096\" }\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["sweep", "plan", &f.display().to_string()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("16777216 points, more than the 20000 a sweep file may make"),
        "{}",
        r.stderr
    );
}

/// A run directory made by another user is refused; links planted in one of ours
/// (sweep.toml, results.csv, report.html, a point file) are replaced, never followed,
/// and a planted journal link is refused: the files they point at are unchanged.
#[test]
fn a_run_directory_is_this_users_and_its_links_are_never_followed() {
    require!(Prereq::Root);
    let d = tmpdir();
    let f = null_sweep(d.path(), "s.toml", "1m");
    let theirs = d.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let r = sweep_run(d.path(), &f, "theirs");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("belongs to uid 65534"), "{}", r.stderr);
    assert!(
        std::fs::read_dir(&theirs).unwrap().next().is_none(),
        "nothing written"
    );

    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = d.path().join("out");
    std::fs::create_dir_all(out.join("points")).unwrap();
    for name in [
        "sweep.toml",
        "results.csv",
        "report.html",
        "points/n.randread.iodepth-1.json",
    ] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    let r = sweep_run(d.path(), &f, "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let unchanged = std::fs::read(&victim).unwrap() == b"precious";
    assert!(unchanged, "the link's target was written");
    for name in ["sweep.toml", "results.csv", "report.html"] {
        let m = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(m.file_type().is_file(), "{name} is a file of its own now");
    }
    std::fs::remove_file(out.join("journal.jsonl")).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("journal.jsonl")).unwrap();
    let r = sweep_run(d.path(), &f, "out");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("journal.jsonl"), "{}", r.stderr);
    let unchanged = std::fs::read(&victim).unwrap() == b"precious";
    assert!(unchanged, "the journal link's target was written");
}

/// A result of ioscope's shape: one read job at `iodepth`, `iops`; `interrupted` as a
/// signal-cut run marks itself.
fn result_doc(iodepth: u32, iops: f64, interrupted: bool) -> String {
    serde_json::json!({"fio version": "fio-3.33", "jobs": [{"jobname": "j", "groupid": 0,
        "job options": {"rw": "randread", "iodepth": iodepth.to_string()},
        "read": {"io_bytes": 4096, "bw_bytes": 4096, "iops": iops, "runtime": 1000}}],
        "ioscope": {"interrupted": interrupted}})
    .to_string()
}

/// `report` names every file it leaves out and why (it dropped truncated, NaN and
/// non-result files silently), leaves an interrupted run out unless asked (it listed
/// it "ok"), and its own results.json is never read back: `compare` of the directory
/// afterwards works (it failed on that file).
#[test]
fn report_names_every_file_it_leaves_out() {
    let d = tmpdir();
    let res = d.path().join("res");
    std::fs::create_dir(&res).unwrap();
    let w = |n: &str, t: &str| std::fs::write(res.join(n), t).unwrap();
    w("qd1.json", &result_doc(1, 100.0, false));
    w("qd2.json", &result_doc(2, 200.0, false));
    w("qd4.json", &result_doc(4, 50.0, true));
    w("cut.json", &result_doc(8, 1.0, false)[..60]);
    w(
        "nan.json",
        &result_doc(16, 1.0, false).replace("\"iops\":1.0", "\"iops\":NaN"),
    );
    w("notes.json", "{\"notes\": \"not a result\"}");
    let r = run_in(d.path(), &["report", "res"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (file, why) in [
        ("qd4.json", "interrupted (--include-interrupted counts it)"),
        ("cut.json", "not valid JSON"),
        ("nan.json", "not valid JSON"),
        ("notes.json", "no \"jobs\" array"),
    ] {
        let line = format!("res/{file}: skipped: ");
        assert!(
            r.stderr
                .lines()
                .any(|l| l.contains(&line) && l.contains(why)),
            "{file}: {}",
            r.stderr
        );
    }
    let (_, rows) = csv(&res);
    assert_eq!(rows.len(), 2, "qd1 and qd2");
    let r = run_in(d.path(), &["report", "--include-interrupted", "res"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(csv(&res).1.len(), 3, "qd4 counted when asked");
    assert!(res.join("results.json").is_file());
    let r = run_in(d.path(), &["compare", "res", "res"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("results.json"), "{}", r.stderr);
    assert!(
        r.stdout.contains("A: res (2 results), B: res (2 results)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("qd4.json: skipped: the run was interrupted"),
        "{}",
        r.stderr
    );
    let r = run_in(
        d.path(),
        &["compare", "--include-interrupted", "res", "res"],
    );
    assert!(
        r.stdout.contains("A: res (3 results)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// A symbolic link back up the tree and a second path to one file: the directory is
/// read once (named as a loop), the file counted once (a loop counted a file 41 times
/// or hung).
#[test]
fn report_reads_through_link_loops_once() {
    let d = tmpdir();
    let res = d.path().join("res");
    std::fs::create_dir_all(res.join("sub")).unwrap();
    std::fs::write(res.join("sub/qd1.json"), result_doc(1, 100.0, false)).unwrap();
    std::fs::write(res.join("qd2.json"), result_doc(2, 200.0, false)).unwrap();
    std::os::unix::fs::symlink(&res, res.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(res.join("sub/qd1.json"), res.join("again.json")).unwrap();
    let r = run_in(d.path(), &["report", "res"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(csv(&res).1.len(), 2, "each file once");
    assert!(
        r.stderr.contains("a directory already read"),
        "{}",
        r.stderr
    );
}

/// One fio result of 1000 jobs: `report` holds it once (each job's record cloned the
/// whole file: 4.6 GB), and `compare` of it against itself looks each job up once (it
/// took over 2 minutes). Bounds from what the run measures: report's peak memory under
/// 100 times the file's size (the file once, parsed, with the report's tables and
/// charts: ~30 times; a copy per job: ~2500 times); compare's CPU time under 40 times
/// report's (both read the same file; linear, compare took ~4 times as long, quadratic
/// ~1000 times).
#[test]
fn report_and_compare_stay_linear_in_a_1000_job_file() {
    let d = tmpdir();
    let jobs: Vec<serde_json::Value> = (0..1000)
        .map(|i| {
            let bins: serde_json::Map<String, serde_json::Value> = (0..100)
                .map(|k| ((1000 + k * 10).to_string(), 10.into()))
                .collect();
            serde_json::json!({"jobname": format!("job{i}"), "groupid": 0,
                "job options": {"rw": "randread", "iodepth": (1 + i % 32).to_string()},
                "read": {"io_bytes": 4096000, "bw_bytes": 4096000, "iops": 1000.0 + i as f64,
                    "runtime": 1000, "total_ios": 1000,
                    "clat_ns": {"mean": 1000.0 + i as f64, "bins": bins}}})
        })
        .collect();
    let text = serde_json::json!({"fio version": "fio-3.33", "jobs": jobs}).to_string();
    let size_kib = text.len() as u64 / 1024;
    std::fs::create_dir(d.path().join("res")).unwrap();
    std::fs::write(d.path().join("res/big.json"), &text).unwrap();
    let report = run_measured(d.path(), &["report", "res", "-o", "rep"]);
    assert_eq!(report.run.code, 0, "{}", report.run.stderr);
    assert_eq!(csv(&d.path().join("rep")).1.len(), 1000);
    assert!(
        report.max_rss_kib < 100 * size_kib,
        "report of a {size_kib} KiB file peaked at {} KiB",
        report.max_rss_kib
    );
    let cmp = run_measured(d.path(), &["compare", "res/big.json", "res/big.json"]);
    assert_eq!(cmp.run.code, 0, "{}", cmp.run.stderr);
    assert!(
        cmp.cpu_s < 40.0 * report.cpu_s.max(0.05),
        "compare took {:.2} s of CPU, report {:.2} s",
        cmp.cpu_s,
        report.cpu_s
    );
}

/// Before the first point a run measures, the target runs that point's workload for
/// `[target] warmup` (2 s by default) unmeasured, and the run says so and journals it
/// (the first point after a layout ran ~5 times slower than later); `warmup = "0"`
/// skips it, and a resumed run with nothing left does not warm.
#[test]
fn the_first_point_of_a_run_follows_a_warm_up() {
    let d = tmpdir();
    let f = null_sweep(d.path(), "s.toml", "1m");
    let r = sweep_run(d.path(), &f, "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("warm-up: 2.0 s of n.randread.iodepth-1's workload on"),
        "{}",
        r.stderr
    );
    let j = journal(&d.path().join("out"));
    let kinds: Vec<&str> = j.iter().filter_map(|e| e["event"].as_str()).collect();
    let warm = kinds
        .iter()
        .position(|k| *k == "warmup")
        .expect("journaled");
    let start = kinds
        .iter()
        .position(|k| *k == "start")
        .expect("points ran");
    assert!(warm < start, "{kinds:?}");
    let r = sweep_run(d.path(), &f, "out");
    assert!(
        !r.stderr.contains("warm-up"),
        "nothing left to measure: {}",
        r.stderr
    );
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("[defaults]", "warmup = \"0\"\n[defaults]");
    std::fs::write(&f, text).unwrap();
    let r = sweep_run(d.path(), &f, "out2");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("warm-up"), "{}", r.stderr);
    assert!(events(&journal(&d.path().join("out2")), "warmup").is_empty());
}
