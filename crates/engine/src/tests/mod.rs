//! Test harness: real files, aligned buffers, and a scripted job loop that drives any
//! engine through queue / commit / getevents / event and checks the protocol.

mod async_engines;
mod mmap;
mod null;
mod sync_engines;
mod uring;

use std::alloc::{self, Layout};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use crate::{
    with_engine, Ddir, Engine, EngineConfig, EngineError, EngineOptions, EngineUser, FileInfo,
    IoUnit, Queued,
};

pub const BS: u32 = 4096;
pub const FILE_SIZE: u64 = 1 << 20;

/// A zeroed, 4096-aligned buffer region (O_DIRECT needs aligned memory).
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len, 4096).expect("layout");
        // SAFETY: non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        AlignedBuf { ptr, layout }
    }

    /// Start of the byte at `off` (in bounds).
    pub fn at(&self, off: usize) -> *mut u8 {
        assert!(off < self.layout.size());
        // SAFETY: in bounds.
        unsafe { self.ptr.add(off) }
    }

    /// Copies `data` into the region at `off`.
    pub fn fill(&self, off: usize, data: &[u8]) {
        assert!(off + data.len() <= self.layout.size());
        // SAFETY: in bounds; no engine I/O is in flight while the test writes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) }
    }

    /// A copy of `len` bytes at `off`.
    pub fn copy(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.layout.size());
        // SAFETY: in bounds; no engine I/O is in flight while the test reads.
        unsafe { std::slice::from_raw_parts(self.ptr.add(off), len) }.to_vec()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { alloc::dealloc(self.ptr, self.layout) }
    }
}

/// A temporary file of FILE_SIZE bytes, opened with extra open(2) flags.
pub struct TestFile {
    _tmp: tempfile::NamedTempFile,
    pub file: File,
}

pub fn test_file(dir: &str, flags: i32, read_only: bool) -> TestFile {
    let tmp = tempfile::Builder::new()
        .prefix("ioscope-engine-")
        .tempfile_in(dir)
        .expect("tempfile");
    tmp.as_file().set_len(FILE_SIZE).expect("set_len");
    let file = OpenOptions::new()
        .read(true)
        .write(!read_only)
        .custom_flags(flags)
        .open(tmp.path())
        .expect("open");
    TestFile { _tmp: tmp, file }
}

/// A buffered file in /dev/shm (fast) and an O_DIRECT one in /tmp (ext4).
pub fn buffered() -> TestFile {
    test_file("/dev/shm", 0, false)
}
pub fn direct() -> TestFile {
    test_file("/tmp", libc::O_DIRECT, false)
}
/// A buffered file on ext4, where hole punching and the RWF_* flags are real.
pub fn ext4() -> TestFile {
    test_file("/tmp", 0, false)
}

/// The deterministic byte at `off` for a given seed.
pub fn pattern(seed: u8, off: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| ((off + i).wrapping_mul(131) >> 3) as u8 ^ seed)
        .collect()
}

/// One I/O of a batch; the i-th op of a batch uses unit i (and its buffer).
#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub ddir: Ddir,
    pub offset: u64,
    pub len: u32,
    pub file: u32,
    pub ioprio: u16,
    pub flags: u32,
    /// For writes: fill the buffer with pattern(seed) first.
    pub seed: u8,
}

impl Op {
    pub fn write(offset: u64, len: u32, seed: u8) -> Op {
        Op {
            ddir: Ddir::Write,
            offset,
            len,
            file: 0,
            ioprio: 0,
            flags: 0,
            seed,
        }
    }
    pub fn read(offset: u64, len: u32) -> Op {
        Op {
            ddir: Ddir::Read,
            ..Op::write(offset, len, 0)
        }
    }
    pub fn other(ddir: Ddir, offset: u64, len: u32) -> Op {
        Op {
            ddir,
            ..Op::write(offset, len, 0)
        }
    }
    pub fn prio(self, ioprio: u16) -> Op {
        Op { ioprio, ..self }
    }
    pub fn flags(self, flags: u32) -> Op {
        Op { flags, ..self }
    }
}

/// The result of one op: bytes or -errno, and for reads the bytes read.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub result: i64,
    pub data: Vec<u8>,
}

