//! fio's verification triggers (--trigger-file, --trigger-timeout, --trigger): every
//! job's verify state saved as it stands, the run ended, the command run; and the
//! state files (fio 3.42's version 5) passed between ioscope and fio 3.42 both ways.

use crate::common::*;
use ioscope_verify::state::State;
use serde_json::Value;
use std::fs;
use std::path::Path;

fn json_of(r: &Run) -> Value {
    // fio prints its "Stop verify because ..." notes on stdout before the JSON.
    let t = &r.stdout[r.stdout.find('{').unwrap_or(0)..];
    serde_json::from_str(t).unwrap_or_else(|e| panic!("JSON ({e}): {}\n{}", r.stdout, r.stderr))
}

fn writer(file: &Path, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--name=w".to_string(),
        format!("--filename={}", file.display()),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=64m".into(),
        "--verify=crc32c".into(),
        "--rate_iops=2000".into(),
        "--output-format=json".into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(dir: &Path, args: &[String]) -> (Run, Value) {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run_in(dir, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r);
    (r, v)
}

fn state(dir: &Path) -> State {
    let b = fs::read(dir.join("local-w-0-verify.state")).expect("the state file");
    State::decode(&b).expect("a version 5 state")
}

/// --trigger-timeout: the job ends early with its state saved before the command runs
/// (the command finds it); the command's output stays off stdout, whose JSON is whole
/// and not marked interrupted; a failing command is reported.
#[test]
fn a_timed_trigger_saves_the_state_then_runs_the_command() {
    let d = tmpdir();
    let f = d.path().join("f");
    let cmd = "test -f local-w-0-verify.state && echo saved > fired.txt; echo from-the-command";
    let (r, v) = run(
        d.path(),
        &writer(
            &f,
            &["--trigger-timeout=300ms", &format!("--trigger={cmd}")],
        ),
    );
    let written = u(&v["jobs"][0]["write"]["total_ios"]);
    assert!(
        written > 0 && written < 16384,
        "{written} writes: ended early"
    );
    assert_ne!(v["ioscope"]["interrupted"], true, "{}", r.stdout);
    let s = state(d.path());
    assert_eq!((s.name.as_str(), s.index, s.depth), ("w", 0, 1));
    assert!(
        s.numberio <= written,
        "{} issued, state {}",
        written,
        s.numberio
    );
    assert!(
        s.numberio + 1 >= written,
        "{} issued, state {}",
        written,
        s.numberio
    );
    assert_eq!(
        fs::read_to_string(d.path().join("fired.txt")).unwrap(),
        "saved\n",
        "the command ran after the state was saved"
    );
    assert!(r.stderr.contains("from-the-command"), "{}", r.stderr);
    assert!(!r.stdout.contains("from-the-command"));

    let a = writer(&f, &["--trigger-timeout=100ms", "--trigger=exit 3"]);
    let (r, _) = run(d.path(), &a);
    assert!(
        r.stderr.contains("failed executing exit 3 trigger"),
        "{}",
        r.stderr
    );
}

/// --trigger-file: a file already there fires at once and is removed; without it the
/// job runs on (here until its runtime).
#[test]
fn a_trigger_file_fires_and_is_removed() {
    let d = tmpdir();
    let f = d.path().join("f");
    let trig = d.path().join("trig");
    let flag = format!("--trigger-file={}", trig.display());
    let (_, v) = run(d.path(), &writer(&f, &[&flag, "--runtime=400ms"]));
    assert!(
        u(&v["jobs"][0]["job_runtime"]) >= 400,
        "no trigger file: ran on"
    );
    fs::write(&trig, "").unwrap();
    let (_, v) = run(d.path(), &writer(&f, &[&flag, "--runtime=20s"]));
    assert!(!trig.exists(), "the trigger file is removed");
    let ran = u(&v["jobs"][0]["job_runtime"]);
    assert!(ran < 20_000, "ended by the trigger after {ran} ms");
    assert_eq!(
        state(d.path()).numberio,
        u(&v["jobs"][0]["write"]["total_ios"])
    );
}

/// A state saved by one program's trigger (libaio at depth 8, O_DIRECT: writes in
/// flight when it fired) is loaded by the other's read verification, which reads
/// exactly the writes before the first one in flight, without a failure — in all
/// four pairings of ioscope and fio 3.42.
#[test]
fn trigger_states_pass_between_ioscope_and_fio_342() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let f = d.path().join("f");
    let fio = fio342_path();
    let common = [
        "--ioengine=libaio",
        "--iodepth=8",
        "--direct=1",
        "--rate_iops=4000",
    ];
    let mut w = common.to_vec();
    w.push("--trigger-timeout=500ms");
    let mut rd = common.to_vec();
    rd.extend(["--verify_state_load=1", "--rw=read"]);
    for (wname, wbin) in [("ioscope", bin()), ("fio", fio.clone())] {
        for (rname, rbin) in [("ioscope", bin()), ("fio", fio.clone())] {
            let m = format!("{wname} wrote, {rname} read");
            let _ = fs::remove_file(d.path().join("local-w-0-verify.state"));
            let a = writer(&f, &w);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let r = run_tool(&wbin, d.path(), &a, &[]);
            assert_eq!(r.code, 0, "{m}: {}", r.stderr);
            let s = state(d.path());
            assert!(s.stop_at() > 0 && s.stop_at() <= s.numberio, "{m}: {s:?}");
            let a = writer(&f, &rd);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let r = run_tool(&rbin, d.path(), &a, &[]);
            assert_eq!(r.code, 0, "{m}: {}", r.stderr);
            let v = json_of(&r);
            let j = &v["jobs"][0];
            assert_eq!(j["error"], 0, "{m}");
            assert_eq!(u(&j["read"]["total_ios"]), s.stop_at(), "{m}: {s:?}");
            if rname == "ioscope" {
                assert_eq!(u(&j["verify"]["blocks"]), s.stop_at(), "{m}");
                assert_eq!(u(&j["verify"]["errors"]), 0, "{m}");
            }
        }
    }
}
