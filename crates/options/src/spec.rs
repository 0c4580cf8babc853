//! From raw sections to validated job specifications: globals, inheritance,
//! typed parsing, engine checks, conflicts, and fio's derived defaults (fixups).

use crate::def::{OptionDef, Status};
use crate::error::{Loc, OptionsError, Source};
use crate::flags::did_you_mean;
use crate::jobfile::{expand_value, Keywords, RawEntry, RawSection};
use crate::table::{self, JobOptions, OPTIONS};
use crate::types::{ValueCx, ZoneMode};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// One job as it will run (before numjobs expansion).
#[derive(Clone, Debug, Serialize)]
pub struct JobSpec {
    pub name: String,
    /// Typed options after fio's fixups.
    pub opts: JobOptions,
    /// Options in effect that the user set (canonical name, value as written), in
    /// order, including inherited globals.
    pub explicit: Vec<(String, String)>,
    /// The job's own options (not inherited globals): fio's JSON "job options".
    pub job_options: Vec<(String, String)>,
    /// Where the job was defined.
    #[serde(skip)]
    pub loc: Loc,
    /// Derived defaults and clamps applied, for --debug=parse.
    pub fixups: Vec<String>,
    /// Explicitly set options that ioscope does not implement yet.
    #[serde(skip)]
    pub not_yet: Vec<(String, Loc)>,
}

/// Everything the job files and command line describe.
#[derive(Clone, Debug, Serialize)]
pub struct JobSet {
    pub jobs: Vec<JobSpec>,
    /// Options set in `[global]` sections or before the first --name (fio's
    /// JSON "global options").
    pub global_explicit: Vec<(String, String)>,
    /// Notes for stderr (fio prints some of these as "note:").
    pub notes: Vec<String>,
    /// What the set was built from, before `${…}` substitution: another MPI rank
    /// rebuilds the same jobs with its own `${IOSCOPE_RANK}` ([`rebuild`]).
    #[serde(skip)]
    pub source: SetSource,
}

/// The inputs of [`build`], as text: the same jobs can be built again elsewhere
/// (another rank, with its own keywords) from this alone.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SetSource {
    pub cli_global: Vec<RawEntry>,
    pub cli_jobs: Vec<RawSection>,
    pub files: Vec<Vec<RawSection>>,
    pub sections: Vec<String>,
    /// Values were read as fio reads them (`--compat=fio`).
    pub compat_fio: bool,
}

/// Build the jobs of `src` again, with `kw`'s machine facts and `${…}` values (the
/// parse mode, `--compat=fio` or not, is the source's own).
pub fn rebuild(src: &SetSource, kw: &Keywords) -> Result<JobSet, OptionsError> {
    let kw = kw.clone().with_compat_fio(src.compat_fio);
    let sections: Vec<&str> = src.sections.iter().map(String::as_str).collect();
    build(&src.cli_global, &src.cli_jobs, &src.files, &sections, &kw)
}

/// Job options with every default from the table applied.
pub fn defaults() -> &'static JobOptions {
    static DEFAULTS: OnceLock<JobOptions> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let mut o = JobOptions::zeroed();
        for def in OPTIONS {
            if def.default.is_empty() {
                continue;
            }
            let cx = ValueCx { def, kb_base: 1024 };
            if let Err(e) = o.set_value(def.name, def.default, &cx) {
                // The table is ours: a bad default is a bug caught by the unit tests.
                panic!(
                    "option table: default of '{}' does not parse: {e}",
                    def.name
                );
            }
        }
        o
    })
}

/// Accumulates one job's options in order.
struct Builder<'k> {
    opts: JobOptions,
    explicit: Vec<(String, String, Loc)>,
    kw: &'k Keywords,
}

impl<'k> Builder<'k> {
    fn new(kw: &'k Keywords) -> Self {
        Builder {
            opts: defaults().clone(),
            explicit: Vec::new(),
            kw,
        }
    }

