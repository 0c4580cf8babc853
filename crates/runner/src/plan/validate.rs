//! The checks a job set must pass before anything is touched: limits, options and
//! values not implemented yet, --readonly, wait_for, files and directories, cgroups,
//! NUMA, CPU lists, verify settings and log options.

use super::access::access;
use super::names::split_names;
use crate::env::RunOptions;
use crate::error::RunError;
use ioscope_options::{engines, JobOptions, JobSet, JobSpec};

/// fio's default limit on the number of jobs (clones) in one run; `--max-jobs`
/// changes it.
const DEFAULT_MAX_JOBS: u32 = 4096;

/// Check what ioscope can run before touching anything.
pub(super) fn validate(set: &JobSet, ro: &RunOptions) -> Result<(), RunError> {
    let total: u64 = set.jobs.iter().map(|j| j.opts.numjobs as u64).sum();
    // As in fio 3.42, --max-jobs raises the limit and never lowers it (wrappers such
    // as cdm pass --max-jobs=1 with files of several jobs, and fio runs them).
    let max = ro.max_jobs.unwrap_or(0).max(DEFAULT_MAX_JOBS);
    if total > max as u64 {
        return Err(RunError::Setup(format!(
            "{total} jobs exceed the limit of {max} (raise it with --max-jobs)"
        )));
    }
    for (pos, j) in set.jobs.iter().enumerate() {
        if let Some((name, loc)) = j.not_yet.first() {
            let hint = if name.starts_with("ioengine=") {
                let names: Vec<&str> = engines::implemented().collect();
                format!("; supported engines: {}", names.join(", "))
            } else {
                String::new()
            };
            return Err(RunError::Unsupported(format!(
                "{loc}: option {name} is not supported yet (job '{}'){hint}",
                j.name
            )));
        }
        if j.opts.io_submit_mode == ioscope_options::SubmitMode::Offload {
            if let Some(why) = ioscope_engine::offload_refusal(&j.opts.ioengine) {
                return Err(RunError::Refused(format!("job '{}': {why}", j.name)));
            }
        }
        let a = access(&j.opts);
        if ro.readonly && (a.writes || a.trims) {
            return Err(RunError::Refused(format!(
                "job '{}': rw={} writes, refused by --readonly",
                j.name,
                j.opts.rw.mode.name()
            )));
        }
        if let Some(w) = &j.opts.wait_for {
            if !set.jobs[..pos].iter().any(|x| &x.name == w) {
                return Err(RunError::Setup(format!(
                    "job '{}': wait_for={w}: no job named '{w}' is defined before it",
                    j.name
                )));
            }
        }
        check_size(&j.opts).map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        if j.opts.ramp_size > 0 && j.opts.group_reporting && j.opts.numjobs > 1 {
            return Err(RunError::Unsupported(format!(
                "job '{}': ramp_size with group_reporting counts the group's bytes together in fio; ioscope counts each clone's: not supported yet",
                j.name
            )));
        }
        check_openfiles(j)?;
        check_ranges(j)?;
        check_zbd(j).map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        check_compare(&j.opts).map_err(|m| RunError::Refused(format!("job '{}': {m}", j.name)))?;
        crate::sys::cgroup::check(&j.opts)
            .map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        check_logs(&j.opts).map_err(|m| RunError::Unsupported(format!("job '{}': {m}", j.name)))?;
    }
    // What this machine has, once every job's options passed: a job file generated on
    // a build host is checked there (--parse-only warns of these) and run elsewhere.
    for j in &set.jobs {
        check_machine(j).map_err(|m| RunError::Environment(format!("job '{}': {m}", j.name)))?;
    }
    Ok(())
}

/// As fio: the jobs of a reporting group (`groups`: each job's) share their
/// steady-state options, since the group's figures are what is judged; a job with
/// other ones (or none) beside them is refused, naming both.
pub(super) fn steady_groups(set: &JobSet, groups: &[u32]) -> Result<(), RunError> {
    let key = |o: &JobOptions| {
        (
            o.steadystate_duration,
            (o.steadystate_duration > 0).then(|| o.steadystate.clone()),
            o.steadystate_ramp_time,
            o.steadystate_check_interval,
        )
    };
    let jobs: Vec<(&JobSpec, u32)> = set.jobs.iter().zip(groups.iter().copied()).collect();
    for (i, (j, g)) in jobs.iter().enumerate() {
        let Some((first, _)) = jobs[..i].iter().find(|(_, h)| h == g) else {
            continue;
        };
        if key(&first.opts) != key(&j.opts) {
            return Err(RunError::Setup(format!(
                "job '{}': steadystate options must be consistent within reporting groups: job '{}' of the same group has other steadystate, steadystate_duration, steadystate_ramp_time or steadystate_check_interval (start a group with new_group, or give both the same)",
                j.name, first.name
            )));
        }
    }
    Ok(())
}

