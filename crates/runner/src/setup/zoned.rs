//! `zonemode=zbd` at setup: the job's file is a zoned block device, a zoned
//! namespace's generic device (io_uring_cmd, through NVMe passthrough), or a regular file
//! or device whose zones fio emulates (zonesize, zonecapacity: every zone sequential,
//! empty when the run starts, then as the run's earlier jobs left it, as in fio); its
//! region is cut to whole zones (offset rounded up, size down, as fio does), a device's zones are read from it, and fio's
//! zone options are checked against its geometry and limits. The resets and finishes
//! a job needs are issued by the job loop (see [`crate::workload::zbd`]); a job that
//! verifies what it writes has the zones of its region with data reset before its
//! first write, as fio does.

use crate::error::RunError;
use crate::plan::Resolved;
use crate::setup::files::JobFile;
use crate::sys::zoned::{self, Zone, ZoneDev, ZoneKind};
use crate::workload::zbd::{restore, KeptZones, Slot, ZoneInfo, ZoneMap, ZoneRules};
use ioscope_options::{JobOptions, ZoneMode};

/// A job's zones, as the job loop takes them.
pub(crate) struct Zoned {
    pub map: ZoneMap,
    /// Where its zone operations go (nowhere for zones emulated over a file or device
    /// that has none).
    pub dev: ZoneDev,
    /// The job writes or trims: fio reports its zone resets.
    pub report_resets: bool,
}

/// The zones of the job's region, or None without zonemode=zbd.
pub(crate) fn prepare(
    job: &Resolved,
    files: &mut [JobFile],
    diskless: bool,
    kept: &KeptZones,
) -> Result<Option<Zoned>, RunError> {
    let (o, access) = (&job.opts, job.access);
    let writes = access.writes;
    if o.zonemode != ZoneMode::Zbd || diskless {
        return Ok(None);
    }
    let err = |m: String| RunError::Setup(format!("job '{}': zonemode=zbd: {m}", o.name));
    let [f] = files else {
        return Err(err(format!(
            "{} files: zoned I/O over several files is not supported yet (use one file)",
            files.len()
        )));
    };
    let disk = f
        .is_block
        .then(|| crate::sys::disk::whole_disk(f.dev))
        .flatten()
        .filter(|d| matches!(zoned::model(d).as_str(), "host-managed" | "host-aware"));
    let cannot = |e: std::io::Error| err(format!("{}: cannot report zones: {e}", f.path.display()));
    let zns = disk.is_none().then(|| zoned_namespace(f)).flatten();
    let (all, max_open, mut dev) = match (&disk, zns) {
        (Some(disk), _) => {
            if writes && !o.direct {
                return Err(err("direct I/O is mandatory for writing to zoned drives \
                                (direct=1)"
                    .into()));
            }
            let all = zoned::report(&f.file).map_err(cannot)?;
            let limit = open_limit(o, block_open_limit(disk, f)).map_err(&err)?;
            (all, limit, ZoneDev::Block)
        }
        (None, Some((ns, open))) => {
            let all = zoned::report_nvme(&f.file, ns.nsid, ns.lba_shift).map_err(cannot)?;
            let dev = ZoneDev::Nvme {
                nsid: ns.nsid,
                lba_shift: ns.lba_shift,
                zone_bytes: 0,
            };
            (all, open_limit(o, open).map_err(&err)?, dev)
        }
        (None, None) => (
            emulated(o, f).map_err(&err)?,
            open_limit(o, 0).map_err(&err)?,
            ZoneDev::Emulated,
        ),
    };
    let size = all.first().map_or(0, |z| z.len);
    if let ZoneDev::Nvme { zone_bytes, .. } = &mut dev {
        *zone_bytes = size;
    }
    check_geometry(o, size, &err)?;
    cut_to_zones(f, size).map_err(&err)?;
    let kept = match dev {
        ZoneDev::Emulated => identity(&f.file).map(|id| kept.slot(id)),
        _ => None,
    };
    let mut map = zone_map(o, zones_of_region(&all, f.start, f.len), max_open, kept);
    if writes && job.verify.is_some() {
        map.reset_all();
    }
    Ok(Some(Zoned {
        map,
        dev,
        report_resets: access.writes || access.trims,
    }))
}