    fn apply(&mut self, e: &RawEntry) -> Result<(), OptionsError> {
        let def = lookup(e)?;
        if def.name == "name" {
            return Ok(());
        }
        let raw = match &e.value {
            Some(v) => {
                expand_value(v, self.kw).map_err(|m| OptionsError::option(&e.loc, &e.key, m))?
            }
            // A bare flag, or a bare string option (write_bw_log: "use the job name").
            None if def.is_flag() || matches!(def.kind, crate::def::Kind::Str) => String::new(),
            None => {
                return Err(OptionsError::option(
                    &e.loc,
                    &e.key,
                    "requires a value (key=value)",
                ))
            }
        };
        let cx = ValueCx {
            def,
            kb_base: u64::from(self.opts.kb_base),
        };
        let strict = self.opts.set_value(def.name, &raw, &cx);
        let lenient = |m| match crate::compat::fio_value(&def.kind, &raw, cx.kb_base) {
            Some(v) if self.kw.compat_fio && v != raw => self.opts.set_value(def.name, &v, &cx),
            _ => Err(m),
        };
        strict
            .or_else(lenient)
            .map_err(|m| OptionsError::option(&e.loc, &e.key, m))?;
        self.explicit.retain(|(n, _, _)| n != def.name);
        let shown = e.value.clone().unwrap_or_else(|| "1".into());
        self.explicit
            .push((def.name.to_string(), shown, e.loc.clone()));
        Ok(())
    }

    fn apply_all(&mut self, entries: &[RawEntry]) -> Result<(), OptionsError> {
        // kb_base changes how later sizes read; fio applies it in order too, but a
        // kb_base anywhere in the section is what users mean for the whole section.
        for e in entries
            .iter()
            .filter(|e| lookup(e).is_ok_and(|d| d.name == "kb_base"))
        {
            self.apply(e)?;
        }
        let mut errs = crate::error::Errors::default();
        for e in entries {
            errs.take(self.apply(e));
        }
        errs.finish()
    }

    fn has(&self, name: &str) -> bool {
        self.explicit.iter().any(|(n, _, _)| n == name)
    }

    fn loc_of(&self, name: &str) -> Option<Loc> {
        self.explicit
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, l)| l.clone())
    }
}

fn lookup(e: &RawEntry) -> Result<&'static OptionDef, OptionsError> {
    table::find(&e.key).ok_or_else(|| {
        OptionsError::option(
            &e.loc,
            &e.key,
            format!("unknown option{}", did_you_mean(&e.key, &[])),
        )
    })
}

/// A job's definition: the global entries in effect plus its own.
struct JobSource {
    name: String,
    loc: Loc,
    entries: Vec<RawEntry>,
    /// entries[..inherited] come from globals; the rest are the job's own.
    inherited: usize,
    /// Started by --name on the command line (fio lists `name` among its options).
    from_cli: bool,
}