/// zonemode=zbd runs on zoned block devices and zoned namespaces, and on regular files
/// and devices without zones with zones of zonesize emulated on them, as in fio (which
/// needs zonesize then).
fn check_zbd(j: &JobSpec) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if j.opts.zonemode != ioscope_options::ZoneMode::Zbd || j.opts.zonesize != 0 {
        return Ok(());
    }
    let names = j
        .opts
        .filename
        .as_deref()
        .map(split_names)
        .unwrap_or_default();
    for name in names {
        let md = std::fs::metadata(&name).ok();
        // A namespace's generic device: setup asks the namespace whether it is zoned.
        let generic = md
            .as_ref()
            .filter(|m| m.file_type().is_char_device())
            .and_then(|m| {
                crate::sys::generic::probe(
                    std::path::Path::new(&name),
                    m.rdev(),
                    j.opts.pi_act == 1,
                )
            });
        if generic.is_some_and(|g| g.is_ok_and(|g| g.kind == crate::sys::generic::Kind::Nvme)) {
            continue;
        }
        let dev = md
            .filter(|m| m.file_type().is_block_device())
            .and_then(|m| {
                crate::sys::disk::whole_disk((libc::major(m.rdev()), libc::minor(m.rdev())))
            });
        let zoned = dev.as_deref().map(crate::sys::zoned::model);
        if !matches!(zoned.as_deref(), Some("host-managed" | "host-aware")) {
            return Err(format!(
                "zonemode=zbd on {name}, which is not a zoned block device: specifying \
                 the zone size is mandatory to emulate zones on it (zonesize)"
            ));
        }
    }
    Ok(())
}

/// The directories, NUMA nodes and CPUs a job names exist here.
fn check_machine(j: &JobSpec) -> Result<(), String> {
    check_directory(j)?;
    check_opendir(j)?;
    crate::sys::numa::check(&j.opts)?;
    check_cpus(&j.opts)
}

/// As fio: a size smaller than the smallest block size is an error, not a short run.
fn check_size(o: &JobOptions) -> Result<(), String> {
    let Some(ioscope_options::SizePct::Bytes(size)) = o.size else {
        return Ok(());
    };
    let min = o.min_bs_all();
    if size > 0 && size < min {
        return Err(format!(
            "size too small, must not be less than minimum block size: {size} < {min}"
        ));
    }
    Ok(())
}

/// The CPU lists of the checker threads and the log compression name CPUs this
/// machine has (cpus_allowed is the kernel's to judge, as in fio: a set with one
/// usable CPU is accepted).
fn check_cpus(o: &JobOptions) -> Result<(), String> {
    let lists = [
        ("verify_async_cpus", &o.verify_async_cpus),
        ("log_compression_cpus", &o.log_compression_cpus),
    ];
    for (name, l) in lists {
        if let Some(l) = l {
            crate::sys::cpu::check_exist(name, &l.0)?;
        }
    }
    Ok(())
}

/// Log options ioscope cannot honour together.
fn check_logs(o: &JobOptions) -> Result<(), String> {
    if o.log_store_compressed && o.write_hist_log.is_some() {
        return Err("log_store_compressed with write_hist_log is not supported yet".into());
    }
    if o.log_issue_time && !o.log_offset {
        // Without the offset the issue time would sit where readers expect one.
        return Err("log_issue_time goes with log_offset=1 (as fio 3.42 documents it)".into());
    }
    Ok(())
}

/// directory= must name existing directories (fio refuses others; missing parents of
/// a filename= are created instead).
fn check_directory(j: &JobSpec) -> Result<(), String> {
    let Some(dirs) = j.opts.directory.as_deref() else {
        return Ok(());
    };
    for d in split_names(dirs) {
        if !std::path::Path::new(&d).is_dir() {
            return Err(format!("directory={d}: not a directory"));
        }
    }
    Ok(())
}

