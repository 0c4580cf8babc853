//! fio job options that act outside the I/O itself: disk_util, opendir, write_hint,
//! lockmem, log_compression_cpus. Each test checks what the option did (the report's
//! sections, the files used, the inode's hint, the locked memory, the compressed log).

use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};

/// The run's JSON document, after any notice on stdout (fio prints some there).
fn doc(r: &Run) -> serde_json::Value {
    let at = r
        .stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", r.stderr));
    serde_json::from_str(&r.stdout[at..]).unwrap()
}

fn programs() -> Vec<PathBuf> {
    let mut progs = vec![bin()];
    if fio_usable() {
        progs.push(PathBuf::from("fio"));
    }
    progs
}

/// disk_util=0: the job's disk is not watched, so the report has no disk statistics;
/// another job on the same disk that does watch it brings them back.
#[test]
fn disk_util_0_leaves_the_disk_statistics_out() {
    let d = tmpdir();
    let (with, without) = (
        run_json(d.path(), &args(1)).1,
        run_json(d.path(), &args(0)).1,
    );
    assert!(with["disk_util"].as_array().is_some_and(|a| !a.is_empty()) || !on_a_disk(d.path()));
    assert!(without.get("disk_util").is_none(), "{without}");
    let normal = run_in(
        d.path(),
        &["--name=a", "--filename=f", "--size=256k", "--disk_util=0"],
    );
    assert_eq!(normal.code, 0, "{}", normal.stderr);
    assert!(!normal.stdout.contains("Disk stats"), "{}", normal.stdout);
    let two = run_in(
        d.path(),
        &[
            "--name=a",
            "--filename=f",
            "--size=256k",
            "--disk_util=0",
            "--name=b",
            "--filename=f",
            "--size=256k",
            "--disk_util=1",
        ],
    );
    assert_eq!(two.code, 0, "{}", two.stderr);
    assert_eq!(
        two.stdout.contains("Disk stats"),
        on_a_disk(d.path()),
        "{}",
        two.stdout
    );

    fn args(v: u8) -> Vec<&'static str> {
        let du: &'static str = if v == 1 {
            "--disk_util=1"
        } else {
            "--disk_util=0"
        };
        vec![
            "--name=a",
            "--filename=f",
            "--size=256k",
            du,
            "--output-format=json",
        ]
    }
    /// Whether the directory is on a block device with statistics (not tmpfs).
    fn on_a_disk(p: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let dev = fs::metadata(p).unwrap().dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        Path::new(&format!("/sys/dev/block/{major}:{minor}/stat")).exists()
            || Path::new(&format!("/sys/dev/block/{major}:{minor}/../stat")).exists()
    }
}

/// opendir: every regular file below the directory (symbolic links left out) is one of
/// the job's files, as with fio, which reads the same bytes.
#[test]
fn opendir_adds_the_files_below_the_directory() {
    let d = tmpdir();
    let top = d.path().join("tree");
    fs::create_dir_all(top.join("sub/deeper")).unwrap();
    fs::write(top.join("b"), vec![1u8; 64 << 10]).unwrap();
    fs::write(top.join("a"), vec![2u8; 32 << 10]).unwrap();
    fs::write(top.join("sub/deeper/c"), vec![3u8; 16 << 10]).unwrap();
    std::os::unix::fs::symlink(top.join("a"), top.join("link")).unwrap();
    let dir = format!("--opendir={}", top.display());
    for prog in programs() {
        let r = run_tool(
            &prog,
            d.path(),
            &["--name=x", &dir, "--output-format=json"],
            &[],
        );
        assert_eq!(r.code, 0, "{}: {}", prog.display(), r.stderr);
        assert_eq!(
            u(&doc(&r)["jobs"][0]["read"]["io_bytes"]),
            112 << 10,
            "{}",
            prog.display()
        );
    }
    // ioscope: in name order, depth first; said on stdout with normal output.
    let log = d.path().join("iolog");
    let wl = format!("--write_iolog={}", log.display());
    let r = run_in(d.path(), &["--name=x", &dir, &wl]);
    assert!(r.stdout.contains("opendir added 3 files"), "{}", r.stdout);
    let added: Vec<String> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(" add"))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    let want: Vec<String> = ["a", "b", "sub/deeper/c"]
        .iter()
        .map(|n| top.join(n).display().to_string())
        .collect();
    assert_eq!(added, want);
    let missing = run(&["--name=x", "--opendir=/no/such/dir", "--parse-only"]);
    let bad = run(&["--name=x", "--opendir=/no/such/dir"]);
    assert!(missing.code != 0 || bad.code != 0);
    assert!(
        bad.stderr.contains("opendir=/no/such/dir: not a directory"),
        "{}",
        bad.stderr
    );
}