/// Build all jobs from command-line globals, command-line jobs and job files.
pub fn build(
    cli_global: &[RawEntry],
    cli_jobs: &[RawSection],
    files: &[Vec<RawSection>],
    sections: &[&str],
    kw: &Keywords,
) -> Result<JobSet, OptionsError> {
    // Every error is reported (up to a limit), each once, with where it is.
    let mut errs = crate::error::Errors::default();
    // Validate globals once so that errors point at them, not at every job.
    errs.take(Builder::new(kw).apply_all(cli_global));
    let mut global_explicit: Vec<(String, String)> =
        errs.take(explicit_pairs(cli_global)).unwrap_or_default();
    let mut sources = Vec::new();
    for job in cli_jobs {
        let mut entries = cli_global.to_vec();
        entries.extend(job.entries.iter().cloned());
        sources.push(JobSource {
            name: job.name.clone(),
            loc: job.loc.clone(),
            entries,
            inherited: cli_global.len(),
            from_cli: true,
        });
    }
    for file in files {
        // Each file starts from the command-line globals; its [global]s accumulate.
        let mut globals = cli_global.to_vec();
        for sec in file {
            if sec.is_global() {
                errs.take(Builder::new(kw).apply_all(&sec.entries));
                global_explicit.extend(errs.take(explicit_pairs(&sec.entries)).unwrap_or_default());
                globals.extend(sec.entries.iter().cloned());
                continue;
            }
            if !sections.is_empty() && !sections.contains(&sec.name.as_str()) {
                continue;
            }
            let mut entries = globals.clone();
            entries.extend(sec.entries.iter().cloned());
            sources.push(JobSource {
                name: sec.name.clone(),
                loc: sec.loc.clone(),
                entries,
                inherited: globals.len(),
                from_cli: false,
            });
        }
    }
    let mut notes = Vec::new();
    let mut jobs = Vec::new();
    for src in sources {
        if let Some(j) = errs.take(build_job(src, kw, &mut notes)) {
            jobs.push(j);
        }
    }
    errs.finish()?;
    Ok(JobSet {
        jobs,
        global_explicit,
        notes,
        source: SetSource {
            cli_global: cli_global.to_vec(),
            cli_jobs: cli_jobs.to_vec(),
            files: files.to_vec(),
            sections: sections.iter().map(|s| s.to_string()).collect(),
            compat_fio: kw.compat_fio,
        },
    })
}

/// The options as fio echoes them in its JSON ("job options", "global options"): each
/// under fio's name for it (`ba` for blockalign, `bs` for blocksize, `runtime` for
/// timeout), bare flags (`norandommap`) with an empty value, as fio 3.42 does (3.33
/// left them out).
fn explicit_pairs(entries: &[RawEntry]) -> Result<Vec<(String, String)>, OptionsError> {
    let mut out = Vec::new();
    for e in entries {
        let def = lookup(e)?;
        let v = e.value.clone().unwrap_or_default();
        out.push((def.fio_name().to_string(), v));
    }
    Ok(out)
}

fn build_job(
    src: JobSource,
    kw: &Keywords,
    notes: &mut Vec<String>,
) -> Result<JobSpec, OptionsError> {
    let mut b = Builder::new(kw);
    b.apply_all(&src.entries)?;
    b.opts.name = src.name.clone();
    check_engine_options(&b)?;
    check_conflicts(&b)?;
    let fixups = apply_fixups(&mut b, notes);
    let not_yet = not_yet(&b);
    let mut job_options: Vec<(String, String)> = Vec::new();
    if src.from_cli {
        job_options.push(("name".into(), src.name.clone()));
    }
    for (n, v) in explicit_pairs(&src.entries[src.inherited..])? {
        job_options.retain(|(x, _)| *x != n);
        job_options.push((n, v));
    }
    Ok(JobSpec {
        job_options,
        name: src.name,
        opts: b.opts,
        explicit: b.explicit.into_iter().map(|(n, v, _)| (n, v)).collect(),
        loc: src.loc,
        fixups,
        not_yet,
    })
}

/// Options, and values of options, that ioscope accepts but does not implement yet,
/// each with where it was set: `mem=shmhuge`, `ioengine=filecreate`.
fn not_yet(b: &Builder) -> Vec<(String, Loc)> {
    let loc_of = |name: &str| {
        b.explicit
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, l)| l.clone())
    };
    let mut out: Vec<(String, Loc)> = b
        .explicit
        .iter()
        .filter(|(n, _, _)| table::find(n).is_some_and(|d| d.status == Status::NotYet))
        .map(|(n, _, l)| (n.clone(), l.clone()))
        .collect();
    for (name, value) in b.opts.unsupported_values() {
        if let Some(l) = loc_of(name) {
            out.push((format!("{name}={value}"), l));
        }
    }
    let engine = &b.opts.ioengine;
    if crate::engines::find(engine).is_some_and(|e| !e.implemented) {
        let l = loc_of("ioengine").unwrap_or_else(|| Loc::cli(0));
        out.push((format!("ioengine={engine}"), l));
    }
    out
}

