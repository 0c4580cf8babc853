//! `--scenario`: 8 random readers, one per priority (prio-ladder) or all at be 4
//! (equal), on one file or device, run through the runner like any job set. Before the
//! run, the device's I/O scheduler is checked: most ignore best-effort levels.

use crate::status::{Eta, Status};
use anyhow::{anyhow, bail, Result};
use ioscope_options::{cli, flags::Parsed};
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
    pub fn from_flags(name: &str, target: PathBuf, p: &Parsed) -> Result<Scenario> {
        let name = match name {
            "prio-ladder" => "prio-ladder",
            "equal" => "equal",
            _ => bail!("--scenario={name}: use prio-ladder or equal"),
        };
        let size = match p.value("size") {
            Some(v) => Some(
                ioscope_options::units::parse_size(v, 1024).map_err(|e| anyhow!("--size: {e}"))?,
            ),
            // A new file needs a size; an existing file or device has one.
            None if !target.exists() => Some(1 << 30),
            None => None,
        };
        let runtime_s = match p.value("runtime") {
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
            ioscheduler: p.value("ioscheduler").map(str::to_string),
        })
    }

    /// fio-style argv: global options first, then one `--name` per reader.
    fn argv(&self, bw_prefix: &str) -> Vec<String> {
        let mut v: Vec<String> = vec![
            format!("--filename={}", self.target.display()),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--direct=1".into(),
            "--ioengine=psync".into(),
            "--time_based".into(),
            format!("--runtime={}", self.runtime_s),
            format!("--write_bw_log={bw_prefix}"),
            "--log_avg_msec=500".into(),
        ];
        if let Some(s) = self.size {
            v.push(format!("--size={s}"));
        }
        if let Some(s) = &self.ioscheduler {
            v.push(format!("--ioscheduler={s}"));
        }
        for i in 0..8u8 {
            let level = if self.name == "equal" { 4 } else { i };
            v.push(format!("--name={}-{i}-be{level}", self.name));
            v.push("--prioclass=2".into());
            v.push(format!("--prio={level}"));
        }
        v
    }

    /// Check the scheduler, run, and hand back the result as a result file would read.
    /// The jobs write bandwidth logs `<bw_prefix>_bw.N.log` (500 ms averages).
    pub fn run(&self, quiet: bool, bw_prefix: &str) -> Result<ResultFile> {
        self.check_scheduler()?;
        let c = cli::parse_args(&self.argv(bw_prefix))?;
        let set = crate::fio::load_jobs(&c)?;
        if !quiet {
            eprintln!(
                "ioscope fairness: {}: 8 random readers (4k, direct, psync) on {} for {} s",
                self.name,
                self.target.display(),
                self.runtime_s
            );
        }
        crate::signals::install();
        let mut status = Status::new(false, Eta::Auto, None);
        let runner = ioscope_runner::Runner::new(Default::default());
        let run = runner.run_set(&set, &mut status)?;
        status.finish();
        // Through the JSON document, so a run and a file are read by the same code.
        let doc = ioscope_report::json::json_value(&run, false);
        Ok(ioscope_results::from_value(&doc, &self.target)?)
    }

    /// Warn when the scheduler in effect for the run ignores best-effort levels; refuse
    /// an --ioscheduler the device does not offer before anything runs.
    fn check_scheduler(&self) -> Result<()> {
        let Some(dev) = device_scheduler(&self.target) else {
            let why = match &self.ioscheduler {
                Some(s) => format!(", so --ioscheduler={s} may change nothing"),
                None => String::new(),
            };
            eprintln!(
                "ioscope fairness: warning: cannot tell the I/O scheduler of {} (no block \
                 device behind it{why}): priorities may be ignored",
                self.target.display()
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
            eprintln!(
                "ioscope fairness: warning: {} uses the {effective} I/O scheduler, which ignores \
                 best-effort priority levels: expect no ordering by prio (bfq honours them: \
                 --ioscheduler=bfq)",
                dev.disk
            );
        }
        Ok(())
    }
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
    let disk = ioscope_runner::disk::whole_disk(ioscope_runner::safety::dev_numbers(devnum))?;
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
