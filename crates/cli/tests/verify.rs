//! Data verification (verify=…): every method on every engine writes and verifies
//! clean; injected corruption — a flipped bit, a zeroed sector, swapped blocks, a stale
//! older generation — is found for every checksum at the right offset, and nothing is
//! reported on clean data; fio's verify test jobs (t0005, t0008, t0025, t0026) behave
//! as fio's harness requires; verify state survives SIGTERM; blocks fio wrote verify.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::FileExt;
use std::path::Path;

const CHECKSUMS: [&str; 15] = [
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
];

fn job(file: &Path, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--name=v".to_string(),
        format!("--filename={}", file.display()),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v.push("--output-format=json".into());
    v
}

fn run_job(dir: &Path, args: &[String]) -> (Run, Value) {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run_in(dir, &a);
    let v = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r, v)
}

fn verify_of(v: &Value) -> (u64, u64) {
    let j = &v["jobs"][0];
    (u(&j["verify"]["blocks"]), u(&j["verify"]["errors"]))
}

/// Offsets of the failures reported on stderr (the first line of each).
fn failed_offsets(stderr: &str) -> BTreeSet<u64> {
    stderr
        .lines()
        .filter(|l| l.starts_with("verify: ") || l.contains(": verify failed at file"))
        .filter_map(|l| {
            let rest = &l[l.find("(requested block: offset=")? + 25..];
            rest[..rest.find(',')?].parse().ok()
        })
        .collect()
}

#[test]
fn every_method_writes_and_verifies_clean() {
    let d = tmpdir();
    let f = d.path().join("f");
    for m in CHECKSUMS.iter().chain(&["meta", "null"]) {
        for rw in ["write", "randwrite"] {
            let (r, v) = run_job(
                d.path(),
                &job(
                    &f,
                    &[
                        "--size=256k",
                        "--bs=4k",
                        &format!("--rw={rw}"),
                        &format!("--verify={m}"),
                    ],
                ),
            );
            assert_eq!(r.code, 0, "{m} {rw}: {}", r.stderr);
            let j = &v["jobs"][0];
            assert_eq!(u(&j["error"]), 0, "{m} {rw}");
            assert_eq!(u(&j["write"]["io_bytes"]), 256 << 10);
            // Every block written is read back once (null checks nothing).
            assert_eq!(u(&j["read"]["io_bytes"]), 256 << 10, "{m} {rw}");
            let want = if *m == "null" { 0 } else { 64 };
            assert_eq!(verify_of(&v), (want, 0), "{m} {rw}");
        }
    }
}

#[test]
fn every_engine_verifies() {
    let d = tmpdir();
    let f = d.path().join("f");
    for e in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "mmap",
    ] {
        for rw in ["write", "randwrite", "randrw"] {
            let mut extra = vec![
                "--size=512k".to_string(),
                "--bs=4k".into(),
                format!("--rw={rw}"),
                "--verify=crc32c".into(),
                format!("--ioengine={e}"),
                "--iodepth=8".into(),
            ];
            if e != "mmap" {
                extra.push("--direct=1".into());
            }
            let x: Vec<&str> = extra.iter().map(String::as_str).collect();
            let (r, v) = run_job(d.path(), &job(&f, &x));
            assert_eq!(r.code, 0, "{e} {rw}: {}", r.stderr);
            let (blocks, errors) = verify_of(&v);
            assert_eq!(errors, 0, "{e} {rw}");
            assert!(blocks > 0, "{e} {rw}: nothing verified");
            if rw != "randrw" {
                assert_eq!(blocks, 128, "{e} {rw}");
            }
        }
    }
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=512k",
                "--rw=randwrite",
                "--verify=md5",
                "--ioengine=io_uring",
                "--iodepth=16",
                "--fixedbufs",
                "--registerfiles",
                "--direct=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (128, 0));
}

