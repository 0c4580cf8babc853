//! Helpers for tests that run the ioscope binary.
#![allow(dead_code, unused_macros)]

/// Prerequisites: `require!`, `available!`, `skip!` (visible skips; failures under CI).
#[macro_use]
pub mod prereq;
pub use prereq::*;

/// The example job files the parser tests run (our corpus, and fio's when present).
pub mod examples;

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ioscope"))
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    run_tool(&bin(), dir, args, &[])
}

/// Run a program (ioscope or fio) in `dir` with extra environment variables.
pub fn run_tool(cmd: &Path, dir: &Path, args: &[&str], env: &[(String, String)]) -> Run {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", cmd.display()));
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !r.stderr.contains("panicked"),
        "{} panicked: {}",
        cmd.display(),
        r.stderr
    );
    r
}

/// fio 3.33 is installed. When it is not: a visible skip of the calling test's fio part, or
/// under CI=true a failure (`available!(Prereq::Fio333)`).
pub fn fio_usable() -> bool {
    prereq_met(&test_name!(), &Prereq::Fio333, true)
}

pub fn run(args: &[&str]) -> Run {
    run_in(Path::new("."), args)
}

/// Run and parse stdout as one JSON document (asserting nothing else is on stdout).
pub fn run_json(dir: &Path, args: &[&str]) -> (Run, serde_json::Value) {
    let r = run_in(dir, args);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            r.stdout, r.stderr
        )
    });
    (r, v)
}

pub fn tmpdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ioscope-test")
        .tempdir_in("/tmp")
        .expect("tempdir")
}

pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The job object of a JSON report.
pub fn job(v: &serde_json::Value, i: usize) -> &serde_json::Value {
    &v["jobs"][i]
}

pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Return from the test when fio 3.33 is not installed (a visible skip; under CI=true a
/// failure): `require!(Prereq::Fio333)`.
macro_rules! require_fio {
    () => {
        require!(Prereq::Fio333)
    };
}

/// One temporary directory with a subdirectory per tool, for side-by-side runs.
pub struct Pair {
    _dir: tempfile::TempDir,
    pub fio_dir: PathBuf,
    pub ioscope_dir: PathBuf,
}

impl Pair {
    pub fn new() -> Pair {
        let dir = tmpdir();
        let fio_dir = dir.path().join("fio");
        let ioscope_dir = dir.path().join("ioscope");
        std::fs::create_dir(&fio_dir).expect("create fio dir");
        std::fs::create_dir(&ioscope_dir).expect("create ioscope dir");
        Pair {
            _dir: dir,
            fio_dir,
            ioscope_dir,
        }
    }
}

/// Run a shell command; its trimmed stdout if it succeeded.
pub fn sh(cmd: &str) -> Option<String> {
    let o = Command::new("sh").arg("-c").arg(cmd).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A loop device over a file in /dev/shm, detached and removed on drop.
pub struct LoopDev {
    pub dev: String,
    img: std::path::PathBuf,
}

impl LoopDev {
    /// A loop device over a file in /dev/shm; None when losetup fails (the caller checked
    /// root and losetup first).
    pub fn new(size: &str) -> Option<LoopDev> {
        let img = std::path::PathBuf::from(format!(
            "/dev/shm/ioscope-test-{}-{size}.img",
            std::process::id()
        ));
        let dev = sh(&format!(
            "truncate -s {size} {0} && losetup --direct-io=on --find --show {0}",
            img.display()
        ))?;
        Some(LoopDev { dev, img })
    }
    pub fn sched_path(&self) -> String {
        format!(
            "/sys/block/{}/queue/scheduler",
            self.dev.trim_start_matches("/dev/")
        )
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = sh(&format!("losetup -d {}", self.dev));
        let _ = std::fs::remove_file(&self.img);
    }
}