/// Engine-specific options are only valid with their engines (fio rejects them too).
fn check_engine_options(b: &Builder) -> Result<(), OptionsError> {
    let engine = b.opts.ioengine.as_str();
    for (name, _, loc) in &b.explicit {
        let Some(def) = table::find(name) else {
            continue;
        };
        if !def.engines.is_empty() && !def.engines.contains(&engine) {
            return Err(OptionsError::option(
                loc,
                name,
                format!(
                    "is only valid with ioengine={} (this job uses ioengine={engine})",
                    def.engines.join(" or ioengine=")
                ),
            ));
        }
    }
    Ok(())
}

fn check_conflicts(b: &Builder) -> Result<(), OptionsError> {
    let o = &b.opts;
    let conflict = |a: &str, c: &str| -> Result<(), OptionsError> {
        let loc = b.loc_of(c).or_else(|| b.loc_of(a)).unwrap_or(Loc {
            source: Source::CommandLine,
            line: 0,
        });
        Err(OptionsError::option(
            &loc,
            c,
            format!("conflicts with '{a}': set only one of them"),
        ))
    };
    if o.rate.0.iter().any(|&r| r > 0) && o.rate_iops.0.iter().any(|&r| r > 0) {
        conflict("rate", "rate_iops")?;
    }
    if b.has("cmdprio_percentage") && b.has("cmdprio_bssplit") {
        conflict("cmdprio_percentage", "cmdprio_bssplit")?;
    }
    if b.has("rwmixread") && b.has("rwmixwrite") && o.rwmixread + o.rwmixwrite != 100 {
        conflict("rwmixread", "rwmixwrite")?;
    }
    check_zones(b)?;
    check_sprandom(b)?;
    if o.unlink_each_loop && (o.ioengine == "mmap" || o.registerfiles || o.sqthread_poll) {
        let loc = b.loc_of("unlink_each_loop").unwrap_or(Loc::cli(0));
        return Err(OptionsError::option(
            &loc,
            "unlink_each_loop",
            "cannot replace files the engine holds on to (ioengine=mmap, registerfiles, sqthread_poll)",
        ));
    }
    if let Some(cpu) = o.sqthread_poll_cpu {
        let ncpus = b.kw.ncpus;
        if u64::from(cpu) >= ncpus {
            let loc = b.loc_of("sqthread_poll_cpu").unwrap_or(Loc::cli(0));
            return Err(OptionsError::option(
                &loc,
                "sqthread_poll_cpu",
                format!(
                    "CPU {cpu} does not exist: this machine has CPUs 0-{}",
                    ncpus - 1
                ),
            ));
        }
    }
    Ok(())
}

/// sprandom writes: rw=randwrite, one block size, lfsr and no random map (which it
/// sets; another choice made explicitly is refused, as fio does).
fn check_sprandom(b: &Builder) -> Result<(), OptionsError> {
    let o = &b.opts;
    if !o.sprandom {
        return Ok(());
    }
    let refuse = |opt: &str, why: &str| {
        let loc = b
            .loc_of(opt)
            .or_else(|| b.loc_of("sprandom"))
            .unwrap_or(Loc::cli(0));
        Err(OptionsError::option(&loc, opt, format!("sprandom {why}")))
    };
    if b.has("random_generator") && o.random_generator != crate::types::RandomGenerator::Lfsr {
        return refuse(
            "random_generator",
            "needs random_generator=lfsr (which it sets)",
        );
    }
    if b.has("norandommap") && !o.norandommap {
        return refuse("norandommap", "needs norandommap=1 (which it sets)");
    }
    if o.rw.mode != crate::types::RwMode::RandWrite {
        return refuse(
            "rw",
            "preconditions with random writes: it needs rw=randwrite",
        );
    }
    if o.bsrange.is_some() || o.bssplit.is_some() {
        let opt = if o.bsrange.is_some() {
            "bsrange"
        } else {
            "bssplit"
        };
        return refuse(opt, "writes one block size (bs=)");
    }
    // Its offsets are its own: nothing else may place them.
    if o.random_distribution != crate::types::Distribution::Random {
        return refuse(
            "random_distribution",
            "places every write itself (random_distribution=random)",
        );
    }
    if o.percentage_random.0[1] < 100 {
        return refuse(
            "percentage_random",
            "writes only random offsets (percentage_random=100)",
        );
    }
    if o.zonemode != crate::types::ZoneMode::None {
        return refuse("zonemode", "covers the whole file (zonemode=none)");
    }
    if !(o.spr_op > 0.0 && o.spr_op < 1.0) {
        return refuse("spr_op", "needs an over-provisioning ratio between 0 and 1");
    }
    Ok(())
}

