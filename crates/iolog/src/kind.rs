//! The kinds of log a job writes and their file names: one table ([`KINDS`]) that the
//! runner's log writer, the log readers, MPI log gathering and sweeps all read.
//!
//! Adding a kind: a variant of [`LogKind`] and its row in [`KINDS`] (in the same
//! order), then the code that writes its lines.

use ioscope_options::JobOptions;
use std::path::{Path, PathBuf};

/// A kind of log, in fio's naming (`PREFIX_<name>[.N].log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogKind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
    ClatHist,
}

/// What a kind of log is.
#[derive(Debug)]
pub struct KindDef {
    pub kind: LogKind,
    /// The name in file names: `PREFIX_<name>.N.log`.
    pub name: &'static str,
    /// The job option whose value is the prefix that turns the log on.
    pub option: &'static str,
    /// Captured per I/O as binary records (one line per I/O unless log_avg_msec).
    pub per_io: bool,
    /// The option's value in a job's options.
    prefix: fn(&JobOptions) -> &Option<String>,
    prefix_mut: fn(&mut JobOptions) -> &mut Option<String>,
}

/// Every kind, in [`LogKind`] order (the index of a per-I/O kind is its column in
/// the binary log's header).
pub const KINDS: [KindDef; 6] = [
    KindDef {
        kind: LogKind::Lat,
        name: "lat",
        option: "write_lat_log",
        per_io: true,
        prefix: |o| &o.write_lat_log,
        prefix_mut: |o| &mut o.write_lat_log,
    },
    KindDef {
        kind: LogKind::Slat,
        name: "slat",
        option: "write_lat_log",
        per_io: true,
        prefix: |o| &o.write_lat_log,
        prefix_mut: |o| &mut o.write_lat_log,
    },
    KindDef {
        kind: LogKind::Clat,
        name: "clat",
        option: "write_lat_log",
        per_io: true,
        prefix: |o| &o.write_lat_log,
        prefix_mut: |o| &mut o.write_lat_log,
    },
    KindDef {
        kind: LogKind::Bw,
        name: "bw",
        option: "write_bw_log",
        per_io: true,
        prefix: |o| &o.write_bw_log,
        prefix_mut: |o| &mut o.write_bw_log,
    },
    KindDef {
        kind: LogKind::Iops,
        name: "iops",
        option: "write_iops_log",
        per_io: true,
        prefix: |o| &o.write_iops_log,
        prefix_mut: |o| &mut o.write_iops_log,
    },
    KindDef {
        kind: LogKind::ClatHist,
        name: "clat_hist",
        option: "write_hist_log",
        per_io: false,
        prefix: |o| &o.write_hist_log,
        prefix_mut: |o| &mut o.write_hist_log,
    },
];

/// The per-I/O kinds (the binary log's columns): lat, slat, clat, bw, iops.
pub const PER_IO: usize = 5;

impl LogKind {
    pub fn def(self) -> &'static KindDef {
        &KINDS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The prefix the job's options give this kind, if they turn it on.
    pub fn prefix(self, o: &JobOptions) -> Option<&String> {
        (self.def().prefix)(o).as_ref()
    }

    /// The kind of a log file, from its name (`NAME_clat.1.log`, `agg-read_bw.log`).
    pub fn of(path: &Path) -> Option<LogKind> {
        let name = path.file_name()?.to_string_lossy();
        // The kind is the last "_kind" before ".N.log" or ".log".
        let stem = name.strip_suffix(".log")?;
        let stem = stem
            .rsplit_once('.')
            .filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()))
            .map_or(stem, |(s, _)| s);
        // Longest name first: `_clat_hist` before `_clat` and `_lat`.
        let mut by_len: Vec<&KindDef> = KINDS.iter().collect();
        by_len.sort_by_key(|k| std::cmp::Reverse(k.name.len()));
        by_len
            .into_iter()
            .find(|k| stem.ends_with(&format!("_{}", k.name)))
            .map(|k| k.kind)
    }
}

