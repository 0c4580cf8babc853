//! fio's example job files (shared/fio-examples, when present) that use ioscope's
//! engines must parse. The examples ship with fio; the tests skip when absent.

use ioscope_options::{cli, jobfile, spec};
use std::path::{Path, PathBuf};

fn examples_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fio-examples");
    d.is_dir().then_some(d)
}

/// The example files that use only sync, psync, vsync, pvsync, pvsync2, libaio,
/// io_uring, null or mmap (or no ioengine at all: psync).
pub const OUR_EXAMPLES: &[&str] = &[
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

fn parse(path: &Path) -> Result<spec::JobSet, ioscope_options::OptionsError> {
    let c = cli::parse_args(&[])?;
    let files = vec![jobfile::read_job_file(path)?];
    spec::build(&c.global, &c.jobs, &files, &[], &jobfile::Keywords::probe())
}

#[test]
fn our_examples_parse() {
    let Some(dir) = examples_dir() else {
        eprintln!("skipping: shared/fio-examples not present");
        return;
    };
    let mut failures = Vec::new();
    for name in OUR_EXAMPLES {
        match parse(&dir.join(name)) {
            Ok(set) => assert!(!set.jobs.is_empty(), "{name}: no jobs"),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "examples that do not parse:\n{}",
        failures.join("\n")
    );
}

#[test]
fn fio_tests_template_resolves_as_fio_does() {
    let text = "[global]\nname=4k  MIX 70% read / 30% write with iodepth 1 and 1 thread\nthreads=1\ngroup_reporting=1\ntime_based\nioengine=libaio\ndirect=1\nbuffered=0\nnorandommap\nrefill_buffers\n\nbs=4k\nsize=4G\niodepth=1\nnumjobs=1\nfilename=/dev/nvme0n1\n\niodepth_batch_submit=4096\niodepth_batch_complete_min=1\niodepth_batch_complete_max=4096\n\nexitall_on_error\ncontinue_on_error=none\n\n\n[randrw]\nrw=randrw\nrwmixread=70\nruntime=4m\n";
    let mut secs = Vec::new();
    jobfile::parse_text(Path::new("template.fio"), text, &mut secs, 0).unwrap();
    let set = spec::build(&[], &[], &[secs], &[], &jobfile::Keywords::probe()).unwrap();
    let o = &set.jobs[0].opts;
    assert_eq!(
        set.jobs[0].name, "randrw",
        "the section name wins over name= in [global]"
    );
    assert_eq!(o.runtime, 240_000_000, "runtime=4m is four minutes");
    assert_eq!(o.iodepth_batch_submit, 1, "clamped to iodepth");
    assert_eq!(o.iodepth_batch_complete_max, 4096, "not clamped, as in fio");
    assert!(o.direct && o.norandommap && o.refill_buffers && o.time_based && o.exitall_on_error);
    assert_eq!(
        o.threads,
        Some(1),
        "the tiobench profile option is accepted"
    );
    assert!(!o.thread);
    assert_eq!(o.size, Some(ioscope_options::SizePct::Bytes(4 << 30)));
}