/// zonemode=strided needs zonesize; zonesize means nothing without a zone mode (fio
/// refuses that too). zoneskip alone, which fio ignores silently, is refused as well.
/// With zonemode=zbd, zoneskip is a multiple of the zone size (fio checks it when the
/// job starts; given zonesize, ioscope checks it here too).
fn check_zones(b: &Builder) -> Result<(), OptionsError> {
    let o = &b.opts;
    let refuse = |name: &str, why: &str| {
        let loc = b.loc_of(name).unwrap_or(Loc::cli(0));
        Err(OptionsError::option(&loc, name, why.to_string()))
    };
    if o.zonemode == ZoneMode::None {
        for z in ["zonesize", "zonerange", "zoneskip"] {
            if b.has(z) {
                return refuse(z, "needs zonemode=strided (or zbd)");
            }
        }
    } else if o.zonemode == ZoneMode::Strided && o.zonesize == 0 {
        return refuse("zonemode", "zonemode=strided needs zonesize");
    }
    if o.zonemode == ZoneMode::Zbd {
        return check_zbd(b, &refuse);
    }
    Ok(())
}

/// What zonemode=zbd does not take (fio's own refusals), and what ioscope does not
/// do with it yet.
fn check_zbd(
    b: &Builder,
    refuse: &dyn Fn(&str, &str) -> Result<(), OptionsError>,
) -> Result<(), OptionsError> {
    let o = &b.opts;
    if o.zonesize != 0 && o.zoneskip % o.zonesize != 0 {
        return refuse(
            "zoneskip",
            &format!(
                "{} is not a multiple of the zone size {}",
                o.zoneskip, o.zonesize
            ),
        );
    }
    for (name, v) in [
        ("zone_reset_threshold", o.zone_reset_threshold),
        ("zone_reset_frequency", o.zone_reset_frequency),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return refuse(name, &format!("{v} is out of range (0 to 1)"));
        }
    }
    if o.zonesize != 0 && o.zonecapacity > o.zonesize {
        return refuse(
            "zonecapacity",
            &format!(
                "{} is larger than the zone size {}",
                o.zonecapacity, o.zonesize
            ),
        );
    }
    if o.recover_zbd_write_error && o.rw.mode.writes() {
        check_recover(o, refuse)?;
    }
    Ok(())
}

/// recover_zbd_write_error in a job that writes: as fio, it needs continue_on_error
/// (the failed writes must not end the job), and an asynchronous engine cannot verify
/// with it (the write pointer is moved by writing zeros over what failed).
fn check_recover(
    o: &JobOptions,
    refuse: &dyn Fn(&str, &str) -> Result<(), OptionsError>,
) -> Result<(), OptionsError> {
    const NAME: &str = "recover_zbd_write_error";
    if o.continue_on_error == crate::types::ContinueOnError::None {
        return refuse(NAME, "works only when continue_on_error is set");
    }
    let verifies = !matches!(o.verify.as_str(), "0" | "none");
    if verifies && !crate::engines::is_sync(&o.ioengine, o.iodepth) {
        return refuse(
            NAME,
            &format!(
                "with an asynchronous engine ({}) does not support verify",
                o.ioengine
            ),
        );
    }
    Ok(())
}

