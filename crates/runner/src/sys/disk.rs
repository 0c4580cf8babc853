//! Block-device utilisation ("Disk stats"): /sys/block/DEV/stat before and after the run,
//! for the whole disks behind the job files (partitions resolve to their disk).

use ioscope_stats::DiskUtil;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Size in bytes of the block device open as `f` (BLKGETSIZE64).
pub(crate) fn block_size(f: &std::fs::File) -> std::io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: the ioctl writes one u64 to `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// Kernel name of the whole disk holding device (major, minor).
pub fn whole_disk(dev: (u32, u32)) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{}:{}", dev.0, dev.1)).ok()?;
    let name = link.file_name()?.to_string_lossy().into_owned();
    let sys = format!("/sys/class/block/{name}");
    if std::path::Path::new(&format!("{sys}/partition")).exists() {
        let parent = std::fs::canonicalize(&sys).ok()?;
        return Some(parent.parent()?.file_name()?.to_string_lossy().into_owned());
    }
    Some(name)
}

/// Whether the block device `rdev` is a partition (sysfs has its `partition` file).
pub fn is_partition(rdev: u64) -> bool {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    std::path::Path::new(&format!("/sys/dev/block/{maj}:{min}/partition")).exists()
}

/// Whether the disk behind device (major, minor) completes polled I/O (io_uring's
/// IOPOLL, hipri): its `queue/io_poll` is 1. Why not, otherwise.
pub fn polls(dev: (u32, u32)) -> Result<(), String> {
    let Some(disk) = whole_disk(dev) else {
        return Err(format!(
            "it is on no block device ({}:{}), so nothing can poll for its completions",
            dev.0, dev.1
        ));
    };
    let path = format!("/sys/block/{disk}/queue/io_poll");
    match std::fs::read_to_string(&path).map(|s| s.trim().to_string()) {
        Ok(v) if v == "1" => Ok(()),
        Ok(v) => Err(format!(
            "{path} is {v}: {disk} has no poll queues (for NVMe, load the driver with \
             poll_queues=N)"
        )),
        Err(e) => Err(format!("{path}: {e}")),
    }
}

#[derive(Clone, Copy, Default)]
struct Stat {
    rios: u64,
    rsect: u64,
    rmerge: u64,
    rticks: u64,
    wios: u64,
    wsect: u64,
    wmerge: u64,
    wticks: u64,
    io_ticks: u64,
    in_queue: u64,
}

fn read_stat(disk: &str) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/sys/block/{disk}/stat")).ok()?;
    let v: Vec<u64> = s
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 11 {
        return None;
    }
    Some(Stat {
        rios: v[0],
        rmerge: v[1],
        rsect: v[2],
        rticks: v[3],
        wios: v[4],
        wmerge: v[5],
        wsect: v[6],
        wticks: v[7],
        io_ticks: v[9],
        in_queue: v[10],
    })
}

/// Snapshot of the disks at run start.
pub struct DiskWatch {
    disks: Vec<(String, Stat)>,
    start: Instant,
}

impl DiskWatch {
    pub fn start(devs: &[(u32, u32)]) -> Self {
        let mut names: Vec<String> = devs.iter().filter_map(|&d| whole_disk(d)).collect();
        names.sort();
        names.dedup();
        let disks = names
            .into_iter()
            .filter_map(|n| read_stat(&n).map(|s| (n, s)))
            .collect();
        DiskWatch {
            disks,
            start: Instant::now(),
        }
    }

    pub fn finish(&self) -> Vec<DiskUtil> {
        let wall_ms = self.start.elapsed().as_millis().max(1) as f64;
        self.disks
            .iter()
            .filter_map(|(n, a)| {
                let b = read_stat(n)?;
                Some(DiskUtil {
                    name: n.clone(),
                    read_ios: b.rios.saturating_sub(a.rios),
                    write_ios: b.wios.saturating_sub(a.wios),
                    read_sectors: b.rsect.saturating_sub(a.rsect),
                    write_sectors: b.wsect.saturating_sub(a.wsect),
                    read_merges: b.rmerge.saturating_sub(a.rmerge),
                    write_merges: b.wmerge.saturating_sub(a.wmerge),
                    read_ticks: b.rticks.saturating_sub(a.rticks),
                    write_ticks: b.wticks.saturating_sub(a.wticks),
                    in_queue: b.in_queue.saturating_sub(a.in_queue),
                    util: (100.0 * b.io_ticks.saturating_sub(a.io_ticks) as f64 / wall_ms)
                        .min(100.0),
                })
            })
            .collect()
    }
}
