//! Example job files that use ioscope's engines must parse: our own corpus
//! (crates/cli/tests/data/jobs) always, and fio's example files (shared/fio-examples next to
//! the repository) when present — required under CI=true. The lists live in
//! crates/cli/tests/common/examples.rs, shared with the cli crate's fio_parse test.

#[macro_use]
#[path = "../../cli/tests/common/prereq.rs"]
mod prereq;
#[path = "../../cli/tests/common/examples.rs"]
mod examples;

use examples::*;
use ioscope_options::{cli, jobfile, spec};
use prereq::*;
use std::path::Path;

fn parse(path: &Path) -> Result<spec::JobSet, ioscope_options::OptionsError> {
    let c = cli::parse_args(&[], &[])?;
    let files = vec![jobfile::read_job_file(path)?];
    spec::build(&c.global, &c.jobs, &files, &[], &jobfile::Keywords::probe())
}

/// Parse each file of `dir`; the failures.
fn parse_all(dir: &Path, names: &[String]) -> Vec<String> {
    let mut failures = Vec::new();
    for name in names {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The job files' ${VAR} references (std serialises its own environment access).
        for (k, v) in env_for(&text) {
            std::env::set_var(k, v);
        }
        match parse(&path) {
            Ok(set) => assert!(!set.jobs.is_empty(), "{name}: no jobs"),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    failures
}

#[test]
fn our_examples_parse() {
    let mut failures = parse_all(&corpus_dir(), &corpus());
    if available!(Prereq::SharedExamples) {
        let names: Vec<String> = FIO_EXAMPLES.iter().map(|n| n.to_string()).collect();
        failures.extend(parse_all(&shared_examples_path(), &names));
    }
    assert!(
        failures.is_empty(),
        "examples that do not parse:\n{}",
        failures.join("\n")
    );
}

#[test]
fn fio_tests_template_resolves_as_fio_does() {
    let text = TEMPLATE_JOB;
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
