//! Helpers for tests that run the ioscope binary.
#![allow(dead_code, unused_macros)]

/// Prerequisites: `require!`, `available!`, `skip!` (visible skips; failures under CI).
#[macro_use]
pub mod prereq;
pub use prereq::*;

/// The example job files the parser tests run (our corpus, and fio's when present).
pub mod examples;

/// Rendering SVG and HTML in headless Chromium.
pub mod render;

/// Interactive pages in headless Chromium through the DevTools protocol.
pub mod browser;

/// Every JSON document checked against docs/schema.
pub mod schema;

/// Hosts on one machine: network namespaces on a bridge.
pub mod netns;

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
    // ioscope's JSON on stdout follows its schema (fio's own output is fio's).
    if cmd == bin() {
        let t = r.stdout.trim_start();
        if t.starts_with('{') || t.starts_with('[') {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.stdout) {
                schema::check_output(args, &v);
            }
        }
    }
    r
}

/// A JSON file ioscope wrote, parsed and checked against its schema.
pub fn json_file(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not one JSON document ({e})", path.display()));
    schema::check(&v);
    v
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
    /// root and losetup first; losetup's message goes to the test's captured output).
    pub fn new(size: &str) -> Option<LoopDev> {
        LoopDev::with(size, "--direct-io=on")
    }

    /// As `new`, with more losetup arguments (`--sector-size 4096`). Each device has a
    /// file of its own, made with O_EXCL|O_NOFOLLOW under a name no other test (or
    /// process) shares: tests in one process once shared a file per size, and one's
    /// cleanup removed it under another's losetup.
    pub fn with(size: &str, args: &str) -> Option<LoopDev> {
        use std::os::unix::fs::OpenOptionsExt;
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let img = std::path::PathBuf::from(format!(
            "/dev/shm/ioscope-test-{}-{n}-{nanos:08x}.img",
            std::process::id()
        ));
        if let Err(e) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o600)
            .open(&img)
        {
            eprintln!("{}: {e}", img.display());
            return None;
        }
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "truncate -s {size} {0} && losetup {args} --find --show {0}",
                img.display()
            ))
            .output()
            .ok()?;
        if !o.status.success() {
            eprintln!("losetup: {}", String::from_utf8_lossy(&o.stderr));
            let _ = std::fs::remove_file(&img);
            return None;
        }
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Some(LoopDev { dev, img })
    }
    /// The file in /dev/shm behind the device.
    pub fn backing(&self) -> &std::path::Path {
        &self.img
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

/// What a signalled run left: exit code (-1 when killed), seconds from the first
/// signal to exit, stdout and stderr.
pub struct Signalled {
    pub code: i32,
    pub secs: f64,
    pub stdout: String,
    pub stderr: String,
}

/// Start ioscope in `dir`, send `signals` (5 ms apart) after `after`.
pub fn signal_run(
    dir: &Path,
    args: &[&str],
    after: std::time::Duration,
    signals: &[i32],
) -> Signalled {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn ioscope");
    std::thread::sleep(after);
    let t = std::time::Instant::now();
    for &s in signals {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, s) };
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("wait");
    Signalled {
        code: out.status.code().unwrap_or(-1),
        secs: t.elapsed().as_secs_f64(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Start ioscope in `dir` (stdout discarded, stderr kept) and wait until its thread
/// named `comm` has a CPU list (`Cpus_allowed_list` in /proc) that `wanted` accepts, or
/// until the process ends or `limit` passes. Returns the child and that list.
pub fn thread_cpus(
    dir: &Path,
    args: &[String],
    comm: &str,
    wanted: impl Fn(&[usize]) -> bool,
    limit: std::time::Duration,
) -> (std::process::Child, Option<Vec<usize>>) {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ioscope");
    let t = std::time::Instant::now();
    while t.elapsed() < limit && child.try_wait().ok().flatten().is_none() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id()));
        for task in tasks.into_iter().flatten().flatten() {
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if name.trim() != comm {
                continue;
            }
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|l| cpu_list(l.trim()));
            if let Some(c) = cpus.filter(|c| wanted(c)) {
                return (child, Some(c));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (child, None)
}

/// `1-3,5` → [1, 2, 3, 5].
pub fn cpu_list(s: &str) -> Vec<usize> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| match p.split_once('-') {
            Some((a, b)) => (a.parse().unwrap_or(0)..=b.parse().unwrap_or(0)).collect(),
            None => vec![p.parse().unwrap_or(0)],
        })
        .collect()
}

/// The key paths of a JSON document (`/jobs[]/read/io_bytes`), for comparing the shape
/// of fio's and ioscope's: arrays by their first element, histogram bins and percentile
/// maps as one key each; ioscope's own `ioscope` object left out. The echo of the
/// options ("job options", "global options") is in: its keys are the options as written.
/// Keys fio 3.42's JSON added to fio 3.33's (and schedlat_ns, ioscope's own): left out
/// where ioscope's JSON is compared with Debian's fio 3.33.
pub const KEYS_AFTER_FIO_333: &[&str] = &[
    "job_start",
    "latency_target_ns",
    "latency_window_us",
    "read_sectors",
    "write_sectors",
    "priohint",
    "schedlat_ns",
];

pub fn json_keys(v: &serde_json::Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
    json_keys_skipping(v, path, KEYS_AFTER_FIO_333, out)
}