#[test]
fn patterns_intervals_offsets_splits_and_loops() {
    let d = tmpdir();
    let f = d.path().join("f");
    let cases: &[&[&str]] = &[
        &["--verify=md5", "--verify_pattern=0xdeadbeef"],
        &["--verify=pattern", "--verify_pattern=\"ioscope\"%o"],
        &["--verify=meta", "--verify_pattern=-12"],
        &["--verify=crc32c", "--verify_interval=1k", "--bs=8k"],
        &["--verify=sha256", "--verify_offset=512"],
        &["--verify=crc64", "--bssplit=4k/50:8k/50"],
        &["--verify=xxhash", "--norandommap"],
        &["--verify=crc16", "--loops=3"],
        &[
            "--verify=crc32c",
            "--numjobs=2",
            "--size=128k",
            "--offset_increment=128k",
            "--group_reporting",
        ],
        &[
            "--verify=sha1",
            "--verify_backlog=7",
            "--verify_backlog_batch=3",
        ],
    ];
    for c in cases {
        let mut extra = vec!["--size=256k", "--rw=randwrite"];
        extra.extend_from_slice(c);
        let (r, v) = run_job(d.path(), &job(&f, &extra));
        assert_eq!(r.code, 0, "{c:?}: {}", r.stderr);
        let j = &v["jobs"][0];
        assert_eq!(verify_of(&v).1, 0, "{c:?}");
        let (rd, wr) = (u(&j["read"]["io_bytes"]), u(&j["write"]["io_bytes"]));
        // Blocks of mixed sizes can overlap and norandommap repeats blocks: each place
        // is read back once, at its latest write.
        if c.iter()
            .any(|o| o.starts_with("--bssplit") || *o == "--norandommap")
        {
            assert!(rd > 0 && rd <= wr, "{c:?}: read {rd} of {wr}");
        } else {
            assert_eq!(rd, wr, "{c:?}: each write read back once");
        }
    }
    // verify=pattern: every byte is the pattern, %o the block's offset.
    let (_, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=16k",
                "--rw=write",
                "--verify=pattern",
                "--verify_pattern=0xab%o",
                "--do_verify=0",
            ],
        ),
    );
    assert_eq!(u(&v["jobs"][0]["error"]), 0);
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data[0], 0xab);
    assert_eq!(data[4096..4105], [0xab, 0, 0x10, 0, 0, 0, 0, 0, 0]);
    // loops=3: each loop writes and verifies.
    let (_, v) = run_job(
        d.path(),
        &job(
            &f,
            &["--size=64k", "--rw=write", "--verify=crc32c", "--loops=3"],
        ),
    );
    assert_eq!(u(&v["jobs"][0]["read"]["io_bytes"]), 3 * (64 << 10));
    assert_eq!(verify_of(&v), (48, 0));
}

/// Injected corruption on a file between the write and the verification, for every
/// checksum: each corrupted block is reported at its offset, and only those.
#[test]
fn injected_corruption_is_found_for_every_checksum() {
    let d = tmpdir();
    let f = d.path().join("f");
    let stale = d.path().join("stale");
    let base = ["--size=64k", "--bs=4k", "--rw=write"];
    for m in CHECKSUMS {
        let method = format!("--verify={m}");
        let write = |loops: &str| {
            let mut a = base.to_vec();
            a.extend([method.as_str(), "--do_verify=0", loops]);
            let (r, _) = run_job(d.path(), &job(&f, &a));
            assert_eq!(r.code, 0, "{m}: {}", r.stderr);
        };
        let check = |loops: &str| -> (Run, Value) {
            let mut a = base.to_vec();
            a.extend([
                method.as_str(),
                "--verify_only",
                "--continue_on_error=verify",
                loops,
            ]);
            run_job(d.path(), &job(&f, &a))
        };
        // The first generation, kept as the stale copy; then two more loops over it.
        write("--loops=1");
        std::fs::copy(&f, &stale).unwrap();
        write("--loops=2");
        let (r, v) = check("--loops=2");
        assert_eq!(
            verify_of(&v),
            (16, 0),
            "{m}: clean data, no false positive: {}",
            r.stderr
        );
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&f)
            .unwrap();
        let block = |k: u64| {
            let mut b = vec![0u8; 4096];
            file.read_exact_at(&mut b, k * 4096).unwrap();
            b
        };
        // 1: one bit in block 3's data; 2: a zeroed 512-byte sector of block 6;
        // 3: blocks 9 and 10 swapped; 4: block 13 replaced by its first-generation copy.
        let mut b3 = block(3);
        b3[3000] ^= 0x04;
        file.write_all_at(&b3, 3 * 4096).unwrap();
        file.write_all_at(&[0u8; 512], 6 * 4096 + 1024).unwrap();
        let (b9, b10) = (block(9), block(10));
        file.write_all_at(&b10, 9 * 4096).unwrap();
        file.write_all_at(&b9, 10 * 4096).unwrap();
        let mut old = vec![0u8; 4096];
        std::fs::File::open(&stale)
            .unwrap()
            .read_exact_at(&mut old, 13 * 4096)
            .unwrap();
        assert_ne!(old, block(13), "the older generation differs");
        file.write_all_at(&old, 13 * 4096).unwrap();
        drop(file);
        let (r, v) = check("--loops=2");
        let want: BTreeSet<u64> = [3, 6, 9, 10, 13].iter().map(|k| k * 4096).collect();
        assert_eq!(failed_offsets(&r.stderr), want, "{m}: {}", r.stderr);
        assert_eq!(verify_of(&v), (16, 5), "{m}");
        assert_eq!(u(&v["jobs"][0]["error"]), 84, "{m}: EILSEQ");
        assert_eq!(
            r.code, 0,
            "continue_on_error=verify: the run goes on (as fio)"
        );
        assert!(
            r.stderr.contains("bad header offset"),
            "{m}: the swap is a misplaced block: {}",
            r.stderr
        );
    }
}

