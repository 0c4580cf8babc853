//! Example job files that use ioscope's engines — our own corpus in tests/data/jobs, and fio's
//! example files (`FIO_EXAMPLES` in tests/common/examples.rs, in shared/fio-examples next to
//! the repository) when present — must pass `ioscope --parse-only`, and ioscope's resolved specs (`--dump-jobs`) must hold the same
//! values as fio 3.33's parser stores (`fio --parse-only --debug=parse`) for the options both
//! print.
//!
//! How fio's debug output is read: a section starts at `Parsing section [NAME]`; every
//! `handle_option=NAME, ptr=TEXT` line after it belongs to that section (fio prints the
//! canonical option name, so aliases such as `blocksize` come out as `bs`). Each following
//! `__handle_option=` line is one element of the value (a per-direction list element, or
//! the low and high bound of a range), and its `ret=R, out=V` line gives the value stored
//! for that element (`ret=1` means the element was empty and left alone). When fewer
//! elements are given than the option has, fio copies the last one given into the rest, as
//! ioscope does. Sizes are bytes, times microseconds, booleans 0 or 1; a percentage of
//! `size`/`offset` comes out as `-1 - pct` in two's complement. A job's value is the
//! [global] value it was created with, overridden by its own section.
//!
//! Without fio 3.33 the comparisons skip visibly, and without shared/fio-examples only our
//! corpus runs; under CI=true both are required (tests/common/prereq.rs).

use crate::common::examples::*;
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// fio option name (as fio's debug output prints it) and the ioscope spec field that holds
/// the same setting. Only options fio prints an `out=` for can be compared (`bsrange` is an
/// OPT_RANGE, for which fio 3.33 prints none; it is listed so that it would be compared if a
/// later fio did).
const COMPARED: &[(&str, &str)] = &[
    // sizes and offsets (bytes, or a percentage)
    ("bs", "bs"),
    ("ba", "blockalign"),
    ("bsrange", "bsrange"),
    ("size", "size"),
    ("filesize", "filesize"),
    ("io_size", "io_size"),
    ("offset", "offset"),
    ("offset_increment", "offset_increment"),
    ("zonesize", "zonesize"),
    ("zonerange", "zonerange"),
    ("zoneskip", "zoneskip"),
    ("verify_backlog", "verify_backlog"),
    ("verify_interval", "verify_interval"),
    ("number_ios", "number_ios"),
    // counts
    ("iodepth", "iodepth"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("iodepth_batch_complete_min", "iodepth_batch_complete_min"),
    ("iodepth_batch_complete_max", "iodepth_batch_complete_max"),
    ("iodepth_low", "iodepth_low"),
    ("numjobs", "numjobs"),
    ("threads", "threads"),
    ("loops", "loops"),
    ("nrfiles", "nrfiles"),
    ("rwmixread", "rwmixread"),
    ("rwmixwrite", "rwmixwrite"),
    ("flow", "flow"),
    ("verify_async", "verify_async"),
    ("prio", "prio"),
    ("prioclass", "prioclass"),
    ("buffer_compress_percentage", "buffer_compress_percentage"),
    ("dedupe_percentage", "dedupe_percentage"),
    (
        "dedupe_working_set_percentage",
        "dedupe_working_set_percentage",
    ),
    // per-direction rates and priorities
    ("rate", "rate"),
    ("rate_min", "rate_min"),
    ("rate_iops", "rate_iops"),
    ("rate_iops_min", "rate_iops_min"),
    ("cmdprio", "cmdprio"),
    ("cmdprio_class", "cmdprio_class"),
    ("cmdprio_percentage", "cmdprio_percentage"),
    // times (microseconds)
    ("runtime", "runtime"),
    ("ramp_time", "ramp_time"),
    ("startdelay", "startdelay"),
    ("thinktime", "thinktime"),
    ("thinktime_spin", "thinktime_spin"),
    ("thinktime_blocks", "thinktime_blocks"),
    ("flow_sleep", "flow_sleep"),
    ("latency_target", "latency_target"),
    ("latency_window", "latency_window"),
    ("steadystate_duration", "steadystate_duration"),
    ("steadystate_ramp_time", "steadystate_ramp_time"),
    // booleans (fio: 0 or 1)
    ("direct", "direct"),
    ("buffered", "buffered"),
    ("time_based", "time_based"),
    ("norandommap", "norandommap"),
    ("randrepeat", "randrepeat"),
    ("refill_buffers", "refill_buffers"),
    ("thread", "thread"),
    ("stonewall", "stonewall"),
    ("new_group", "new_group"),
    ("group_reporting", "group_reporting"),
    ("exitall", "exitall"),
    ("exitall_on_error", "exitall_on_error"),
    ("create_on_open", "create_on_open"),
    ("create_serialize", "create_serialize"),
    ("fill_device", "fill_device"),
    ("do_verify", "do_verify"),
    ("verify_dump", "verify_dump"),
    ("verify_fatal", "verify_fatal"),
    ("error_dump", "error_dump"),
    ("gtod_reduce", "gtod_reduce"),
    ("log_offset", "log_offset"),
    ("log_prio", "log_prio"),
    ("dedupe_global", "dedupe_global"),
];

// ---------------------------------------------------------------------------------------
// fio's side: the debug=parse output
// ---------------------------------------------------------------------------------------

/// A value fio stored: a number, or for size/offset options a percentage.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Int(u64),
    Pct(f64),
}

