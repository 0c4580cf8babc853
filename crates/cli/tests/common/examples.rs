//! The job files the parser tests run: our own corpus in crates/cli/tests/data/jobs (always)
//! and fio's example files in `shared/fio-examples` next to the repository (when present;
//! required under CI). Shared by crates/cli/tests/fio_parse.rs and
//! crates/options/tests/examples.rs (with `#[path]`), so that both always cover the same files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Our own job files (written for these tests; see the README there).
pub fn corpus_dir() -> PathBuf {
    // Both crates that include this file sit in crates/.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/jobs")
}

/// The `*.fio` files of the corpus, sorted.
pub fn corpus() -> Vec<String> {
    let dir = corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("corpus entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".fio"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 10,
        "corpus in {} is incomplete: {names:?}",
        dir.display()
    );
    names
}

/// fio's example files (in `shared/fio-examples`) that use only sync, psync, vsync, pvsync,
/// pvsync2, libaio, io_uring, null or mmap (or no ioengine at all: psync).
pub const FIO_EXAMPLES: &[&str] = &[
    "1mbs_clients.fio",
    "aio-read.fio",
    "backwards-read.fio",
    "basic-verify.fio",
    "butterfly.fio",
    "cmdprio-bssplit.fio",
    "cmdprio-percentage.fio",
    "cross-stripe-verify.fio",
    "dedupe-global.fio",
    "disk-zone-profile.fio",
    "enospc-pressure.fio",
    "exitwhat.fio",
    "fio-rand-RW.fio",
    "fio-rand-read.fio",
    "fio-rand-write.fio",
    "fio-seq-RW.fio",
    "fio-seq-read.fio",
    "fio-seq-write.fio",
    "fixed-rate-submission.fio",
    "flow.fio",
    "fsx.fio",
    "iometer-file-access-server.fio",
    "jesd219.fio",
    "latency-profile.fio",
    "null.fio",
    "numa.fio",
    "poisson-rate-submission.fio",
    "rand-zones.fio",
    "ssd-steadystate.fio",
    "ssd-test.fio",
    "steadystate.fio",
    "surface-scan.fio",
    "tiobench-example.fio",
    "waitfor.fio",
    "zipf.fio",
];

/// fio's example files for its metadata engines (filecreate, filestat, filedelete).
pub const METADATA_EXAMPLES: &[&str] = &[
    "filecreate-ioengine.fio",
    "filedelete-ioengine.fio",
    "filestat-ioengine.fio",
];

/// Values for `${VAR}` references in job files (the same for both tools).
pub const ENV_VALUES: &[(&str, &str)] = &[
    ("FILENAME", "ioscope-parse-test"),
    ("SIZE", "64m"),
    ("BLOCKSIZE", "4k"),
    ("IODEPTH", "4"),
    ("RUNTIME", "10"),
    ("NUMJOBS", "1"),
];

/// `${VAR}` references in a job file, with the values to give them.
pub fn env_for(text: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for part in text.split("${").skip(1) {
        let Some(end) = part.find('}') else { continue };
        let var = &part[..end];
        let val = ENV_VALUES
            .iter()
            .find(|(k, _)| *k == var)
            .unwrap_or_else(|| panic!("no test value for ${{{var}}}: add it to ENV_VALUES"))
            .1;
        env.push((var.to_string(), val.to_string()));
    }
    env
}

/// A job from the fio-tests project's template (its [global] section, one random mix job).
pub const TEMPLATE_JOB: &str = "[global]\nname=4k  MIX 70% read / 30% write with iodepth 1 and 1 thread\nthreads=1\ngroup_reporting=1\ntime_based\nioengine=libaio\ndirect=1\nbuffered=0\nnorandommap\nrefill_buffers\n\nbs=4k\nsize=4G\niodepth=1\nnumjobs=1\nfilename=/dev/nvme0n1\n\niodepth_batch_submit=4096\niodepth_batch_complete_min=1\niodepth_batch_complete_max=4096\n\nexitall_on_error\ncontinue_on_error=none\n\n\n[randrw]\nrw=randrw\nrwmixread=70\nruntime=4m\n";
