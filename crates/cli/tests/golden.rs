//! The golden json+ diff over fio's example job files (those that use ioscope's engines):
//! each file, made small and safe to run here, gives the same json+ key set and the same
//! timing-independent counters from fio 3.33 and ioscope.
//!
//! Made small and safe: every job runs on the null engine with 4 MiB, and the options
//! that point at this machine's devices or make the run long are dropped (filenames,
//! directories, sizes, runtimes, rates, think times, logs, verify, CPU and priority
//! settings). What stays is the shape: jobs, groups, directions, block sizes, mixes,
//! numjobs, depths. Compared: the key set of the whole document, the job names, and each
//! job's error and bytes moved over all directions (counts per direction depend on each
//! tool's random numbers; bytes too where block sizes are random: bssplit, bsrange).
//! Left out of the key set: ioscope's own `ioscope` object. The echo of the options
//! ("job options", "global options") is compared whole, values too: the options as
//! written (`ba`, not `blockalign`), bare flags (`norandommap`) left out, as fio does.

use crate::common::examples::*;
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Options dropped from the examples (prefixes match `name=`, `name_…` variants too).
const DROPPED: &[&str] = &[
    "filename",
    "directory",
    "ioengine",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "nrfiles",
    "offset",
    "number_ios",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "rate",
    "thinktime",
    "loops",
    "fill_device",
    "verify",
    "do_verify",
    "write_",
    "read_iolog",
    "exec_",
    "cgroup",
    "cpus_allowed",
    "cpumask",
    "numa",
    "prio",
    "cmdprio",
    "ioscheduler",
    "direct",
    "buffered",
    "lockfile",
    "flow",
    "latency_",
    "zone",
    "steadystate",
    "ss",
    "log_",
    "per_job_logs",
    "disk_util",
    "invalidate",
    "create_",
    "unlink",
    "overwrite",
    "group_reporting",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread",
    "nowait",
    "userspace_reap",
    "iodepth",
    "mem",
    "iomem",
    "thread",
    "uid",
    "gid",
    "nice",
    "continue_on_error",
    "ignore_error",
    "stonewall",
    "wait_for",
    "exitall",
    "description",
    "io_submit_mode",
];

/// Examples whose counters still differ from fio's, and why. The test checks that they
/// still differ, so this list is kept honest when one is fixed.
const KNOWN: &[(&str, &str)] = &[];

fn small(text: &str) -> String {
    let mut out = String::from("[global]\nioengine=null\nsize=4m\n");
    for line in text.lines() {
        let key = line.trim().split('=').next().unwrap_or("").trim();
        if !key.starts_with('[') && DROPPED.iter().any(|d| key.starts_with(d)) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// (job name, error, bytes over all directions) per job.
fn counters(v: &Value) -> Vec<(String, i64, u64)> {
    v["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .map(|j| {
                    let bytes = ["read", "write", "trim"]
                        .iter()
                        .map(|d| u(&j[d]["io_bytes"]))
                        .sum();
                    (
                        j["jobname"].as_str().unwrap_or("").to_string(),
                        j["error"].as_i64().unwrap_or(-1),
                        bytes,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn json_of(stdout: &str) -> Option<Value> {
    serde_json::from_str(&stdout[stdout.find('{')?..]).ok()
}

#[test]
fn example_jobs_give_fios_json_plus() {
    require!(Prereq::Fio333, Prereq::SharedExamples);
    golden(Path::new("fio"), false);
}

/// The same with fio 3.42: its whole key set (job_start, latency_target_ns, …) and its
/// echo of bare flags.
#[test]
fn example_jobs_give_fio_342s_json_plus() {
    require!(Prereq::Fio342, Prereq::SharedExamples);
    golden(&fio342_path(), true);
}

/// Run every example through `fio` and ioscope and compare; `v342`: fio 3.42's keys
/// and echo.
fn golden(fio: &Path, v342: bool) {
    let tmp = tmpdir();
    let (mut compared, mut fio_failed) = (0, Vec::new());
    let mut mismatches = Vec::new();
    for name in FIO_EXAMPLES {
        let text = fs::read_to_string(shared_examples_path().join(name)).unwrap();
        let file = tmp.path().join(name);
        fs::write(&file, small(&text)).unwrap();
        let path = file.to_str().unwrap();
        let env = env_for(&text);
        let args = ["--output-format=json+", path];
        let f = run_tool(fio, tmp.path(), &args, &env);
        let Some(fj) = json_of(&f.stdout).filter(|_| f.code == 0) else {
            fio_failed.push(*name);
            continue;
        };
        let i = run_tool(&bin(), tmp.path(), &args, &env);
        let Some(ij) = json_of(&i.stdout).filter(|_| i.code == 0) else {
            mismatches.push(format!(
                "{name}: ioscope exit {}: {}",
                i.code,
                i.stderr.trim()
            ));
            continue;
        };
        let ij = if v342 { ij } else { without_bare_flags(ij) };
        let (mut kf, mut ki) = (BTreeSet::new(), BTreeSet::new());
        let skip = if v342 { &[][..] } else { KEYS_AFTER_FIO_333 };
        json_keys_skipping(&fj, "", skip, &mut kf);
        json_keys_skipping(&ij, "", skip, &mut ki);
        let only_fio: Vec<_> = kf.difference(&ki).collect();
        let only_ours: Vec<_> = ki.difference(&kf).collect();
        if !only_fio.is_empty() || !only_ours.is_empty() {
            mismatches.push(format!(
                "{name}: keys only in fio {only_fio:?}, only in ioscope {only_ours:?}"
            ));
        }
        // The echo of the options, values too.
        // fio 3.33 leaves bare flags (`norandommap`) out; 3.42 echoes them as "".
        let echo = |v: &Value| -> Vec<Value> {
            let jobs = v["jobs"].as_array().cloned().unwrap_or_default();
            let mut e: Vec<Value> = jobs.iter().map(|j| j["job options"].clone()).collect();
            e.push(v["global options"].clone());
            if !v342 {
                for o in e.iter_mut().filter_map(Value::as_object_mut) {
                    o.retain(|_, x| x != "");
                }
            }
            e
        };
        if echo(&fj) != echo(&ij) {
            mismatches.push(format!(
                "{name}: options echoed: fio {:?}, ioscope {:?}",
                echo(&fj),
                echo(&ij)
            ));
        }
        let random_sizes = text.contains("bssplit") || text.contains("bsrange");
        let strip = |c: Vec<(String, i64, u64)>| -> Vec<(String, i64, u64)> {
            c.into_iter()
                .map(|(n, e, b)| (n, e, if random_sizes { 0 } else { b }))
                .collect()
        };
        let same = strip(counters(&fj)) == strip(counters(&ij));
        match KNOWN.iter().find(|(k, _)| k == name) {
            Some((_, why)) if same => mismatches.push(format!(
                "{name}: now agrees with fio; take it off KNOWN ({why})"
            )),
            Some(_) => {}
            None if !same => mismatches.push(format!(
                "{name}: fio {:?}, ioscope {:?}",
                counters(&fj),
                counters(&ij)
            )),
            None => {}
        }
        compared += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {compared}:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(
        compared >= 25,
        "compared {compared}; fio failed on {fio_failed:?}"
    );
}