/// The same on a loop device: corruption put into the device's backing file under it.
#[test]
fn corruption_under_a_block_device_is_found() {
    require!(Prereq::Root, Prereq::LOSETUP);
    let Some(lp) = LoopDev::new("16M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let d = tmpdir();
    let dev = Path::new(&lp.dev);
    let a = [
        "--size=1m",
        "--bs=4k",
        "--rw=randwrite",
        "--verify=crc32c",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=8",
    ];
    let (r, v) = run_job(d.path(), &job(dev, &a));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (256, 0));
    let img = std::fs::OpenOptions::new()
        .write(true)
        .open(lp.backing())
        .unwrap();
    img.write_all_at(b"\xff\xff", 77 * 4096 + 2222).unwrap();
    drop(img);
    let mut b = a.to_vec();
    b.push("--verify_only");
    let (r, v) = run_job(d.path(), &job(dev, &b));
    assert_eq!(
        failed_offsets(&r.stderr),
        BTreeSet::from([77 * 4096]),
        "{}",
        r.stderr
    );
    assert_eq!(u(&v["jobs"][0]["error"]), 84);
    assert_eq!(r.code, 1, "a verify failure fails the run");
}

/// fio's t0005: sequential 4 KiB writes with verify=md5 and verify_backlog=32 read
/// back exactly what they wrote, in batches of 32 during the run.
#[test]
fn backlog_verifies_during_the_run_t0005() {
    let d = tmpdir();
    let f = d.path().join("xxx");
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=4m",
                "--bs=4k",
                "--rw=write",
                "--ioengine=sync",
                "--direct=1",
                "--verify=md5",
                "--verify_backlog=32",
                "--write_lat_log=t5",
                "--log_offset=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.trim().is_empty() || !r.stderr.contains("error"),
        "{}",
        r.stderr
    );
    let j = &v["jobs"][0];
    assert_eq!(u(&j["read"]["io_kbytes"]), 4096);
    assert_eq!(u(&j["write"]["io_kbytes"]), 4096);
    // The log shows 32 writes, then their 32 reads, in order.
    let log = std::fs::read_to_string(d.path().join("t5_lat.1.log")).unwrap();
    let dirs: Vec<&str> = log
        .lines()
        .map(|l| l.split(", ").nth(2).unwrap_or(""))
        .collect();
    assert_eq!(dirs.len(), 2048);
    assert!(
        dirs[..32].iter().all(|d| *d == "1") && dirs[32..64].iter().all(|d| *d == "0"),
        "{:?}",
        &dirs[..70]
    );
}

/// fio's t0008: a sequential read/write mix with verify_backlog=1 reads exactly its
/// size (its own reads plus one verify read per write) and writes about half.
#[test]
fn mixed_job_with_backlog_t0008() {
    let d = tmpdir();
    let f = d.path().join("foo");
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=2m",
                "--bs=4k",
                "--rw=readwrite",
                "--direct=1",
                "--verify=crc32c",
                "--do_verify=1",
                "--verify_backlog=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = &v["jobs"][0];
    assert_eq!(u(&j["read"]["io_kbytes"]), 2048);
    let w = u(&j["write"]["io_kbytes"]) as f64;
    assert!(
        (w / 1024.0 - 1.0).abs() <= 0.1,
        "write {w} KiB of about 1024"
    );
    assert_eq!(verify_of(&v).1, 0);
}

