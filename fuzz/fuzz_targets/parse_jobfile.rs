//! Any bytes as a job file, and as command-line words: parsing must return Ok or a
//! clear error, never panic.
#![no_main]

use ioscope_options::{cli, jobfile, spec};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let kw = jobfile::Keywords {
        ncpus: 2,
        mb_memory: 1024,
        pagesize: 4096,
        vars: vec![("IOSCOPE_RANK".into(), "1".into())],
        // Odd first bytes also fuzz fio's lenient values (--compat=fio).
        compat_fio: data.first().is_some_and(|b| b & 1 == 1),
    };
    if let Ok(text) = std::str::from_utf8(data) {
        let mut secs = Vec::new();
        if jobfile::parse_text(Path::new("fuzz.fio"), text, &mut secs, 0).is_ok() {
            let _ = spec::build(&[], &[], &[secs], &[], &kw);
        }
        let words: Vec<String> = text.split_whitespace().map(String::from).collect();
        if let Ok(c) = cli::parse_args(&words, &ioscope::fio_flags()) {
            let _ = spec::build(&c.global, &c.jobs, &[], &[], &kw);
        }
    }
});