/// write_hint: the hint is on the file's inode afterwards (F_GET_RW_HINT), for both.
#[test]
fn write_hint_sets_the_files_lifetime_hint() {
    const F_GET_RW_HINT: libc::c_int = 1035;
    let d = tmpdir();
    for prog in programs() {
        for (name, want) in [("short", 2u64), ("long", 4), ("extreme", 5)] {
            let f = d.path().join(format!("f-{name}"));
            let file = format!("--filename={}", f.display());
            let hint = format!("--write_hint={name}");
            let args = ["--name=x", &file, "--size=64k", "--rw=write", &hint];
            let r = run_tool(&prog, d.path(), &args, &[]);
            assert_eq!(r.code, 0, "{}: {}", prog.display(), r.stderr);
            let fd = fs::File::open(&f).unwrap();
            let mut got: u64 = 0;
            // SAFETY: F_GET_RW_HINT writes one u64 into `got`.
            let rc = unsafe {
                libc::fcntl(
                    std::os::fd::AsRawFd::as_raw_fd(&fd),
                    F_GET_RW_HINT,
                    &mut got,
                )
            };
            assert_eq!((rc, got), (0, want), "{}: {name}", prog.display());
            fs::remove_file(&f).unwrap();
        }
    }
    let r = run(&["--name=x", "--write_hint=forever", "--parse-only"]);
    assert!(
        r.code != 0 && r.stderr.contains("write_hint"),
        "{}",
        r.stderr
    );
}

