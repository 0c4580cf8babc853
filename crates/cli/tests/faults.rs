//! Faults injected for real: EIO from a FUSE file system, ENOSPC on a small tmpfs,
//! signals during layout, ramp and log writing. Each checks what ioscope reports and,
//! where fio 3.33 is installed, that fio reports the same on the same fault.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// faultfs.py mounted on a temporary directory; unmounted on drop.
struct FaultFs {
    mnt: tempfile::TempDir,
    child: Child,
}

impl FaultFs {
    /// One file `data` of `size` bytes whose reads in [fail_off, fail_off+fail_len) fail.
    fn mount(size: u64, fail_off: u64, fail_len: u64) -> FaultFs {
        let mnt = tmpdir();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/faultfs.py");
        let child = Command::new("/usr/bin/python3")
            .arg(script)
            .arg(mnt.path())
            .args([size, fail_off, fail_len].map(|v| v.to_string()))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start faultfs.py");
        let fs = FaultFs { mnt, child };
        let t = Instant::now();
        while !fs.data().exists() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "faultfs did not mount"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        fs
    }

    fn data(&self) -> PathBuf {
        self.mnt.path().join("data")
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (exit code, err, total_err, first_error, total_ios, io_bytes) of a JSON run's job 0.
type Outcome = (i32, u64, u64, u64, u64, u64);

fn outcome(code: i32, stdout: &str) -> Outcome {
    // fio prints its error line on stdout before the JSON document.
    let doc = &stdout[stdout.find('{').unwrap_or(0)..];
    let v: serde_json::Value = serde_json::from_str(doc).expect("JSON document");
    let j = job(&v, 0);
    // total_err and first_error appear only when errors were tolerated (fio's JSON too).
    let opt = |x: &serde_json::Value| x.as_u64().unwrap_or(0);
    (
        code,
        u(&j["error"]),
        opt(&j["total_err"]),
        opt(&j["first_error"]),
        u(&j["read"]["total_ios"]),
        u(&j["read"]["io_bytes"]),
    )
}

#[test]
fn eio_mid_run_is_counted_as_fio_counts_it() {
    require!(Prereq::Root, Prereq::Fuse);
    // 4 MiB read in 4 KiB blocks; the 16 blocks from 1 MiB fail with EIO.
    let fs = FaultFs::mount(4 << 20, 1 << 20, 64 << 10);
    let file = format!("--filename={}", fs.data().display());
    let base = [
        "--name=r",
        file.as_str(),
        "--rw=read",
        "--bs=4k",
        "--size=4m",
        "--output-format=json",
    ];
    let cases: [(&[&str], Outcome); 3] = [
        // Fatal: the failing I/O is issued and counted (257), then the job ends.
        (&[], (1, 5, 0, 0, 257, 1 << 20)),
        // Tolerated: every I/O issued and counted, err=5 reported, exit 0.
        (
            &["--continue_on_error=all"],
            (0, 5, 16, 5, 1024, (4 << 20) - (64 << 10)),
        ),
        (
            &["--ignore_error=EIO"],
            (0, 5, 16, 5, 1024, (4 << 20) - (64 << 10)),
        ),
    ];
    let d = tmpdir();
    for (extra, want) in cases {
        let mut args = base.to_vec();
        args.extend(extra);
        let r = run_in(d.path(), &args);
        let got = outcome(r.code, &r.stdout);
        assert_eq!(got, want, "ioscope {extra:?}: {}", r.stderr);
        // Only a fatal error is printed by default (fio 3.33, whatever its HOWTO says).
        let printed = |stderr: &str| stderr.matches("io_u error on file").count();
        let fatal = usize::from(want.2 == 0);
        assert_eq!(printed(&r.stderr), fatal, "{}", r.stderr);
        if available!(Prereq::Fio333) {
            let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
            let fio = outcome(f.code, &f.stdout);
            assert_eq!(got, fio, "ioscope vs fio {extra:?}");
        }
        // error_dump=1: every error, also those tolerated, on stderr.
        args.push("--error_dump=1");
        let r = run_in(d.path(), &args);
        assert_eq!(outcome(r.code, &r.stdout), want, "{}", r.stderr);
        assert_eq!(printed(&r.stderr), want.2.max(1) as usize, "{}", r.stderr);
        if available!(Prereq::Fio333) {
            let f = run_tool(Path::new("fio"), d.path(), &args, &[]);
            assert_eq!(
                printed(&r.stderr),
                printed(&f.stderr),
                "vs fio: {}",
                f.stderr
            );
        }
    }
}

#[test]
fn enospc_fails_one_job_and_keeps_the_others_results() {
    require!(Prereq::Root, Prereq::MOUNT);
    let small = tmpdir();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(small.path())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip!("cannot mount a tmpfs");
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _u = Unmount(small.path());
    // A sparse 8 MiB file on a 2 MiB tmpfs: writes run out of space part way.
    let full = small.path().join("full");
    std::fs::File::create(&full)
        .and_then(|f| f.set_len(8 << 20))
        .expect("sparse file");
    let d = tmpdir();
    let f = format!("--filename={}", full.display());
    let args = [
        "--output-format=json",
        "--name=fills",
        f.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=8m",
        "--name=reads",
        "--filename=other",
        "--rw=read",
        "--bs=64k",
        "--size=4m",
    ];
    let r = run_in(d.path(), &args);
    assert_eq!(r.code, 1, "a job failed: {}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("valid JSON");
    assert_eq!(u(&job(&v, 0)["error"]), libc::ENOSPC as u64);
    let written = u(&job(&v, 0)["write"]["io_bytes"]);
    assert!(written > 0 && written <= 2 << 20, "{written}");
    assert_eq!(u(&job(&v, 1)["error"]), 0);
    assert_eq!(
        u(&job(&v, 1)["read"]["io_bytes"]),
        4 << 20,
        "the other job's results kept"
    );
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
}

#[test]
fn sigint_during_layout_stops_within_a_second() {
    let d = tmpdir();
    // Reading needs the file filled with data: 6 GiB takes many seconds to lay out.
    let args = [
        "--name=big",
        "--filename=big",
        "--size=6g",
        "--rw=read",
        "--output-format=json",
    ];
    let mut child = std::process::Command::new(bin())
        .args(args)
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn ioscope");
    // The signal goes once the layout is under way (a loaded machine may take a while
    // to get there), and the layout's own pace sets how soon it can stop: it checks
    // between chunks of 1 MiB.
    let file = d.path().join("big");
    let size = || std::fs::metadata(&file).map_or(0, |m| m.len());
    let t = Instant::now();
    while size() < 8 << 20 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (s0, t0) = (size(), Instant::now());
    std::thread::sleep(Duration::from_millis(200));
    let rate = (size() - s0) as f64 / t0.elapsed().as_secs_f64();
    let chunk_s = (1 << 20) as f64 / rate.max(1.0);
    let signalled = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    let secs = signalled.elapsed().as_secs_f64();
    let mut out = String::new();
    let mut err = String::new();
    use std::io::Read;
    let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut out));
    let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
    let _ = std::fs::remove_file(&file);
    assert_eq!(status.code(), Some(130), "{err}");
    // A second, or a few chunks at the pace this machine lays out at when slower.
    let bound = 1.0f64.max(4.0 * chunk_s);
    assert!(
        secs < bound,
        "took {secs:.2} s to stop (bound {bound:.2} s; layout at {:.0} MiB/s)",
        rate / (1 << 20) as f64
    );
    assert!(err.contains("layout interrupted"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["ioscope"]["interrupted"], true);
    assert_eq!(v["jobs"].as_array().map(Vec::len), Some(0), "no job ran");
}

#[test]
fn sigint_during_ramp_gives_valid_marked_results() {
    let d = tmpdir();
    let args = [
        "--name=ramp",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=30",
        "--ramp_time=20",
        "--output-format=json",
    ];
    let Signalled {
        code,
        secs,
        stdout: out,
        ..
    } = signal_run(d.path(), &args, Duration::from_millis(500), &[libc::SIGINT]);
    assert_eq!(code, 130);
    assert!(secs < 2.0, "took {secs:.2} s");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["ioscope"]["interrupted"], true);
    assert_eq!(
        u(&job(&v, 0)["read"]["total_ios"]),
        0,
        "nothing measured during ramp"
    );
}

#[test]
fn sigterm_while_logging_keeps_complete_logs_and_results() {
    let d = tmpdir();
    let args = [
        "--name=log",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=30",
        "--rate_iops=20000",
        "--write_lat_log=L",
        "--output-format=json",
    ];
    let Signalled {
        code,
        secs,
        stdout: out,
        ..
    } = signal_run(
        d.path(),
        &args,
        Duration::from_millis(800),
        &[libc::SIGTERM],
    );
    assert_eq!(code, 143);
    assert!(secs < 2.0, "took {secs:.2} s");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let ios = u(&job(&v, 0)["read"]["total_ios"]);
    let lines = std::fs::read_to_string(d.path().join("L_clat.1.log"))
        .expect("clat log")
        .lines()
        .count() as u64;
    assert!(ios > 0);
    assert_eq!(lines, ios, "every measured I/O is in the log");
}

#[test]
fn a_file_truncated_under_an_mmap_job_fails_that_job_only() {
    let d = tmpdir();
    std::fs::write(d.path().join("mapped"), vec![7u8; 16 << 20]).expect("data file");
    let child = Command::new(bin())
        .args([
            "--output-format=json",
            "--name=mm",
            "--ioengine=mmap",
            "--filename=mapped",
            "--rw=randread",
            "--size=16m",
            "--time_based",
            "--runtime=3",
            "--name=other",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=3",
        ])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(700));
    std::fs::OpenOptions::new()
        .write(true)
        .open(d.path().join("mapped"))
        .and_then(|f| f.set_len(0))
        .expect("truncate under the job");
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "no SIGBUS death: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(u(&job(&v, 0)["error"]), libc::EIO as u64, "{err}");
    assert!(u(&job(&v, 0)["read"]["total_ios"]) > 0);
    assert_eq!(u(&job(&v, 1)["error"]), 0);
    assert!(
        u(&job(&v, 1)["read"]["total_ios"]) > 0,
        "the other job's results kept"
    );
}
