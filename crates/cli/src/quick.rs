//! `ioscope quick [--size SIZE] [--runtime TIME] [--json] [DIR]`: how fast is this disk?
//! Sequential 1 MiB reads and writes at QD8 and random 4 KiB reads and writes at QD32
//! and QD1 (the CrystalDiskMark/KDiskMark set) on a temporary file, with direct I/O
//! where the filesystem supports it. The file is removed afterwards, also on Ctrl-C.

use crate::command::{self, Context, Flag};
use crate::live::{self, Feed, Live, LiveArgs};
use crate::term::signals;
use crate::term::status::{Eta, Status};
use anyhow::{Context as _, Result};
use ioscope_options::flags::{flag, FlagValue};
use ioscope_stats::RunResult;
use std::ffi::OsString;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use FlagValue::{None as NoVal, Required as ReqVal};

struct Test {
    label: &'static str,
    bs: &'static str,
    depth: u32,
    random: bool,
}

const TESTS: &[Test] = &[
    Test {
        label: "SEQ1M Q8T1",
        bs: "1m",
        depth: 8,
        random: false,
    },
    Test {
        label: "RND4K Q32T1",
        bs: "4k",
        depth: 32,
        random: true,
    },
    Test {
        label: "RND4K Q1T1",
        bs: "4k",
        depth: 1,
        random: true,
    },
];

/// `ioscope quick`'s arguments.
pub struct Args {
    dir: PathBuf,
    size: u64,
    runtime: u64,
    json: bool,
    dirs: usize,
    live: LiveArgs,
}

impl live::HasLive for Args {
    fn live_args(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl Default for Args {
    fn default() -> Args {
        Args {
            dir: PathBuf::from("."),
            size: 1 << 30,
            runtime: 5,
            json: false,
            dirs: 0,
            live: LiveArgs::default(),
        }
    }
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.dirs += 1;
        self.dir = PathBuf::from(word);
        Ok(())
    }

    fn check(&mut self) -> Result<(), String> {
        if self.dirs > 1 {
            return Err("quick: give one directory (see ioscope quick --help)".into());
        }
        if !self.dir.is_dir() {
            return Err(format!(
                "quick: '{}' is not a directory",
                self.dir.display()
            ));
        }
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: flag(
            "size",
            ReqVal,
            "SIZE",
            "Size of the temporary test file (default 1g, at least 16m)",
        ),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            a.size =
                ioscope_options::units::parse_size(v, 1024).map_err(|e| format!("--size: {e}"))?;
            if a.size < 16 << 20 {
                return Err(format!("--size={v}: use at least 16m"));
            }
            Ok(())
        },
    },
    Flag {
        def: flag(
            "runtime",
            ReqVal,
            "TIME",
            "Run time of each of the six tests (default 5s, seconds unless a unit is given)",
        ),
        verbs: &[],
        set: |a, v| {
            let us = ioscope_options::units::parse_time_us(v.unwrap_or(""), 1_000_000)
                .map_err(|e| format!("--runtime: {e}"))?;
            a.runtime = (us / 1_000_000).max(1);
            Ok(())
        },
    },
    Flag {
        def: flag(
            "json",
            NoVal,
            "",
            "Print the results as one JSON document on stdout",
        ),
        verbs: &[],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: live::LIVE,
        verbs: &[],
        set: live::set_live::<Args>,
    },
    Flag {
        def: live::LIVE_INTERVAL,
        verbs: &[],
        set: live::set_interval::<Args>,
    },
    Flag {
        def: live::METRICS,
        verbs: &[],
        set: live::set_metrics::<Args>,
    },
    Flag {
        def: live::METRICS_LINGER,
        verbs: &[],
        set: live::set_linger::<Args>,
    },
];

/// Does this directory's filesystem accept O_DIRECT? Asked of the test file itself.
fn supports_direct(file: &Path) -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_NOFOLLOW)
        .open(file)
        .is_ok()
}

/// The test file: made new in the directory (`O_EXCL|O_NOFOLLOW`, an unpredictable
/// name, so a link planted in a shared directory is never written through), removed
/// however the run ends.
struct TempFile(PathBuf);