/// fio's t0025 and t0026: experimental_verify reads back what was written (once, after
/// all loops), with no error and nothing on stderr.
#[test]
fn experimental_verify_t0025_t0026() {
    let d = tmpdir();
    let f = d.path().join("t0025file");
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=128k",
                "--rw=write",
                "--do_verify=1",
                "--verify=md5",
                "--experimental_verify=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(u(&v["jobs"][0]["read"]["io_kbytes"]), 128);
    let jf = d.path().join("t0026.fio");
    std::fs::write(
        &jf,
        "[global]\nfilename=t0026file\nsize=1m\ndo_verify=1\nverify=md5\nexperimental_verify=1\n\
         [job1]\nrw=randwrite\nloops=8\n\
         [job2]\nstonewall=1\nrw=randrw\ntime_based\nruntime=1\n",
    )
    .unwrap();
    let r = run_in(d.path(), &["t0026.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.is_empty(),
        "fio's harness wants an empty stderr: {}",
        r.stderr
    );
}

/// A read-only job with verify= checks every block it reads: the blocks a write job
/// left, and (with fio on the machine) the blocks fio 3.33 wrote.
#[test]
fn read_jobs_verify_what_anyone_wrote() {
    let d = tmpdir();
    let f = d.path().join("f");
    let (r, _) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=128k",
                "--rw=randwrite",
                "--verify=sha3-256",
                "--do_verify=0",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (r, v) = run_job(
        d.path(),
        &job(&f, &["--size=128k", "--rw=read", "--verify=sha3-256"]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (32, 0));
    if !available!(Prereq::Fio333) {
        return;
    }
    for m in [
        "md5", "crc64", "crc32c", "crc16", "crc7", "sha1", "xxhash", "sha3-512",
    ] {
        let fio = run_tool(
            Path::new("fio"),
            d.path(),
            &[
                "--name=w",
                &format!("--filename={}", f.display()),
                "--size=128k",
                "--rw=randwrite",
                &format!("--verify={m}"),
                "--do_verify=0",
            ],
            &[],
        );
        assert_eq!(fio.code, 0, "{}", fio.stderr);
        let (r, v) = run_job(
            d.path(),
            &job(&f, &["--size=128k", "--rw=read", &format!("--verify={m}")]),
        );
        assert_eq!(
            (r.code, verify_of(&v)),
            (0, (32, 0)),
            "{m}: fio's blocks verify: {}",
            r.stderr
        );
    }
}

/// verify_async_cpus: the checker threads run on those CPUs (read from /proc while
/// the job verifies); a CPU that does not exist is refused before any I/O.
#[test]
fn verify_async_cpus_pins_the_checkers() {
    let d = tempfile::Builder::new()
        .prefix("ioscope-test")
        .tempdir_in("/dev/shm")
        .expect("shm dir");
    let f = d.path().join("f");
    let last = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let mut args = job(
        &f,
        &[
            "--size=128m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_async=1",
            &format!("--verify_async_cpus={last}"),
        ],
    );
    args.retain(|a| !a.starts_with("--output-format"));
    let (child, seen) = thread_cpus(
        d.path(),
        &args,
        "v-verify0",
        // The thread exists a moment before it pins itself.
        |c| c == [last],
        std::time::Duration::from_secs(60),
    );
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(seen, Some(vec![last]), "the checker's CPUs");
    let bad = job(
        &f,
        &[
            "--size=64k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_async=1",
            "--verify_async_cpus=1000",
        ],
    );
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let r = run_in(d.path(), &bad);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("verify_async_cpus: there is no CPU 1000"),
        "{}",
        r.stderr
    );
}

/// The other way round: fio 3.33 verifies the blocks ioscope writes with fio 3.33's
/// header (verify_header_format=fio-3.33), for every method but sha256 and sha512
/// (whose fio trailers are not digests; README).
#[test]
fn fio_verifies_what_ioscope_wrote() {
    require!(Prereq::Fio333);
    fio_verifies(Path::new("fio"), &["--verify_header_format=fio-3.33"]);
}

/// fio 3.42 verifies what ioscope writes by default (fio 3.42's 48-byte header).
#[test]
fn fio_342_verifies_what_ioscope_wrote() {
    require!(Prereq::Fio342);
    fio_verifies(&fio342_path(), &[]);
}

fn fio_verifies(fio: &Path, format: &[&str]) {
    let d = tmpdir();
    let f = d.path().join("f");
    for m in [
        "md5", "crc64", "crc32c", "crc32", "crc16", "crc7", "sha1", "xxhash", "sha3-224",
        "sha3-256", "sha3-384", "sha3-512", "meta",
    ] {
        let _ = std::fs::remove_file(&f);
        let method = format!("--verify={m}");
        let mut extra = vec!["--size=128k", "--rw=randwrite", &method, "--do_verify=0"];
        extra.extend(format);
        let (r, _) = run_job(d.path(), &job(&f, &extra));
        assert_eq!(r.code, 0, "{m}: {}", r.stderr);
        let fio = run_tool(
            fio,
            d.path(),
            &[
                "--name=w",
                &format!("--filename={}", f.display()),
                "--size=128k",
                "--rw=read",
                &format!("--verify={m}"),
                "--output-format=json",
            ],
            &[],
        );
        assert_eq!(fio.code, 0, "{m}: fio: {}", fio.stderr);
        let v: serde_json::Value = serde_json::from_str(&fio.stdout).expect("fio JSON");
        assert_eq!(v["jobs"][0]["error"], 0, "{m}");
        assert_eq!(u(&v["jobs"][0]["read"]["total_ios"]), 32, "{m}");
    }
}

/// verify_state_save on SIGTERM, then verify_only with verify_state_load verifies
/// exactly the blocks that had been written — and without the state, the unwritten
/// rest fails.
#[test]
fn verify_state_survives_sigterm() {
    let d = tmpdir();
    let f = d.path().join("f");
    let args = job(
        &f,
        &[
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--rate_iops=300",
        ],
    );
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = signal_run(
        d.path(),
        &a,
        std::time::Duration::from_millis(500),
        &[libc::SIGTERM],
    );
    assert_eq!(s.code, 143, "{}", s.stderr);
    let v: Value = serde_json::from_str(&s.stdout).expect("JSON after SIGTERM");
    let written = u(&v["jobs"][0]["write"]["total_ios"]);
    assert!(
        (20..256).contains(&written),
        "{written} writes before the signal"
    );
    let state = d.path().join("local-v-0-verify.state");
    assert!(state.is_file(), "state saved on SIGTERM");
    let resume = job(
        &f,
        &[
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_only",
            "--verify_state_load=1",
        ],
    );
    let (r, v) = run_job(d.path(), &resume);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (written, 0), "exactly the written blocks");
    // A read job with the state reads exactly those blocks too.
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=1m",
                "--bs=4k",
                "--rw=read",
                "--verify=crc32c",
                "--verify_state_load=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (written, 0));
    assert_eq!(u(&v["jobs"][0]["read"]["total_ios"]), written);
    // Without it, the first block never written fails.
    let (r, _) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=1m",
                "--bs=4k",
                "--rw=write",
                "--verify=crc32c",
                "--verify_only",
            ],
        ),
    );
    assert_eq!(
        failed_offsets(&r.stderr).first(),
        Some(&(written * 4096)),
        "{}",
        r.stderr
    );
    // A missing state file is named.
    std::fs::remove_file(&state).unwrap();
    let r = run_in(
        d.path(),
        &[
            "--name=v",
            &format!("--filename={}", f.display()),
            "--size=1m",
            "--rw=read",
            "--verify=crc32c",
            "--verify_state_load=1",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("verify_state_load: local-v-0-verify.state"),
        "{}",
        r.stderr
    );
}