/// Options that say the same thing two ways: as in fio, the one set last wins (a job's
/// own over its [global]'s; later over earlier): direct/buffered, bsrange/bssplit.
fn last_one_wins(b: &mut Builder, done: &mut Vec<String>) {
    let last = |n: &str| b.explicit.iter().rposition(|(x, _, _)| x == n);
    let (direct, buffered) = (last("direct"), last("buffered"));
    let (range, split) = (last("bsrange"), last("bssplit"));
    let o = &mut b.opts;
    if let (Some(d), Some(bu)) = (direct, buffered) {
        if d > bu && o.direct == o.buffered {
            o.buffered = !o.direct;
            done.push(format!(
                "direct={} (set last) sets buffered={}",
                u8::from(o.direct),
                u8::from(o.buffered)
            ));
        }
    }
    if let (Some(r), Some(s)) = (range, split) {
        if r > s {
            o.bssplit = None;
            done.push("bsrange (set last) replaces bssplit".into());
        } else {
            o.bsrange = None;
            done.push("bssplit (set last) replaces bsrange".into());
        }
    }
}

/// Which seeds the job's random streams take, as fio 3.35+ decides: allrandrepeat is
/// randrepeat under another name (the one set last wins), and an explicit randseed
/// fixes the seeds whatever randrepeat says.
fn seeds(b: &mut Builder, done: &mut Vec<String>) {
    let last = |n: &str| b.explicit.iter().rposition(|(x, _, _)| x == n);
    let (rr, all, seed) = (last("randrepeat"), last("allrandrepeat"), last("randseed"));
    let o = &mut b.opts;
    if all.is_some() && (rr.is_none() || all > rr) && o.randrepeat != o.allrandrepeat {
        o.randrepeat = o.allrandrepeat;
        done.push(format!(
            "allrandrepeat={} sets randrepeat",
            u8::from(o.allrandrepeat)
        ));
    }
    o.allrandrepeat = o.randrepeat;
    if seed.is_some() && !o.randrepeat {
        o.randrepeat = true;
        done.push("randseed fixes the seeds (it overrides randrepeat=0, as in fio)".into());
    }
}

