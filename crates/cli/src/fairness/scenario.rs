//! `--scenario`: 8 random readers, one per priority (prio-ladder), all at be 4 (equal),
//! or each in a blkio cgroup of its own with weights 800, 700 … 100 (cgroup-weights), on
//! one file or device, run through the runner like any job set. Before the run, the
//! device's I/O scheduler is checked: most ignore best-effort levels and cgroup weights.

use crate::term::status::{Eta, Status};
use anyhow::{anyhow, bail, Result};

use ioscope_results::ResultFile;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

pub struct Scenario {
    /// prio-ladder or equal.
    name: &'static str,
    pub target: PathBuf,
    /// Bytes, or `None` for the file's or device's own size.
    size: Option<u64>,
    runtime_s: u64,
    ioscheduler: Option<String>,
}

/// Schedulers that do not order best-effort levels: mq-deadline and kyber look at the
/// class at most, none at nothing. bfq (and cfq on old kernels) honour the levels.
const IGNORE_LEVELS: &[&str] = &["mq-deadline", "kyber", "none", "deadline", "noop"];

impl Scenario {
    pub fn from_flags(
        name: &str,
        target: PathBuf,
        size: Option<&str>,
        runtime: Option<&str>,
        ioscheduler: Option<String>,
    ) -> Result<Scenario> {
        let name = match name {
            "prio-ladder" => "prio-ladder",
            "equal" => "equal",
            "cgroup-weights" => "cgroup-weights",
            _ => bail!("--scenario={name}: use prio-ladder, equal or cgroup-weights"),
        };
        let size = match size {
            Some(v) => Some(
                ioscope_options::units::parse_size(v, 1024).map_err(|e| anyhow!("--size: {e}"))?,
            ),
            // A new file needs a size; an existing file or device has one.
            None if !target.exists() => Some(1 << 30),
            None => None,
        };
        let runtime_s = match runtime {
            Some(v) => (ioscope_options::units::parse_time_us(v, 1_000_000)
                .map_err(|e| anyhow!("--runtime: {e}"))?
                / 1_000_000)
                .max(1),
            None => 10,
        };
        Ok(Scenario {
            name,
            target,
            size,
            runtime_s,
            ioscheduler,
        })
    }

    /// fio-style argv: global options first, then one `--name` per reader.
    fn argv(&self, bw_prefix: &str) -> Vec<String> {
        let mut v: Vec<String> = vec![
            format!("--filename={}", self.target.display()),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--direct=1".into(),
            format!("--ioengine={}", self.engine()),
            "--time_based".into(),
            format!("--runtime={}", self.runtime_s),
            format!("--write_bw_log={bw_prefix}"),
            "--log_avg_msec=500".into(),
        ];
        if let Some(s) = self.size {
            v.push(format!("--size={s}"));
        }
        if self.name == "cgroup-weights" {
            // Groups share by weight when their queues stay busy: 8 in flight each.
            v.push("--iodepth=8".into());
        }
        if let Some(s) = &self.ioscheduler {
            v.push(format!("--ioscheduler={s}"));
        }
        for i in 0..8u8 {
            if self.name == "cgroup-weights" {
                // One group per reader, named by this process so runs never share one.
                let w = 800 - 100 * u32::from(i);
                v.push(format!("--name={}-{i}-w{w}", self.name));
                v.push(format!("--cgroup=ioscope-{}-w{w}", std::process::id()));
                v.push(format!("--cgroup_weight={w}"));
                continue;
            }
            let level = if self.name == "equal" { 4 } else { i };
            v.push(format!("--name={}-{i}-be{level}", self.name));
            v.push("--prioclass=2".into());
            v.push(format!("--prio={level}"));
        }
        v
    }

    /// bfq shares between cgroups by weight when each group keeps requests queued:
    /// libaio at depth 8 there; one synchronous read at a time (psync) for priorities.
    fn engine(&self) -> &'static str {
        match self.name {
            "cgroup-weights" => "libaio",
            _ => "psync",
        }
    }

    /// The weight model that fits the scenario when --model is not given.
    pub fn default_model(&self) -> Option<ioscope_analysis::Model> {
        (self.name == "cgroup-weights").then_some(ioscope_analysis::Model::IoWeight)
    }

    /// Check the scheduler, run, and hand back the result as a result file would read.
    /// The jobs write bandwidth logs `<bw_prefix>_bw.N.log` (500 ms averages).
    pub fn run(
        &self,
        quiet: bool,
        bw_prefix: &str,
        warnings: &mut Vec<String>,
    ) -> Result<ResultFile> {
        self.check_scheduler(warnings)?;
        let set = crate::fio::jobs::from_argv(&self.argv(bw_prefix))?;
        if !quiet {
            eprintln!(
                "ioscope fairness: {}: 8 random readers (4k, direct, {}) on {} for {} s",
                self.name,
                self.engine(),
                self.target.display(),
                self.runtime_s
            );
        }
        run_jobs(&set, &self.target)
    }

    /// Warn when the scheduler in effect for the run ignores best-effort levels; refuse
    /// an --ioscheduler the device does not offer before anything runs.
    fn check_scheduler(&self, warnings: &mut Vec<String>) -> Result<()> {
        let Some(dev) = device_scheduler(&self.target) else {
            let why = match &self.ioscheduler {
                Some(s) => format!(", so --ioscheduler={s} may change nothing"),
                None => String::new(),
            };
            warn(
                warnings,
                format!(
                    "cannot tell the I/O scheduler of {} (no block device behind it{why}): \
                     priorities may be ignored",
                    self.target.display()
                ),
            );
            return Ok(());
        };
        let effective = match &self.ioscheduler {
            Some(s) if !dev.offered.iter().any(|o| o == s) => bail!(
                "--ioscheduler={s}: {} offers only: {}",
                dev.disk,
                dev.offered.join(" ")
            ),
            Some(s) => s.clone(),
            None => dev.active.clone(),
        };
        if IGNORE_LEVELS.contains(&effective.as_str()) {
            let (what, by) = match self.name {
                "cgroup-weights" => ("cgroup weights", "weight"),
                _ => ("best-effort priority levels", "prio"),
            };
            warn(
                warnings,
                format!(
                    "{} uses the {effective} I/O scheduler, which ignores {what}: expect no \
                     ordering by {by} (bfq honours them: --ioscheduler=bfq)",
                    dev.disk
                ),
            );
        }
        Ok(())
    }
}

