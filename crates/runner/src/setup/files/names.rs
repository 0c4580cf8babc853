//! Which files a job uses: filename, directory, filename_format, nrfiles, opendir;
//! and the metadata engines' names, which are operated on rather than opened.

use crate::plan::split_names;
use ioscope_options::JobOptions;
use std::path::{Path, PathBuf};

/// File paths of one job clone.
pub fn job_paths(o: &JobOptions, clone: u32) -> Vec<PathBuf> {
    let dirs: Vec<String> = o.directory.as_deref().map(split_names).unwrap_or_default();
    let in_dir = |name: &str, i: usize| -> PathBuf {
        match dirs.get(i % dirs.len().max(1)) {
            Some(d) if !Path::new(name).is_absolute() => Path::new(d).join(name),
            _ => PathBuf::from(name),
        }
    };
    let mut found = Vec::new();
    if let Some(d) = o.opendir.as_deref() {
        walk(Path::new(d), &mut found);
    }
    match o.filename.as_deref() {
        Some(list) => split_names(list)
            .iter()
            .enumerate()
            .map(|(i, n)| in_dir(n, i))
            .chain(found)
            .collect(),
        // opendir's files replace the job's own, as in fio.
        None if o.opendir.is_some() => found,
        None => (0..o.nrfiles)
            .map(|f| {
                let name = o
                    .filename_format
                    .replace("$jobname", &o.name)
                    .replace("$jobnum", &clone.to_string())
                    .replace("$filenum", &f.to_string())
                    .replace("$clientuid", "0");
                in_dir(&name, f as usize)
            })
            .collect(),
    }
}

/// opendir: the regular files under `dir`, depth first, each directory in name order
/// (fio takes readdir's order, which no two filesystems agree on). Symbolic links are
/// not followed; what cannot be read is left out.
pub(super) fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, t) in entries {
        if t.is_file() {
            out.push(p);
        } else if t.is_dir() {
            walk(&p, out);
        }
    }
}

/// The call a metadata engine makes, for its error messages (fio's names).
pub fn name_op_label(o: &JobOptions) -> &'static str {
    match o.ioengine.as_str() {
        "filecreate" => "open",
        "filestat" | "dirstat" => match o.stat_type {
            ioscope_options::StatType::Stat => "stat",
            ioscope_options::StatType::Lstat => "lstat",
            ioscope_options::StatType::Statx => "statx",
        },
        "filedelete" => "delete",
        "dircreate" => "mkdir",
        "dirdelete" => "rmdir",
        _ => "operation",
    }
}