/// opendir= must name a directory to walk.
fn check_opendir(j: &JobSpec) -> Result<(), String> {
    match j.opts.opendir.as_deref() {
        Some(d) if !std::path::Path::new(d).is_dir() => {
            Err(format!("opendir={d}: not a directory"))
        }
        _ => Ok(()),
    }
}

/// openfiles below the number of files: a metadata engine's passes would need fio's
/// file open/close cycling (data engines take I/O in a window of files).
/// num_range: trims of several ranges need an engine that sends them in one command
/// (io_uring_cmd, as fio's FIO_MULTI_RANGE_TRIM engines), and, as fio, not trimwrite.
/// Their ranges are the workload's next offsets in one file: a job of several files,
/// a replayed trace or a verify pass would need ranges chosen otherwise.
fn check_ranges(j: &JobSpec) -> Result<(), RunError> {
    let o = &j.opts;
    if o.num_range <= 1 || !access(o).trims {
        return Ok(());
    }
    use ioscope_options::RwMode;
    let refused = |m: String| Err(RunError::Refused(format!("job '{}': {m}", j.name)));
    if matches!(o.rw.mode, RwMode::TrimWrite | RwMode::RandTrimWrite) {
        return refused("trimwrite cannot be used with multiple ranges (num_range)".into());
    }
    if o.ioengine != "io_uring_cmd" {
        return refused(format!(
            "can't use multiple ranges (num_range={}) with ioengine={}: only io_uring_cmd sends several in one trim",
            o.num_range, o.ioengine
        ));
    }
    let nfiles = o
        .filename
        .as_deref()
        .map(|f| split_names(f).len() as u32)
        .unwrap_or(o.nrfiles);
    let other = if nfiles > 1 {
        Some("several files per job")
    } else if o.read_iolog.is_some() {
        Some("read_iolog")
    } else if !matches!(o.verify.as_str(), "0" | "none") {
        Some("verify")
    } else {
        None
    };
    match other {
        Some(what) => Err(RunError::Unsupported(format!(
            "job '{}': num_range={} with {what} is not supported yet",
            j.name, o.num_range
        ))),
        None => Ok(()),
    }
}

/// verify_mode=compare: the device compares each block with what the job sends, so
/// that must be known without reading: verify=pattern with verify_pattern (as fio's
/// documentation requires).
fn check_compare(o: &JobOptions) -> Result<(), String> {
    if o.verify_mode != ioscope_options::CmdVerifyMode::Compare || o.ioengine != "io_uring_cmd" {
        return Ok(());
    }
    if o.verify != "pattern" || o.verify_pattern.is_none() {
        return Err(format!(
            "verify_mode=compare needs verify=pattern and verify_pattern (the device compares each block with the pattern); this job has verify={}{}",
            o.verify,
            if o.verify_pattern.is_none() { " and no verify_pattern" } else { "" }
        ));
    }
    Ok(())
}

fn check_openfiles(j: &JobSpec) -> Result<(), RunError> {
    let o = &j.opts;
    let nfiles = o
        .filename
        .as_deref()
        .map(|f| split_names(f).len() as u32)
        .unwrap_or(o.nrfiles);
    // A metadata engine whose files take one block each opens, operates on and closes
    // each file in one I/O: how many may be open at once changes nothing.
    let min_bs = o.bs.0.iter().copied().min().unwrap_or(1);
    let per_file = match (&o.filesize, &o.size) {
        (Some(r), _) => Some(r.hi),
        (None, Some(ioscope_options::SizePct::Bytes(b))) => Some(b / u64::from(nfiles.max(1))),
        _ => None,
    };
    // Data engines keep a window of openfiles files taking I/O (workload/window.rs).
    if !ioscope_engine::is_path_engine(&o.ioengine) {
        return Ok(());
    }
    let one_block_each =
        o.bsrange.is_none() && o.bssplit.is_none() && per_file.is_some_and(|s| s <= min_bs);
    if o.openfiles > 0 && o.openfiles < nfiles && !one_block_each {
        return Err(RunError::Unsupported(format!(
            "job '{}': openfiles={} with {nfiles} files is not supported yet",
            j.name, o.openfiles
        )));
    }
    Ok(())
}