/// The job options that name log files (each turns on one or more kinds), in table
/// order without repeats.
pub fn options() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in &KINDS {
        if !out.contains(&k.option) {
            out.push(k.option);
        }
    }
    out
}

/// Call `f` on every log prefix the job's options set, once per option (MPI ranks
/// rename them).
/// Turn every log option of `o` off (a run whose figures nobody keeps: a warm-up).
pub fn clear_logs(o: &mut JobOptions) {
    for k in &KINDS {
        *(k.prefix_mut)(o) = None;
    }
}

pub fn for_each_prefix_mut(o: &mut JobOptions, mut f: impl FnMut(&mut String)) {
    for name in options() {
        if let Some(k) = KINDS.iter().find(|k| k.option == name) {
            if let Some(p) = (k.prefix_mut)(o).as_mut() {
                f(p);
            }
        }
    }
}

/// Log file name: `PREFIX_KIND[.N].log` (fio's naming; N = the job's number over the
/// run). An empty prefix is the job's name.
pub fn log_path(
    prefix: &str,
    job_name: &str,
    kind: LogKind,
    number: u32,
    per_job: bool,
) -> PathBuf {
    let base = if prefix.is_empty() { job_name } else { prefix };
    let name = kind.name();
    if per_job {
        PathBuf::from(format!("{base}_{name}.{number}.log"))
    } else {
        PathBuf::from(format!("{base}_{name}.log"))
    }
}

/// The binary log of a job: `PREFIX_io.N.bin` (always numbered: jobs never share one).
pub fn binary_path(prefix: &str, job_name: &str, number: u32) -> PathBuf {
    let base = if prefix.is_empty() { job_name } else { prefix };
    PathBuf::from(format!("{base}_io.{number}.bin"))
}

/// What becomes of per-I/O records (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LogFormat {
    /// fio's text logs (the binary log is only a spill file, removed afterwards).
    #[default]
    Text,
    /// ioscope's binary log, kept; no per-I/O text logs.
    Binary,
    Both,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_enum_order() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(k.kind as usize, i, "{}", k.name);
        }
        assert!(KINDS[..PER_IO].iter().all(|k| k.per_io));
        assert!(KINDS[PER_IO..].iter().all(|k| !k.per_io));
    }

    #[test]
    fn kinds_from_names() {
        let k = |n: &str| LogKind::of(Path::new(n));
        assert_eq!(k("run_clat.1.log"), Some(LogKind::Clat));
        assert_eq!(k("run_clat_hist.2.log"), Some(LogKind::ClatHist));
        assert_eq!(k("/x/agg-read_bw.log"), Some(LogKind::Bw));
        assert_eq!(k("a_lat.log"), Some(LogKind::Lat));
        assert_eq!(k("a_slat.10.log"), Some(LogKind::Slat));
        assert_eq!(k("a_iops.1.log"), Some(LogKind::Iops));
        assert_eq!(k("notes.txt"), None);
    }

    #[test]
    fn names_and_options() {
        assert_eq!(
            log_path("p", "job", LogKind::ClatHist, 3, true),
            PathBuf::from("p_clat_hist.3.log")
        );
        assert_eq!(
            log_path("", "job", LogKind::Bw, 3, false),
            PathBuf::from("job_bw.log")
        );
        assert_eq!(binary_path("", "job", 2), PathBuf::from("job_io.2.bin"));
        assert_eq!(
            options(),
            [
                "write_lat_log",
                "write_bw_log",
                "write_iops_log",
                "write_hist_log"
            ]
        );
    }

    #[test]
    fn prefixes_are_renamed_once_each() {
        let mut o = ioscope_options::spec::defaults().clone();
        o.write_lat_log = Some("l".into());
        o.write_hist_log = Some("h".into());
        for_each_prefix_mut(&mut o, |p| p.push_str(".x"));
        assert_eq!(o.write_lat_log.as_deref(), Some("l.x"));
        assert_eq!(o.write_hist_log.as_deref(), Some("h.x"));
        assert_eq!(o.write_bw_log, None);
    }
}