/// One option as fio's parser handled it.
#[derive(Debug)]
struct FioOpt {
    name: String,
    ptr: String,
    kind: String,
    /// Per element: the value stored, or None when fio left the element alone.
    elems: Vec<Option<Val>>,
}

#[derive(Debug)]
struct FioSection {
    name: String,
    opts: Vec<FioOpt>,
}

/// The message of one `fio --debug=parse` line (without `parse <pid> `).
fn debug_message(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("parse")?.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    Some(rest[digits..].strip_prefix(' ').unwrap_or(&rest[digits..]))
}

fn parse_fio_debug(text: &str) -> Vec<FioSection> {
    let mut sections: Vec<FioSection> = Vec::new();
    for line in text.lines() {
        let Some(msg) = debug_message(line) else {
            continue;
        };
        let msg = msg.trim_start();
        if let Some(rest) = msg.strip_prefix("Parsing section [") {
            let name = &rest[..rest.rfind(']').unwrap_or(rest.len())];
            sections.push(FioSection {
                name: name.to_string(),
                opts: Vec::new(),
            });
        } else if let Some(rest) = msg.strip_prefix("handle_option=") {
            let Some(sec) = sections.last_mut() else {
                continue;
            };
            let (name, ptr) = rest.split_once(", ptr=").unwrap_or((rest, ""));
            sec.opts.push(FioOpt {
                name: name.to_string(),
                ptr: ptr.to_string(),
                kind: String::new(),
                elems: Vec::new(),
            });
        } else if let Some(rest) = msg.strip_prefix("__handle_option=") {
            if let Some(o) = sections.last_mut().and_then(|s| s.opts.last_mut()) {
                if let Some(t) = rest.split(", type=").nth(1) {
                    o.kind = t.split(',').next().unwrap_or("").to_string();
                }
                o.elems.push(None);
            }
        } else if let Some(rest) = msg.strip_prefix("ret=") {
            let Some(o) = sections.last_mut().and_then(|s| s.opts.last_mut()) else {
                continue;
            };
            let (ret, out) = rest.split_once(", out=").unwrap_or((rest, ""));
            if ret.trim() != "0" {
                continue;
            }
            let Ok(n) = out.trim().parse::<u64>() else {
                continue;
            };
            let v = if o.kind == "OPT_STR_VAL_ZONE" && n > i64::MAX as u64 {
                // fio keeps a percentage as -1 - pct
                Val::Pct((-(n as i64) - 1) as f64)
            } else {
                Val::Int(n)
            };
            if let Some(e) = o.elems.last_mut() {
                *e = Some(v);
            }
        }
    }
    sections
}

/// An option's value in a job as fio resolved it from the sections.
#[derive(Clone, Debug, Default)]
struct Slot {
    vals: [Option<Val>; 3],
    /// The most elements any setting gave.
    given: usize,
    /// The text of the last setting.
    ptr: String,
}

