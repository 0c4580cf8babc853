//! Whether the kernel keeps a job's writes to a zone in order on a zoned block device.
//! From 6.10 on the block layer does (zone write plugging), whatever the scheduler;
//! before, only mq-deadline did (zone write locking), and with any other scheduler
//! writes to a zone at a depth above 1 can reach the device out of order and fail
//! (Zone Invalid Write): seen on the rig's 6.1 guest, whose ZNS namespace comes up with
//! scheduler none, one run in 20 of two jobs writing at depth 4, with fio 3.42 as with
//! ioscope. fio says nothing of it; ioscope warns, naming what to change.

use super::zoned::Zoned;
use crate::observe::Observer;
use crate::plan::Resolved;
use crate::setup::files::JobFile;
use crate::sys::zoned::ZoneDev;

/// Warn of a job whose writes to a zone the kernel may reorder: once, for its first
/// clone.
pub(super) fn warn(
    clone: u32,
    job: &Resolved,
    zoned: Option<&Zoned>,
    files: &[JobFile],
    obs: &mut dyn Observer,
) {
    if clone != 0 {
        return;
    }
    if let Some(w) = warning(job, zoned, files) {
        obs.warning(&w);
    }
}

/// The warning for a job whose writes to a zone the kernel may reorder, or None.
fn warning(job: &Resolved, zoned: Option<&Zoned>, files: &[JobFile]) -> Option<String> {
    let o = &job.opts;
    let depth = if job.sync { 1 } else { o.iodepth };
    if !job.access.writes || depth < 2 || zoned?.dev != ZoneDev::Block {
        return None;
    }
    let [f] = files else { return None };
    let disk = crate::sys::disk::whole_disk(f.dev)?;
    let release = crate::sys::meta::kernel_release();
    let sched = match &o.ioscheduler {
        Some(s) => s.clone(),
        None => crate::sys::zoned::scheduler(&disk)?,
    };
    if plugs_zone_writes(&release) || locks_zones(&sched) {
        return None;
    }
    Some(format!(
        "ioscope: job '{}': zonemode=zbd: {} ({disk}) has I/O scheduler {sched}, and before \
         6.10 (zone write plugging) the kernel ({release}) keeps a zone's writes in order only \
         with mq-deadline: writes at iodepth={depth} may reach a zone out of order and fail \
         (Zone Invalid Write); use ioscheduler=mq-deadline or iodepth=1",
        o.name,
        f.path.display()
    ))
}

/// The kernel `release` (uname -r) plugs zone writes: 6.10 or later.
fn plugs_zone_writes(release: &str) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) >= (6, 10)
}

/// The scheduler locks a zone's writes (mq-deadline; "deadline" is its old alias).
fn locks_zones(sched: &str) -> bool {
    matches!(sched, "mq-deadline" | "deadline")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_write_plugging_came_in_6_10() {
        assert!(!plugs_zone_writes("6.1.0-40-amd64"));
        assert!(!plugs_zone_writes("5.15.0"));
        assert!(!plugs_zone_writes("6.9.12"));
        assert!(plugs_zone_writes("6.10.0"));
        assert!(plugs_zone_writes("6.12.57+deb13-amd64"));
        assert!(plugs_zone_writes("7.0-rc1"));
        assert!(!plugs_zone_writes(""));
    }

    #[test]
    fn only_mq_deadline_locks_zones() {
        assert!(locks_zones("mq-deadline"));
        assert!(locks_zones("deadline"));
        assert!(!locks_zones("none"));
        assert!(!locks_zones("bfq"));
        assert!(!locks_zones("kyber"));
    }
}
