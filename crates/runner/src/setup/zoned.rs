//! `zonemode=zbd` at setup: the job's file must be a zoned block device; its region
//! is cut to whole zones (offset rounded up, size down, as fio does), its zones are read
//! from the device, fio's zone options checked against the device's geometry and
//! limits, and, for a sequential writer, the full zones of its region are reset: fio
//! resets each full zone as its writes reach it, and a sequential job reaches every
//! zone of its region once, so the resets and their count are the same.

use crate::error::RunError;
use crate::setup::files::JobFile;
use crate::sys::zoned::{self, Zone, ZoneKind};
use crate::workload::zbd::{ZoneInfo, ZoneMap};
use ioscope_options::{JobOptions, ZoneMode};

/// The zones of the job's region, or None without zonemode=zbd, and how many zones
/// were reset (reported, as fio does, for a job that writes or trims).
pub(crate) fn prepare(
    o: &JobOptions,
    files: &mut [JobFile],
    access: crate::plan::Access,
    diskless: bool,
) -> Result<Option<(ZoneMap, Option<u64>)>, RunError> {
    let writes = access.writes;
    if o.zonemode != ZoneMode::Zbd || diskless {
        return Ok(None);
    }
    let err = |m: String| RunError::Setup(format!("job '{}': zonemode=zbd: {m}", o.name));
    if writes && !o.direct {
        return Err(err("direct I/O is mandatory for writing to zoned drives \
                        (direct=1)"
            .into()));
    }
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
        .ok_or_else(|| {
            err(format!(
                "{} is no zoned block device (zone emulation on regular files and \
                 devices is not supported yet)",
                f.path.display()
            ))
        })?;
    let model = zoned::model(&disk);
    if model != "host-managed" && model != "host-aware" {
        return Err(err(format!(
            "{} is not zoned (/sys/block/{disk}/queue/zoned is {model})",
            f.path.display()
        )));
    }
    let all = zoned::report(&f.file)
        .map_err(|e| err(format!("{}: cannot report zones: {e}", f.path.display())))?;
    let size = all.first().map_or(0, |z| z.len);
    check_geometry(o, size, &err)?;
    cut_to_zones(f, size).map_err(&err)?;
    let mine = zones_of_region(&all, f.start, f.len);
    let max_open = open_limit(o, &disk).map_err(&err)?;
    let mut map = ZoneMap::new(mine, max_open, o.read_beyond_wp);
    let mut resets = 0;
    if writes {
        refuse_wrapping(o, f, &err)?;
    }
    if writes && !o.rw.mode.is_random() {
        for i in map.full() {
            let z = map.zone(i);
            zoned::reset(&f.file, z.start, z.len).map_err(|e| {
                err(format!(
                    "{}: zone reset at {}: {e}",
                    f.path.display(),
                    z.start
                ))
            })?;
            map.was_reset(i);
            resets += 1;
        }
    }
    let reported = (access.writes || access.trims).then_some(resets);
    Ok(Some((map, reported)))
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

/// Writes that come back to zones they wrote (time_based, loops, io_size beyond the
/// region) need zones reset while the job runs, which is not done yet.
fn refuse_wrapping(
    o: &JobOptions,
    f: &JobFile,
    err: &dyn Fn(String) -> RunError,
) -> Result<(), RunError> {
    let io_size = o.io_size.map_or(f.len, |s| s.resolve(f.len));
    if o.time_based || o.loops > 1 || io_size > f.len {
        return Err(err(
            "writes that come back to zones already written (time_based, loops, io_size \
             beyond the region) need zone resets while the job runs, which are not \
             supported yet"
                .into(),
        ));
    }
    Ok(())
}

/// The zones [start, start + len) touches.
fn zones_of_region(all: &[Zone], start: u64, len: u64) -> Vec<ZoneInfo> {
    all.iter()
        .filter(|z| z.start + z.len > start && z.start < start + len)
        .map(|z| ZoneInfo {
            start: z.start,
            len: z.len,
            capacity: z.capacity,
            wp: z.wp,
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
/// default; above it only with ignore_zone_limits), then job_max_open_zones. 0: none.
fn open_limit(o: &JobOptions, disk: &str) -> Result<u32, String> {
    let (dev_open, _active) = zoned::limits(disk);
    let mut limit = match o.max_open_zones {
        0 => dev_open,
        n if dev_open != 0 && n > dev_open && !o.ignore_zone_limits => {
            return Err(format!(
                "max_open_zones ({n}) is larger than the device's limit ({dev_open}; \
                 ignore_zone_limits=1 allows it)"
            ))
        }
        n => n,
    };
    if o.job_max_open_zones != 0 && (limit == 0 || o.job_max_open_zones < limit) {
        limit = o.job_max_open_zones;
    }
    Ok(limit)
}
