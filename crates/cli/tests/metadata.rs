//! fio's metadata engines (filecreate, filestat, filedelete; dircreate, dirstat,
//! dirdelete from fio 3.34): the timed operation is on each file's name, once per pass
//! over the file; the blocks count as I/O (bytes, IOPS) with no latency of their own.
//! ioscope and fio 3.33 run the same jobs and must agree on what happened to the files
//! and on the counts.

use crate::common::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The first job's JSON of a run, after any notice on stdout.
fn json_of(r: &Run, what: &str) -> serde_json::Value {
    let at = r
        .stdout
        .find('{')
        .unwrap_or_else(|| panic!("{what}: no JSON: {}", r.stderr));
    serde_json::from_str(&r.stdout[at..]).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// (io_bytes, total_ios, clat samples, lat samples, slat samples) of one direction.
fn counts(v: &serde_json::Value, dir: &str) -> [u64; 5] {
    let d = &v["jobs"][0][dir];
    [
        u(&d["io_bytes"]),
        u(&d["total_ios"]),
        u(&d["clat_ns"]["N"]),
        u(&d["lat_ns"]["N"]),
        u(&d["slat_ns"]["N"]),
    ]
}

/// No share of the blocks in fio's latency distribution (they have no latency).
fn no_distribution(v: &serde_json::Value, what: &str) {
    for k in ["latency_ns", "latency_us", "latency_ms"] {
        let m = v["jobs"][0][k].as_object().unwrap();
        assert!(
            m.values().all(|x| x.as_f64() == Some(0.0)),
            "{what}: {k} {m:?}"
        );
    }
}

fn names_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("m."))
        .collect();
    v.sort();
    v
}

fn programs() -> Vec<PathBuf> {
    let mut progs = vec![bin()];
    if fio_usable() {
        progs.push(PathBuf::from("fio"));
    }
    progs
}

#[test]
fn file_engines_time_one_operation_per_file_as_fio_does() {
    for prog in programs() {
        let who = prog.display().to_string();
        let d = tmpdir();
        let dir = format!("--directory={}", d.path().display());
        let go = |args: &[&str]| {
            let mut a = vec!["--name=m", &dir, "--output-format=json"];
            a.extend_from_slice(args);
            run_tool(&prog, d.path(), &a, &[])
        };
        // filecreate: 20 files, each written as four 1k blocks: one open each, timed.
        let r = go(&[
            "--ioengine=filecreate",
            "--nrfiles=20",
            "--filesize=4k",
            "--bs=1k",
            "--rw=randwrite",
        ]);
        assert_eq!(r.code, 0, "{who}: {}", r.stderr);
        let v = json_of(&r, &who);
        assert_eq!(counts(&v, "write"), [81920, 80, 20, 0, 0], "{who}");
        no_distribution(&v, &who);
        let files = names_in(d.path());
        assert_eq!(files.len(), 20, "{who}");
        for f in &files {
            let m = fs::metadata(f).unwrap();
            assert_eq!(
                (m.len(), m.permissions().mode() & 0o777),
                (0, 0o600),
                "{who}: {f:?}"
            );
        }

        // filestat on those names (laid out to 4k first), with lstat: one call each.
        let r = go(&[
            "--ioengine=filestat",
            "--stat_type=lstat",
            "--nrfiles=20",
            "--filesize=4k",
            "--bs=1k",
        ]);
        assert_eq!(r.code, 0, "{who}: {}", r.stderr);
        let v = json_of(&r, &who);
        assert_eq!(counts(&v, "read"), [81920, 80, 20, 0, 0], "{who}");
        assert!(
            files.iter().all(|f| fs::metadata(f).unwrap().len() == 4096),
            "{who}"
        );

        // filedelete: every file gone, one unlink each.
        let r = go(&["--ioengine=filedelete", "--nrfiles=20", "--filesize=4k"]);
        assert_eq!(r.code, 0, "{who}: {}", r.stderr);
        let v = json_of(&r, &who);
        assert_eq!(counts(&v, "read"), [81920, 20, 20, 0, 0], "{who}");
        assert!(names_in(d.path()).is_empty(), "{who}");

        // A second loop finds the first file gone: err=2 naming it, first loop counted.
        let r = go(&[
            "--ioengine=filedelete",
            "--nrfiles=5",
            "--filesize=4k",
            "--loops=2",
        ]);
        assert_ne!(r.code, 0, "{who}");
        let v = json_of(&r, &who);
        assert_eq!(u(&v["jobs"][0]["error"]), 2, "{who}");
        assert_eq!(counts(&v, "read"), [20480, 5, 5, 0, 0], "{who}");
        let first = d.path().join("m.0.0").display().to_string();
        // fio says it on stdout, before its JSON; ioscope on stderr.
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(said.contains(&format!("delete({first})")), "{who}: {said}");
    }
}