impl Slot {
    fn apply(&mut self, o: &FioOpt) {
        for (i, e) in o.elems.iter().enumerate().take(3) {
            if e.is_some() {
                self.vals[i] = *e;
            }
        }
        // fewer elements than the option has: the last one given fills the rest
        if let Some(Some(last)) = o.elems.last() {
            for i in o.elems.len()..3 {
                self.vals[i] = Some(*last);
            }
        }
        self.given = self.given.max(o.elems.len());
        self.ptr = o.ptr.clone();
    }

    fn int(&self, i: usize) -> Option<u64> {
        match self.vals[i] {
            Some(Val::Int(n)) => Some(n),
            _ => None,
        }
    }
}

/// Per job section (in order): its name and the options fio printed a value for, after
/// applying the [global] section(s) before it.
fn fio_jobs(sections: &[FioSection]) -> Vec<(String, BTreeMap<String, Slot>)> {
    let mut global: BTreeMap<String, Slot> = BTreeMap::new();
    let mut jobs = Vec::new();
    for s in sections {
        let is_global = s.name == "global";
        let mut cur = global.clone();
        for o in &s.opts {
            if o.elems.iter().any(Option::is_some) {
                cur.entry(o.name.clone()).or_default().apply(o);
            }
        }
        if is_global {
            global = cur;
        } else {
            jobs.push((s.name.clone(), cur));
        }
    }
    jobs
}

/// fio's documented post-parse fixups that change a printed value (ioscope's spec holds the
/// value after them): a batch or low-water mark of 0 or above iodepth becomes iodepth, a
/// spin time above the think time becomes the think time, and a batch-complete maximum
/// below the minimum becomes the minimum.
fn after_fio_fixups(name: &str, v: Val, i: usize, job: &BTreeMap<String, Slot>) -> Val {
    let Val::Int(n) = v else { return v };
    let get = |o: &str, def: u64| job.get(o).and_then(|s| s.int(i)).unwrap_or(def);
    Val::Int(match name {
        "iodepth_batch" | "iodepth_low" => {
            let depth = get("iodepth", 1);
            if n == 0 || n > depth {
                depth
            } else {
                n
            }
        }
        "thinktime_spin" => n.min(get("thinktime", 0)),
        "iodepth_batch_complete_max" => n.max(get("iodepth_batch_complete_min", 1)),
        _ => n,
    })
}

/// fio 3.33 reads `1.5g` as 1 (the fraction drops the unit); ioscope reads 1.5 GiB.
fn fractional_with_unit(ptr: &str) -> bool {
    let b = ptr.as_bytes();
    b.windows(3).enumerate().any(|(i, w)| {
        w[0] == b'.'
            && w[1].is_ascii_digit()
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b[i + 1..]
                .iter()
                .find(|c| !c.is_ascii_digit())
                .is_some_and(|c| c.is_ascii_alphabetic())
    })
}

// ---------------------------------------------------------------------------------------
// ioscope's side: --dump-jobs
// ---------------------------------------------------------------------------------------

/// A resolved option as a list of elements: per direction, low/high bound, or one value.
fn ioscope_elems(v: &Value) -> Result<Vec<Val>, String> {
    let one = |v: &Value| -> Result<Val, String> {
        match v {
            Value::Bool(b) => Ok(Val::Int(u64::from(*b))),
            Value::Number(n) => n
                .as_u64()
                .map(Val::Int)
                .ok_or_else(|| format!("not a non-negative integer: {v}")),
            Value::Object(m) if m.len() == 1 && m.contains_key("Bytes") => {
                m["Bytes"].as_u64().map(Val::Int).ok_or(format!("{v}"))
            }
            Value::Object(m) if m.len() == 1 && m.contains_key("Percent") => {
                m["Percent"].as_f64().map(Val::Pct).ok_or(format!("{v}"))
            }
            _ => Err(format!("unsupported value {v}")),
        }
    };
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a.iter().map(one).collect(),
        Value::Object(m) if m.contains_key("lo") && m.contains_key("hi") => {
            Ok(vec![one(&m["lo"])?, one(&m["hi"])?])
        }
        _ => Ok(vec![one(v)?]),
    }
}