/// lockmem: while the job runs, the process has that much memory locked.
#[test]
fn lockmem_locks_memory_while_the_job_runs() {
    let child = std::process::Command::new(bin())
        .args([
            "--name=x",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=2s",
            "--lockmem=48m",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut locked_kib = 0;
    for _ in 0..40 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let s = fs::read_to_string(&status).unwrap_or_default();
        locked_kib = s
            .lines()
            .find(|l| l.starts_with("VmLck:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0);
        if locked_kib > 0 {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(locked_kib >= 48 << 10, "VmLck {locked_kib} kB");
}

/// log_compression_cpus: the compressed logs are written (on those CPUs) and read back
/// with --inflate-log; a bad CPU list is refused before the run; without
/// log_store_compressed a note says it changes nothing.
#[test]
fn log_compression_cpus_compresses_on_the_given_cpus() {
    let d = tmpdir();
    let r = run_in(
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--write_lat_log=z",
            "--log_store_compressed=1",
            "--log_compression_cpus=0",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fz = d.path().join("z_clat.1.log.fz");
    let text = run_in(d.path(), &["--inflate-log", fz.to_str().unwrap()]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(text.stdout.lines().count(), 256);
    let bad = run_in(
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--write_lat_log=z",
            "--log_store_compressed=1",
            "--log_compression_cpus=9999",
        ],
    );
    assert!(
        bad.code != 0 && bad.stderr.contains("log_compression_cpus"),
        "{}",
        bad.stderr
    );
    let alone = run_in(
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=64k",
            "--log_compression_cpus=0",
        ],
    );
    assert!(
        alone
            .stderr
            .contains("log_compression_cpus changes nothing"),
        "{}",
        alone.stderr
    );
}

/// Every option fio 3.33 lists (`fio --cmdhelp=all`) is one ioscope knows: a job file
/// written for fio never stops at "unknown option" (an option ioscope does not do yet
/// is refused by name, with why).
#[test]
fn every_option_fio_lists_is_known() {
    require!(Prereq::Fio333);
    let out = run_tool(Path::new("fio"), Path::new("."), &["--cmdhelp=all"], &[]);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim())
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .collect();
    assert!(names.len() > 150, "{}", out.stdout);
    let unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| run(&[&format!("--cmdhelp={n}")]).code != 0)
        .collect();
    assert!(
        unknown.is_empty(),
        "options fio has and ioscope does not know: {unknown:?}"
    );
}

/// Sets /proc/sys/vm/nr_hugepages for a test and puts the old value back.
struct HugePages(String);

impl HugePages {
    fn set(n: u32) -> Option<HugePages> {
        let old = std::fs::read_to_string("/proc/sys/vm/nr_hugepages").ok()?;
        std::fs::write("/proc/sys/vm/nr_hugepages", n.to_string()).ok()?;
        Some(HugePages(old.trim().to_string()))
    }
}

impl Drop for HugePages {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/vm/nr_hugepages", &self.0);
    }
}

/// mem=shmhuge and mem=mmaphuge put the buffers on huge pages (none reserved: an error
/// that says so, before any I/O; reserved: the job writes and verifies its data);
/// mem=mmapshared:FILE maps a file for the buffers and removes it afterwards.
#[test]
fn mem_huge_pages_and_mapped_files() {
    require!(Prereq::Root);
    let d = tmpdir();
    let job = |mem: &str| {
        run_in(
            d.path(),
            &[
                "--name=h",
                "--filename=data",
                "--size=4m",
                "--bs=64k",
                "--iodepth=4",
                "--rw=randwrite",
                "--verify=crc32c",
                &format!("--mem={mem}"),
                "--output-format=json",
            ],
        )
    };
    {
        let Some(_none) = HugePages::set(0) else {
            skip!("/proc/sys/vm/nr_hugepages is not writable")
        };
        for mem in ["shmhuge", "mmaphuge"] {
            let r = job(mem);
            assert_eq!(r.code, 1, "{mem}: {}", r.stderr);
            assert!(r.stderr.contains("nr_hugepages"), "{mem}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "no report: {}", r.stdout);
        }
    }
    let Some(_some) = HugePages::set(8) else {
        skip!("/proc/sys/vm/nr_hugepages is not writable")
    };
    let map = d.path().join("bufs");
    for mem in [
        "shmhuge",
        "mmaphuge",
        &format!("mmapshared:{}", map.display()),
    ] {
        let r = job(mem);
        assert_eq!(r.code, 0, "{mem}: {}", r.stderr);
        let v = doc(&r);
        assert_eq!(u(&job_of(&v)["verify"]["blocks"]), 64, "{mem}");
        assert_eq!(u(&job_of(&v)["verify"]["errors"]), 0, "{mem}");
    }
    assert!(!map.exists(), "the mapped file goes with the job");
    let r = run_in(d.path(), &["--name=h", "--size=1m", "--mem=malloc:/x"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("only mmap, mmaphuge and mmapshared map a file"),
        "{}",
        r.stderr
    );
}

fn job_of(v: &serde_json::Value) -> &serde_json::Value {
    &v["jobs"][0]
}

/// io_submit_mode=offload: iodepth workers, each with its own engine at depth 1, keep a
/// sync engine's iodepth I/Os in flight; every I/O is still issued once, verify still
/// checks what was written, and io_uring is refused as fio refuses it.
#[test]
fn offload_keeps_iodepth_ios_in_flight_with_a_sync_engine() {
    let d = tmpdir();
    let base = [
        "--name=o",
        "--filename=data",
        "--size=16m",
        "--bs=4k",
        "--iodepth=4",
        "--io_submit_mode=offload",
        "--output-format=json",
    ];
    let mut w = base.to_vec();
    w.extend([
        "--ioengine=psync",
        "--rw=randwrite",
        "--verify=crc32c",
        "--write_iolog=w.log",
    ]);
    let r = run_in(d.path(), &w);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = doc(&r);
    let j = job_of(&v);
    assert_eq!(u(&j["write"]["total_ios"]), 4096);
    assert_eq!(u(&j["verify"]["blocks"]), 4096);
    assert_eq!(u(&j["verify"]["errors"]), 0);
    // Every block written once (the random map), each recorded once.
    let log = std::fs::read_to_string(d.path().join("w.log")).expect("iolog");
    let mut offs: Vec<u64> = log
        .lines()
        .filter(|l| l.contains(" write "))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse().ok())
        .collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len(), 4096);
    // Four in flight most of the time, with a sync engine.
    let mut rd = base.to_vec();
    rd.extend(["--ioengine=psync", "--rw=randread", "--direct=1"]);
    let r = run_in(d.path(), &rd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = doc(&r);
    let four = job_of(&v)["iodepth_level"]["4"].as_f64().expect("depth 4");
    assert!(four > 50.0, "depth 4 for {four}% of the I/Os");
    assert!(
        u(&job_of(&v)["read"]["slat_ns"]["N"]) > 0,
        "slat: the hand-off"
    );
    let mut uring = base.to_vec();
    uring.push("--ioengine=io_uring");
    let r = run_in(d.path(), &uring);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("can't be used with offloaded submit"),
        "{}",
        r.stderr
    );
}
