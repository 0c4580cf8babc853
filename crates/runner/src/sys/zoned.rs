//! Zoned block devices (`zonemode=zbd`): the kernel's zone model of a disk (sysfs
//! `queue/zoned`, its zone size and open/active limits), its zones as the device
//! reports them (BLKREPORTZONE), and the zone operations the runner issues itself
//! (BLKRESETZONE, BLKFINISHZONE); on a zoned namespace's generic device
//! (io_uring_cmd), the same through NVMe passthrough. Offsets and lengths here are
//! bytes; the kernel's are 512-byte sectors, NVMe's its blocks.

use std::io;
use std::os::fd::AsRawFd;

const SECTOR: u64 = 512;
// _IOWR(0x12, 130, struct blk_zone_report), _IOW(0x12, 131, struct blk_zone_range).
const BLKREPORTZONE: libc::c_ulong = 0xC010_1282;
const BLKRESETZONE: libc::c_ulong = 0x4010_1283;
/// _IOW(0x12, 136, struct blk_zone_range).
const BLKFINISHZONE: libc::c_ulong = 0x4010_1288;
/// blk_zone_report.flags: the zones' capacity field is valid.
const BLK_ZONE_REP_CAPACITY: u32 = 1;
/// Zones asked for per BLKREPORTZONE call.
const BATCH: usize = 256;

/// A zone's kind (blk_zone.type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneKind {
    /// Written anywhere, no write pointer.
    Conventional,
    /// Sequential write required (host-managed) or preferred (host-aware).
    Sequential,
}

/// A zone's condition (blk_zone.cond), as `blkzone report` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneCond {
    NotWp,
    Empty,
    ImplicitOpen,
    ExplicitOpen,
    Closed,
    ReadOnly,
    Full,
    Offline,
}

impl ZoneCond {
    fn from_raw(c: u8) -> ZoneCond {
        match c {
            0x1 => ZoneCond::Empty,
            0x2 => ZoneCond::ImplicitOpen,
            0x3 => ZoneCond::ExplicitOpen,
            0x4 => ZoneCond::Closed,
            0xd => ZoneCond::ReadOnly,
            0xe => ZoneCond::Full,
            0xf => ZoneCond::Offline,
            _ => ZoneCond::NotWp,
        }
    }
}

/// One zone as the device reports it, in bytes from the device's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub len: u64,
    /// Writable bytes from `start` (the zone capacity; `len` where not reported).
    pub capacity: u64,
    pub wp: u64,
    pub kind: ZoneKind,
    pub cond: ZoneCond,
}

impl Zone {
    /// An empty sequential zone (fio's emulated zones over a file or device that has
    /// none).
    pub fn empty(start: u64, len: u64, capacity: u64) -> Zone {
        Zone {
            start,
            len,
            capacity,
            wp: start,
            kind: ZoneKind::Sequential,
            cond: ZoneCond::Empty,
        }
    }
}

/// Where a job's zone operations go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneDev {
    /// fio's zones emulated over a file or device without any: nothing to issue.
    Emulated,
    /// A zoned block device: the kernel's zone ioctls.
    Block,
    /// A zoned namespace's generic device: Zone Management Send, one zone at a time.
    Nvme {
        nsid: u32,
        lba_shift: u32,
        zone_bytes: u64,
    },
}

/// What the job loop asks of zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAct {
    Reset,
    Finish,
}

/// Reset or finish the zones in [offset, offset + len) of the device open as `f`: a
/// reset returns their write pointers to their starts, a finish makes them full.
pub fn act(dev: ZoneDev, f: &std::fs::File, act: ZoneAct, offset: u64, len: u64) -> io::Result<()> {
    match dev {
        ZoneDev::Emulated => Ok(()),
        ZoneDev::Block => match act {
            ZoneAct::Reset => range_op(f, BLKRESETZONE, offset, len),
            ZoneAct::Finish => range_op(f, BLKFINISHZONE, offset, len),
        },
        ZoneDev::Nvme {
            nsid,
            lba_shift,
            zone_bytes,
        } => {
            use ioscope_engine::uring_cmd::zns::{self, ZoneAction};
            let action = match act {
                ZoneAct::Reset => ZoneAction::Reset,
                ZoneAct::Finish => ZoneAction::Finish,
            };
            let step = zone_bytes.max(1) as usize;
            for start in (offset..offset + len).step_by(step) {
                zns::act(f.as_raw_fd(), nsid, start >> lba_shift, action)?;
            }
            Ok(())
        }
    }
}