/// Run a job set through the runner (Ctrl-C ends it with what was measured) and read
/// the result as a result file would be read.
pub fn run_jobs(set: &ioscope_options::JobSet, origin: &Path) -> Result<ResultFile> {
    crate::term::signals::install();
    let mut status = Status::new(false, Eta::Auto, None);
    let runner = ioscope_runner::Runner::new(Default::default());
    let run = runner.run_set(set, &mut status)?;
    status.finish();
    // Through the JSON document, so a run and a file are read by the same code.
    let doc = ioscope_report::json::json_value(&run, false);
    Ok(ioscope_results::from_value(&doc, origin)?)
}

/// A fio job file given to `ioscope fairness`: its jobs, run as `ioscope FILE` would.
pub fn run_job_file(path: &Path, warnings: &mut Vec<String>) -> Result<ResultFile> {
    let set = crate::fio::jobs::from_argv(&[path.display().to_string()])?;
    if set.jobs.len() < 2 {
        warn(
            warnings,
            format!(
                "{} defines {} job(s); fairness compares several",
                path.display(),
                set.jobs.len()
            ),
        );
    }
    warn_ignored_levels(&set, warnings);
    run_jobs(&set, path)
}

/// A job file whose jobs differ in best-effort level (prio) on a disk whose scheduler
/// ignores levels measures nothing: say so before the run, once per disk.
fn warn_ignored_levels(set: &ioscope_options::JobSet, warnings: &mut Vec<String>) {
    let levels: std::collections::BTreeSet<(u32, u32)> = set
        .jobs
        .iter()
        .map(|j| (j.opts.prioclass.unwrap_or(2), j.opts.prio.unwrap_or(4)))
        .collect();
    let classes: std::collections::BTreeSet<u32> = levels.iter().map(|l| l.0).collect();
    if levels.len() == classes.len() {
        return;
    }
    let mut warned = Vec::new();
    for j in &set.jobs {
        let target = match (&j.opts.filename, &j.opts.directory) {
            (Some(f), _) => PathBuf::from(f.split(':').next().unwrap_or(f)),
            (None, Some(d)) => PathBuf::from(d.split(':').next().unwrap_or(d)).join("x"),
            (None, None) => PathBuf::from("x"),
        };
        let Some(dev) = device_scheduler(&target) else {
            continue;
        };
        let effective = j.opts.ioscheduler.clone().unwrap_or(dev.active.clone());
        if IGNORE_LEVELS.contains(&effective.as_str()) && !warned.contains(&dev.disk) {
            warn(
                warnings,
                format!(
                    "{} uses the {effective} I/O scheduler, which ignores best-effort priority \
                     levels: expect no ordering by prio (bfq honours them: ioscheduler=bfq)",
                    dev.disk
                ),
            );
            warned.push(dev.disk);
        }
    }
}

/// A warning on stderr, kept for the HTML report too.
fn warn(warnings: &mut Vec<String>, msg: String) {
    eprintln!("ioscope fairness: warning: {msg}");
    warnings.push(msg);
}

/// A job file, not a result: a `[section]` line and no line starting with '{' (fio and
/// ioscope print a result document's braces on lines of their own, after any notices).
pub fn is_job_file(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let lines = || text.lines().map(str::trim);
    !lines().any(|l| l.starts_with('{')) && lines().any(|l| l.starts_with('[') && l.ends_with(']'))
}

/// The I/O scheduler of the whole disk behind a file or device.
pub struct DeviceScheduler {
    pub disk: String,
    pub active: String,
    pub offered: Vec<String>,
}

/// Found as the runner finds it: the device numbers of the file (or of its directory
/// when it does not exist yet), resolved to the whole disk in /sys.
pub fn device_scheduler(target: &Path) -> Option<DeviceScheduler> {
    let md = std::fs::metadata(target).or_else(|_| {
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::metadata(parent)
    });
    let md = md.ok()?;
    let devnum = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let disk = ioscope_runner::device::whole_disk(ioscope_runner::device::dev_numbers(devnum))?;
    let text = std::fs::read_to_string(format!("/sys/block/{disk}/queue/scheduler")).ok()?;
    let mut active = String::new();
    let offered = text
        .split_whitespace()
        .map(|s| {
            let name = s.trim_matches(|c| c == '[' || c == ']').to_string();
            if s.starts_with('[') {
                active = name.clone();
            }
            name
        })
        .collect();
    Some(DeviceScheduler {
        disk,
        active,
        offered,
    })
}
