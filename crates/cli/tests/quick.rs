//! `ioscope quick`: six measurements, JSON for machines, temporary file removed
//! afterwards, also on Ctrl-C.

use crate::common::*;

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ioscope-quick"))
        .collect()
}

#[test]
fn quick_measures_and_cleans_up() {
    let d = tmpdir();
    let (r, v) = run_json(d.path(), &["quick", "--size=16m", "--runtime=1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 6);
    let names: Vec<String> = tests
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t["test"].as_str().unwrap(),
                t["rw"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "SEQ1M Q8T1 read",
            "SEQ1M Q8T1 write",
            "RND4K Q32T1 read",
            "RND4K Q32T1 write",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write"
        ]
    );
    for t in tests {
        assert!(t["iops"].as_f64().unwrap() > 0.0, "{t}");
        assert!(u(&t["lat_ns"]["p99"]) >= u(&t["lat_ns"]["p50"]), "{t}");
    }
    assert_eq!(v["direct"], true, "/tmp supports O_DIRECT");
    assert!(leftovers(d.path()).is_empty(), "temporary file removed");
    let r = run_in(d.path(), &["quick", "--size=16m", "--runtime=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("RND4K Q32T1") && r.stdout.contains("MB/s"),
        "{}",
        r.stdout
    );
}

#[test]
fn quick_cleans_up_on_ctrl_c() {
    let d = tmpdir();
    let child = std::process::Command::new(bin())
        .args(["quick", "--size=16m", "--runtime=10"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2000));
    assert!(
        !leftovers(d.path()).is_empty(),
        "the test file exists while running"
    );
    // SAFETY: signalling our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(130),
        "interrupted, and says so: {err}"
    );
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SEQ1M"),
        "the tests that ran are still reported"
    );
    assert!(
        leftovers(d.path()).is_empty(),
        "temporary file removed after Ctrl-C"
    );
}

/// The test file is made new, never through a link, under a name nobody can plant in
/// advance (it was `.ioscope-quick.PID.tmp`, opened without O_EXCL or O_NOFOLLOW: a
/// link planted in a shared directory had root overwrite its target). strace shows the
/// first open of the file.
#[test]
fn quick_makes_its_test_file_new_under_an_unpredictable_name() {
    require!(Prereq::Program {
        name: "strace",
        package: "strace"
    });
    let d = tmpdir();
    let trace = d.path().join("trace");
    let bin = bin().display().to_string();
    let t = trace.display().to_string();
    let args = [
        "-f",
        "-e",
        "trace=openat",
        "-o",
        &t,
        &bin,
        "quick",
        "--size=16m",
        "--runtime=1",
    ];
    let r = run_tool(std::path::Path::new("strace"), d.path(), &args, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&trace).unwrap();
    let first = text
        .lines()
        .find(|l| l.contains("ioscope-quick"))
        .expect("the test file is opened");
    assert!(
        first.contains("O_CREAT") && first.contains("O_EXCL") && first.contains("O_NOFOLLOW"),
        "{first}"
    );
    let name = first.split('"').nth(1).unwrap_or("");
    let random = name.rsplit('.').nth(1).unwrap_or("");
    assert!(
        random.len() == 16 && random.chars().all(|c| c.is_ascii_hexdigit()),
        "a 64-bit random part in {name}"
    );
    assert!(leftovers(d.path()).is_empty(), "removed");
}