/// fio's derived defaults and clamps, each one visible here and recorded.
fn apply_fixups(b: &mut Builder, notes: &mut Vec<String>) -> Vec<String> {
    let mut done = Vec::new();
    last_one_wins(b, &mut done);
    seeds(b, &mut done);
    let has = |n: &str| b.explicit.iter().any(|(x, _, _)| x == n);
    let (set_buffered, set_rwmixwrite, set_rwmixread, set_class) = (
        has("buffered"),
        has("rwmixwrite"),
        has("rwmixread"),
        has("cmdprio_class"),
    );
    // Options that only refine another one say so when that one is not set (fio
    // ignores them silently).
    let (o, name) = (&b.opts, &b.opts.name);
    let needs: [(&[&str], &str, bool); 3] = [
        (
            &["latency_window", "latency_percentile", "latency_run"],
            "latency_target",
            o.latency_target > 0,
        ),
        (&["flow_id", "flow_sleep"], "flow", o.flow > 0),
        (
            &["log_compression_cpus"],
            "log_store_compressed",
            o.log_store_compressed,
        ),
    ];
    for (opts, main, set) in needs {
        for opt in opts.iter().filter(|x| !set && has(x)) {
            notes.push(format!("{name}: {opt} changes nothing without {main}"));
        }
    }
    let o = &mut b.opts;
    let mut note = |s: String| done.push(s);

    if set_buffered && o.direct == o.buffered {
        o.direct = !o.buffered;
        note(format!(
            "buffered={} sets direct={}",
            u8::from(o.buffered),
            u8::from(o.direct)
        ));
    }
    if set_rwmixwrite && !set_rwmixread {
        o.rwmixread = 100 - o.rwmixwrite;
        note(format!(
            "rwmixwrite={} sets rwmixread={}",
            o.rwmixwrite, o.rwmixread
        ));
    }
    o.rwmixwrite = 100 - o.rwmixread;
    if o.zonemode == ZoneMode::Strided && o.zonerange == 0 {
        o.zonerange = o.zonesize;
        note(format!("zonerange defaults to zonesize ({})", o.zonesize));
    }
    if o.iodepth_batch_submit == 0 || o.iodepth_batch_submit > o.iodepth {
        note(format!(
            "iodepth_batch_submit {} -> {} (clamped to iodepth)",
            o.iodepth_batch_submit, o.iodepth
        ));
        o.iodepth_batch_submit = o.iodepth;
    }
    if o.iodepth_low == 0 || o.iodepth_low > o.iodepth {
        o.iodepth_low = o.iodepth;
    }
    if o.iodepth_batch_complete_max < o.iodepth_batch_complete_min {
        o.iodepth_batch_complete_max = o.iodepth_batch_complete_min;
    }
    if o.sqthread_poll {
        if !o.registerfiles {
            note("sqthread_poll implies registerfiles=1".into());
        }
        o.registerfiles = true;
        o.disable_slat = true;
    }
    let uses_cmdprio = o.cmdprio_percentage.0.iter().any(|&p| p > 0) || o.cmdprio_bssplit.is_some();
    if uses_cmdprio && !set_class {
        o.cmdprio_class = crate::types::PerDir::all(1);
        note("cmdprio_class defaults to 1 (RT) with cmdprio_percentage/cmdprio_bssplit".into());
    }
    if o.time_based && o.runtime == 0 {
        o.time_based = false;
        notes.push(format!(
            "{}: time_based is ignored without a runtime",
            o.name
        ));
        note("time_based unset: runtime is 0".into());
    }
    if o.log_compression > 0 && !o.log_store_compressed {
        // fio says nothing (its stderr stays empty); --debug=parse shows it.
        note(
            "log_compression changes nothing without log_store_compressed: ioscope's logs \
             never build up in memory"
                .into(),
        );
    }
    if o.dedupe_global
        && (o.dedupe_mode != crate::types::DedupeMode::WorkingSet || o.dedupe_percentage == 0)
    {
        notes.push(format!(
            "{}: dedupe_global changes nothing without dedupe_mode=working_set and a \
             dedupe_percentage (as in fio)",
            o.name
        ));
    }
    if o.dp_scheme.is_some() && o.plid_select != crate::types::PlidSelect::Scheme {
        // As in fio: the file is read only for plid_select=scheme.
        note("dp_scheme changes nothing without plid_select=scheme".into());
    }
    if o.gtod_reduce {
        o.disable_lat = true;
        o.disable_clat = true;
        o.disable_slat = true;
        o.disable_bw_measurement = true;
        note("gtod_reduce disables lat, clat, slat and bandwidth statistics".into());
    }
    let sync_engine = crate::engines::find(&o.ioengine)
        .is_some_and(|e| e.completion == crate::engines::Completion::Sync);
    if sync_engine && o.iodepth > 1 {
        notes.push(
            "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1"
                .into(),
        );
        note(format!(
            "iodepth {} runs at depth 1 (synchronous engine {})",
            o.iodepth, o.ioengine
        ));
        // Like fio, iodepth keeps its value (reports show it); the runner issues
        // one I/O at a time because the engine is synchronous.
    }
    if o.sprandom {
        if o.random_generator != crate::types::RandomGenerator::Lfsr {
            o.random_generator = crate::types::RandomGenerator::Lfsr;
            note("sprandom sets random_generator=lfsr".into());
        }
        if !o.norandommap {
            o.norandommap = true;
            note("sprandom sets norandommap=1".into());
        }
    }
    if o.zero_buffers && o.refill_buffers {
        note("zero_buffers wins over refill_buffers".into());
        o.refill_buffers = false;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;

    fn kw() -> Keywords {
        Keywords {
            ncpus: 2,
            mb_memory: 1000,
            pagesize: 4096,
            vars: Vec::new(),
            compat_fio: false,
        }
    }

    fn jobs(args: &str) -> Result<JobSet, OptionsError> {
        let a: Vec<String> = args.split_whitespace().map(String::from).collect();
        let c = parse_args(&a, &[])?;
        build(&c.global, &c.jobs, &[], &[], &kw())
    }

    #[test]
    fn defaults_parse() {
        let d = defaults();
        assert_eq!(d.bs.0, [4096; 3]);
        assert_eq!(d.iodepth, 1);
        assert_eq!(d.randseed, 0x89);
        assert_eq!(d.percentile_list.0.len(), 17);
        assert_eq!(d.ioengine, "psync");
    }

    #[test]
    fn clamps() {
        let j = jobs("--name=x --ioengine=libaio --iodepth=4 --iodepth_batch_submit=4096 --iodepth_batch_complete_max=4096").unwrap();
        let o = &j.jobs[0].opts;
        assert_eq!(o.iodepth_batch_submit, 4);
        assert_eq!(
            o.iodepth_batch_complete_max, 4096,
            "fio does not clamp complete_max"
        );
        assert_eq!(o.iodepth_low, 4);
        let j = jobs("--name=x --ioengine=io_uring --sqthread_poll=1").unwrap();
        assert!(j.jobs[0].opts.registerfiles && j.jobs[0].opts.disable_slat);
        let j = jobs("--name=x --buffered=0").unwrap();
        assert!(j.jobs[0].opts.direct);
        let j = jobs("--name=x --rwmixwrite=30").unwrap();
        assert_eq!(j.jobs[0].opts.rwmixread, 70);
        let j = jobs("--name=x --ioengine=libaio --cmdprio_percentage=30").unwrap();
        assert_eq!(j.jobs[0].opts.cmdprio_class.0, [1; 3]);
        let j = jobs("--name=x --iodepth=8").unwrap();
        assert_eq!(j.jobs[0].opts.iodepth, 8, "reported as set; run at depth 1");
        assert!(j.notes[0].contains("capped at 1"));
        let j = jobs("--name=x --time_based").unwrap();
        assert!(!j.jobs[0].opts.time_based);
    }

    #[test]
    fn errors_name_option() {
        let e = jobs("--name=x --bs=4q").unwrap_err().to_string();
        assert!(e.contains("'--bs") || e.contains("'bs'"), "{e}");
        let e = jobs("--name=x --ioengine=psync --hipri")
            .unwrap_err()
            .to_string();
        assert!(e.contains("only valid with ioengine=pvsync2"), "{e}");
        let e = jobs("--name=x --rate=1m --rate_iops=10")
            .unwrap_err()
            .to_string();
        assert!(e.contains("conflicts"), "{e}");
        let e = jobs("--name=x --rwmixread=101").unwrap_err().to_string();
        assert!(e.contains("above the maximum 100"), "{e}");
        let e = jobs("--name=x --ioengine=io_uring --sqthread_poll_cpu=65")
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn globals_and_files() {
        let mut f = Vec::new();
        crate::jobfile::parse_text(
            std::path::Path::new("t.fio"),
            "[global]\nbs=8k\n[a]\n[global]\nbs=16k\n[b]\nrw=randread\n",
            &mut f,
            0,
        )
        .unwrap();
        let a = vec![String::from("--iodepth=2")];
        let c = parse_args(&a, &[]).unwrap();
        let set = build(&c.global, &c.jobs, &[f], &[], &kw()).unwrap();
        assert_eq!(set.jobs[0].opts.bs.0[0], 8192);
        assert_eq!(set.jobs[1].opts.bs.0[0], 16384);
        assert_eq!(set.jobs[1].name, "b");
        assert_eq!(set.global_explicit.len(), 3);
    }
}
