//! Any bytes as an argv (words split at NUL bytes, not necessarily UTF-8): the fio
//! command line and every subcommand's flags must parse or fail with a clear error,
//! never panic.
#![no_main]

use ioscope_options::{cli, jobfile, spec};
use libfuzzer_sys::fuzz_target;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

fuzz_target!(|data: &[u8]| {
    let kw = jobfile::Keywords {
        ncpus: 2,
        mb_memory: 1024,
        pagesize: 4096,
        vars: vec![("IOSCOPE_RANK".into(), "1".into())],
        // Odd first bytes also fuzz fio's lenient values (--compat=fio).
        compat_fio: data.first().is_some_and(|b| b & 1 == 1),
    };
    let words: Vec<OsString> = data
        .split(|&b| b == 0)
        .map(|w| OsString::from_vec(w.to_vec()))
        .collect();
    if let Ok(c) = cli::parse_args_os(&words, &[]) {
        let _ = spec::build(&c.global, &c.jobs, &[], &[], &kw);
    }
    // The fio face's flags and every subcommand's, from the program's command table.
    ioscope::parse_all(&words);
});