// ---------------------------------------------------------------------------------------
// Comparing
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct Tally {
    /// (file, job, option) triples compared.
    compared: usize,
    /// Options fio printed a value for that are not in COMPARED (name -> count).
    not_compared: BTreeMap<String, usize>,
    /// Documented intentional differences met.
    intentional: Vec<String>,
    mismatches: Vec<String>,
}

/// Run both tools on one job file in `dir` and compare what fio printed with ioscope's spec.
fn compare_file(dir: &Path, file: &Path, label: &str, tally: &mut Tally) {
    compare_file_env(dir, file, label, tally, &[]);
}

/// The same, with ioscope given these environment variables too (`IOSCOPE_COMPAT`).
fn compare_file_env(
    dir: &Path,
    file: &Path,
    label: &str,
    tally: &mut Tally,
    ours_env: &[(String, String)],
) {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{label}: {e}"));
    let env = env_for(&text);
    let path = file.to_str().unwrap();

    let f = run_tool(
        Path::new("fio"),
        dir,
        &["--parse-only", "--debug=parse", path],
        &env,
    );
    assert_eq!(f.code, 0, "{label}: fio --parse-only failed:\n{}", f.stderr);
    let fio_out = format!("{}\n{}", f.stdout, f.stderr);
    let fio = fio_jobs(&parse_fio_debug(&fio_out));

    let r = run_tool(
        &bin(),
        dir,
        &["--dump-jobs", path],
        &[&env, ours_env].concat(),
    );
    assert_eq!(
        r.code, 0,
        "{label}: ioscope --dump-jobs failed:\n{}",
        r.stderr
    );
    let dump: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{label}: --dump-jobs is not JSON ({e}):\n{}", r.stdout));
    let jobs = dump["jobs"].as_array().expect("jobs array");

    let fio_names: Vec<&str> = fio.iter().map(|(n, _)| n.as_str()).collect();
    let our_names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    if fio_names != our_names {
        tally.mismatches.push(format!(
            "{label}: jobs differ: fio {fio_names:?}, ioscope {our_names:?}"
        ));
        return;
    }

    for ((job, slots), ours) in fio.iter().zip(jobs) {
        for (name, slot) in slots {
            let Some((_, key)) = COMPARED.iter().find(|(f, _)| f == name) else {
                *tally.not_compared.entry(name.clone()).or_default() += 1;
                continue;
            };
            tally.compared += 1;
            let at = format!("{label} [{job}] {name}={}", slot.ptr);
            let Some(v) = ours["opts"].get(*key) else {
                tally
                    .mismatches
                    .push(format!("{at}: ioscope has no option {key:?}"));
                continue;
            };
            let elems = match ioscope_elems(v) {
                Ok(e) => e,
                Err(e) => {
                    tally.mismatches.push(format!("{at}: ioscope {key}: {e}"));
                    continue;
                }
            };
            if slot.given > elems.len() {
                tally.mismatches.push(format!(
                    "{at}: fio stored {} elements {:?}, ioscope {key} = {v}",
                    slot.given, slot.vals
                ));
                continue;
            }
            let mut bad = Vec::new();
            for (i, ours) in elems.iter().enumerate() {
                let Some(theirs) = slot.vals[i] else { continue };
                let theirs = after_fio_fixups(name, theirs, i, slots);
                if theirs != *ours {
                    bad.push(format!("[{i}] fio {theirs:?} ioscope {ours:?}"));
                }
            }
            if bad.is_empty() {
                continue;
            }
            let msg = format!("{at}: {} (ioscope {key} = {v})", bad.join(", "));
            if fractional_with_unit(&slot.ptr) {
                tally.intentional.push(msg);
            } else {
                tally.mismatches.push(msg);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

/// The example sets to run: our corpus always, fio's examples when present (required under
/// CI; `test` names the calling test in the skip report). (label, directory, file names,
/// least number of (file, job, option) triples a comparison must reach.)
fn example_sets(test: &str) -> Vec<(&'static str, PathBuf, Vec<String>, usize)> {
    let mut sets = vec![("corpus", corpus_dir(), corpus(), 250)];
    if prereq_met(test, &Prereq::SharedExamples, true) {
        let names = FIO_EXAMPLES.iter().map(|n| n.to_string()).collect();
        sets.push(("fio-examples", shared_examples_path(), names, 300));
    }
    sets
}

#[test]
fn our_examples_pass_parse_only() {
    let tmp = tmpdir();
    let mut failures = Vec::new();
    let (mut clean, mut total) = (0, 0);
    for (label, dir, names, _) in example_sets(&test_name!()) {
        for name in names {
            let file = dir.join(&name);
            let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
            let r = run_tool(
                &bin(),
                tmp.path(),
                &["--parse-only", file.to_str().unwrap()],
                &env_for(&text),
            );
            // --parse-only makes every check a run makes: an option ioscope does not
            // implement yet is refused there too (with its file:line), and so is a
            // directory= that does not exist on this machine, or a NUMA node it lacks
            // (fio refuses both as well).
            let refused =
                r.stderr.contains("is not supported yet") && r.stderr.contains(&format!("{name}:"));
            let environment = r.stderr.contains("not a directory")
                || r.stderr.contains("(this machine has nodes");
            total += 1;
            clean += usize::from(r.code == 0);
            if r.code != 0 && !refused && !environment {
                failures.push(format!(
                    "{label}/{name}: exit {}: {}",
                    r.code,
                    r.stderr.trim()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "examples that fail --parse-only:\n{}",
        failures.join("\n")
    );
    // Most examples must pass outright, not just be refused clearly.
    assert!(
        2 * clean >= total,
        "only {clean} of {total} examples pass --parse-only"
    );
}

#[test]
fn our_examples_resolve_as_fio_does() {
    require!(Prereq::Fio333);
    let tmp = tmpdir();
    for (label, dir, names, least) in example_sets(&test_name!()) {
        let mut tally = Tally::default();
        for name in &names {
            compare_file(
                tmp.path(),
                &dir.join(name),
                &format!("{label}/{name}"),
                &mut tally,
            );
        }
        eprintln!(
            "{label}: compared {} (file, job, option) triples over {} files; fio values not compared: {:?}",
            tally.compared,
            names.len(),
            tally.not_compared
        );
        for d in &tally.intentional {
            eprintln!("intentional difference: {d}");
        }
        assert!(
            tally.mismatches.is_empty(),
            "{label}: {} of {} compared values differ from fio:\n{}",
            tally.mismatches.len(),
            tally.compared,
            tally.mismatches.join("\n")
        );
        assert!(
            tally.compared >= least,
            "{label}: only {} triples compared: is fio's debug output read right?",
            tally.compared
        );
        assert!(
            tally.intentional.is_empty(),
            "{label}: no example uses a fractional size"
        );
    }
}

#[test]
fn fio_tests_template_resolves_as_fio_does() {
    require!(Prereq::Fio333);
    let tmp = tmpdir();
    let file = tmp.path().join("template.fio");
    fs::write(&file, TEMPLATE_JOB).unwrap();
    let mut tally = Tally::default();
    compare_file(tmp.path(), &file, "template.fio", &mut tally);
    eprintln!(
        "template: compared {} options; fio values not compared: {:?}",
        tally.compared, tally.not_compared
    );
    assert!(
        tally.mismatches.is_empty(),
        "template values that differ from fio:\n{}",
        tally.mismatches.join("\n")
    );
    assert!(
        tally.compared >= 15,
        "only {} options compared",
        tally.compared
    );
}

/// The intentional differences the comparison allows still hold: fio 3.33 reads `1.5g` as 1
/// where ioscope reads 1.5 GiB, and iodepth_batch above iodepth prints unclamped in fio.
#[test]
fn documented_differences_hold() {
    require!(Prereq::Fio333);
    let tmp = tmpdir();
    let file = tmp.path().join("diff.fio");
    fs::write(
        &file,
        "[j]\nsize=1.5g\niodepth=2\niodepth_batch_submit=8\nfilename=x\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let f = run_tool(
        Path::new("fio"),
        tmp.path(),
        &["--parse-only", "--debug=parse", path],
        &[],
    );
    let fio = fio_jobs(&parse_fio_debug(&format!("{}\n{}", f.stdout, f.stderr)));
    assert_eq!(fio[0].1["size"].int(0), Some(1), "fio reads 1.5g as 1");
    assert_eq!(
        fio[0].1["iodepth_batch"].int(0),
        Some(8),
        "printed before the clamp"
    );
    let (_, v) = run_json(tmp.path(), &["--dump-jobs", path]);
    let o = &v["jobs"][0]["opts"];
    assert_eq!(o["size"]["Bytes"], 3 << 29, "ioscope reads 1.5g as 1.5 GiB");
    assert_eq!(o["iodepth_batch_submit"], 2, "clamped to iodepth");

    let mut tally = Tally::default();
    compare_file(tmp.path(), &file, "diff.fio", &mut tally);
    assert!(tally.mismatches.is_empty(), "{:?}", tally.mismatches);
    assert_eq!(tally.intentional.len(), 1, "{:?}", tally.intentional);
}

/// fio's lenient values (trailing garbage, a range's stray separators), as in fio's own
/// t0023/t0024 jobs and t/strided.py: refused by default with the file, line and option;
/// with `IOSCOPE_COMPAT=fio` (or `--compat=fio`) every value resolves to what fio 3.33
/// stores, as its debug output prints it.
#[test]
fn lenient_values_resolve_as_fio_does_under_compat_fio() {
    require!(Prereq::Fio333);
    let tmp = tmpdir();
    let file = tmp.path().join("lenient.fio");
    let text = "[global]\nfilename=x\nfilesize=65536)\n\n[j]\nbs=4kq\niodepth=8x\n\
                direct=1x\nruntime=10 s\nthinktime=5msx\nnumber_ios=3m5\n\
                bsrange=512/25:1k:25:2k:25:4k/25\n";
    fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let strict = run_in(tmp.path(), &["--parse-only", path]);
    assert_ne!(strict.code, 0);
    assert!(
        strict.stderr.contains("lenient.fio:3") && strict.stderr.contains("filesize"),
        "{}",
        strict.stderr
    );
    let compat = [("IOSCOPE_COMPAT".to_string(), "fio".to_string())];
    let mut tally = Tally::default();
    compare_file_env(tmp.path(), &file, "lenient.fio", &mut tally, &compat);
    assert!(tally.mismatches.is_empty(), "{:?}", tally.mismatches);
    assert!(tally.compared >= 7, "compared {}", tally.compared);
    // fio prints no value for ranges: check ours directly.
    let (r, v) = run_json(tmp.path(), &["--compat=fio", "--dump-jobs", path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let o = &v["jobs"][0]["opts"];
    assert_eq!(
        o["bsrange"][0],
        serde_json::json!({"lo": 512, "hi": 1024}),
        "{o}"
    );
    let bogus = run_in(tmp.path(), &["--compat=fi0", "--parse-only", path]);
    assert!(
        bogus.code != 0 && bogus.stderr.contains("--compat=fi0"),
        "{}",
        bogus.stderr
    );
}

/// Installed as `fio` (a symlink, as harnesses that hard-code fio need): fio's lenient
/// values without any flag, no subcommands (`fio quick` names a job file), and `--version`
/// names the fio it follows. fio's t0023 typo runs: every block is 512 or 1024 bytes.
#[test]
fn run_as_fio_by_name() {
    let tmp = tmpdir();
    let fio = tmp.path().join("fio");
    std::os::unix::fs::symlink(bin(), &fio).unwrap();
    let v = run_tool(&fio, tmp.path(), &["--version"], &[]);
    assert_eq!(v.stdout.trim(), "fio-3.42");
    let q = run_tool(&fio, tmp.path(), &["quick"], &[]);
    assert!(q.code != 0 && q.stderr.contains("quick"), "{}", q.stderr);
    let args = [
        "--name=t0023",
        "--filename=data",
        "--filesize=65536)",
        "--rw=randwrite",
        "--bsrange=512/25:1k:25:2k:25:4k/25",
        "--write_iolog=io.log",
        "--output-format=json",
    ];
    let r = run_tool(&fio, tmp.path(), &args, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(u(&j["jobs"][0]["write"]["io_bytes"]), 65536);
    let log = fs::read_to_string(tmp.path().join("io.log")).unwrap();
    let sizes: std::collections::BTreeSet<u64> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "write").then(|| f[4].parse().unwrap())
        })
        .collect();
    assert_eq!(sizes, [512, 1024].into(), "{log}");
    // The same arguments as `ioscope` are refused, naming the option.
    let strict = run_in(tmp.path(), &args);
    assert!(
        strict.code != 0 && strict.stderr.contains("filesize"),
        "{}",
        strict.stderr
    );
}

/// The reader of fio's debug output, on lines as fio 3.33 prints them (no fio needed).
#[test]
fn fio_debug_output_is_read_right() {
    let text = "\
fio: set debug option parse
parse    21061 Parsing ini file t.fio
parse    21061 [global]
parse    21061 Parsing section [global]
parse    21061 blocksize=4k,16k
parse    21061 [a]
parse    21061 handle_option=bs, ptr=4k,16k
parse    21061 __handle_option=bs, type=OPT_ULL, ptr=4k,16k
parse    21061   ret=0, out=4096
parse    21061 __handle_option=bs, type=OPT_ULL, ptr=16k
parse    21061   ret=0, out=16384
parse    21061 [a]
parse    21061 Parsing section [a]
parse    21061 dup options
parse    21061 handle_option=rate, ptr=300,,100
parse    21061 __handle_option=rate, type=OPT_ULL, ptr=300,,100
parse    21061   ret=0, out=300
parse    21061 __handle_option=rate, type=OPT_ULL, ptr=,100
parse    21061   ret=1, out=300
parse    21061 __handle_option=rate, type=OPT_ULL, ptr=100
parse    21061   ret=0, out=100
parse    21061 handle_option=bs, ptr=,8k
parse    21061 __handle_option=bs, type=OPT_ULL, ptr=,8k
parse    21061   ret=1, out=0
parse    21061 __handle_option=bs, type=OPT_ULL, ptr=8k
parse    21061   ret=0, out=8192
parse    21061 handle_option=offset, ptr=10%
parse    21061 __handle_option=offset, type=OPT_STR_VAL_ZONE, ptr=10%
parse    21061   ret=0, out=18446744073709551605
parse    21061 SET start_offset_percent 10
parse    21061 handle_option=rw, ptr=randrw
parse    21061 __handle_option=rw, type=OPT_STR, ptr=randrw
parse    21061 free options
parse    21061 [b]
parse    21061 Parsing section [b]
parse    21061 dup options
parse    21061 handle_option=startdelay, ptr=4
parse    21061 __handle_option=startdelay, type=OPT_STR_VAL_TIME, ptr=4
parse    21061   ret=0, out=4000000
parse    21061 free options
";
    let jobs = fio_jobs(&parse_fio_debug(text));
    assert_eq!(jobs.len(), 2);
    let (a, b) = (&jobs[0].1, &jobs[1].1);
    assert_eq!(jobs[0].0, "a");
    let i = |v: u64| Some(Val::Int(v));
    assert_eq!(a["bs"].vals, [i(4096), i(8192), i(8192)]);
    assert_eq!(a["rate"].vals, [i(300), None, i(100)]);
    assert_eq!(a["offset"].vals[0], Some(Val::Pct(10.0)));
    assert!(!a.contains_key("rw"), "no value printed");
    assert_eq!(b["bs"].vals, [i(4096), i(16384), i(16384)], "from [global]");
    assert_eq!(b["startdelay"].vals, [i(4_000_000); 3]);
    assert!(!b.contains_key("rate"));
    assert!(fractional_with_unit("1.5g") && fractional_with_unit("size=0.5M"));
    assert!(
        !fractional_with_unit("1.5")
            && !fractional_with_unit("4k")
            && !fractional_with_unit("99.9")
    );
}
