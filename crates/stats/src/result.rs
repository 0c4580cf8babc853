//! Results as plain data: what a job, a group and a run measured. The runner fills
//! these; report writers (normal, terse, json, json+) only read them.

use crate::hist::Histogram;
use crate::lat::{LatStat, LatTrack};
use crate::sample::SampleStat;
use serde::{Deserialize, Serialize};

/// Directions with data: read, write, trim.
pub const DATA_DIRS: usize = 3;
pub const DIR_NAMES: [&str; DATA_DIRS] = ["read", "write", "trim"];

/// Latency of one I/O priority (ioprio value: class << 13 | level).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioStat {
    pub ioprio: u16,
    pub stat: LatStat,
    pub hist: Histogram,
}

impl PrioStat {
    pub fn class(&self) -> u16 {
        self.ioprio >> 13
    }
    pub fn level(&self) -> u16 {
        self.ioprio & 7
    }
    /// The priority hint (bits 3..12 of the ioprio: command duration limits).
    pub fn hint(&self) -> u16 {
        (self.ioprio >> 3) & 0x3ff
    }
}

/// One direction of one job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DirStats {
    pub io_bytes: u64,
    /// I/Os completed (fio's total_ios).
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub slat: LatTrack,
    pub clat: LatTrack,
    pub lat: LatTrack,
    /// A paced job's latency from when each I/O was due by its rate's schedule to its
    /// completion (queueing behind a slow device included); a histogram only when the
    /// job is paced.
    #[serde(default)]
    pub schedlat: LatTrack,
    /// Per-priority clat (or lat with lat_percentiles), when the job tracks priorities.
    pub prios: Vec<PrioStat>,
    /// Bandwidth samples in KiB/s (every bwavgtime).
    pub bw: SampleStat,
    /// IOPS samples (every iopsavgtime).
    pub iops: SampleStat,
    /// Time this direction ran, ms (the job's runtime for every direction, as fio).
    pub runtime_ms: u64,
}

impl DirStats {
    /// Bandwidth in bytes/s over the runtime.
    pub fn bw_bytes(&self) -> u64 {
        if self.runtime_ms == 0 {
            0
        } else {
            (self.io_bytes as u128 * 1000 / self.runtime_ms as u128) as u64
        }
    }
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }
    /// Priorities with samples, for display: only when two or more have samples.
    pub fn shown_prios(&self) -> &[PrioStat] {
        if self.prios.iter().filter(|p| p.stat.n > 0).count() >= 2 {
            &self.prios
        } else {
            &[]
        }
    }
}

/// fsync/fdatasync issued by the job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SyncStats {
    pub total_ios: u64,
    pub lat: LatTrack,
}

/// CPU use of the job's thread.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    /// User and system CPU time in seconds.
    pub usr_s: f64,
    pub sys_s: f64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

/// Settings of a job that reports need in order to print it as fio would.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobInfo {
    /// rw mode as fio prints it (`randrw`).
    pub rw: String,
    /// (min, max) block size per direction.
    pub bs: [(u64, u64); DATA_DIRS],
    pub ioengine: String,
    pub iodepth: u32,
    /// Synchronous engine: no slat lines.
    pub sync_engine: bool,
    pub slat_enabled: bool,
    pub clat_enabled: bool,
    pub lat_enabled: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentile_list: Vec<f64>,
    pub kb_base: u32,
    /// 0 auto, 8 bytes, 1 bits.
    pub unit_base: u32,
    pub significant_figures: u32,
    /// 0 none, 1 mixed, 2 both.
    pub unified_rw_reporting: u32,
    pub continue_on_error: bool,
    /// Options the user set, canonical names, as written (JSON "job options").
    pub options: Vec<(String, String)>,
    pub description: Option<String>,
    /// Files/devices used (for disk stats).
    pub files: Vec<String>,
    /// latency_target's search, when the job had one.
    #[serde(default)]
    pub latency_target: Option<LatencyTarget>,
    /// A metadata engine (filecreate, filestat, ...): the clat samples are the file
    /// operations, and, as fio's fake I/O, the blocks have no latency distribution.
    #[serde(default)]
    pub fake_io: bool,
}

/// latency_target, latency_window, latency_percentile, and the depth the search ended at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
    pub depth: u32,
}