/// verify_dump writes the block as read and as expected; verify_fatal stops at the
/// first failure; without continue_on_error the first failure ends the job.
#[test]
fn dump_fatal_and_continue() {
    let d = tmpdir();
    let f = d.path().join("f");
    let base = ["--size=64k", "--bs=4k", "--rw=write", "--verify=crc32c"];
    let mut w = base.to_vec();
    w.push("--do_verify=0");
    run_job(d.path(), &job(&f, &w));
    let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
    for k in [2u64, 5, 11] {
        file.write_all_at(b"\x00", k * 4096 + 100).unwrap();
    }
    drop(file);
    let check = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.push("--verify_only");
        a.extend_from_slice(extra);
        run_job(d.path(), &job(&f, &a))
    };
    let (r, v) = check(&[]);
    assert_eq!(r.code, 1);
    assert_eq!(verify_of(&v).1, 1, "the first failure ends the job");
    assert_eq!(u(&v["jobs"][0]["error"]), 84);
    let (_, v) = check(&["--continue_on_error=verify"]);
    assert_eq!(verify_of(&v), (16, 3));
    assert_eq!(u(&v["jobs"][0]["total_err"]), 3);
    let (_, v) = check(&["--continue_on_error=verify", "--verify_fatal=1"]);
    assert_eq!(verify_of(&v).1, 1, "verify_fatal stops at the first");
    let (r, _) = check(&["--verify_dump=1"]);
    assert!(
        r.stderr.contains("received data dumped as f.8192.received"),
        "{}",
        r.stderr
    );
    let got = std::fs::read(d.path().join("f.8192.received")).unwrap();
    let want = std::fs::read(d.path().join("f.8192.expected")).unwrap();
    let diff: Vec<usize> = (0..4096).filter(|&i| got[i] != want[i]).collect();
    assert_eq!(
        diff,
        [100],
        "the dumps differ exactly where the block was hit"
    );
}