/// stat_type picks the call: strace sees statx(2) on each file's name, once.
#[test]
fn filestat_makes_the_stat_call_stat_type_names() {
    require!(Prereq::Program {
        name: "strace",
        package: "strace"
    });
    let d = tmpdir();
    let exe = bin();
    let dir = format!("--directory={}", d.path().display());
    let args = [
        "-f",
        "-e",
        "trace=statx",
        "-o",
        "trace",
        exe.to_str().unwrap(),
        "--name=m",
        &dir,
        "--ioengine=filestat",
        "--stat_type=statx",
        "--nrfiles=8",
        "--filesize=4k",
        "--output-format=json",
    ];
    let r = run_tool(Path::new("strace"), d.path(), &args, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let trace = fs::read_to_string(d.path().join("trace")).unwrap();
    // The main thread sets the files up (and looks at them); the job's thread is the
    // one whose calls count.
    let main = trace
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    for i in 0..8 {
        let name = format!("{}/m.0.{i}\"", d.path().display());
        let n = trace
            .lines()
            .filter(|l| l.contains(&name) && !l.starts_with(&format!("{main} ")))
            .count();
        assert_eq!(n, 1, "m.0.{i}: {n} statx calls\n{trace}");
    }
}

/// fio 3.34's directory engines: mkdir (0700), stat and rmdir, one per name; a name
/// that is already there fails mkdir with EEXIST, as the call does.
#[test]
fn dir_engines_make_stat_and_remove_directories() {
    let d = tmpdir();
    let dir = format!("--directory={}", d.path().display());
    let go = |engine: &str| {
        let e = format!("--ioengine={engine}");
        let a = [
            "--name=m",
            &dir,
            &e,
            "--nrfiles=6",
            "--filesize=4k",
            "--output-format=json",
        ];
        run_in(d.path(), &a)
    };
    let r = go("dircreate");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        counts(&json_of(&r, "dircreate"), "read"),
        [24576, 6, 6, 0, 0]
    );
    let dirs = names_in(d.path());
    assert_eq!(dirs.len(), 6);
    for p in &dirs {
        let m = fs::metadata(p).unwrap();
        assert!(
            m.is_dir() && m.permissions().mode() & 0o777 == 0o700,
            "{p:?}"
        );
    }
    let again = go("dircreate");
    assert_ne!(again.code, 0);
    assert_eq!(u(&json_of(&again, "again")["jobs"][0]["error"]), 17);
    assert!(again.stderr.contains("mkdir("), "{}", again.stderr);

    let r = go("dirstat");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(counts(&json_of(&r, "dirstat"), "read"), [24576, 6, 6, 0, 0]);
    let r = go("dirdelete");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        counts(&json_of(&r, "dirdelete"), "read"),
        [24576, 6, 6, 0, 0]
    );
    assert!(names_in(d.path()).is_empty());
    // dirstat makes the directories it is to stat.
    let r = go("dirstat");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(names_in(d.path()).len(), 6);
}

/// Only names: a device is refused before any I/O.
#[test]
fn metadata_engines_refuse_devices() {
    let r = run(&[
        "--name=m",
        "--filename=/dev/null",
        "--ioengine=filedelete",
        "--size=4k",
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("works on files and directories only"),
        "{}",
        r.stderr
    );
    assert!(Path::new("/dev/null").exists());
}

/// fio's own example jobs for these engines, each made small (50 files a job) and run
/// in a temporary directory: fio 3.33 and ioscope give the same json+ key set and, per
/// job, the same error, bytes, I/O count and number of timed operations.
#[test]
fn metadata_examples_give_fios_json_plus() {
    require!(Prereq::Fio333, Prereq::SharedExamples);
    for name in crate::common::examples::METADATA_EXAMPLES {
        let text = fs::read_to_string(shared_examples_path().join(name)).unwrap();
        let small: String = text
            .lines()
            .map(|l| match l.trim().split_once('=') {
                Some(("nrfiles", _)) => "nrfiles=50".to_string(),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut per_tool = Vec::new();
        for prog in [PathBuf::from("fio"), bin()] {
            let d = tmpdir();
            let job = d.path().join(name);
            let dir = format!("--directory={}", d.path().display());
            fs::write(&job, &small).unwrap();
            let args = [dir.as_str(), "--output-format=json+", job.to_str().unwrap()];
            let r = run_tool(&prog, d.path(), &args, &[]);
            assert_eq!(r.code, 0, "{name} {}: {}", prog.display(), r.stderr);
            // Compared with fio 3.33, which does not echo bare flags.
            let v = without_bare_flags(json_of(&r, name));
            let mut keys = std::collections::BTreeSet::new();
            json_keys(&v, "", &mut keys);
            let jobs: Vec<(String, u64, u64, u64, u64)> = v["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| {
                    let d = &j["read"];
                    let name = j["jobname"].as_str().unwrap_or_default().to_string();
                    let ios = (u(&d["io_bytes"]), u(&d["total_ios"]), u(&d["clat_ns"]["N"]));
                    (name, u(&j["error"]), ios.0, ios.1, ios.2)
                })
                .collect();
            per_tool.push((keys, jobs));
        }
        let (fio, ours) = (&per_tool[0], &per_tool[1]);
        let only_fio: Vec<_> = fio.0.difference(&ours.0).collect();
        let only_ours: Vec<_> = ours.0.difference(&fio.0).collect();
        assert!(
            only_fio.is_empty() && only_ours.is_empty(),
            "{name}: keys only fio has {only_fio:?}, only ioscope has {only_ours:?}"
        );
        assert_eq!(
            fio.1, ours.1,
            "{name}: per job (name, error, bytes, ios, ops)"
        );
        assert!(ours.1.iter().all(|j| j.4 == 50), "{name}: {:?}", ours.1);
    }
}