impl TempFile {
    fn new(dir: &Path) -> Result<TempFile> {
        let (path, _) = ioscope_fs::create_temp(&dir.join("ioscope-quick"))
            .with_context(|| format!("{}: cannot make the test file", dir.display()))?;
        Ok(TempFile(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn engine() -> &'static str {
    match io_uring_available() {
        true => "io_uring",
        false => "libaio",
    }
}

fn io_uring_available() -> bool {
    // SAFETY: a zeroed params struct is valid input for io_uring_setup.
    unsafe {
        let mut p = [0u8; 120];
        let fd = libc::syscall(libc::SYS_io_uring_setup, 1, p.as_mut_ptr());
        if fd >= 0 {
            libc::close(fd as i32);
            return true;
        }
    }
    false
}

fn run_one(
    a: &Args,
    file: &Path,
    t: &Test,
    write: bool,
    direct: bool,
    obs: &mut dyn ioscope_runner::Observer,
) -> Result<RunResult> {
    let rw = match (t.random, write) {
        (false, false) => "read",
        (false, true) => "write",
        (true, false) => "randread",
        (true, true) => "randwrite",
    };
    let argv: Vec<String> = vec![
        format!("--name={}-{rw}", t.label.replace(' ', "-")),
        format!("--filename={}", file.display()),
        format!("--size={}", a.size),
        format!("--rw={rw}"),
        format!("--bs={}", t.bs),
        format!("--iodepth={}", t.depth),
        format!("--ioengine={}", engine()),
        format!("--direct={}", u8::from(direct)),
        "--time_based".into(),
        format!("--runtime={}", a.runtime),
        "--lat_percentiles=1".into(),
        "--norandommap".into(),
    ];
    let set = crate::fio::jobs::from_argv(&argv)?;
    let runner = ioscope_runner::Runner::new(ioscope_runner::RunOptions {
        live_interval: a.live.runner_interval(),
        ..Default::default()
    });
    Ok(runner.run_set(&set, obs)?)
}

struct Row {
    label: &'static str,
    rw: &'static str,
    bw: f64,
    iops: f64,
    p50: u64,
    p99: u64,
}

fn row(label: &'static str, rw: &'static str, r: &RunResult, d: usize) -> Row {
    let j = &r.jobs[0].dirs[d];
    let p = j
        .lat
        .hist
        .as_ref()
        .map(|h| h.percentiles(&[50.0, 99.0]))
        .unwrap_or_default();
    Row {
        label,
        rw,
        bw: j.bw_bytes() as f64,
        iops: j.iops(),
        p50: p.first().copied().flatten().unwrap_or(0),
        p99: p.get(1).copied().flatten().unwrap_or(0),
    }
}

fn lat(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} us", ns as f64 / 1e3)
    }
}

pub fn main(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut live = Live::open(&a.live, true)?;
    let file = TempFile::new(&a.dir)?;
    let direct = supports_direct(&file.0);
    signals::install();
    let mut status = Status::new(false, Eta::Auto, None);
    if !a.json {
        eprintln!(
            "ioscope quick: test file of {} in {}, {} I/O via {}, {} s per test",
            human_bytes(a.size),
            a.dir.display(),
            if direct {
                "direct"
            } else {
                "buffered (no O_DIRECT here)"
            },
            engine(),
            a.runtime
        );
    }
    let mut rows = Vec::new();
    'tests: for t in TESTS {
        for write in [false, true] {
            if ioscope_runner::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                break 'tests;
            }
            let (rw, d) = if write { ("write", 1) } else { ("read", 0) };
            // Each test's lines say which test they are (the stream's "point").
            live.point = Some(format!("{} {rw}", t.label));
            let mut feed = Feed {
                inner: &mut status,
                live: &mut live,
            };
            let r = run_one(&a, &file.0, t, write, direct, &mut feed)?;
            status.finish();
            rows.push(row(t.label, rw, &r, d));
        }
    }
    drop(file);
    let interrupted = signals::received().is_some();
    if a.json {
        let tests: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({"test": r.label, "rw": r.rw, "bw_bytes": r.bw as u64, "iops": r.iops,
                    "lat_ns": {"p50": r.p50, "p99": r.p99}})
            })
            .collect();
        let doc = serde_json::json!({"ioscope": crate::fio::report::version(), "dir": a.dir.display().to_string(),
            "size": a.size, "direct": direct, "ioengine": engine(), "runtime_s": a.runtime, "tests": tests,
            "interrupted": signals::received().is_some()});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "{:<12} {:<5} {:>10} {:>10} {:>11} {:>11}",
            "test", "rw", "MB/s", "IOPS", "lat p50", "lat p99"
        );
        for r in &rows {
            println!(
                "{:<12} {:<5} {:>10.1} {:>10.0} {:>11} {:>11}",
                r.label,
                r.rw,
                r.bw / 1e6,
                r.iops,
                lat(r.p50),
                lat(r.p99)
            );
        }
        println!("lat: fio's lat, submission to completion (not clat)");
    }
    if let Some(sig) = signals::received() {
        eprintln!("ioscope quick: interrupted by {sig}: the table holds only the tests that ran");
    }
    let code = signals::exit_code(false);
    live.finish(None, interrupted);
    Ok(code)
}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", b >> 20)
    }
}
