//! The result files behind the paths a command is given (`report`, `compare`,
//! `fairness`): a file, or the `*.json` files of a directory (and, for a report, of its
//! subdirectories). Nothing is dropped silently: every file left out is named with
//! why — not JSON, cut short, not a result, interrupted — except ioscope's own report
//! files, which are outputs, never inputs. Directories are read once each, so a
//! symbolic link back up the tree is named, not followed round, and a file reached by
//! two paths counts once.

use crate::{parse_str, ResultFile, ResultsError};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most bytes read from one result file.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// The top-level key of ioscope's own report documents (`results.json`): files with it
/// are outputs and never read as results.
pub const REPORT_KEY: &str = "ioscope_report";

/// How to gather.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Read subdirectories too.
    pub recursive: bool,
    /// Keep results whose run a signal cut short (`ioscope.interrupted`).
    pub include_interrupted: bool,
}

/// A file left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: skipped: {}", self.path.display(), self.why)
    }
}

/// What was found.
#[derive(Debug, Default)]
pub struct Gathered {
    /// The results, in path order.
    pub results: Vec<(PathBuf, ResultFile)>,
    pub skipped: Vec<Skipped>,
}

/// Gather the results of `path` (a file or a directory).
pub fn gather(path: &Path, o: Options) -> Result<Gathered, ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = Gathered::default();
    if !std::fs::metadata(path).map_err(io)?.is_dir() {
        // A file named on its own must be a result: anything else is an error.
        let text = read(path)?;
        let r = parse_str(&text, path)?;
        match interrupted(&r, o) {
            Some(why) => out.skipped.push(Skipped {
                path: path.to_path_buf(),
                why,
            }),
            None => out.results.push((path.to_path_buf(), r)),
        }
        return Ok(out);
    }
    let mut walk = Walk {
        seen_dirs: HashSet::new(),
        seen_files: HashSet::new(),
        files: Vec::new(),
        skipped: Vec::new(),
        recursive: o.recursive,
    };
    walk.dir(path)?;
    let mut files = walk.files;
    files.sort();
    out.skipped = walk.skipped;
    for f in files {
        match one(&f, o) {
            Ok(Some(r)) => out.results.push((f, r)),
            Ok(None) => {}
            Err(why) => out.skipped.push(Skipped { path: f, why }),
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, ResultsError> {
    let bytes = ioscope_fs::read_file_limited(path, MAX_RESULT_BYTES).map_err(|source| {
        ResultsError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    String::from_utf8(bytes).map_err(|_| ResultsError::NotAResult {
        path: path.to_path_buf(),
        why: "not UTF-8 text".into(),
    })
}

/// One file of a directory: its result, None for ioscope's own outputs, or why not.
fn one(path: &Path, o: Options) -> Result<Option<ResultFile>, String> {
    let text = read(path).map_err(|e| strip(&e, path))?;
    if is_report_output(&text) {
        return Ok(None);
    }
    let r = parse_str(&text, path).map_err(|e| strip(&e, path))?;
    match interrupted(&r, o) {
        Some(why) => Err(why),
        None => Ok(Some(r)),
    }
}

/// An error's text without the path it starts with (the skip names the file).
fn strip(e: &ResultsError, path: &Path) -> String {
    let s = e.to_string();
    let p = format!("{}: ", path.display());
    s.strip_prefix(&p).map(str::to_string).unwrap_or(s)
}

/// ioscope's report files carry [`REPORT_KEY`] at the top.
fn is_report_output(text: &str) -> bool {
    let head = &text[..text.len().min(512)];
    head.trim_start().starts_with('{') && head.contains(&format!("\"{REPORT_KEY}\""))
}

fn interrupted(r: &ResultFile, o: Options) -> Option<String> {
    let cut = r.meta.as_ref().is_some_and(|m| m.interrupted);
    (cut && !o.include_interrupted)
        .then(|| "the run was interrupted (--include-interrupted counts it)".to_string())
}

struct Walk {
    seen_dirs: HashSet<(u64, u64)>,
    seen_files: HashSet<(u64, u64)>,
    files: Vec<PathBuf>,
    skipped: Vec<Skipped>,
    recursive: bool,
}

impl Walk {
    fn dir(&mut self, d: &Path) -> Result<(), ResultsError> {
        let io = |source| ResultsError::Io {
            path: d.to_path_buf(),
            source,
        };
        let md = std::fs::metadata(d).map_err(io)?;
        if !self.seen_dirs.insert((md.dev(), md.ino())) {
            self.skipped.push(Skipped {
                path: d.to_path_buf(),
                why: "a directory already read (a symbolic link loop?)".into(),
            });
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            // Follows links (a results tree may link runs in), once per target.
            let Ok(md) = std::fs::metadata(&p) else {
                continue;
            };
            if md.is_dir() {
                if self.recursive {
                    self.dir(&p)?;
                }
            } else if md.is_file()
                && p.extension().is_some_and(|x| x == "json")
                && self.seen_files.insert((md.dev(), md.ino()))
            {
                self.files.push(p);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(iops: f64, interrupted: bool) -> String {
        format!(
            r#"{{"jobs": [{{"jobname": "j", "read": {{"io_bytes": 1, "iops": {iops}}}}}],
               "ioscope": {{"interrupted": {interrupted}}}}}"#
        )
    }

    #[test]
    fn every_file_left_out_is_named_with_why() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| std::fs::write(d.path().join(n), t).unwrap();
        w("a.json", &doc(1.0, false));
        w("cut.json", &doc(1.0, false)[..30]);
        w(
            "nan.json",
            r#"{"jobs": [{"jobname": "j", "read": {"iops": NaN}}]}"#,
        );
        w("other.json", r#"{"x": 1}"#);
        w("stopped.json", &doc(2.0, true));
        w(
            "results.json",
            r#"{"ioscope_report": "results table", "rows": []}"#,
        );
        let g = gather(d.path(), Options::default()).unwrap();
        assert_eq!(g.results.len(), 1);
        let why: Vec<String> = g.skipped.iter().map(|s| s.to_string()).collect();
        let has = |name: &str, what: &str| {
            why.iter()
                .any(|w| w.contains(name) && w.contains("skipped") && w.contains(what))
        };
        assert!(has("cut.json", "not valid JSON"), "{why:?}");
        assert!(has("nan.json", "not valid JSON"), "{why:?}");
        assert!(has("other.json", "no \"jobs\" array"), "{why:?}");
        assert!(has("stopped.json", "interrupted"), "{why:?}");
        assert_eq!(
            why.len(),
            4,
            "the report's own results.json is no input: {why:?}"
        );
        let all = Options {
            include_interrupted: true,
            ..Options::default()
        };
        assert_eq!(gather(d.path(), all).unwrap().results.len(), 2);
    }

    #[test]
    fn a_link_loop_is_read_once() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("a.json"), doc(1.0, false)).unwrap();
        std::os::unix::fs::symlink(d.path(), sub.join("up")).unwrap();
        std::os::unix::fs::symlink(sub.join("a.json"), d.path().join("same.json")).unwrap();
        let o = Options {
            recursive: true,
            ..Options::default()
        };
        let g = gather(d.path(), o).unwrap();
        assert_eq!(g.results.len(), 1, "one file, however many paths reach it");
        assert!(g.skipped[0].why.contains("already read"), "{:?}", g.skipped);
    }
}
