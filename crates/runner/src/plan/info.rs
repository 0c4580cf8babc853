//! What reports and engines are told about a job, settled from its options.

use ioscope_engine::EngineOptions;
use ioscope_options::{JobOptions, JobSpec};
use ioscope_stats::JobInfo;

/// Engine options of a job.
/// `nop`, `nop_file`: the run issues NOPs, naming the job's file or not.
pub(crate) fn engine_options(o: &JobOptions, nop: bool, nop_file: bool) -> EngineOptions {
    EngineOptions {
        hipri: o.hipri,
        hipri_percentage: o.hipri_percentage,
        uncached: o.uncached,
        libaio_vectored: o.libaio_vectored,
        nowait: o.nowait,
        atomic: o.atomic,
        userspace_reap: o.userspace_reap,
        fixedbufs: o.fixedbufs,
        registerfiles: o.registerfiles,
        sqthread_poll: o.sqthread_poll,
        sqthread_poll_cpu: o.sqthread_poll_cpu,
        nonvectored: o.nonvectored,
        force_async: o.force_async,
        nop,
        nop_file,
        thp: o.thp != 0,
        stat_type: match o.stat_type {
            ioscope_options::StatType::Stat => ioscope_engine::StatType::Stat,
            ioscope_options::StatType::Lstat => ioscope_engine::StatType::Lstat,
            ioscope_options::StatType::Statx => ioscope_engine::StatType::Statx,
        },
        cmd: cmd_options(o),
        placement: placement(o),
        sg: sg_options(o),
    }
}

/// Whether the job's writes carry placement directives (fdp=1 or dataplacement=fdp).
pub(crate) fn places_writes(o: &JobOptions) -> bool {
    o.fdp || o.dataplacement == ioscope_options::DataPlacement::Fdp
}

/// Flexible Data Placement of io_uring_cmd's writes.
fn placement(o: &JobOptions) -> Option<ioscope_engine::uring_cmd::Placement> {
    places_writes(o).then(|| ioscope_engine::uring_cmd::Placement {
        indices: o.plids.as_ref().map(|l| l.0.clone()).unwrap_or_default(),
        random: o.plid_select == ioscope_options::PlidSelect::Random,
        seed: o.randseed,
        // Read from the dp_scheme file at setup (JobCtx::dp_scheme).
        scheme: Vec::new(),
    })
}

/// sg's options for the engine.
fn sg_options(o: &JobOptions) -> ioscope_engine::sg::SgOptions {
    use ioscope_engine::sg::{SgOptions, SgWriteMode as W};
    use ioscope_options::SgWriteModeOpt as M;
    SgOptions {
        readfua: o.readfua,
        writefua: o.writefua,
        write_mode: match o.sg_write_mode {
            M::Write | M::WriteStream => W::Write,
            M::WriteAndVerify => W::WriteAndVerify,
            M::WriteSame => W::WriteSame,
            M::WriteSameNdob => W::WriteSameNdob,
            M::VerifyBytchk00 => W::Verify(0),
            M::VerifyBytchk01 => W::Verify(1),
            M::VerifyBytchk11 => W::Verify(3),
        },
    }
}

/// io_uring_cmd's options for the engine.
fn cmd_options(o: &JobOptions) -> ioscope_engine::uring_cmd::CmdOptions {
    use ioscope_engine::uring_cmd::{nvme, CmdOptions, WriteMode};
    use ioscope_options::CmdWriteMode as M;
    CmdOptions {
        readfua: o.readfua,
        writefua: o.writefua,
        write_mode: match o.write_mode {
            M::Write => WriteMode::Write,
            M::Zeroes => WriteMode::Zeroes,
            M::Uncor => WriteMode::Uncor,
            M::Verify => WriteMode::Verify,
        },
        deac: o.deac,
        md_per_io_size: o.md_per_io_size as u32,
        pi_act: o.pi_act == 1,
        pi_chk: [
            (o.pi_chk.guard, nvme::PRCHK_GUARD),
            (o.pi_chk.reftag, nvme::PRCHK_REFTAG),
            (o.pi_chk.apptag, nvme::PRCHK_APPTAG),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |bits, (_, bit)| bits | bit),
        apptag: o.apptag as u16,
        apptag_mask: o.apptag_mask as u16,
        num_range: o.num_range.max(1),
        bs: bs_ranges(o),
        verify: !matches!(o.verify.as_str(), "0" | "none"),
    }
}

/// The job's smallest and largest block size per direction (read, write, trim), from
/// bssplit, bsrange or bs.
fn bs_ranges(o: &JobOptions) -> [(u64, u64); 3] {
    std::array::from_fn(|d| {
        if let Some(s) = o.bssplit.as_ref().filter(|s| !s.0[d].is_empty()) {
            let lo = s.0[d].iter().map(|e| e.bs).min().unwrap_or(o.bs.0[d]);
            let hi = s.0[d].iter().map(|e| e.bs).max().unwrap_or(o.bs.0[d]);
            (lo, hi)
        } else if let Some(r) = &o.bsrange {
            (r.0 .0[d].lo, r.0 .0[d].hi)
        } else {
            (o.bs.0[d], o.bs.0[d])
        }
    })
}

/// What reports need to know about a job.
pub fn job_info(spec: &JobSpec, sync_engine: bool, files: &[std::path::PathBuf]) -> JobInfo {
    let o = &spec.opts;
    let bs = bs_ranges(o);
    JobInfo {
        rw: o.rw.mode.name().to_string(),
        bs,
        ioengine: o.ioengine.clone(),
        iodepth: o.iodepth,
        sync_engine,
        slat_enabled: !o.disable_slat && !sync_engine,
        clat_enabled: !o.disable_clat,
        lat_enabled: !o.disable_lat,
        clat_percentiles: o.clat_percentiles && !o.disable_clat,
        lat_percentiles: o.lat_percentiles && !o.disable_lat,
        slat_percentiles: o.slat_percentiles && !o.disable_slat && !sync_engine,
        percentile_list: o.percentile_list.0.clone(),
        kb_base: o.kb_base,
        unit_base: match o.unit_base {
            ioscope_options::UnitBase::Auto => 0,
            ioscope_options::UnitBase::Bytes => 8,
            ioscope_options::UnitBase::Bits => 1,
        },
        significant_figures: o.significant_figures,
        unified_rw_reporting: o.unified_rw_reporting as u32,
        // fio reports error counts for ignore_error as for continue_on_error.
        continue_on_error: o.continue_on_error != ioscope_options::ContinueOnError::None
            || o.ignore_error.0.iter().any(|l| !l.is_empty()),
        options: spec.job_options.clone(),
        description: o.description.clone(),
        files: files.iter().map(|f| f.display().to_string()).collect(),
        latency_target: None,
        fake_io: ioscope_engine::is_path_engine(&o.ioengine),
    }
}