/// The job's zones and how it places I/O in them; emulated zones start where the run's
/// jobs before left them (`kept`), and are kept there for those after.
fn zone_map(
    o: &JobOptions,
    mut zones: Vec<ZoneInfo>,
    max_open: u32,
    kept: Option<Slot>,
) -> ZoneMap {
    let rules = ZoneRules {
        max_open,
        job_max_open: o.job_max_open_zones,
        read_beyond_wp: o.read_beyond_wp,
        min_bs: o.min_bs(1).max(1),
        write_remainder: o.write_zone_remainder,
        reset_threshold: o.zone_reset_threshold,
        reset_every: reset_every(o.zone_reset_frequency),
        write_first: o.rw.mode.reads()
            && o.rw.mode.writes()
            && o.rwmixread < 100
            && !o.read_beyond_wp,
        skip: o.zoneskip,
        recover: o.recover_zbd_write_error,
    };
    if let Some(slot) = &kept {
        restore(slot, &mut zones);
    }
    let mut map = ZoneMap::new(zones, rules);
    if let Some(slot) = kept {
        map.keep_in(slot);
    }
    map
}

/// A zoned namespace open through its generic device: its identity and its open zone
/// limit (0: none). None for anything else.
fn zoned_namespace(f: &JobFile) -> Option<(ioscope_engine::uring_cmd::nvme::NsInfo, u32)> {
    use std::os::unix::fs::FileTypeExt;
    let md = f.file.metadata().ok()?;
    if !md.file_type().is_char_device() {
        return None;
    }
    nvme_zone_limit(f)
}

/// An NVMe zoned namespace (its generic device or block device): its identity and the
/// controller's open zone limit (0: none), from Identify.
fn nvme_zone_limit(f: &JobFile) -> Option<(ioscope_engine::uring_cmd::nvme::NsInfo, u32)> {
    use std::os::fd::AsRawFd;
    let fd = f.file.as_raw_fd();
    let ns = ioscope_engine::uring_cmd::nvme::ns_info(fd).ok()?;
    let (open, _active) = ioscope_engine::uring_cmd::zns::limits(fd, ns.nsid)?;
    Some((ns, open))
}

/// A zoned block device's open zone limit (0: none): the block layer's, or where it
/// reports none for an NVMe namespace, the controller's own. (A multipath head reports
/// no limit although the controller enforces one: writes to more zones would fail.)
fn block_open_limit(disk: &str, f: &JobFile) -> u32 {
    match zoned::limits(disk).0 {
        0 => nvme_zone_limit(f).map_or(0, |(_, open)| open),
        n => n,
    }
}

/// zone_reset_frequency: a reset every 1/frequency writes (whole writes, as in fio);
/// 0: never.
fn reset_every(frequency: f64) -> u32 {
    if frequency <= 0.0 {
        return 0;
    }
    (1.0 / frequency).min(f64::from(u32::MAX)).max(1.0) as u32
}

/// fio's zones over a file or device that has none: zonesize bytes each from its
/// start, zonecapacity of them writable (default all), every one empty.
fn emulated(o: &JobOptions, f: &JobFile) -> Result<Vec<Zone>, String> {
    let size = o.zonesize;
    if size == 0 {
        return Err(format!(
            "{}: specifying the zone size is mandatory for a regular file or block \
             device (zonesize)",
            f.path.display()
        ));
    }
    if o.zonecapacity > size {
        return Err(format!(
            "zonecapacity {} is larger than the zone size {size}",
            o.zonecapacity
        ));
    }
    let capacity = if o.zonecapacity == 0 {
        size
    } else {
        o.zonecapacity
    };
    let end = f.start + f.len;
    Ok((0..end / size)
        .map(|i| Zone::empty(i * size, size, capacity))
        .collect())
}

/// The job's region cut to whole zones of `size` bytes: its offset rounded up and its
/// length down, as fio does; less than one zone is an error, as in fio.
fn cut_to_zones(f: &mut JobFile, size: u64) -> Result<(), String> {
    let start = f.start.div_ceil(size) * size;
    let end = (f.start + f.len) / size * size;
    if end <= start {
        return Err(format!(
            "{}: io_size must be at least one zone ({size} bytes, from a zone start)",
            f.path.display()
        ));
    }
    (f.start, f.len) = (start, end - start);
    Ok(())
}