/// A job: files, buffers and options.
pub struct Job {
    pub depth: u32,
    pub unit_len: usize,
    pub files: Vec<FileInfo>,
    pub buf: AlignedBuf,
    pub opts: EngineOptions,
    _keep: Vec<TestFile>,
}

impl Job {
    pub fn new(depth: u32, files: Vec<TestFile>) -> Job {
        let unit_len = 64 * 1024;
        let infos = files
            .iter()
            .map(|f| FileInfo {
                fd: f.file.as_raw_fd(),
                size: FILE_SIZE,
                is_block: false,
            })
            .collect();
        Job {
            depth,
            unit_len,
            files: infos,
            buf: AlignedBuf::new(unit_len * depth as usize),
            opts: EngineOptions {
                nonvectored: -1,
                ..EngineOptions::default()
            },
            _keep: files,
        }
    }

    pub fn config(&self) -> EngineConfig<'_> {
        EngineConfig {
            depth: self.depth,
            files: &self.files,
            paths: &[],
            buffers: (self.buf.ptr, self.unit_len * self.depth as usize),
            unit_buf_len: self.unit_len,
            opts: self.opts.clone(),
        }
    }

    /// Runs the batches one after another through `engine`.
    pub fn run(&self, engine: &str, batches: &[Vec<Op>]) -> Result<Vec<Vec<Outcome>>, EngineError> {
        let script = Script { job: self, batches };
        with_engine(engine, &self.config(), script)
    }

    /// Like `run`, but panics on setup errors.
    pub fn run_ok(&self, engine: &str, batches: &[Vec<Op>]) -> Vec<Vec<Outcome>> {
        match self.run(engine, batches) {
            Ok(out) => out,
            Err(e) => panic!("{engine}: setup failed: {e}"),
        }
    }
}

struct Script<'a> {
    job: &'a Job,
    batches: &'a [Vec<Op>],
}

impl EngineUser for Script<'_> {
    type Output = Vec<Vec<Outcome>>;

    fn run<E: Engine>(self, mut engine: E) -> Self::Output {
        let mut units: Vec<IoUnit> = (0..self.job.depth as usize)
            .map(|i| IoUnit {
                // SAFETY: inside the region.
                buf: unsafe { self.job.buf.ptr.add(i * self.job.unit_len) },
                buf_len: self.job.unit_len as u32,
                ..IoUnit::default()
            })
            .collect();
        self.batches
            .iter()
            .map(|b| run_batch(&mut engine, self.job, &mut units, b))
            .collect()
    }
}

/// Issues a batch as one queue burst + commit, then reaps all of it, checking that each
/// unit completes exactly once and that getevents honours `min`.
fn run_batch<E: Engine>(e: &mut E, job: &Job, units: &mut [IoUnit], ops: &[Op]) -> Vec<Outcome> {
    assert!(ops.len() <= units.len());
    let mut results = vec![None; ops.len()];
    let mut queued = 0u32;
    for (i, op) in ops.iter().enumerate() {
        let unit = &mut units[i];
        prepare(job, i, unit, op);
        match e.queue(i as u32, unit).expect("queue") {
            Queued::Done => results[i] = Some(unit.result),
            Queued::Queued => queued += 1,
            Queued::Busy => panic!("engine busy with {queued} queued"),
        }
    }
    if e.is_sync() {
        assert_eq!(queued, 0, "a sync engine must complete in queue");
    }
    let mut committed = 0;
    while committed < queued {
        committed += e.commit().expect("commit");
    }
    let mut seen = HashSet::new();
    let mut left = queued;
    while left > 0 {
        let n = e.getevents(left, left).expect("getevents");
        assert!(n >= left, "getevents({left},{left}) returned {n}");
        for j in 0..n {
            let c = e.event(j);
            assert!(seen.insert(c.unit), "unit {} completed twice", c.unit);
            assert!(results[c.unit as usize].is_none());
            results[c.unit as usize] = Some(c.result);
        }
        left -= n;
    }
    ops.iter()
        .zip(results)
        .enumerate()
        .map(|(i, (op, r))| outcome(job, i, op, r.expect("no completion")))
        .collect()
}

