//! `io_uring_cmd`: NVMe commands passed through io_uring (IORING_OP_URING_CMD on 128-byte
//! SQEs and 32-byte CQEs) to a namespace's generic character device, `/dev/ngXnY`, as
//! fio's engine of that name does with `cmd_type=nvme`.
//!
//! Reads and writes are NVMe Read and Write commands (`readfua`/`writefua` set FUA);
//! `write_mode` turns writes into Write Zeroes (`deac`: deallocating), Write
//! Uncorrectable or Verify, which move no data; a trim is a Dataset Management
//! "deallocate" of one range. A completion's result is 0 (done), a negative errno, or a
//! positive NVMe status, handed to the runner through [`crate::device_status`] so the
//! error says which status it was.

mod check;
mod meta;
pub mod nvme;
pub mod pi;
pub mod zns;

use std::io;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::uring::setup::{self as ring_setup, FixedBufs};
use crate::uring::shared::{enter_retrying, ForceAsync};
use crate::{Completion, Ddir, Engine, EngineConfig, EngineError, IoUnit, Queued};
use nvme::NsInfo;

/// What a write does on the device (`write_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteMode {
    #[default]
    Write,
    Zeroes,
    Uncor,
    Verify,
}

/// The engine's own options.
#[derive(Clone, Copy, Debug, Default)]
pub struct CmdOptions {
    pub readfua: bool,
    pub writefua: bool,
    pub write_mode: WriteMode,
    /// Write Zeroes with the deallocate bit.
    pub deac: bool,
    /// Bytes of each I/O's separate metadata buffer (`md_per_io_size`).
    pub md_per_io_size: u32,
    /// PRACT: the controller inserts and strips protection information (`pi_act`).
    pub pi_act: bool,
    /// PRCHK bits: the PI fields the controller checks (`pi_chk`).
    pub pi_chk: u32,
    pub apptag: u16,
    pub apptag_mask: u16,
    /// Most ranges in one trim (`num_range`; at least 1).
    pub num_range: u32,
    /// The job's smallest and largest block size, per direction (read, write, trim):
    /// each must be whole blocks of every namespace.
    pub bs: [(u64, u64); 3],
    /// The job verifies what it writes.
    pub verify: bool,
}

/// Flexible Data Placement for writes (`fdp=1` / `dataplacement=fdp`).
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Indices into each namespace's reclaim unit handle list (`plids`); empty: all.
    pub indices: Vec<u32>,
    /// `plid_select=random` (else round robin).
    pub random: bool,
    /// Seed of the random choice.
    pub seed: u64,
    /// `plid_select=scheme`: the placement ID of a write by its offset (`dp_scheme`).
    pub scheme: Vec<SchemeEntry>,
}

/// One line of a `dp_scheme` file: writes at offsets in [start, end) carry `plid`
/// (the first line that holds the offset wins; an offset in none carries 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeEntry {
    pub start: u64,
    pub end: u64,
    pub plid: u16,
}

/// A Dataset Management range: context attributes, length in blocks, start LBA.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct DsmRange {
    cattr: u32,
    nlb: u32,
    slba: u64,
}

type Ring = IoUring<squeue::Entry128, cqueue::Entry32>;

pub(crate) struct UringCmdEngine {
    ring: Ring,
    fds: Box<[i32]>,
    ns: Box<[NsInfo]>,
    /// Per file, the host's bytes per block (data, and in an extended-LBA format the
    /// metadata after it).
    blocks: Box<[u64]>,
    fixed_files: bool,
    fixed_bufs: Option<FixedBufs>,
    /// NVME_URING_CMD_IO_VEC with this per-unit iovec (`nonvectored=0`).
    vectored: bool,
    iovecs: Box<[libc::iovec]>,
    /// Per-unit trim range (its address is in the command until completion).
    ranges: Box<[DsmRange]>,
    /// Per-unit length, reported as the bytes done when the command succeeds.
    lens: Box<[u32]>,
    /// Per-unit separate metadata buffers, `md_len` bytes each (empty when no
    /// namespace needs one).
    md: Box<[u8]>,
    md_len: usize,
    /// Per unit, a read whose protection information the host checks when it
    /// completes (pi_act=0 with pi_chk): its buffer, its namespace and what to expect.
    checks: Box<[Option<HostCheck>]>,
    /// Per file, the placement identifiers writes cycle through (empty: no directive).
    pids: Box<[Box<[u16]>]>,
    /// Round robin position, or the random generator's state.
    next_pid: u64,
    random_pid: bool,
    /// `plid_select=scheme`: placement IDs by offset instead.
    scheme: Box<[SchemeEntry]>,
    cmd: CmdOptions,
    force_async: ForceAsync,
    iopoll: bool,
    sqpoll: bool,
    depth: u32,
    pending: u32,
    inflight: u32,
    events: Box<[Completion]>,
}

