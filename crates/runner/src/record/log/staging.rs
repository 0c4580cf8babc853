//! log_store_compressed: the text logs are written under a staging name private to
//! this run (NAME.log.ioscope-TOKEN, shared by the jobs of per_job_logs=0), then
//! compressed into NAME.log.fz once the run is over; a NAME.log already there is left
//! alone, as fio leaves it.

use ioscope_iolog::set::LogSet;
use std::path::{Path, PathBuf};

const STAGING: &str = "ioscope-";

/// The set with each text log under its staging name.
pub(super) fn staged_set(set: &LogSet) -> LogSet {
    let mut s = set.clone();
    for p in s.files.iter_mut().flatten().chain(s.hist.iter_mut()) {
        let mut n = p.as_os_str().to_owned();
        n.push(format!(".{STAGING}{:016x}", run_token()));
        *p = PathBuf::from(n);
    }
    s
}

/// A staging name's final name: NAME.log (byte for byte: names need not be UTF-8).
pub(super) fn unstaged(p: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    let suffix = 1 + STAGING.len() + 16;
    match b.len().checked_sub(suffix) {
        Some(i) if b[i..].starts_with(format!(".{STAGING}").as_bytes()) => {
            PathBuf::from(std::ffi::OsStr::from_bytes(&b[..i]))
        }
        _ => p.to_path_buf(),
    }
}

/// 64 unpredictable bits, the same for the whole run.
fn run_token() -> u64 {
    static TOKEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOKEN.get_or_init(ioscope_fs::random)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_name_comes_back_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"dir\xff/test_bw.log");
        let mut set = LogSet::default();
        set.files[0] = Some(PathBuf::from(name));
        let staged = staged_set(&set);
        let p = staged.files[0].clone().unwrap();
        assert_ne!(p.as_os_str(), name);
        assert_eq!(unstaged(&p).as_os_str(), name);
        assert_eq!(unstaged(Path::new("plain.log")), Path::new("plain.log"));
    }
}
