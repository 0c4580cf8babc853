//! Result files as plain data: the JSON (or JSON+) document that ioscope or fio 3.x
//! writes with `--output-format=json`, read into [`ResultFile`].
//!
//! Only what analyses need is kept (names, groups, job options, per-direction bytes,
//! bandwidth, IOPS, runtime, latency percentiles, disk utilisation). Everything else in
//! the document is ignored, so both tools' documents and several fio versions read alike.

pub mod clones;
mod error;
pub mod gather;
mod parse;
pub mod terse;

pub use clones::{merge_clones, Aggregation};
pub use error::ResultsError;
pub use gather::{gather, Gathered, Skipped};
pub use parse::{from_value, parse_all, parse_str, read_file};

/// Index of a direction in [`Job::dirs`] and [`Group::dirs`], in fio's order.
pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const TRIM: usize = 2;
/// fio's names of the directions, as in its JSON.
pub const DIR_NAMES: [&str; 3] = ["read", "write", "trim"];

/// One result document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultFile {
    /// "fio-3.33" or ioscope's version string, when the document says.
    pub version: Option<String>,
    /// `global options` of the document (fio prints options given before the first job).
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<Job>,
    /// Per group: min/max bandwidth as fio's "Run status group" lines compute them.
    pub groups: Vec<Group>,
    pub disks: Vec<Disk>,
    /// ioscope's `"ioscope"` key (where and with what the run was made); `None` in fio's
    /// documents, which do not say.
    pub meta: Option<Meta>,
}

/// The machine and program of an ioscope run, from its `"ioscope"` key. Fields the
/// document lacks are `None`, so an old or hand-written file still reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub ioscope_version: Option<String>,
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// `ioscope.sweep`: the sweep point this result is (ioscope sweep, sweep import).
    pub sweep: Option<SweepTag>,
    /// `ioscope.interrupted`: a signal cut the run short; its figures cover only part
    /// of what was asked.
    pub interrupted: bool,
}

/// Which sweep point a result is: the sweep, the profile and the axis values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepTag {
    pub sweep: String,
    pub profile: String,
    pub axes: Vec<(String, String)>,
    /// The point's key (its options and target, hashed): which campaign's point this is.
    pub key: String,
}

/// One job (or one group's merged job under group_reporting).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Job {
    pub name: String,
    pub groupid: u32,
    /// fio's "job options": the options given for this job, as text, in file order.
    pub options: Vec<(String, String)>,
    pub dirs: [Dir; 3],
    /// `job_runtime` in ms (the job's whole run).
    pub job_runtime_ms: u64,
}

/// One direction of a job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dir {
    pub io_bytes: u64,
    /// Bytes per second.
    pub bw_bytes: u64,
    pub iops: f64,
    pub runtime_ms: u64,
    pub total_ios: u64,
    /// Completion latency: (percentile, ns), ascending; empty when not reported.
    pub clat_pct: Vec<(f64, u64)>,
    /// Total latency percentiles (with lat_percentiles=1).
    pub lat_pct: Vec<(f64, u64)>,
    pub clat_mean_ns: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    /// json+ completion-latency histogram: (bin value in ns, I/Os), ascending; empty in
    /// plain JSON.
    pub clat_bins: Vec<(u64, u64)>,
    /// Latency per I/O priority (fio's `prios`, written with cmdprio or log_prio);
    /// empty when the result has none.
    pub prios: Vec<Prio>,
}

/// The completion latency of one I/O priority in one direction (total latency where
/// fio reports that instead, with lat_percentiles).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prio {
    /// ioprio class (0 none, 1 rt, 2 be, 3 idle) and level.
    pub class: u32,
    pub level: u32,
    pub total_ios: u64,
    /// (percentile, ns), ascending.
    pub pct: Vec<(f64, u64)>,
    /// json+ bins: (ns, I/Os), ascending.
    pub bins: Vec<(u64, u64)>,
}

impl Prio {
    /// `rt/0`, `be/4`, `none/0`.
    pub fn name(&self) -> String {
        let class = match self.class {
            1 => "rt",
            2 => "be",
            3 => "idle",
            _ => "none",
        };
        format!("{class}/{}", self.level)
    }

    /// The `q`-th percentile of its I/Os' latency, ns: as fio reported it, else from
    /// its json+ bins.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        let reported = self.pct.iter().find(|(x, _)| (x - q).abs() < 1e-9);
        reported
            .map(|&(_, ns)| ns)
            .or_else(|| ioscope_analysis::shape::percentile(&self.bins, q))
    }
}

/// Group figures of one direction (fio's `READ: bw=… (…), min-max (…), io=…, run=…`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate bandwidth: all bytes over the longest runtime (bytes/s).
    pub agg_bw: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub groupid: u32,
    pub dirs: [GroupDir; 3],
}

/// One entry of `disk_util`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Disk {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub util: f64,
}

impl Job {
    /// The job's option `name` ("prio", "ioscheduler", …), falling back to the
    /// document's global options, as fio applies them.
    pub fn option<'a>(&'a self, name: &str, file: &'a ResultFile) -> Option<&'a str> {
        self.options
            .iter()
            .chain(file.global_options.iter())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Options whose name starts with `prefix` (`cmdprio` → cmdprio, cmdprio_class, …).
    pub fn options_with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = &'a (String, String)> + 'a {
        self.options
            .iter()
            .filter(move |(k, _)| k.starts_with(prefix))
    }

    /// Bytes moved in all directions.
    pub fn io_bytes_all(&self) -> u64 {
        self.dirs.iter().map(|d| d.io_bytes).sum()
    }
}

/// Metrics of a direction that `ioscope compare` knows, in its order.
pub const METRICS: &[&str] = &[
    "bw",
    "iops",
    "lat_mean",
    "clat_mean",
    "clat_p50",
    "clat_p90",
    "clat_p99",
    "clat_p99.9",
    "clat_p99.99",
];

impl Dir {
    /// The value of one of [`METRICS`]: bw in bytes/s, iops, latencies in ns; `None`
    /// when the document does not report it (a percentile not in its list, no lat_ns).
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "bw" => Some(self.bw_bytes as f64),
            "iops" => Some(self.iops),
            "lat_mean" => self.lat_mean_ns,
            "clat_mean" => self.clat_mean_ns,
            _ => {
                let p: f64 = name.strip_prefix("clat_p")?.parse().ok()?;
                self.clat_pct
                    .iter()
                    .find(|(q, _)| (q - p).abs() < 1e-9)
                    .map(|&(_, ns)| ns as f64)
            }
        }
    }
}

impl GroupDir {
    fn from_stats(g: ioscope_stats::GroupDir) -> GroupDir {
        GroupDir {
            io_bytes: g.io_bytes,
            agg_bw: g.agg_bw,
            min_bw: g.min_bw,
            max_bw: g.max_bw,
            min_run_ms: g.min_run_ms,
            max_run_ms: g.max_run_ms,
        }
    }
}

/// The groups of `jobs`, computed as fio computes its "Run status group" lines: per job
/// bytes * 1000 / runtime, min and max over the group's jobs that moved data. fio's JSON
/// has no group section, so this is the only way to get them from a fio document.
pub fn groups_of(jobs: &[Job]) -> Vec<Group> {
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|id| Group {
            groupid: id,
            dirs: std::array::from_fn(|d| {
                GroupDir::from_stats(ioscope_stats::merge::group_dir(
                    jobs.iter()
                        .filter(|j| j.groupid == id)
                        .map(|j| (j.dirs[d].io_bytes, j.dirs[d].runtime_ms)),
                ))
            }),
        })
        .collect()
}