#[test]
fn bad_verify_options_are_refused_before_any_io() {
    let d = tmpdir();
    let f = d.path().join("f");
    let bad = |extra: &[&str], msg: &str| {
        let mut a = vec!["--parse-only".to_string()];
        a.extend(job(&f, extra));
        let x: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run_in(d.path(), &x);
        assert_ne!(r.code, 0, "{extra:?}");
        assert!(r.stderr.contains(msg), "{extra:?}: {}", r.stderr);
    };
    bad(&["--verify=pattern"], "verify=pattern needs verify_pattern");
    bad(
        &["--verify=md5", "--verify_interval=32"],
        "verify_interval=32: min value out of range (80 min)",
    );
    bad(
        &["--verify=sha512", "--bs=128"],
        "cannot hold the 176-byte verify header",
    );
    bad(
        &["--verify=md5", "--verify_pattern=\"ab\"*3"],
        "verify_pattern",
    );
    bad(&["--verify=pattern_hdr"], "pattern_hdr");
    assert!(!f.exists(), "nothing was laid out");
}

/// verify_async: blocks are checked on threads of their own, clean data stays clean and
/// every injected fault is still found.
#[test]
fn async_checkers_find_the_same_faults() {
    let d = tmpdir();
    let f = d.path().join("f");
    let base = ["--size=4m", "--bs=4k", "--rw=randwrite", "--verify=md5"];
    for extra in [
        &["--verify_async=2"][..],
        &[
            "--verify_async=1",
            "--ioengine=libaio",
            "--iodepth=16",
            "--direct=1",
        ],
    ] {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        let (r, v) = run_job(d.path(), &job(&f, &a));
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        assert_eq!(verify_of(&v), (1024, 0), "{extra:?}");
    }
    let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
    for k in [3u64, 77, 500, 901] {
        file.write_all_at(b"\xee", k * 4096 + 2000).unwrap();
    }
    drop(file);
    let mut a = base.to_vec();
    a.extend([
        "--verify_only",
        "--verify_async=2",
        "--continue_on_error=verify",
    ]);
    let (r, v) = run_job(d.path(), &job(&f, &a));
    assert_eq!(verify_of(&v), (1024, 4));
    let want: BTreeSet<u64> = [3u64, 77, 500, 901].iter().map(|k| k * 4096).collect();
    assert_eq!(failed_offsets(&r.stderr), want, "{}", r.stderr);
}