/// The key paths of `v`, keys named in `skip` left out (with what is under them).
pub fn json_keys_skipping(
    v: &serde_json::Value,
    path: &str,
    skip: &[&str],
    out: &mut std::collections::BTreeSet<String>,
) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if path.is_empty() && k == "ioscope" {
                    continue;
                }
                if skip.contains(&k.as_str()) {
                    continue;
                }
                let p = format!("{path}/{k}");
                // Histogram bins and percentile keys hold data, not structure.
                if k == "bins" || k == "percentile" {
                    out.insert(p);
                    continue;
                }
                json_keys_skipping(x, &p, skip, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a.iter().take(1) {
                json_keys_skipping(x, &format!("{path}[]"), skip, out);
            }
        }
        _ => {
            out.insert(path.to_string());
        }
    }
}

/// One blktrace event (the kernel's `struct blk_io_trace`, version 7, this machine's
/// byte order, no payload): `time` in ns, the device as `major:minor`.
pub fn blktrace_event(
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    (major, minor): (u32, u32),
) -> Vec<u8> {
    let mut b = Vec::with_capacity(48);
    b.extend_from_slice(&0x6561_7407u32.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&time.to_ne_bytes());
    b.extend_from_slice(&sector.to_ne_bytes());
    b.extend_from_slice(&bytes.to_ne_bytes());
    b.extend_from_slice(&action.to_ne_bytes());
    b.extend_from_slice(&1234u32.to_ne_bytes());
    b.extend_from_slice(&((major << 20) | minor).to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&0u16.to_ne_bytes());
    b.extend_from_slice(&0u16.to_ne_bytes());
    b
}

/// blktrace actions: queue events of a read, a write, a discard and a flush, and a
/// read's completion.
pub const BT_QUEUE_READ: u32 = 0x0011_0001;
pub const BT_QUEUE_WRITE: u32 = 0x0012_0001;
pub const BT_QUEUE_DISCARD: u32 = 0x2012_0001;
pub const BT_QUEUE_FLUSH: u32 = 0x0014_0001;
pub const BT_DONE_READ: u32 = 0x0081_0008;

/// Run ioscope inside memory cgroup `cg`.
pub fn run_in_cgroup(cg: &MemCgroup, dir: &Path, args: &[&str]) -> Run {
    let procs = cg.dir.join("cgroup.procs");
    let script = format!("echo $$ > {} && exec \"$@\"", procs.display());
    let bin = bin().display().to_string();
    let mut all = vec!["-c", &script, "sh", &bin];
    all.extend_from_slice(args);
    run_tool(Path::new("sh"), dir, &all, &[])
}

/// What a child process used: CPU seconds (user + system) and peak resident memory.
pub struct Usage {
    pub run: Run,
    pub cpu_s: f64,
    pub max_rss_kib: u64,
}

/// Forks and execs its arguments and writes the child's peak RSS (KiB) and CPU seconds
/// to the file named first: a small parent, so the peak is ioscope's own (a child
/// forked from the test process starts with the test's whole resident set).
const MEASURE_PY: &str = "import os, sys\n\
pid = os.fork()\n\
if pid == 0:\n    os.execv(sys.argv[2], sys.argv[2:])\n\
_, status, ru = os.wait4(pid, 0)\n\
open(sys.argv[1], 'w').write('%d %f' % (ru.ru_maxrss, ru.ru_utime + ru.ru_stime))\n\
sys.exit(os.waitstatus_to_exitcode(status))\n";

/// Run ioscope in `dir` and measure what it used (wait4's rusage of ioscope alone).
pub fn run_measured(dir: &Path, args: &[&str]) -> Usage {
    let usage = tempfile::NamedTempFile::new().expect("usage file");
    let bin = bin().display().to_string();
    let upath = usage.path().display().to_string();
    let mut all = vec!["-c", MEASURE_PY, &upath, &bin];
    all.extend_from_slice(args);
    let run = run_tool(Path::new("python3"), dir, &all, &[]);
    let text = std::fs::read_to_string(usage.path()).expect("usage");
    let (rss, cpu) = text.split_once(' ').expect("rss cpu");
    Usage {
        run,
        cpu_s: cpu.parse().expect("cpu seconds"),
        max_rss_kib: rss.parse().expect("rss"),
    }
}

/// A JSON document as fio 3.33 echoes options: bare flags (echoed as "" since fio 3.42)
/// left out, and "job options" with them when nothing else is left.
pub fn without_bare_flags(mut v: serde_json::Value) -> serde_json::Value {
    let strip = |o: &mut serde_json::Map<String, serde_json::Value>, key: &str| {
        if let Some(m) = o.get_mut(key).and_then(serde_json::Value::as_object_mut) {
            m.retain(|_, x| x != "");
            if m.is_empty() {
                o.remove(key);
            }
        }
    };
    if let Some(top) = v.as_object_mut() {
        strip(top, "global options");
    }
    if let Some(jobs) = v.get_mut("jobs").and_then(serde_json::Value::as_array_mut) {
        for j in jobs.iter_mut().filter_map(serde_json::Value::as_object_mut) {
            strip(j, "job options");
        }
    }
    v
}

/// Held by the tests that measure a scheduler's shares on a loop device (CPU-bound:
/// a test burning both CPUs beside them starves some readers) and by the tests that
/// run flat out on purpose (peak, quick): never both at once.
pub static CPU_BOUND: std::sync::Mutex<()> = std::sync::Mutex::new(());