/// The zones of a zoned namespace open as `f` (its generic device), in bytes.
pub fn report_nvme(f: &std::fs::File, nsid: u32, lba_shift: u32) -> io::Result<Vec<Zone>> {
    let zones = ioscope_engine::uring_cmd::zns::report(f.as_raw_fd(), nsid)?;
    let size = match zones.as_slice() {
        [a, b, ..] => b.slba - a.slba,
        _ => zones.first().map_or(0, |z| z.cap),
    };
    // A full zone's write pointer is not valid in NVMe (QEMU reports all ones): the
    // kernel puts it at the zone's end, and so does this.
    let wp = |z: &ioscope_engine::uring_cmd::zns::NvmeZone| match z.state {
        0xe => z.slba + size,
        _ if z.wp < z.slba || z.wp > z.slba + size => z.slba + size,
        _ => z.wp,
    };
    Ok(zones
        .iter()
        .map(|z| Zone {
            start: z.slba << lba_shift,
            len: size << lba_shift,
            capacity: z.cap << lba_shift,
            wp: wp(z) << lba_shift,
            kind: match z.sequential {
                true => ZoneKind::Sequential,
                false => ZoneKind::Conventional,
            },
            cond: ZoneCond::from_raw(z.state),
        })
        .collect())
}

/// struct blk_zone.
#[repr(C)]
#[derive(Clone, Copy)]
struct BlkZone {
    start: u64,
    len: u64,
    wp: u64,
    kind: u8,
    cond: u8,
    non_seq: u8,
    reset: u8,
    resv: [u8; 4],
    capacity: u64,
    reserved: [u8; 24],
}

/// struct blk_zone_report followed by room for BATCH zones.
#[repr(C)]
struct Report {
    sector: u64,
    nr_zones: u32,
    flags: u32,
    zones: [BlkZone; BATCH],
}

/// struct blk_zone_range.
#[repr(C)]
struct Range {
    sector: u64,
    nr_sectors: u64,
}

/// The zoned model of the disk `name` (sysfs `queue/zoned`): "host-managed",
/// "host-aware" or "none".
pub fn model(name: &str) -> String {
    sysfs(name, "zoned").unwrap_or_else(|| "none".into())
}

/// The disk's open and active zone limits (0: none reported).
pub fn limits(name: &str) -> (u32, u32) {
    let n = |f| sysfs(name, f).and_then(|s| s.parse().ok()).unwrap_or(0);
    (n("max_open_zones"), n("max_active_zones"))
}

/// The disk's active I/O scheduler (sysfs `queue/scheduler`, the name in brackets).
pub fn scheduler(name: &str) -> Option<String> {
    let all = sysfs(name, "scheduler")?;
    let active = all.split_whitespace().find(|s| s.starts_with('['))?;
    Some(active.trim_matches(|c| c == '[' || c == ']').to_string())
}

fn sysfs(name: &str, file: &str) -> Option<String> {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/queue/{file}")).ok()?;
    Some(s.trim().to_string())
}

/// The zone that starts at `start` on the device open as `f`, as the device reports
/// it now (recover_zbd_write_error reads its write pointer after failed writes).
pub fn zone_at(dev: ZoneDev, f: &std::fs::File, start: u64) -> io::Result<Zone> {
    let zones = match dev {
        ZoneDev::Emulated => return Err(io::Error::from_raw_os_error(libc::ENOTTY)),
        ZoneDev::Block => report_from(f, start / SECTOR, 1)?,
        ZoneDev::Nvme {
            nsid, lba_shift, ..
        } => report_nvme(f, nsid, lba_shift)?,
    };
    zones
        .into_iter()
        .find(|z| z.start == start)
        .ok_or_else(|| io::Error::other(format!("no zone starts at {start}")))
}

