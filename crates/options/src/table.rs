//! THE option table. One entry per option: its field in `JobOptions` (name and type)
//! and its description (kind, default, limits, category, help, status).
//! Parsing, `--cmdhelp`, `--enghelp` and docs/options.md are all generated from it.
//! Adding an option = one entry here + the code that reads `opts.<name>`.

use crate::def::{Category as C, Kind, OptionDef, Status, TimeUnit};
use crate::structured::*;
use crate::types::*;
use serde::Serialize;

const SIZE: Kind = Kind::Size;
const INT: Kind = Kind::Int;
const BOOL: Kind = Kind::Bool;
const SET: Kind = Kind::Set;
const SECS: Kind = Kind::Time(TimeUnit::Seconds);
const USECS: Kind = Kind::Time(TimeUnit::Micros);
const SIZES: Kind = Kind::PerDir(&Kind::Size);
const INTS: Kind = Kind::PerDir(&Kind::Int);
const NOT_YET: Status = Status::NotYet;
const fn noop(why: &'static str) -> Status {
    Status::NoOp(why)
}

const ASYNC_PRIO: &[&str] = &["libaio", "io_uring"];
const URING: &[&str] = &["io_uring", "io_uring_cmd"];
const HIPRI_ENGINES: &[&str] = &["pvsync2", "io_uring", "io_uring_cmd"];
const URING_CMD: &[&str] = &["io_uring_cmd"];
const FUA_ENGINES: &[&str] = &["io_uring_cmd", "sg"];
const NOWAIT_ENGINES: &[&str] = &["pvsync2", "libaio", "io_uring"];

const DIST_SYNTAX: &str =
    "random | zipf:theta[:center] | pareto:h[:center] | normal:dev[:center] | zoned:pct/pct_range:... | zoned_abs:pct/size:...";

macro_rules! option_table {
    ($( $field:ident : $ty:ty { $($k:ident : $v:expr),* $(,)? } )*) => {
        /// Typed values of every option for one job (defaults applied).
        #[derive(Clone, Debug, Serialize)]
        pub struct JobOptions { $( pub $field: $ty, )* }

        /// The option table.
        pub static OPTIONS: &[OptionDef] = &[
            $( OptionDef { name: stringify!($field), $($k: $v,)* ..OptionDef::BASE }, )*
        ];

        impl JobOptions {
            /// Parse `raw` into the field of the option named `name` (canonical).
            pub(crate) fn set_value(&mut self, name: &str, raw: &str, cx: &ValueCx) -> Result<(), String> {
                match name {
                    $( stringify!($field) => { self.$field = <$ty as OptValue>::parse(raw, cx, &self.$field)?; } )*
                    _ => return Err(format!("no field for option '{name}'")),
                }
                Ok(())
            }

            /// Options whose value ioscope accepts but does not implement yet, as
            /// (option, value): the support status of each choice value.
            pub fn unsupported_values(&self) -> Vec<(&'static str, &'static str)> {
                let mut out = Vec::new();
                $( if let Some(v) = OptValue::not_yet(&self.$field) { out.push((stringify!($field), v)); } )*
                out
            }

            /// All fields at their zero value; defaults are then parsed from the table.
            pub(crate) fn zeroed() -> Self {
                JobOptions { $( $field: <$ty>::default(), )* }
            }
        }
    };
}