impl UringCmdEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Result<Self, EngineError> {
        let opts = &cfg.opts;
        let depth = cfg.depth.max(1);
        let units = crate::ops::unit_capacity(cfg);
        let ns = cfg
            .files
            .iter()
            .zip(cfg.paths)
            .map(|(f, p)| {
                nvme::ns_info(f.fd).map_err(|source| EngineError::Setup {
                    engine: NAME,
                    what: format!(
                        "{}: not an NVMe namespace (NVME_IOCTL_ID, Identify)",
                        p.display()
                    ),
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        meta::check_formats(&ns, cfg).map_err(invalid)?;
        let md_len = meta::metadata_len(&ns, cfg).map_err(invalid)?;
        let blocks = ns.iter().map(|n| n.host_block(opts.cmd.pi_act)).collect();
        let pids = placement_ids(&ns, cfg)?;
        let ring: Ring = ring_setup::build_ring_of(depth, opts, NAME)?;
        let fds: Box<[i32]> = cfg.files.iter().map(|f| f.fd).collect();
        if opts.registerfiles || opts.sqthread_poll {
            ring_setup::register_files_of(&ring, &fds, NAME)?;
        }
        let vectored = opts.nonvectored == 0;
        let fixed_bufs = match (opts.fixedbufs, vectored) {
            (true, true) => {
                return Err(EngineError::Invalid {
                    engine: NAME,
                    msg: "fixedbufs needs non-vectored commands (nonvectored=0 was given)".into(),
                })
            }
            (true, false) => Some(ring_setup::register_buffers_of(&ring, cfg, NAME)?),
            (false, _) => None,
        };
        let empty_iov = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        Ok(UringCmdEngine {
            ring,
            fds,
            ns: ns.into(),
            blocks,
            fixed_files: opts.registerfiles || opts.sqthread_poll,
            fixed_bufs,
            vectored,
            iovecs: vec![empty_iov; units].into_boxed_slice(),
            ranges: vec![DsmRange::default(); units * cfg.opts.cmd.num_range.max(1) as usize]
                .into_boxed_slice(),
            lens: vec![0; units].into_boxed_slice(),
            md: vec![0; meta::md_bytes(units, md_len).map_err(invalid)?].into_boxed_slice(),
            md_len,
            checks: vec![None; units].into_boxed_slice(),
            pids,
            // Round robin starts at the first placement ID; random from the seed.
            next_pid: opts
                .placement
                .as_ref()
                .map_or(0, |p| if p.random { p.seed | 1 } else { 0 }),
            random_pid: opts.placement.as_ref().is_some_and(|p| p.random),
            scheme: opts
                .placement
                .as_ref()
                .map(|p| p.scheme.clone().into_boxed_slice())
                .unwrap_or_default(),
            cmd: opts.cmd,
            force_async: ForceAsync::new(opts.force_async),
            iopoll: opts.hipri,
            sqpoll: opts.sqthread_poll,
            depth,
            pending: 0,
            inflight: 0,
            events: vec![Completion { unit: 0, result: 0 }; depth as usize].into_boxed_slice(),
        })
    }

    /// A Dataset Management (deallocate) command for trim unit `idx`: its own range,
    /// or the `unit.ranges` ranges the runner put at the start of its buffer
    /// (`num_range`), each checked to be whole blocks of the namespace.
    fn dsm(
        &mut self,
        idx: usize,
        unit: &IoUnit,
        (ns, block): (NsInfo, u64),
        (slba, nlb): (u64, u32),
    ) -> Result<nvme::PassthruCmd, i64> {
        let per = self.cmd.num_range.max(1) as usize;
        let n = usize::from(unit.ranges).max(1);
        let bad = -(libc::EINVAL as i64);
        let table = self
            .ranges
            .get_mut(idx * per..idx * per + n)
            .filter(|_| n <= per)
            .ok_or(bad)?;
        if n == 1 {
            table[0] = DsmRange {
                cattr: 0,
                nlb,
                slba,
            };
        } else {
            if unit.buf.is_null() || n * 16 > unit.buf_len as usize {
                return Err(bad);
            }
            for (i, r) in table.iter_mut().enumerate() {
                // SAFETY: the buffer holds `buf_len` bytes, at least n pairs of u64
                // (checked above); unaligned reads of plain integers.
                let (off, len) = unsafe {
                    let p = unit.buf.add(i * 16) as *const u64;
                    (p.read_unaligned(), p.add(1).read_unaligned())
                };
                let (slba, blocks) = meta::blocks_of(off, len, block).ok_or(bad)?;
                *r = DsmRange {
                    cattr: 0,
                    nlb: u32::try_from(blocks).map_err(|_| bad)?,
                    slba,
                };
            }
        }
        let addr = table.as_ptr() as u64;
        let mut t = nvme::rw(nvme::OP_DSM, ns.nsid, 0, 1, (addr, (16 * n) as u32));
        // CDW10: number of ranges, 0-based; CDW11: deallocate.
        t.cdw10 = (n - 1) as u32;
        t.cdw11 = nvme::DSM_AD;
        t.cdw12 = 0;
        Ok(t)
    }

    /// The NVMe command for `unit`, or the errno that refuses it (an offset or length
    /// that is not whole blocks, an fsync: NVMe passthrough has no file to sync).
    fn command(
        &mut self,
        idx: usize,
        unit: &mut IoUnit,
    ) -> Result<(nvme::PassthruCmd, Option<u16>), i64> {
        unit.placement = crate::NO_PLACEMENT;
        let ns = self.ns[unit.file as usize];
        let block = self.blocks[unit.file as usize];
        let (slba, nlb) = meta::blocks_of(unit.offset, u64::from(unit.len), block)
            .ok_or(-(libc::EINVAL as i64))?;
        // (At most len, a u32.)
        let nlb = nlb as u32;
        // NLB is a 16-bit field (0-based): Write Zeroes, Uncorrectable and Verify move
        // no data, so nothing else would stop a larger one from spilling into CDW12's
        // other bits. (A trim's ranges count their blocks in 32 bits.)
        if nlb > 1 << 16 && unit.ddir != Ddir::Trim {
            return Err(-(libc::EINVAL as i64));
        }
        let data = (unit.buf as u64, unit.len);
        let none = (0, 0);
        let c = self.cmd;
        let mut cmd = match (unit.ddir, c.write_mode) {
            (Ddir::Read, _) if unit.flags & crate::UNIT_COMPARE != 0 => {
                nvme::rw(nvme::OP_COMPARE, ns.nsid, slba, nlb, data)
            }
            (Ddir::Read, _) => nvme::rw(nvme::OP_READ, ns.nsid, slba, nlb, data),
            (Ddir::Write, WriteMode::Write) => nvme::rw(nvme::OP_WRITE, ns.nsid, slba, nlb, data),
            (Ddir::Write, WriteMode::Zeroes) => {
                let mut z = nvme::rw(nvme::OP_WRITE_ZEROES, ns.nsid, slba, nlb, none);
                if c.deac {
                    z.cdw12 |= nvme::CDW12_DEAC;
                }
                z
            }
            (Ddir::Write, WriteMode::Uncor) => {
                nvme::rw(nvme::OP_WRITE_UNCOR, ns.nsid, slba, nlb, none)
            }
            (Ddir::Write, WriteMode::Verify) => nvme::rw(nvme::OP_VERIFY, ns.nsid, slba, nlb, none),
            (Ddir::Trim, _) => self.dsm(idx, unit, (ns, block), (slba, nlb))?,
            (Ddir::Sync | Ddir::DataSync, _) => return Err(-(libc::EINVAL as i64)),
        };
        let fua = match unit.ddir {
            Ddir::Read => c.readfua,
            Ddir::Write => c.writefua && c.write_mode == WriteMode::Write,
            _ => false,
        };
        if fua {
            cmd.cdw12 |= nvme::CDW12_FUA;
        }
        if cmd.opcode == nvme::OP_WRITE {
            if let Some(pid) = self.placement(unit.file as usize, unit.offset) {
                cmd.cdw12 |= nvme::CDW12_DTYPE_PLACEMENT;
                cmd.cdw13 = u32::from(pid) << 16;
                unit.placement = pid;
            }
        }
        if ns.ms > 0 && matches!(cmd.opcode, nvme::OP_READ | nvme::OP_WRITE) {
            self.protect(&mut cmd, idx, unit, ns, (slba, nlb));
        }
        let moves_data = matches!(
            cmd.opcode,
            nvme::OP_READ | nvme::OP_WRITE | nvme::OP_COMPARE
        );
        let mut buf_index = None;
        if moves_data && self.vectored {
            self.iovecs[idx] = crate::sync_engine::iovec(unit.buf, unit.len as usize);
            cmd.addr = &self.iovecs[idx] as *const libc::iovec as u64;
            // The vectored command's data_len is the number of iovecs.
            cmd.data_len = 1;
        } else if moves_data {
            buf_index = self
                .fixed_bufs
                .and_then(|fb| fb.index_of(unit.buf, unit.len));
        }
        Ok((cmd, buf_index))
    }

    /// The placement identifier of the next write to `file` at `offset`, when writes
    /// are placed: round robin over the job's placement IDs, uniformly at random, or
    /// by the offset's scheme entry (0 outside them all, as in fio).
    fn placement(&mut self, file: usize, offset: u64) -> Option<u16> {
        let pids = self.pids.get(file).filter(|p| !p.is_empty())?;
        if !self.scheme.is_empty() {
            let hit = self
                .scheme
                .iter()
                .find(|e| (e.start..e.end).contains(&offset));
            return Some(hit.map_or(0, |e| e.plid));
        }
        let n = pids.len() as u64;
        let i = if self.random_pid {
            // xorshift64*: cheap, and repeatable from the job's seed.
            let mut x = self.next_pid;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.next_pid = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        } else {
            let i = self.next_pid % n;
            self.next_pid = self.next_pid.wrapping_add(1);
            i
        };
        Some(pids[i as usize])
    }

    /// Protection information and metadata of a read or write on a namespace formatted
    /// with metadata: PRINFO (PRACT, PRCHK), the expected reference and application
    /// tags, and the unit's metadata buffer, with the PI of each block generated here
    /// for a write when the controller does not insert it (pi_act=0).
    fn protect(
        &mut self,
        cmd: &mut nvme::PassthruCmd,
        idx: usize,
        unit: &IoUnit,
        ns: NsInfo,
        (slba, nlb): (u64, u32),
    ) {
        let c = self.cmd;
        if ns.pi_type != 0 {
            cmd.cdw12 |= c.pi_chk;
            if c.pi_act {
                cmd.cdw12 |= nvme::CDW12_PRACT;
            }
            // Types 1 and 2 check the reference tag against the LBA: its low 32 bits in
            // CDW14, and with the 64-bit guard bits 47:32 in CDW3.
            if ns.pi_type != 3 {
                cmd.cdw14 = slba as u32;
                if ns.guard == pi::Guard::Crc64 {
                    cmd.cdw3 = (slba >> 32) as u32 & 0xffff;
                }
            }
            cmd.cdw15 = u32::from(c.apptag_mask) << 16 | u32::from(c.apptag);
        }
        let host_pi = unit.ddir == Ddir::Write && !c.pi_act && ns.pi_type != 0;
        let checked = unit.ddir == Ddir::Read && !c.pi_act && ns.pi_type != 0 && c.pi_chk != 0;
        self.checks[idx] = checked.then_some(HostCheck {
            buf: unit.buf,
            len: unit.len as usize,
            ns,
            expect: check::Expect {
                slba,
                chk: c.pi_chk,
                apptag: c.apptag,
                apptag_mask: c.apptag_mask,
            },
        });
        let lba = ns.lba_size() as usize;
        if ns.extended {
            if host_pi {
                // SAFETY: the unit's buffer holds `len` bytes (checked by check_rw), and
                // the job does not touch it until the write completes; the PI goes in
                // each block's metadata, inside the data (as fio writes it).
                let data = unsafe { std::slice::from_raw_parts_mut(unit.buf, unit.len as usize) };
                let blocks = data.chunks_mut(lba + usize::from(ns.ms)).map(|b| {
                    let (d, m) = b.split_at_mut(lba);
                    (&*d, m)
                });
                meta::write_pi(ns, c.apptag, slba, blocks);
            }
            return;
        }
        if self.md_len == 0 || !meta::needs_md(&ns, c.pi_act) {
            return;
        }
        let ms = usize::from(ns.ms);
        let want = nlb as usize * ms;
        let md = &mut self.md[idx * self.md_len..][..want];
        cmd.metadata = md.as_mut_ptr() as u64;
        cmd.metadata_len = want as u32;
        if !host_pi {
            return;
        }
        // SAFETY: the unit's buffer holds `len` bytes (checked by check_rw), and the
        // job does not touch it until the write completes.
        let data = unsafe { std::slice::from_raw_parts(unit.buf, unit.len as usize) };
        meta::write_pi(ns, c.apptag, slba, data.chunks(lba).zip(md.chunks_mut(ms)));
    }

    fn enter(&mut self, want: usize) -> io::Result<()> {
        if let Some(n) = enter_retrying(|| self.ring.submit_and_wait(want))? {
            let n = if self.sqpoll {
                self.pending
            } else {
                (n as u32).min(self.pending)
            };
            self.pending -= n;
            self.inflight += n;
        }
        Ok(())
    }

    fn drain(&mut self, max: usize) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion().take(max) {
            let unit = cqe.user_data() as u32;
            let res = i64::from(cqe.result());
            // Taken whatever the result: the unit's next command sets its own.
            let check = self.checks.get_mut(unit as usize).and_then(Option::take);
            let result = match res {
                0 => {
                    let done = i64::from(self.lens.get(unit as usize).copied().unwrap_or(0));
                    check.map_or(done, |h| {
                        host_check(h, &self.md, self.md_len, unit as usize, done)
                    })
                }
                r if r < 0 => r,
                status => crate::device_status::nvme(status as u16),
            };
            self.events[n] = Completion { unit, result };
            n += 1;
        }
        self.inflight = self.inflight.saturating_sub(n as u32);
        n
    }
}

/// A completed command's result: its length, unless the host's check of the
/// protection information it read fails. `md` holds every unit's separate metadata, `md_len` bytes each.
fn host_check(h: HostCheck, md: &[u8], md_len: usize, idx: usize, done: i64) -> i64 {
    if !h.ns.extended && md_len == 0 {
        return done;
    }
    // SAFETY: the read filled the unit's buffer of `len` bytes (checked by check_rw
    // when queued), which the job does not touch before it reaps it.
    let data = unsafe { std::slice::from_raw_parts(h.buf, h.len) };
    let lba = h.ns.lba_size() as usize;
    let ms = usize::from(h.ns.ms);
    let found = if h.ns.extended {
        let blocks = data.chunks_exact(lba + ms).map(|b| b.split_at(lba));
        check::check(h.ns, h.expect, blocks)
    } else {
        let md = &md[idx * md_len..][..h.len / lba * ms];
        check::check(h.ns, h.expect, data.chunks(lba).zip(md.chunks(ms)))
    };
    match found {
        Ok(()) => done,
        Err((field, block)) => crate::device_status::host_pi(field as u8, block),
    }
}

/// A read to check on completion ([`check`]).
#[derive(Clone, Copy)]
struct HostCheck {
    buf: *const u8,
    len: usize,
    ns: NsInfo,
    expect: check::Expect,
}

/// The engine's name in messages.
const NAME: &str = "io_uring_cmd";

/// A job the engine refuses, saying why.
fn invalid(msg: String) -> EngineError {
    EngineError::Invalid { engine: NAME, msg }
}

/// Per file, the placement identifiers its writes use: the namespace's reclaim unit
/// handles (I/O Management Receive), picked by `plids` indices. A namespace without
/// FDP, or an index past its list, is refused naming what it has.
fn placement_ids(ns: &[NsInfo], cfg: &EngineConfig<'_>) -> Result<Box<[Box<[u16]>]>, EngineError> {
    let Some(p) = &cfg.opts.placement else {
        return Ok(vec![Box::default(); ns.len()].into_boxed_slice());
    };
    let mut out = Vec::with_capacity(ns.len());
    for ((n, f), path) in ns.iter().zip(cfg.files).zip(cfg.paths) {
        let all = nvme::placement_ids(f.fd, n.nsid).map_err(|source| EngineError::Setup {
            engine: NAME,
            what: format!(
                "{}: dataplacement=fdp: reclaim unit handle status (is FDP enabled?)",
                path.display()
            ),
            source,
        })?;
        if let Some(e) = p.scheme.iter().find(|e| !all.contains(&e.plid)) {
            return Err(EngineError::Invalid {
                engine: NAME,
                msg: format!(
                    "{}: dp_scheme: placement ID {} is not one of the namespace's ({:?})",
                    path.display(),
                    e.plid,
                    all
                ),
            });
        }
        // With a scheme, plids is ignored (as in fio): the scheme names the IDs.
        let pick: Result<Vec<u16>, EngineError> = match p.indices.is_empty() || !p.scheme.is_empty() {
            true => Ok(all.clone()),
            false => p
                .indices
                .iter()
                .map(|&i| {
                    all.get(i as usize).copied().ok_or_else(|| EngineError::Invalid {
                        engine: NAME,
                        msg: format!(
                            "{}: plids index {i}: the namespace has {} placement IDs (indices 0-{})",
                            path.display(),
                            all.len(),
                            all.len().saturating_sub(1)
                        ),
                    })
                })
                .collect(),
        };
        let pick = pick?;
        if pick.is_empty() {
            return Err(EngineError::Invalid {
                engine: NAME,
                msg: format!(
                    "{}: dataplacement=fdp: the namespace has no placement IDs",
                    path.display()
                ),
            });
        }
        out.push(pick.into_boxed_slice());
    }
    Ok(out.into_boxed_slice())
}

impl Engine for UringCmdEngine {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        let i = idx as usize;
        if i >= self.lens.len() || unit.file as usize >= self.fds.len() {
            unit.result = -(libc::EBADF as i64);
            return Ok(Queued::Done);
        }
        if unit.ddir == Ddir::Read || unit.ddir == Ddir::Write {
            if let Err(res) = crate::ops::check_rw(unit) {
                unit.result = res;
                return Ok(Queued::Done);
            }
        }
        if self.pending + self.inflight >= self.depth {
            return Ok(Queued::Busy);
        }
        // Set again by protect() when this command is a read the host checks.
        self.checks[i] = None;
        let (cmd, buf_index) = match self.command(i, unit) {
            Ok(c) => c,
            Err(res) => {
                unit.result = res;
                return Ok(Queued::Done);
            }
        };
        self.lens[i] = unit.len;
        let op = match self.vectored && matches!(unit.ddir, Ddir::Read | Ddir::Write) {
            true => nvme::NVME_URING_CMD_IO_VEC,
            false => nvme::NVME_URING_CMD_IO,
        };
        let entry = if self.fixed_files {
            opcode::UringCmd80::new(types::Fixed(unit.file), op)
        } else {
            opcode::UringCmd80::new(types::Fd(self.fds[unit.file as usize]), op)
        }
        .cmd(cmd.to_sqe_cmd())
        .buf_index(buf_index)
        .build()
        .user_data(u64::from(idx))
        .flags(self.force_async.flags(unit));
        // SAFETY: the command points at the unit's buffer (checked to hold `len`
        // bytes), its iovec or its trim range, all untouched until its completion is
        // reaped.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Ok(Queued::Busy);
        }
        self.pending += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        if self.pending == 0 {
            return Ok(0);
        }
        let before = self.inflight;
        self.enter(0)?;
        Ok(self.inflight - before)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        let max = (max as usize).min(self.events.len());
        let min = (min as usize).min(max).min(self.inflight as usize);
        let ready = self.ring.completion().len();
        // IOPOLL completions appear only when someone polls for them.
        let must_poll = self.iopoll && ready == 0 && self.inflight > 0;
        if ready < min || must_poll {
            self.enter(min)?;
        }
        Ok(self.drain(max) as u32)
    }

    fn event(&mut self, i: u32) -> Completion {
        self.events[i as usize]
    }
}