/// trim_percentage: that share of the written blocks is discarded (a hole punched in a
/// file, BLKDISCARD on a device) and verified to read back as zeros; the rest verify
/// as usual.
#[test]
fn trimmed_blocks_read_back_as_zeros() {
    let d = tmpdir();
    let f = d.path().join("f");
    let (r, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=4m",
                "--rw=randwrite",
                "--verify=crc32c",
                "--trim_percentage=30",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let trimmed = u(&v["jobs"][0]["trim"]["io_bytes"]);
    assert!(
        (900 << 10..=1600 << 10).contains(&trimmed),
        "about 30% of 4 MiB trimmed: {trimmed}"
    );
    assert_eq!(
        verify_of(&v),
        (1024, 0),
        "trimmed blocks checked as zeros too"
    );
    let (_, v) = run_job(
        d.path(),
        &job(
            &f,
            &[
                "--size=4m",
                "--rw=randwrite",
                "--verify=crc32c",
                "--trim_percentage=50",
                "--trim_backlog=8",
                "--trim_backlog_batch=4",
                "--trim_verify_zero=0",
            ],
        ),
    );
    let (blocks, errors) = verify_of(&v);
    assert_eq!(errors, 0);
    assert!(
        blocks < 1024,
        "trimmed blocks are not checked with trim_verify_zero=0: {blocks}"
    );
    let r = run_in(
        d.path(),
        &[
            "--parse-only",
            "--name=t",
            "--size=1m",
            "--rw=write",
            "--trim_percentage=10",
        ],
    );
    assert!(
        r.code != 0 && r.stderr.contains("set verify= too"),
        "{}",
        r.stderr
    );
    if !available!(Prereq::Root) || !available!(Prereq::LOSETUP) {
        return;
    }
    let Some(lp) = LoopDev::new("16M") else {
        skip!("a loop device over /dev/shm (losetup --find --show failed)")
    };
    let dev = Path::new(&lp.dev);
    let (r, v) = run_job(
        d.path(),
        &job(
            dev,
            &[
                "--size=4m",
                "--rw=randwrite",
                "--verify=sha1",
                "--trim_percentage=25",
                "--direct=1",
            ],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(u(&v["jobs"][0]["trim"]["io_bytes"]) > 0);
    assert_eq!(verify_of(&v), (1024, 0));
}

/// --aux-path: the verify state is saved and loaded there, not in the current
/// directory (it was refused as "no verify state yet").
#[test]
fn aux_path_holds_the_verify_state() {
    let d = tmpdir();
    std::fs::create_dir(d.path().join("aux")).unwrap();
    let f = d.path().join("f");
    let w = job(
        &f,
        &[
            "--size=256k",
            "--rw=write",
            "--verify=crc32c",
            "--aux-path=aux",
        ],
    );
    let (r, _) = run_job(d.path(), &w);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(d.path().join("aux/local-v-0-verify.state").is_file());
    assert!(!d.path().join("local-v-0-verify.state").exists());
    let load = [
        "--size=256k",
        "--rw=read",
        "--verify=crc32c",
        "--verify_state_load=1",
    ];
    let with = job(&f, &[&load[..], &["--aux-path=aux"]].concat());
    let (r, v) = run_job(d.path(), &with);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(verify_of(&v), (64, 0));
    let without: Vec<String> = job(&f, &load);
    let r = run_in(
        d.path(),
        &without.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("verify_state_load: local-v-0-verify.state"),
        "{}",
        r.stderr
    );
}

/// --crctest times every checksum fio lists, in fio's layout; `list` names them (and
/// exits 1, as fio does); an unknown type lists them too. --help no longer calls
/// verify or its checksums missing.
#[test]
fn crctest_times_the_checksums_fio_lists() {
    let d = tmpdir();
    let r = run_in(d.path(), &["--crctest=list"]);
    assert_eq!(r.code, 1);
    let names: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        names,
        [
            "md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "sha1", "sha256", "sha512",
            "xxhash", "murmur3", "jhash", "fnv", "sha3-224", "sha3-256", "sha3-384", "sha3-512"
        ]
    );
    let r = run_in(d.path(), &["--crctest=fnv,crc32c"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    for (line, name) in lines.iter().zip(["crc32c:\t\t", "fnv:\t\t"]) {
        let rate = line
            .strip_prefix(name)
            .and_then(|l| l.strip_suffix(" MiB/sec"));
        let rate: f64 = rate.and_then(|r| r.trim().parse().ok()).unwrap_or(-1.0);
        assert!(rate > 0.0, "{line}");
    }
    let r = run_in(d.path(), &["--crctest=bogus"]);
    assert!(
        r.code == 1 && r.stderr.contains("unknown hash `bogus`"),
        "{}",
        r.stderr
    );
    let help = run_in(d.path(), &["--help"]).stdout;
    for flag in ["--crctest", "--aux-path"] {
        let line = help.lines().find(|l| l.contains(flag)).unwrap_or("");
        assert!(!line.contains("not supported"), "{line}");
    }
    assert!(!help.contains("no verify"), "{help}");
}