fn prepare(job: &Job, i: usize, unit: &mut IoUnit, op: &Op) {
    unit.ddir = op.ddir;
    unit.offset = op.offset;
    unit.len = op.len;
    unit.file = op.file;
    unit.ioprio = op.ioprio;
    unit.flags = op.flags;
    unit.result = i64::MIN;
    // A deliberately oversized op only touches the unit's own buffer.
    let len = (op.len as usize).min(job.unit_len);
    let data = match op.ddir {
        Ddir::Write => pattern(op.seed, op.offset, len),
        // Poison so a read that transfers nothing is caught.
        _ => vec![0xa5; len],
    };
    job.buf.fill(i * job.unit_len, &data);
}

fn outcome(job: &Job, i: usize, op: &Op, result: i64) -> Outcome {
    let data = if op.ddir == Ddir::Read && result > 0 {
        job.buf.copy(i * job.unit_len, result as usize)
    } else {
        Vec::new()
    };
    Outcome { result, data }
}

/// Offsets used by the round-trip tests: not sequential, not in order.
pub const OFFSETS: [u64; 8] = [0, 65536, 8192, 131072, 4096, 524288, 12288, 1040384];

/// Writes a pattern at OFFSETS[..n], syncs, reads it back, and checks bytes and results.
pub fn round_trip(job: &Job, engine: &str, n: usize, len: u32) {
    let writes: Vec<Op> = (0..n)
        .map(|i| Op::write(OFFSETS[i], len, i as u8 + 1))
        .collect();
    let syncs = vec![Op::other(Ddir::Sync, 0, 0), Op::other(Ddir::DataSync, 0, 0)];
    let reads: Vec<Op> = (0..n).map(|i| Op::read(OFFSETS[i], len)).collect();
    let out = job.run_ok(engine, &[writes, syncs, reads]);
    for (i, w) in out[0].iter().enumerate() {
        assert_eq!(w.result, len as i64, "{engine}: write {i}");
    }
    assert_eq!(out[1][0].result, 0, "{engine}: fsync");
    assert_eq!(out[1][1].result, 0, "{engine}: fdatasync");
    for (i, r) in out[2].iter().enumerate() {
        assert_eq!(r.result, len as i64, "{engine}: read {i}");
        let want = pattern(i as u8 + 1, OFFSETS[i], len as usize);
        assert!(r.data == want, "{engine}: read {i} returned wrong bytes");
    }
}

/// Writes 64 KiB, punches 8 KiB at 8 KiB through the engine, reads the hole back.
pub fn trim_test(job: &Job, engine: &str) {
    let out = job.run_ok(
        engine,
        &[
            vec![Op::write(0, 65536, 7)],
            vec![Op::other(Ddir::Trim, 8192, 8192)],
            vec![Op::read(0, 65536)],
        ],
    );
    assert_eq!(out[0][0].result, 65536);
    assert_eq!(out[1][0].result, 8192, "{engine}: trim result");
    let data = &out[2][0].data;
    assert_eq!(data.len(), 65536);
    let want = pattern(7, 0, 65536);
    assert_eq!(&data[..8192], &want[..8192], "{engine}: before the hole");
    assert!(
        data[8192..16384].iter().all(|&b| b == 0),
        "{engine}: hole not zero"
    );
    assert_eq!(&data[16384..], &want[16384..], "{engine}: after the hole");
}

#[test]
fn unknown_engine_is_unsupported() {
    let job = Job::new(1, vec![buffered()]);
    match job.run("windowsaio", &[]) {
        Err(EngineError::Unsupported(name)) => assert_eq!(name, "windowsaio"),
        other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn zero_depth_is_invalid() {
    let job = Job::new(1, vec![buffered()]);
    let mut cfg = job.config();
    cfg.depth = 0;
    let res = with_engine(
        "psync",
        &cfg,
        Script {
            job: &job,
            batches: &[],
        },
    );
    assert!(matches!(res, Err(EngineError::Invalid { .. })));
}

#[test]
fn implemented_engines_all_set_up() {
    let job = Job::new(4, vec![buffered()]);
    let names = [
        "psync", "sync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "null", "mmap",
    ];
    for name in names {
        job.run_ok(name, &[]);
    }
}

/// A prerequisite this machine lacks: a visible skip locally, a failure under CI=true.
pub(crate) fn skip(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("missing prerequisite: {what}; under CI=true tests may not skip");
    }
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("SKIP engine test: {what}\n").as_bytes());
}