/// The zones [start, start + len) touches. A full zone's write pointer is reported at
/// the zone's end, past its capacity where that is smaller: the workload has it at the
/// end of the capacity, where writes stop and reads of data end.
fn zones_of_region(all: &[Zone], start: u64, len: u64) -> Vec<ZoneInfo> {
    all.iter()
        .filter(|z| z.start + z.len > start && z.start < start + len)
        .map(|z| ZoneInfo {
            start: z.start,
            len: z.len,
            capacity: z.capacity,
            wp: z.wp.min(z.start + z.capacity),
            seq: z.kind == ZoneKind::Sequential,
        })
        .collect()
}

/// zonesize must be the device's zone size (`size`); zoneskip a multiple of it.
fn check_geometry(
    o: &JobOptions,
    size: u64,
    err: &dyn Fn(String) -> RunError,
) -> Result<(), RunError> {
    if size == 0 {
        return Err(err("the device reports no zones".into()));
    }
    if o.zonesize != 0 && o.zonesize != size {
        return Err(err(format!(
            "zonesize {} does not match the device's zone size {size}",
            o.zonesize
        )));
    }
    if o.zoneskip % size != 0 {
        return Err(err(format!(
            "zoneskip {} is not a multiple of the device's zone size {size}",
            o.zoneskip
        )));
    }
    // A trim resets one zone: its size is the zone's.
    let trim_bs = o.bs.0[2];
    if o.rw.mode.trims() && trim_bs != size {
        return Err(err(format!(
            "trim block size {trim_bs} is not the zone size {size}"
        )));
    }
    Ok(())
}

/// How many zones may take writes at once: max_open_zones (the device's limit by
/// default; above it only with ignore_zone_limits); job_max_open_zones limits each job
/// within it. 0: none. `dev_open`: the device's limit (0: none, as for emulated zones).
fn open_limit(o: &JobOptions, dev_open: u32) -> Result<u32, String> {
    match o.max_open_zones {
        0 => Ok(dev_open),
        n if dev_open != 0 && n > dev_open && !o.ignore_zone_limits => Err(format!(
            "max_open_zones ({n}) is larger than the device's limit ({dev_open}; \
             ignore_zone_limits=1 allows it)"
        )),
        n => Ok(n),
    }
}

/// The jobs of a phase with zonemode=zbd on one device (or file) share its zones, as in
/// fio. Several of them writing it with verify is refused: each would reset and
/// overwrite zones holding the others' data before they check it.
pub(crate) fn share(ready: &mut [super::ctx::Ready]) -> Result<(), RunError> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<(u64, u64), Vec<usize>> = BTreeMap::new();
    for (k, r) in ready.iter().enumerate() {
        if let (Some(_), Some(f)) = (&r.ctx.zones, r.ctx.files.first()) {
            if let Some(id) = identity(&f.file) {
                groups.entry(id).or_default().push(k);
            }
        }
    }
    for jobs in groups.into_values().filter(|g| g.len() > 1) {
        let writes = |k: &usize| ready[*k].ctx.dirs[1];
        let checks = jobs
            .iter()
            .find(|k| writes(k) && ready[**k].ctx.verify.is_some());
        if let Some(&k) = checks.filter(|_| jobs.iter().filter(|k| writes(k)).count() > 1) {
            return Err(RunError::Setup(format!(
                "job '{}': zonemode=zbd: verify with several jobs writing one zoned device \
                 is not supported (their zone resets lose each other's data); write and \
                 verify in one job, or give each job its own zones (offset, size)",
                ready[k].ctx.opts.name
            )));
        }
        let mut maps: Vec<&mut crate::workload::zbd::ZoneMap> = ready
            .iter_mut()
            .enumerate()
            .filter(|(k, _)| jobs.contains(k))
            .filter_map(|(_, r)| r.ctx.zones.as_mut())
            .collect();
        crate::workload::zbd::share(&mut maps);
    }
    Ok(())
}

/// What a file is, whatever path names it: its device number for a device, its device
/// and inode for a file.
fn identity(f: &std::fs::File) -> Option<(u64, u64)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = f.metadata().ok()?;
    let t = md.file_type();
    Some(match t.is_block_device() || t.is_char_device() {
        true => (u64::MAX, md.rdev()),
        false => (md.dev(), md.ino()),
    })
}