/// One job's (or, with group_reporting, one group's merged) results.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub groupid: u32,
    /// Number of jobs merged into this result.
    pub jobs: u32,
    /// errno of the error that ended the job, 0 if none.
    pub error: i32,
    /// Description of that error (e.g. "No space left on device: write offset=0, buflen=4096").
    pub error_text: Option<String>,
    /// continue_on_error counts.
    /// The error was tolerated (continue_on_error, ignore_error): reported as the
    /// job's err, as fio does, but the job did not fail.
    pub error_tolerated: bool,
    pub total_err: u64,
    pub first_error: i32,
    /// Thread id of the job.
    pub pid: u32,
    /// Wall-clock start, ms since the Unix epoch.
    pub start_unix_ms: u64,
    /// The JSON's job_start: ms on the job_start_clock_id clock (0: start_unix_ms).
    #[serde(default)]
    pub job_start_ms: u64,
    /// Seconds since the run started when the job ended.
    pub elapsed_s: u64,
    /// Measured runtime of the job, ms.
    pub runtime_ms: u64,
    pub dirs: [DirStats; DATA_DIRS],
    pub sync: SyncStats,
    pub cpu: CpuUsage,
    /// Counts of submissions by queue depth bucket: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
    pub io_depth: [u64; 7],
    /// Counts of submit calls by batch size bucket: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
    pub submit: [u64; 7],
    /// Counts of reap calls by completions bucket (same buckets as submit).
    pub complete: [u64; 7],
    pub info: JobInfo,
    /// Steady-state detection (steadystate / ss_dur), when the job asked for it.
    pub steadystate: Option<SteadyState>,
    /// Data verification (verify=), when the job verified.
    pub verify: Option<VerifyCounts>,
    /// `--profile=act`'s latency slices, for the jobs act defines.
    #[serde(default)]
    pub act: Option<crate::act::ActSlices>,
    /// block_error_percentiles: the state and trims of each block of the job's file.
    #[serde(default)]
    pub block: Option<crate::block::BlockStates>,
    /// zonemode=zbd: zones the job reset (fio's "zone_resets").
    #[serde(default)]
    pub zone_resets: Option<u64>,
    /// Data placement (fdp): the writes of each placement identifier, by identifier.
    #[serde(default)]
    pub placement: Option<Vec<Placed>>,
}

/// The writes that carried one data placement identifier (ioscope's; fio has none).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placed {
    /// The placement identifier the writes carried (the NVMe DSPEC value).
    pub plid: u16,
    pub ios: u64,
    pub bytes: u64,
}

impl Placed {
    /// Add `ios` writes of `bytes` under `plid` to a list kept in identifier order.
    pub fn add(list: &mut Vec<Placed>, plid: u16, ios: u64, bytes: u64) {
        match list.binary_search_by_key(&plid, |p| p.plid) {
            Ok(i) => {
                list[i].ios += ios;
                list[i].bytes += bytes;
            }
            Err(i) => list.insert(i, Placed { plid, ios, bytes }),
        }
    }
}

/// Blocks a job verified and the failures it found (fio reports neither count).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VerifyCounts {
    pub blocks: u64,
    pub errors: u64,
}

/// What steady-state detection saw (fio's JSON "steadystate" object).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SteadyState {
    /// The criterion as fio prints it, e.g. "iops:5.000000%".
    pub ss: String,
    /// Criterion name: iops, iops_slope, bw, bw_slope, lat or lat_slope.
    pub metric: String,
    pub duration_s: u64,
    pub attained: bool,
    /// The window filled (fio's ring was full when the job ended).
    #[serde(default)]
    pub full: bool,
    /// The criterion's value over the last window (percent of the mean if `pct`).
    pub criterion: f64,
    pub pct: bool,
    pub max_deviation: f64,
    pub slope: f64,
    pub iops_mean: u64,
    /// Bytes per second.
    pub bw_mean: u64,
    /// The window's samples, oldest first: IOPS and bytes/s.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
    /// steadystate=lat|lat_slope: the mean completion latency (ns) over the window,
    /// and each interval's (fio 3.42's lat_mean, lat_ns); None and empty otherwise.
    #[serde(default)]
    pub lat_mean: Option<u64>,
    #[serde(default)]
    pub lat: Vec<u64>,
}

impl JobResult {
    /// clat of all directions together (fio's `lat (nsec/usec/msec)` bucket lines).
    pub fn clat_all(&self) -> Histogram {
        let mut h = Histogram::new();
        if self.info.fake_io {
            return h;
        }
        for d in &self.dirs {
            if let Some(x) = &d.clat.hist {
                h.merge(x);
            }
        }
        h
    }
}

/// One direction of a reporting group ("Run status group N").
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate bandwidth bytes/s: Σio / max runtime.
    pub agg_bw: u64,
    /// Slowest and fastest job, bytes/s.
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupResult {
    pub groupid: u32,
    pub kb_base: u32,
    pub unit_base: u32,
    pub dirs: [GroupDir; DATA_DIRS],
}

/// Utilisation of one block device over the run (/sys/block/DEV/stat deltas).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    /// 512-byte sectors read and written (fio 3.42's `sectors=`).
    #[serde(default)]
    pub read_sectors: u64,
    #[serde(default)]
    pub write_sectors: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent of wall time the device was busy.
    pub util: f64,
}

/// Facts about where and how the run happened (for A/B comparisons).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunMeta {
    pub ioscope_version: String,
    pub kernel: String,
    pub cpu_model: String,
    pub hostname: String,
    /// Clock used for latencies ("tsc" or "clock_gettime") and TSC rate in Hz.
    pub clock: String,
    pub tsc_hz: u64,
    /// The run was stopped early (a signal or a caller's stop request): the results
    /// cover only the I/O done until then.
    pub interrupted: bool,
    /// The signal that stopped it, when known ("SIGINT", "SIGTERM").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The version the reports name where fio names its own ("fio-3.42" when ioscope
    /// runs as fio); `None`: ioscope's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_version: Option<String>,
    /// The jobs whose completions were polled (hipri on a disk with poll queues,
    /// checked before the run), by name, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub polled: Vec<String>,
}

/// Everything a run produced.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// One entry per job, or per group where group_reporting merged them.
    pub jobs: Vec<JobResult>,
    pub groups: Vec<GroupResult>,
    pub disks: Vec<DiskUtil>,
    /// Run start, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// Options set in [global] / before the first --name (JSON "global options").
    pub global_options: Vec<(String, String)>,
    pub meta: RunMeta,
}