option_table! {
    // ---- Job description, grouping, processes ----
    name: String { category: C::Job, help: "Name of the job (the section name in job files; --name starts a job on the command line)" }
    description: Option<String> { category: C::Job, help: "Free text describing the job, printed in reports" }
    profile: Option<String> { category: C::Job, help: "fio's built-in benchmarks, on the command line: --profile=tiobench or --profile=act (generate their own jobs; --profile=NAME --cmdhelp lists their options)", status: noop("in a job file, as in fio, profile= runs nothing: --profile=NAME on the command line adds the profile's jobs") }
    thread: bool { kind: SET, category: C::Job, help: "Run jobs as threads instead of processes", status: noop("ioscope always runs each job as a thread of one process") }
    numjobs: u32 { kind: INT, default: "1", min: Some(1), max: Some(65536), category: C::Job, help: "Number of clones of this job" }
    group_reporting: bool { kind: SET, category: C::Job, help: "Report each group as one job (exact merge of all its jobs)" }
    new_group: bool { kind: SET, category: C::Job, help: "Start a new reporting group with this job" }
    stonewall: bool { kind: SET, aliases: &["wait_for_previous"], category: C::Job, help: "Wait for all earlier jobs to finish before starting; also starts a new group" }
    wait_for: Option<String> { category: C::Job, help: "Start only after the named job has finished" }
    loops: u32 { kind: INT, default: "1", min: Some(1), category: C::Job, help: "Run the workload this many times" }
    exitall: bool { kind: SET, category: C::Job, help: "When one job finishes, end the others (see exit_what)" }
    exit_what: ExitWhat { kind: Kind::Choice(ExitWhat::CHOICES), default: "group", category: C::Job, help: "Which jobs exitall ends" }
    exitall_on_error: bool { kind: SET, category: C::Job, help: "When one job fails, end all jobs" }
    ioscheduler: Option<String> { category: C::Job, help: "Switch the I/O scheduler of the device behind each file to this (restored afterwards)" }
    comm: Option<String> { category: C::Job, help: "Name the job's thread this (its comm, as ps and top show it; at most 15 bytes are kept)" }
    nice: i32 { kind: INT, default: "0", min: Some(-20), max: Some(19), category: C::Job, help: "Run the job at this nice value" }
    cpus_allowed: Option<CpuList> { kind: Kind::Special("CPU list, e.g. 0-3,6"), category: C::Job, help: "CPUs the job may run on" }
    cpumask: Option<CpuMask> { kind: Kind::Special("CPU bit mask, e.g. 0x3"), category: C::Job, help: "CPU mask the job may run on" }
    cpus_allowed_policy: CpusPolicy { kind: Kind::Choice(CpusPolicy::CHOICES), default: "shared", category: C::Job, help: "How cpus_allowed is shared among a job's clones: all of the set, or one CPU each" }
    gtod_reduce: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Take no per-I/O timestamps: disables slat, clat, lat and bandwidth statistics" }
    stats: bool { kind: BOOL, default: "1", category: C::Reporting, help: "Include this job in the report (0: run it but leave it out)" }
    uid: Option<u32> { kind: INT, category: C::Job, help: "Run the job as this user id (its files are laid out before, and opened as it)" }
    lockmem: u64 { kind: SIZE, default: "0", category: C::Job, help: "Lock this many bytes of memory (mlock(2)) in each job while it runs, leaving that much less to the page cache and the rest of the system" }
    gid: Option<u32> { kind: INT, category: C::Job, help: "Run the job as this group id" }
    cgroup: Option<String> { category: C::Job, help: "Put the job's thread in this blkio cgroup (cgroup v1; made if missing, removed after the run)" }
    cgroup_weight: Option<u32> { kind: INT, min: Some(1), max: Some(1000), category: C::Job, help: "Weight of the job's cgroup: blkio.weight, or blkio.bfq.weight under bfq (1-1000; the group is the job's name when cgroup is unset)" }
    cgroup_nodelete: bool { kind: BOOL, default: "0", category: C::Job, help: "Keep the cgroups the run made" }
    exec_prerun: Option<String> { category: C::Job, help: "Run this shell command before the job (output in NAME.prerun.txt); failure fails the job" }
    exec_postrun: Option<String> { category: C::Job, help: "Run this shell command after the job (output in NAME.postrun.txt)" }
    numa_cpu_nodes: Option<NodeList> { kind: Kind::Special("node list: all, 0, 0-1, 0,2"), category: C::Job, help: "Run on the CPUs of these NUMA nodes" }
    numa_mem_policy: Option<NumaPolicy> { kind: Kind::Special("default | local | prefer:N | bind:LIST | interleave[:LIST]"), category: C::Job, help: "NUMA memory policy of the job (its buffers)" }
    flow: u32 { kind: INT, default: "0", min: Some(0), max: Some(1000), category: C::Rate, help: "Weight in flow control: jobs with the same flow_id issue I/Os in proportion to their weights (0: not in flow control)" }
    flow_id: u32 { kind: INT, default: "0", category: C::Rate, help: "Flow control group of the job" }
    flow_sleep: u64 { kind: USECS, default: "0", category: C::Rate, help: "Sleep this long when ahead of the flow share, after the I/O in flight (0: try again at once, as fio)" }
    flow_watermark: u32 { kind: INT, default: "50", category: C::Rate, help: "Flow control watermark (deprecated in fio)", status: noop("fio 3.42 accepts it and ignores it (soft-deprecated)") }

    // ---- Files and sizes ----
    filename: Option<String> { category: C::Files, help: "File(s) or device(s) to use, separated by ':' (escape a literal ':' as '\\:')" }
    opendir: Option<String> { category: C::Files, help: "Add every regular file under this directory, recursively and in name order, to the job's files (fio adds them in directory order)" }
    directory: Option<String> { category: C::Files, help: "Directory for the job's files (':'-separated list allowed)" }
    filename_format: String { default: "$jobname.$jobnum.$filenum", category: C::Files, help: "Name pattern for generated files ($jobname, $jobnum, $filenum, $clientuid)" }
    unique_filename: bool { kind: BOOL, default: "1", category: C::Files, help: "Add the client name to generated file names in client/server mode", status: noop("client/server mode is not part of ioscope") }
    nrfiles: u32 { kind: INT, default: "1", aliases: &["nr_files"], min: Some(1), category: C::Files, help: "Number of files per job" }
    openfiles: u32 { kind: INT, default: "0", category: C::Files, help: "Maximum files taking I/O at once (0 = all): the first ones start, and one that is done makes room for the next (ioscope keeps every descriptor open; metadata engines need files of one block each)" }
    file_service_type: FileService { kind: Kind::Choice(FileService::CHOICES), default: "roundrobin", category: C::Files, help: "How the next file is chosen" }
    size: Option<SizePct> { kind: Kind::SizePct, category: C::Files, help: "Total bytes per job (or % of the file/device); default: the whole file or device" }
    filesize: Option<Range> { kind: Kind::SizeRange, category: C::Files, help: "Size of each file (default: size / nrfiles)" }
    io_size: Option<SizePct> { kind: Kind::SizePct, aliases: &["io_limit"], category: C::Files, help: "Total bytes of I/O to issue (wraps around size)" }
    offset: SizePct { kind: Kind::SizePct, default: "0", aliases: &["fileoffset"], category: C::Files, help: "Start I/O at this offset (or % of the file)" }
    offset_align: u64 { kind: SIZE, default: "0", category: C::Files, help: "Align a percentage offset up to this (default: the minimum block size)" }
    offset_increment: SizePct { kind: Kind::SizePct, default: "0", category: C::Files, help: "Each clone (numjobs) starts this much further (offset + N*increment)" }
    number_ios: u64 { kind: INT, default: "0", category: C::Files, help: "Stop after this many I/Os (0 = no limit)" }
    direct: bool { kind: BOOL, default: "0", category: C::Io, help: "Use O_DIRECT (bypass the page cache)" }
    buffered: bool { kind: BOOL, default: "1", category: C::Io, help: "Use buffered I/O (the opposite of direct)" }
    atomic: bool { kind: BOOL, default: "0", engines: &["pvsync2", "libaio", "io_uring"], category: C::Io, help: "Writes with torn-write protection (RWF_ATOMIC, Linux 6.11+; direct=1, write sizes within the file's statx atomic-write unit)" }
    sync: SyncMode { kind: Kind::Choice(SyncMode::CHOICES), default: "none", category: C::Io, help: "Open files with O_SYNC or O_DSYNC" }
    fsync: u32 { kind: INT, default: "0", category: C::Io, help: "fsync(2) after every N writes" }
    fdatasync: u32 { kind: INT, default: "0", category: C::Io, help: "fdatasync(2) after every N writes" }
    write_barrier: u32 { kind: INT, default: "0", category: C::Io, help: "Make every Nth write a barrier write", status: noop("fio sets barriers only in its sg and binject engines; with every other engine, as with all of ioscope's, no write is a barrier") }
    sync_file_range: Option<SyncFileRange> { kind: Kind::Special("FLAGS:N, FLAGS from wait_before,write,wait_after"), category: C::Io, help: "sync_file_range(2) over the range written since the last one, every N writes" }
    end_fsync: bool { kind: BOOL, default: "0", category: C::Io, help: "fsync(2) the files when the job ends" }
    end_syncfs: bool { kind: BOOL, default: "0", category: C::Io, help: "syncfs(2) once when the job ends, for every file of the job's filesystems (instead of end_fsync's fsync per file)" }
    filetype: FileType { kind: Kind::Choice(FileType::CHOICES), default: "none", category: C::Files, help: "The type of all the job's files, taken as given instead of stat(2)ing each (for huge filesets)" }
    fsync_on_close: bool { kind: BOOL, default: "0", category: C::Io, help: "fsync(2) a file when closing it" }
    fallocate: Fallocate { kind: Kind::Choice(Fallocate::CHOICES), default: "native", category: C::Files, help: "How to preallocate files being laid out" }
    fadvise_hint: String { kind: Kind::Choice(&[("1", "Hint by workload: random or sequential"), ("0", "No hint"), ("sequential", "POSIX_FADV_SEQUENTIAL"), ("random", "POSIX_FADV_RANDOM"), ("normal", "POSIX_FADV_NORMAL"), ("noreuse", "POSIX_FADV_NOREUSE")]), default: "1", category: C::Io, help: "posix_fadvise(2) hint for buffered I/O" }
    invalidate: bool { kind: BOOL, default: "1", category: C::Io, help: "Drop the page cache of the files before the run" }
    overwrite: bool { kind: BOOL, default: "0", category: C::Files, help: "Lay out write files fully before writing (overwrite existing data)" }
    create_on_open: bool { kind: BOOL, default: "0", category: C::Files, help: "Create files when first opened for I/O rather than before the run" }
    write_hint: Option<WriteHint> { kind: Kind::Choice(WriteHint::CHOICES), category: C::Files, help: "Tell the kernel the expected lifetime of the data written (fcntl F_SET_RW_HINT on each file)" }
    create_serialize: bool { kind: BOOL, default: "1", category: C::Files, help: "Lay out job files one job at a time", status: noop("ioscope always lays out files one at a time") }
    create_fsync: bool { kind: BOOL, default: "1", category: C::Files, help: "fsync files after laying them out" }
    create_only: bool { kind: BOOL, default: "0", category: C::Files, help: "Only lay out files, do no I/O" }
    allow_file_create: bool { kind: BOOL, default: "1", category: C::Files, help: "Allow creating files that do not exist" }
    allow_mounted_write: bool { kind: BOOL, default: "0", category: C::Files, help: "Allow writes to block devices that are mounted or carry a filesystem, partition table, LVM, RAID or swap signature" }
    fill_device: bool { kind: BOOL, default: "0", aliases: &["fill_fs"], category: C::Files, help: "Write until the device or filesystem is full (ENOSPC ends the job without error)" }
    unlink: bool { kind: BOOL, default: "0", category: C::Files, help: "Delete the job's files when done" }
    unlink_each_loop: bool { kind: BOOL, default: "0", category: C::Files, help: "Delete the files between loops: a job that writes creates them again empty, one that only reads fails (as in fio)" }
    pre_read: bool { kind: BOOL, default: "0", category: C::Files, help: "Read files into the page cache before the run (instead of invalidating it)" }
    lockfile: LockMode { kind: Kind::Choice(LockMode::CHOICES), default: "none", category: C::Files, help: "Jobs sharing a file take turns issuing I/O to it" }
    file_append: bool { kind: BOOL, default: "0", category: C::Files, help: "Do I/O after the end of the file" }

    // ---- I/O pattern ----
    rw: RwSpec { kind: Kind::Choice(RW_CHOICES), default: "read", aliases: &["readwrite"], category: C::Io, help: "I/O pattern; ':N' sets I/Os per random offset or the hole after each sequential I/O" }
    rw_sequencer: RwSequencer { kind: Kind::Choice(RwSequencer::CHOICES), default: "sequential", category: C::Io, help: "How ':N' in rw= generates offsets" }
    rwmixread: u32 { kind: INT, default: "50", min: Some(0), max: Some(100), category: C::Io, help: "Percentage of reads in a mixed workload" }
    rwmixwrite: u32 { kind: INT, default: "50", min: Some(0), max: Some(100), category: C::Io, help: "Percentage of writes in a mixed workload" }
    bs: PerDir<u64> { kind: SIZES, default: "4k", aliases: &["blocksize"], min: Some(1), category: C::BlockSize, help: "Block size, per direction read,write,trim" }
    bsrange: Option<RangeList> { kind: Kind::RangeList, aliases: &["blocksize_range"], category: C::BlockSize, help: "Block size range lo-hi, per direction" }
    bssplit: Option<BsSplit> { kind: Kind::Special("bs/pct:bs/pct[,...] per direction"), category: C::BlockSize, help: "Weighted mix of block sizes" }
    blockalign: Option<PerDir<u64>> { kind: SIZES, aliases: &["ba"], fio_name: "ba", category: C::BlockSize, help: "Align random offsets to this (default: the minimum block size)" }
    bs_unaligned: bool { kind: SET, aliases: &["blocksize_unaligned"], category: C::BlockSize, help: "Do not round random block sizes to the minimum block size" }
    bs_is_seq_rand: bool { kind: BOOL, default: "0", category: C::BlockSize, help: "Use read,write block sizes for sequential,random instead" }
    percentage_random: PerDir<u32> { kind: INTS, default: "100", min: Some(0), max: Some(100), category: C::Random, help: "Percentage of random I/O in a random workload" }
    unified_rw_reporting: UnifiedRw { kind: Kind::Choice(UnifiedRw::CHOICES), default: "none", category: C::Reporting, help: "Report directions separately, mixed, or both" }
    trim_percentage: u32 { kind: INT, default: "0", min: Some(0), max: Some(100), category: C::Verify, help: "Trim (discard) this percentage of the blocks written, then verify they read back as zeros (needs verify=)" }
    trim_verify_zero: bool { kind: BOOL, default: "1", category: C::Verify, help: "Trimmed blocks must read back as zeros" }
    trim_backlog: u64 { kind: INT, default: "0", category: C::Verify, help: "Trim after every this many blocks written (0: as soon as each is written)" }
    trim_backlog_batch: u64 { kind: INT, default: "0", category: C::Verify, help: "Blocks trimmed per trim_backlog (default: trim_backlog)" }

    // ---- Randomness ----
    random_distribution: Distribution { kind: Kind::Special(DIST_SYNTAX), default: "random", category: C::Random, help: "Distribution of random offsets" }
    random_generator: RandomGenerator { kind: Kind::Choice(RandomGenerator::CHOICES), default: "tausworthe", category: C::Random, help: "Random number generator for offsets" }
    norandommap: bool { kind: SET, category: C::Random, help: "Do not track touched blocks: random offsets may repeat" }
    softrandommap: bool { kind: BOOL, default: "0", category: C::Random, help: "Continue without a random map if it cannot be allocated", status: noop("ioscope's random map always fits: it is one bit per block") }
    randrepeat: bool { kind: BOOL, default: "1", category: C::Random, help: "Seed the offset generator so runs repeat" }
    allrandrepeat: bool { kind: BOOL, default: "0", category: C::Random, help: "Seed all random generators so runs repeat (as randrepeat; fio 3.35+ makes it an alias)" }
    sprandom: bool { kind: BOOL, default: "0", category: C::Random, help: "SPRandom preconditioning: one pass of random writes over the device's physical capacity that leaves it in steady state (rw=randwrite; sets random_generator=lfsr and norandommap)" }
    spr_num_regions: u32 { kind: INT, default: "100", min: Some(1), category: C::Random, help: "sprandom: the regions the physical capacity is written in (more: finer, each region smaller)" }
    spr_op: f64 { kind: Kind::Float, default: "0.15", category: C::Random, help: "sprandom: the device's over-provisioning ratio, between 0 and 1" }
    spr_cs: u64 { kind: SIZE, default: "0", category: C::Random, help: "sprandom: the device's write cache in bytes; when set, invalidating writes wait one region and a region must be larger than the cache" }
    randseed: u64 { kind: INT, default: "0x89", category: C::Random, help: "Seed for the random generators" }

    // ---- Engine ----
    ioengine: String { kind: Kind::Choice(crate::engines::ENGINE_CHOICES), default: "psync", category: C::Engine, help: "How I/O is issued" }
    hipri: bool { kind: SET, engines: HIPRI_ENGINES, category: C::Engine, help: "Polled I/O: RWF_HIPRI (pvsync2) or IORING_SETUP_IOPOLL (io_uring)" }
    hipri_percentage: u32 { kind: INT, default: "100", min: Some(0), max: Some(100), engines: &["pvsync2"], category: C::Engine, help: "Percentage of I/Os issued with RWF_HIPRI" }
    uncached: u32 { kind: INT, default: "0", engines: &["pvsync2", "io_uring"], category: C::Engine, help: "Buffered I/O that drops pages after the I/O (RWF_UNCACHED)" }
    nowait: bool { kind: BOOL, default: "0", engines: NOWAIT_ENGINES, category: C::Engine, help: "Issue I/O with RWF_NOWAIT / IOCB_NOWAIT" }
    libaio_vectored: bool { kind: BOOL, default: "0", engines: &["libaio"], category: C::Engine, help: "Submit reads and writes as vectored (IOCB_CMD_PREADV/PWRITEV, one iovec)" }
    userspace_reap: bool { kind: SET, engines: &["libaio"], category: C::Engine, help: "Reap libaio completions from the ring in user space" }
    fixedbufs: bool { kind: SET, engines: URING, category: C::Engine, help: "Register the I/O buffers with io_uring (IORING_REGISTER_BUFFERS)" }
    registerfiles: bool { kind: SET, engines: URING, category: C::Engine, help: "Register the files with io_uring (IORING_REGISTER_FILES)" }
    sqthread_poll: bool { kind: SET, engines: URING, category: C::Engine, help: "Kernel thread polls the submission queue (IORING_SETUP_SQPOLL); implies registerfiles" }
    sqthread_poll_cpu: Option<u32> { kind: INT, engines: URING, category: C::Engine, help: "CPU of the SQPOLL thread (IORING_SETUP_SQ_AFF)" }
    nonvectored: i32 { kind: INT, default: "-1", min: Some(-1), max: Some(1), engines: URING, category: C::Engine, help: "Use non-vectored read/write opcodes (-1: when the kernel supports them)" }
    force_async: u32 { kind: INT, default: "0", engines: URING, category: C::Engine, help: "Set IOSQE_ASYNC on every Nth I/O" }
    cmd_type: CmdType { kind: Kind::Choice(CmdType::CHOICES), default: "nvme", engines: URING_CMD, category: C::Engine, help: "Passthrough command set of io_uring_cmd" }
    readfua: bool { kind: BOOL, default: "0", engines: FUA_ENGINES, category: C::Engine, help: "Reads with Force Unit Access (NVMe FUA bit)" }
    writefua: bool { kind: BOOL, default: "0", engines: FUA_ENGINES, category: C::Engine, help: "Writes with Force Unit Access (NVMe FUA bit)" }
    write_mode: CmdWriteMode { kind: Kind::Choice(CmdWriteMode::CHOICES), default: "write", engines: URING_CMD, category: C::Engine, help: "NVMe command a write issues" }
    sg_write_mode: SgWriteModeOpt { kind: Kind::Choice(SgWriteModeOpt::CHOICES), default: "write", engines: &["sg"], category: C::Engine, help: "SCSI command a write issues" }
    stream_id: u32 { kind: INT, default: "0", engines: &["sg"], category: C::Engine, help: "Stream of sg_write_mode=write_stream (0: open one for the job; not yet: QEMU's emulated SCSI disk has no streams to prove it on)", status: NOT_YET }
    deac: bool { kind: BOOL, default: "0", engines: URING_CMD, category: C::Engine, help: "write_mode=zeroes: set the deallocate bit (DEAC)" }
    verify_mode: CmdVerifyMode { kind: Kind::Choice(CmdVerifyMode::CHOICES), default: "read", engines: URING_CMD, category: C::Engine, help: "NVMe command the verify phase uses" }
    fdp: bool { kind: BOOL, default: "0", engines: URING_CMD, category: C::Engine, help: "Flexible Data Placement for writes (as dataplacement=fdp)" }
    dataplacement: DataPlacement { kind: Kind::Choice(DataPlacement::CHOICES), default: "none", engines: URING_CMD, category: C::Engine, help: "Data placement directive of writes" }
    plid_select: PlidSelect { kind: Kind::Choice(PlidSelect::CHOICES), default: "roundrobin", aliases: &["fdp_pli_select"], engines: URING_CMD, category: C::Engine, help: "How the next write's placement ID is chosen" }
    plids: Option<IndexList> { kind: Kind::Special("indices into the namespace's placement IDs, e.g. 0,2-4"), aliases: &["fdp_pli"], engines: URING_CMD, category: C::Engine, help: "Placement IDs (as indices into `nvme fdp status`) writes may use (default: all)" }
    dp_scheme: Option<String> { engines: URING_CMD, category: C::Engine, help: "File of lines `start, end, placement ID`: a write at an offset in [start, end) carries that ID, 0 outside them (plid_select=scheme; the first 32 lines, as in fio)" }
    num_range: u32 { kind: INT, default: "1", min: Some(1), max: Some(256), engines: URING_CMD, category: C::Engine, help: "Ranges per trim (Dataset Management) command" }
    md_per_io_size: u64 { kind: SIZE, default: "0", max: Some(u32::MAX as i64), engines: URING_CMD, category: C::Engine, help: "Bytes of the separate metadata buffer per I/O (a namespace formatted with metadata)" }
    pi_act: u32 { kind: INT, default: "1", min: Some(0), max: Some(1), engines: URING_CMD, category: C::Engine, help: "1: the controller inserts and strips protection information (PRACT); 0: ioscope writes it in the metadata buffer" }
    pi_chk: PiChk { kind: Kind::Special("GUARD,REFTAG,APPTAG"), engines: URING_CMD, category: C::Engine, help: "Protection information fields the controller checks (PRCHK): GUARD, REFTAG, APPTAG" }
    apptag: u32 { kind: INT, default: "0x1234", min: Some(0), max: Some(0xffff), engines: URING_CMD, category: C::Engine, help: "Application tag of protection information" }
    apptag_mask: u32 { kind: INT, default: "0xffff", min: Some(0), max: Some(0xffff), engines: URING_CMD, category: C::Engine, help: "Application tag mask of protection information" }
    cmdprio_percentage: PerDir<u32> { kind: INTS, default: "0", min: Some(0), max: Some(100), engines: ASYNC_PRIO, category: C::Priority, help: "Percentage of I/Os issued with the cmdprio priority" }
    cmdprio_class: PerDir<u32> { kind: INTS, default: "0", min: Some(0), max: Some(3), engines: ASYNC_PRIO, category: C::Priority, help: "I/O priority class of cmdprio I/Os (1 RT, 2 BE, 3 IDLE; default RT when a percentage or bssplit is set)" }
    cmdprio: PerDir<u32> { kind: INTS, default: "0", min: Some(0), max: Some(7), engines: ASYNC_PRIO, category: C::Priority, help: "I/O priority level of cmdprio I/Os" }
    cmdprio_hint: PerDir<u32> { kind: INTS, default: "0", min: Some(0), max: Some(1023), engines: ASYNC_PRIO, category: C::Priority, help: "I/O priority hint of cmdprio I/Os (read,write)" }
    cmdprio_bssplit: Option<BsSplit> { kind: Kind::Special("bs/pct[/class/level[/hint]]:... per direction"), engines: ASYNC_PRIO, category: C::Priority, help: "Priority per block size" }
    thp: u32 { kind: INT, default: "0", engines: &["mmap"], category: C::Engine, help: "Use transparent huge pages for the mapping (madvise MADV_HUGEPAGE)" }
    stat_type: StatType { kind: Kind::Choice(StatType::CHOICES), default: "stat", engines: &["filestat", "dirstat"], category: C::Engine, help: "Which stat call filestat and dirstat time" }

    // ---- Depth and batching ----
    iodepth: u32 { kind: INT, default: "1", min: Some(1), max: Some(65536), category: C::Depth, help: "Number of I/Os in flight" }
    iodepth_batch_submit: u32 { kind: INT, default: "1", aliases: &["iodepth_batch"], fio_name: "iodepth_batch", category: C::Depth, help: "I/Os submitted per call (0 = iodepth; larger values are clamped to iodepth)" }
    iodepth_batch_complete_min: u32 { kind: INT, default: "1", aliases: &["iodepth_batch_complete"], category: C::Depth, help: "Minimum completions to wait for per call (0 = poll)" }
    iodepth_batch_complete_max: u32 { kind: INT, default: "0", category: C::Depth, help: "Maximum completions to reap per call (default: the minimum)" }
    iodepth_low: u32 { kind: INT, default: "0", category: C::Depth, help: "Refill the queue when it drains to this depth (default: iodepth)" }
    io_submit_mode: SubmitMode { kind: Kind::Choice(SubmitMode::CHOICES), default: "inline", category: C::Depth, help: "Where I/O is submitted from: the job thread, or iodepth offload workers (a sync engine then keeps iodepth I/Os in flight; slat is the hand-off to a worker)" }
    serialize_overlap: bool { kind: BOOL, default: "0", category: C::Depth, help: "Do not have overlapping I/Os in flight" }

    // ---- Time ----
    runtime: u64 { kind: SECS, default: "0", aliases: &["timeout"], category: C::Time, help: "Stop after this long (0 = when size is done)" }
    time_based: bool { kind: SET, category: C::Time, help: "Keep running until runtime, repeating the workload" }
    ramp_time: u64 { kind: SECS, default: "0", category: C::Time, help: "Run this long before measuring" }
    ramp_size: u64 { kind: SIZE, default: "0", category: C::Time, help: "Do this many bytes of I/O before measuring (with ramp_time, both must pass)" }
    startdelay: Range { kind: Kind::TimeRange(TimeUnit::Seconds), default: "0", category: C::Time, help: "Wait this long (or a random time in lo-hi) before starting" }
    clocksource: ClockSource { kind: Kind::Choice(ClockSource::CHOICES), default: "cpu", category: C::Time, help: "Clock for timestamps (ioscope uses the calibrated TSC where it is invariant, else CLOCK_MONOTONIC)", status: noop("ioscope chooses the most exact clock available") }
    gtod_cpu: Option<u32> { kind: INT, category: C::Time, help: "Keep the jobs off this CPU (fio's time-keeping CPU; ioscope reads the clock in each job and needs no time-keeping thread)" }

    // ---- Rate and think time ----
    rate: PerDir<u64> { kind: SIZES, default: "0", category: C::Rate, help: "Cap bandwidth at this many bytes/s, per direction" }
    rate_min: PerDir<u64> { kind: SIZES, default: "0", aliases: &["ratemin"], category: C::Rate, help: "Fail the job if bandwidth drops below this over a rate_cycle" }
    rate_iops: PerDir<u64> { kind: INTS, default: "0", category: C::Rate, help: "Cap IOPS at this, per direction" }
    rate_iops_min: PerDir<u64> { kind: INTS, default: "0", category: C::Rate, help: "Fail the job if IOPS drop below this over a rate_cycle" }
    rate_process: RateProcess { kind: Kind::Choice(RateProcess::CHOICES), default: "linear", category: C::Rate, help: "How rate-limited I/Os are spaced" }
    rate_cycle: u64 { kind: INT, default: "1000", aliases: &["ratecycle"], category: C::Rate, help: "Window (ms) for rate_min and rate_iops_min checks" }
    rate_ignore_thinktime: bool { kind: BOOL, default: "0", category: C::Rate, help: "Keep the rate schedule through think time" }
    thinktime: u64 { kind: USECS, default: "0", category: C::Rate, help: "Pause this long after thinktime_blocks I/Os" }
    thinktime_spin: u64 { kind: USECS, default: "0", category: C::Rate, help: "Busy-spin this part of thinktime" }
    thinkcycles: u64 { kind: INT, default: "0", category: C::Rate, help: "Stall this many CPU cycles (TSC ticks) after each completion before the next issue, as an application processing its data would" }
    thinktime_blocks: u32 { kind: INT, default: "1", min: Some(1), category: C::Rate, help: "I/Os between think times" }
    thinktime_blocks_type: ThinktimeBlocksType { kind: Kind::Choice(ThinktimeBlocksType::CHOICES), default: "complete", category: C::Rate, help: "Whether thinktime_blocks counts completed or issued I/Os" }
    thinktime_iotime: u64 { kind: SECS, default: "0", category: C::Rate, help: "Think after this much I/O time since the last think (with the default thinktime_blocks, only the time counts)" }
    latency_target: u64 { kind: USECS, default: "0", category: C::Rate, help: "Find the highest queue depth whose I/O meets this total latency (the job starts at depth 1)" }
    latency_window: u64 { kind: USECS, default: "0", category: C::Rate, help: "latency_target: how long each depth is tried" }
    latency_percentile: f64 { kind: Kind::Float, default: "100", min: Some(0), max: Some(100), category: C::Rate, help: "latency_target: share of a window's I/Os that must meet it (100: one slow I/O ramps down)" }
    latency_run: bool { kind: BOOL, default: "0", category: C::Rate, help: "latency_target: keep adjusting the depth until the run ends (default: end the job once found)" }
    max_latency: u64 { kind: USECS, default: "0", category: C::Rate, help: "Fail the job (ETIMEDOUT) if an I/O's total latency exceeds this" }

    // ---- Buffers ----
    refill_buffers: bool { kind: SET, category: C::Buffers, help: "Refill write buffers with new data before every write" }
    scramble_buffers: bool { kind: BOOL, default: "1", category: C::Buffers, help: "Lightly scramble write buffers before every write" }
    zero_buffers: bool { kind: SET, category: C::Buffers, help: "Fill write buffers with zeros" }
    buffer_pattern: Option<BufferPattern> { kind: Kind::Special("0xHEX | \"string\" | number | 'file', combined in any order"), category: C::Buffers, help: "Fill write buffers with this pattern" }
    buffer_compress_percentage: u32 { kind: INT, default: "0", min: Some(0), max: Some(100), category: C::Buffers, help: "Make write buffers compressible to this percentage" }
    buffer_compress_chunk: u64 { kind: SIZE, default: "512", category: C::Buffers, help: "Granularity of compressible regions" }
    dedupe_percentage: u32 { kind: INT, default: "0", min: Some(0), max: Some(100), category: C::Buffers, help: "Percentage of writes whose content repeats the previous write (implies refilled buffers)" }
    dedupe_mode: DedupeMode { kind: Kind::Choice(DedupeMode::CHOICES), default: "repeat", category: C::Buffers, help: "How duplicate buffers are chosen" }
    dedupe_working_set_percentage: u32 { kind: INT, default: "5", min: Some(0), max: Some(100), category: C::Buffers, help: "Working set for dedupe_mode=working_set" }
    dedupe_global: bool { kind: BOOL, default: "0", category: C::Buffers, help: "dedupe_mode=working_set: the working set is shared by the run's jobs, so duplicates repeat other jobs' writes too (no effect otherwise, as in fio)" }
    mem: MemSpec { kind: Kind::Choice(MemType::CHOICES), default: "malloc", aliases: &["iomem"], category: C::Buffers, help: "Where I/O buffers are allocated (TYPE[:FILE]): malloc, shm and mmap are page-aligned anonymous memory; shmhuge and mmaphuge huge pages; mmap, mmapshared and mmaphuge may map a file (removed after the job)" }
    hugepage_size: u64 { kind: SIZE, default: "2m", aliases: &["hugepage-size"], fio_name: "hugepage-size", min: Some(4096), category: C::Buffers, help: "Size of a huge page: shmhuge and mmaphuge buffers are a multiple of it" }
    iomem_align: u64 { kind: SIZE, default: "0", aliases: &["mem_align"], category: C::Buffers, help: "Align I/O buffers to this (at least the page size)" }

    // ---- Priority ----
    prio: Option<u32> { kind: INT, min: Some(0), max: Some(7), category: C::Priority, help: "I/O priority level of the job (ioprio_set)" }
    priohint: u32 { kind: INT, default: "0", min: Some(0), max: Some(1023), category: C::Priority, help: "I/O priority hint of the job's I/O (bits 3-12 of the ioprio: a command duration limit index on devices with CDL)" }
    prioclass: Option<u32> { kind: INT, min: Some(0), max: Some(3), category: C::Priority, help: "I/O priority class of the job: 1 RT, 2 BE, 3 IDLE" }

    // ---- Verify ----
    verify: String { kind: Kind::Choice(&[("0", "No verification"), ("none", "No verification"), ("md5", ""), ("crc64", ""), ("crc32", ""), ("crc32c", ""), ("crc32c-intel", ""), ("crc16", ""), ("crc7", ""), ("sha1", ""), ("sha256", ""), ("sha512", ""), ("sha3-224", ""), ("sha3-256", ""), ("sha3-384", ""), ("sha3-512", ""), ("xxhash", ""), ("meta", "Header only (and verify_pattern, when set)"), ("pattern", "No header: every byte is verify_pattern"), ("pattern_hdr", "A header, then verify_pattern"), ("null", "Write random data, check nothing")]), default: "0", category: C::Verify, help: "Verify written data with this method: a header and checksum in every block, read back after the writes (or every verify_backlog writes) and checked" }
    do_verify: bool { kind: BOOL, default: "1", category: C::Verify, help: "Run the verify phase after writing" }
    verify_interval: u64 { kind: SIZE, default: "0", category: C::Verify, help: "A verify header every this many bytes of a block (at least 80; default: one per block)" }
    verify_offset: u64 { kind: SIZE, default: "0", category: C::Verify, help: "Swap the verify header to this offset of each chunk" }
    verify_pattern: Option<VerifyPattern> { kind: Kind::Special("0xHEX | decimal | \"text\" | 'file' | %o, concatenated"), category: C::Verify, help: "Data of verified blocks: 0xHEX, decimal, \"text\", 'file', %o (the offset), concatenated" }
    verify_fatal: bool { kind: BOOL, default: "0", category: C::Verify, help: "Stop on the first verify failure" }
    verify_dump: bool { kind: BOOL, default: "0", category: C::Verify, help: "Write failed blocks to FILE.OFFSET.received and .expected (.hdr_fail for a bad header)" }
    verify_async: u32 { kind: INT, default: "0", max: Some(64), category: C::Verify, help: "Check blocks on this many threads of their own while the job goes on with I/O" }
    verify_async_cpus: Option<CpuList> { kind: Kind::Special("CPU list, e.g. 0-3,6"), category: C::Verify, help: "CPUs the verify_async checker threads run on" }
    verify_backlog: u64 { kind: INT, default: "0", category: C::Verify, help: "Verify after this many writes" }
    verify_backlog_batch: u64 { kind: INT, default: "0", category: C::Verify, help: "Blocks verified per backlog" }
    verifysort: bool { kind: BOOL, default: "1", category: C::Verify, help: "Sort verify reads by offset (deprecated in fio)", status: noop("fio 3.42 accepts it and ignores it (soft-deprecated): verify reads follow the writes' order") }
    verifysort_nr: u64 { kind: INT, default: "1024", category: C::Verify, help: "Verify reads sorted at once (deprecated in fio)", status: noop("fio 3.42 accepts it and ignores it (soft-deprecated)") }
    verify_state_save: bool { kind: BOOL, default: "1", category: C::Verify, help: "Write local-JOB-N-verify.state when a verifying writer ends (also when interrupted)" }
    verify_state_load: bool { kind: BOOL, default: "0", category: C::Verify, help: "Verify only the blocks local-JOB-N-verify.state says were written" }
    verify_header_format: String { kind: Kind::Choice(&[("fio-3.42", "fio 3.42's 48-byte header (64-bit write numbers)"), ("fio-3.33", "fio 3.33's 40-byte header, for data that fio 3.33 and older will verify")]), default: "fio-3.42", category: C::Verify, help: "ioscope's own: the layout of the verify headers written (either is read back: each header says which it is)" }
    verify_header_seed: bool { kind: BOOL, default: "1", category: C::Verify, help: "Check the seed in each block's header (0: skip, where offsets differ from the write's, as with norandommap and rw= offset modifiers)" }
    verify_write_sequence: bool { kind: BOOL, default: "1", category: C::Verify, help: "Check the write sequence number in each block's header (0: skip, e.g. several jobs writing the same blocks, atomic writes)" }
    job_start_clock_id: i32 { kind: INT, default: "0", category: C::Reporting, help: "clock_gettime(2) clock of the JSON's job_start (0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC, ...)" }
    log_issue_time: bool { kind: BOOL, default: "0", category: C::Logging, help: "End each line of the clat and slat logs with the I/O's issue time (ns since the log's zero; 0 in the other logs and in windowed rows); goes with log_offset=1" }
    verify_pattern_interval: u64 { kind: SIZE, default: "0", category: C::Verify, help: "Start verify_pattern again every this many bytes of a block, its %o the offset there (0: once per block)" }
    verify_only: bool { kind: SET, category: C::Verify, help: "Only verify, do not write" }
    experimental_verify: bool { kind: BOOL, default: "0", category: C::Verify, help: "Verify once after all loops, each block's last write" }

    // ---- Logs ----
    write_lat_log: Option<String> { category: C::Logging, help: "Log slat, clat and lat of I/Os to PREFIX_{slat,clat,lat}.N.log" }
    write_bw_log: Option<String> { category: C::Logging, help: "Log bandwidth to PREFIX_bw.N.log" }
    write_iops_log: Option<String> { category: C::Logging, help: "Log IOPS to PREFIX_iops.N.log" }
    write_hist_log: Option<String> { category: C::Logging, help: "Log clat histograms to PREFIX_clat_hist.N.log every log_hist_msec" }
    per_job_logs: bool { kind: BOOL, default: "1", category: C::Logging, help: "One log per job (.N suffix); 0 appends all jobs to one file" }
    log_avg_msec: u64 { kind: INT, default: "0", category: C::Logging, help: "Average log entries over this window (0 = every I/O)" }
    log_window_value: LogWindowValue { kind: Kind::Choice(LogWindowValue::CHOICES), default: "avg", aliases: &["log_max_value"], category: C::Logging, help: "With log_avg_msec: log the average, maximum, or both" }
    log_hist_msec: u64 { kind: INT, default: "0", category: C::Logging, help: "Interval of histogram log entries" }
    log_hist_coarseness: u32 { kind: INT, default: "0", min: Some(0), max: Some(6), category: C::Logging, help: "Merge 2^N histogram bins per logged bin" }
    log_entries: u32 { kind: INT, default: "1024", min: Some(1024), max: Some(1_048_576), category: C::Logging, help: "fio's initial log buffer size", status: noop("ioscope streams logs to disk from fixed, pre-faulted buffers; no size guess is needed") }
    log_offset: bool { kind: BOOL, default: "0", category: C::Logging, help: "Add the I/O offset to log lines" }
    log_prio: bool { kind: BOOL, default: "0", category: C::Logging, help: "Log the full ioprio value (hex) instead of an RT flag" }
    log_compression: u64 { kind: SIZE, default: "0", category: C::Logging, help: "Chunk size of compressed logs (log_store_compressed); ioscope's logs never build up in memory, so alone it changes nothing" }
    log_store_compressed: bool { kind: BOOL, default: "0", category: C::Logging, help: "Store the text logs compressed as NAME.log.fz (zlib chunks, as fio; read them with --inflate-log)" }
    log_compression_cpus: Option<CpuList> { kind: Kind::Special("CPU list, e.g. 0-3,6"), category: C::Logging, help: "CPUs the compression of the logs (log_store_compressed) runs on, as cpus_allowed" }
    log_unix_epoch: bool { kind: BOOL, default: "0", aliases: &["log_alternate_epoch"], category: C::Logging, help: "Log timestamps as Unix epoch milliseconds" }
    log_alternate_epoch_clock_id: i32 { kind: INT, default: "0", category: C::Logging, help: "clock_gettime(2) clock whose epoch log_unix_epoch/log_alternate_epoch stamps use (0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC, ...)" }
    bwavgtime: u64 { kind: INT, default: "500", min: Some(1), category: C::Reporting, help: "Bandwidth sampling interval (ms)" }
    iopsavgtime: u64 { kind: INT, default: "500", min: Some(1), category: C::Reporting, help: "IOPS sampling interval (ms)" }
    disable_lat: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Do not measure total latency" }
    disable_clat: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Do not measure completion latency" }
    disable_slat: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Do not measure submission latency" }
    disable_bw_measurement: bool { kind: BOOL, default: "0", aliases: &["disable_bw"], category: C::Reporting, help: "Do not sample bandwidth and IOPS" }
    disk_util: bool { kind: BOOL, default: "1", category: C::Reporting, help: "Collect the statistics of the job's disks (\"Disk stats\"); a disk is reported when any job on it collects" }
    block_error_percentiles: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Count the trims each trim-sized block of the job's one file takes until a write or trim of it fails, and report their percentiles and the blocks' states (for flash wear-out tests)" }
    write_iolog: Option<String> { category: C::Logging, help: "Record the issued I/O to this file as a fio iolog (version 3: µs timestamps), appending" }
    read_iolog: Option<String> { category: C::Logging, help: "Replay a fio iolog (version 2 or 3) or a blktrace (one per clone, ':'-separated): its files and I/Os become the job's; a blktrace's devices are found by number under /dev" }
    read_iolog_chunked: bool { kind: BOOL, default: "0", category: C::Logging, help: "fio reads the iolog in chunks as the replay goes, to bound its memory", status: noop("ioscope reads the whole iolog before the run into compact entries (the same I/Os, in the same order, at the same times); there is nothing to chunk") }
    merge_blktrace_file: Option<String> { category: C::Logging, help: "Merge the blktraces read_iolog lists (a:b:…) by time into this file and replay it (its queue events of reads, writes and discards)" }
    merge_blktrace_scalars: Option<NumList> { kind: Kind::Special("percent:percent:..."), category: C::Logging, help: "Per merged trace (':'-separated), the percentage of its recorded times (50: twice as fast)" }
    merge_blktrace_iters: Option<NumList> { kind: Kind::Special("count:count:..."), category: C::Logging, help: "Per merged trace (':'-separated), how many times it is played, one after another" }
    replay_no_stall: bool { kind: BOOL, default: "0", category: C::Logging, help: "Replay the iolog as fast as possible, ignoring its timestamps" }
    replay_time_scale: u32 { kind: INT, default: "100", min: Some(1), category: C::Logging, help: "Replay at this percentage of the iolog's I/O rate (200: twice as fast)" }
    replay_redirect: Option<String> { category: C::Logging, help: "Replay every file of the iolog onto this one file or device" }
    replay_align: u32 { kind: INT, default: "0", category: C::Logging, help: "Align the iolog's offsets down to this power of 2" }
    replay_scale: u32 { kind: INT, default: "1", min: Some(1), category: C::Logging, help: "Divide the iolog's offsets by this factor" }
    replay_skip: Option<ReplaySkip> { kind: Kind::Special("read,write,trim,sync"), category: C::Logging, help: "Leave these kinds of the iolog's I/O out: a list of read, write, trim, sync" }

    // ---- Steady state ----
    steadystate: SteadySpec { kind: Kind::Special("iops|iops_slope|bw|bw_slope|lat|lat_slope:limit[%]"), default: "iops_slope:0.01%", aliases: &["ss"], category: C::SteadyState, help: "Criterion that ends the job once it holds over steadystate_duration: a maximum deviation from the mean, or a least-squares slope, of IOPS, bandwidth (bytes/s) or mean completion latency (ns)" }
    steadystate_duration: u64 { kind: SECS, default: "0", aliases: &["ss_dur"], category: C::SteadyState, help: "Window over which the criterion must hold (0 = no steady-state detection)" }
    steadystate_ramp_time: u64 { kind: SECS, default: "0", aliases: &["ss_ramp"], category: C::SteadyState, help: "Wait this long before collecting steady-state data" }
    steadystate_check_interval: u64 { kind: SECS, default: "1", aliases: &["ss_interval"], category: C::SteadyState, help: "Steady-state sampling interval" }

    // ---- Errors ----
    continue_on_error: ContinueOnError { kind: Kind::Choice(ContinueOnError::CHOICES), default: "none", category: C::Errors, help: "Which errors do not end the job" }
    ignore_error: IgnoreErrors { kind: Kind::Special("READ_ERRS,WRITE_ERRS,VERIFY_ERRS (':' lists of names or numbers)"), category: C::Errors, help: "Errors that do not end the job, per direction (counted like continue_on_error)" }
    error_dump: bool { kind: BOOL, default: "0", category: C::Errors, help: "Print every I/O error, also those the job goes on after (continue_on_error, ignore_error); the fatal one is always printed. Off by default, as fio 3.33 behaves (its documentation says on)" }

    // ---- Reporting ----
    clat_percentiles: bool { kind: BOOL, default: "1", category: C::Reporting, help: "Report completion latency percentiles" }
    lat_percentiles: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Report total latency percentiles (per-priority stats then use lat)" }
    slat_percentiles: bool { kind: BOOL, default: "0", category: C::Reporting, help: "Report submission latency percentiles" }
    percentile_list: FloatList { kind: Kind::Special("float list separated by ':' (at most 20)"), default: "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99", category: C::Reporting, help: "Percentiles to report" }
    significant_figures: u32 { kind: INT, default: "4", min: Some(1), max: Some(10), category: C::Reporting, help: "Significant figures in normal output" }
    kb_base: u32 { kind: Kind::Choice(&[("1024", "k = 1024 (KiB = 1000, fio compatibility)"), ("1000", "k = 1000, KiB = 1024")]), default: "1024", category: C::Reporting, help: "Base of k/m/g in input and output" }
    unit_base: UnitBase { kind: Kind::Choice(UnitBase::CHOICES), default: "0", category: C::Reporting, help: "Report bandwidth in bytes or bits" }

    // ---- Zones ----
    zonemode: ZoneMode { kind: Kind::Choice(ZoneMode::CHOICES), default: "none", category: C::Zones, help: "Zone mode: strided walks zones of zonesize bytes, zonerange apart; zbd follows a zoned block device's zones (writes at write pointers; a trim, of a zone's size, resets its zone; random trims go to zones with data)" }
    zonesize: u64 { kind: SIZE, default: "0", category: C::Zones, help: "zonemode=strided: bytes of I/O in each zone before moving to the next; zonemode=zbd: the zone size (must be the device's; over a regular file or a device that is not zoned, the size of the zones emulated on it)" }
    zonerange: u64 { kind: SIZE, default: "0", category: C::Zones, help: "zonemode=strided: size of a zone, where its I/O falls (default zonesize)" }
    zoneskip: u64 { kind: SIZE, default: "0", category: C::Zones, help: "zonemode=strided: bytes skipped after each zone; zonemode=zbd: bytes a sequential job skips after writing a zone full or reading all its data (a multiple of the zone size)" }
    zonecapacity: u64 { kind: SIZE, default: "0", category: C::Zones, help: "zonemode=zbd over a regular file or a device that is not zoned: the writable bytes of each emulated zone (default zonesize; a zoned device reports its own)" }
    read_beyond_wp: bool { kind: BOOL, default: "0", category: C::Zones, help: "zonemode=zbd: reads may go past a zone's write pointer (where the device returns no data)" }
    max_open_zones: u32 { kind: INT, default: "0", category: C::Zones, help: "zonemode=zbd: zones written at once (default and most: the device's open-zone limit)" }
    job_max_open_zones: u32 { kind: INT, default: "0", category: C::Zones, help: "zonemode=zbd: zones one job writes at once (0: no limit of its own)" }
    ignore_zone_limits: bool { kind: BOOL, default: "0", category: C::Zones, help: "zonemode=zbd: max_open_zones may exceed the device's open-zone limit" }
    zone_reset_threshold: f64 { kind: Kind::Float, default: "0", category: C::Zones, help: "zonemode=zbd: share (0 to 1) of the region holding data above which writes reset zones as zone_reset_frequency says (emulated garbage collection)" }
    zone_reset_frequency: f64 { kind: Kind::Float, default: "0", category: C::Zones, help: "zonemode=zbd: above zone_reset_threshold, every 1/frequency-th write first resets the zone it goes to (0 to 1; 0: never)" }
    write_zone_remainder: bool { kind: BOOL, default: "0", aliases: &["write_zone_remainders"], category: C::Zones, help: "zonemode=zbd: write a zone's remainder smaller than the block size with a shorter write instead of finishing the zone" }
    recover_zbd_write_error: bool { kind: BOOL, default: "0", category: C::Zones, help: "zonemode=zbd with continue_on_error: once the writes in flight to a sequential zone where one failed have completed, read the zone's write pointer and move it to the end of the failed writes (writing the failed write's data, or zeros where that is gone), so that the next writes land; a write job needs continue_on_error, and verify needs a synchronous engine (the zeros would fail it)" }

    // ---- fio profile options: --profile=tiobench reads them; elsewhere without effect, as in fio ----
    threads: Option<u32> { kind: INT, category: C::Profile, help: "--profile=tiobench: jobs (numjobs) per test", status: noop("only --profile=tiobench reads it (it is not `thread`)") }
    block: Option<String> { category: C::Profile, help: "--profile=tiobench: block size in bytes", status: noop("only --profile=tiobench reads it") }
    numruns: Option<u32> { kind: INT, category: C::Profile, help: "--profile=tiobench: number of runs (loops)", status: noop("only --profile=tiobench reads it") }
    dir: Option<String> { category: C::Profile, help: "--profile=tiobench: test directory", status: noop("only --profile=tiobench reads it") }
}

/// Find an option by canonical name or alias.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS.iter().find(|d| d.matches(name))
}