/// Move a zone's write pointer from `wp` to `end` by writing there: `data` (the
/// `end - wp` bytes a failed write had for that range, in a buffer fit for direct
/// I/O) or, without, zeros (a zero-range fallocate, Write Zeroes on the namespace).
pub fn move_wp(
    dev: ZoneDev,
    f: &std::fs::File,
    (wp, end): (u64, u64),
    data: Option<&[u8]>,
) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = end.saturating_sub(wp);
    match (dev, data) {
        (_, _) if len == 0 => Ok(()),
        (ZoneDev::Emulated, _) => Ok(()),
        (ZoneDev::Block, Some(d)) => f.write_all_at(d, wp),
        (ZoneDev::Block, None) => {
            // SAFETY: fallocate on an fd the job owns; no memory is passed.
            let r = unsafe {
                libc::fallocate(
                    f.as_raw_fd(),
                    libc::FALLOC_FL_ZERO_RANGE,
                    wp as libc::off_t,
                    len as libc::off_t,
                )
            };
            match r {
                0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
        (
            ZoneDev::Nvme {
                nsid, lba_shift, ..
            },
            d,
        ) => ioscope_engine::uring_cmd::zns::write_from(
            f.as_raw_fd(),
            nsid,
            (wp >> lba_shift, len >> lba_shift),
            d,
        ),
    }
}

/// Every zone of the device open as `f`, in order.
pub fn report(f: &std::fs::File) -> io::Result<Vec<Zone>> {
    report_from(f, 0, usize::MAX)
}

/// At most `max` zones of the device open as `f`, from the one at `sector`.
fn report_from(f: &std::fs::File, mut sector: u64, max: usize) -> io::Result<Vec<Zone>> {
    let mut out = Vec::new();
    let mut rep = Box::new(Report {
        sector: 0,
        nr_zones: 0,
        flags: 0,
        zones: [BlkZone {
            start: 0,
            len: 0,
            wp: 0,
            kind: 0,
            cond: 0,
            non_seq: 0,
            reset: 0,
            resv: [0; 4],
            capacity: 0,
            reserved: [0; 24],
        }; BATCH],
    });
    while out.len() < max {
        rep.sector = sector;
        rep.nr_zones = BATCH.min(max - out.len()) as u32;
        rep.flags = 0;
        // SAFETY: `rep` is a blk_zone_report header followed by room for `nr_zones`
        // zones, which the kernel fills (and lowers nr_zones to what it wrote).
        let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKREPORTZONE, &mut *rep as *mut Report) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (rep.nr_zones as usize).min(BATCH);
        if n == 0 {
            return Ok(out);
        }
        let with_cap = rep.flags & BLK_ZONE_REP_CAPACITY != 0;
        for z in &rep.zones[..n] {
            out.push(Zone {
                start: z.start * SECTOR,
                len: z.len * SECTOR,
                capacity: if with_cap { z.capacity } else { z.len } * SECTOR,
                wp: z.wp * SECTOR,
                kind: match z.kind {
                    1 => ZoneKind::Conventional,
                    _ => ZoneKind::Sequential,
                },
                cond: ZoneCond::from_raw(z.cond),
            });
        }
        let last = &rep.zones[n - 1];
        sector = last.start + last.len.max(1);
    }
    Ok(out)
}

fn range_op(f: &std::fs::File, op: libc::c_ulong, offset: u64, len: u64) -> io::Result<()> {
    let range = Range {
        sector: offset / SECTOR,
        nr_sectors: len / SECTOR,
    };
    // SAFETY: the ioctl reads one blk_zone_range, which lives across the call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), op, &range as *const Range) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_structures_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<BlkZone>(), 64);
        assert_eq!(std::mem::size_of::<Range>(), 16);
        assert_eq!(std::mem::offset_of!(Report, zones), 16);
    }

    #[test]
    fn a_file_is_no_zoned_device() {
        let f = tempfile::tempfile().expect("tempfile");
        let e = report(&f).expect_err("a regular file has no zones");
        assert_eq!(e.raw_os_error(), Some(libc::ENOTTY), "{e}");
        assert_eq!(model("no-such-disk"), "none");
        assert_eq!(limits("no-such-disk"), (0, 0));
    }
}
