//! `sg`: SCSI commands through Linux's sg driver, as fio's engine of that name issues
//! them. On a SCSI generic device (`/dev/sgN`) a command is submitted with write(2) of
//! its `sg_io_hdr` and reaped with read(2) (asynchronous, up to the depth); on a block
//! device it goes through the SG_IO ioctl and completes at once.
//!
//! Reads are READ (`readfua`: FUA), writes follow `sg_write_mode` (WRITE, WRITE AND
//! VERIFY, WRITE SAME, VERIFY with BYTCHK 00/01/11), trims are UNMAP of one range. A
//! check condition is handed to the runner with its sense key and ASC/ASCQ
//! ([`crate::device_status`]).

pub mod scsi;

use std::io;

use crate::{Completion, Ddir, Engine, EngineConfig, EngineError, IoUnit, Queued};
use scsi::SgIoHdr;

/// What a write issues (`sg_write_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SgWriteMode {
    #[default]
    Write,
    WriteAndVerify,
    WriteSame,
    WriteSameNdob,
    /// VERIFY with BYTCHK 00, 01 or 11.
    Verify(u8),
}

/// The engine's own options.
#[derive(Clone, Copy, Debug, Default)]
pub struct SgOptions {
    pub readfua: bool,
    pub writefua: bool,
    pub write_mode: SgWriteMode,
}

const NAME: &str = "sg";

/// One file: its descriptor, block size, and whether it is an sg device (write/read)
/// or a block device (SG_IO).
#[derive(Clone, Copy)]
struct SgFile {
    fd: i32,
    block: u32,
    ioctl: bool,
}

/// Per unit: its header (handed to the kernel), CDB, sense and UNMAP parameters.
#[derive(Clone, Copy)]
struct Slot {
    hdr: SgIoHdr,
    cdb: [u8; 16],
    sense: [u8; scsi::SENSE_LEN],
    params: [u8; 24],
    /// The unit's length: the bytes done when the command succeeds (WRITE SAME
    /// writes them from one block).
    len: u32,
}

pub(crate) struct SgEngine {
    files: Box<[SgFile]>,
    slots: Box<[Slot]>,
    opts: SgOptions,
    depth: u32,
    /// Submitted since the last commit (write(2) submits at once).
    fresh: u32,
    inflight: u32,
    /// Per file: commands submitted and not reaped.
    file_inflight: Box<[u32]>,
    pollfds: Box<[libc::pollfd]>,
    events: Box<[Completion]>,
}

impl SgEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Result<Self, EngineError> {
        let files = cfg
            .files
            .iter()
            .zip(cfg.paths)
            .map(|(f, p)| open_file(f, p))
            .collect::<Result<Vec<_>, _>>()?;
        let units = crate::ops::unit_capacity(cfg);
        let slot = Slot {
            hdr: SgIoHdr::default(),
            cdb: [0; 16],
            sense: [0; scsi::SENSE_LEN],
            params: [0; 24],
            len: 0,
        };
        let pollfds = files
            .iter()
            .map(|f| libc::pollfd {
                fd: f.fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let depth = cfg.depth.max(1);
        Ok(SgEngine {
            file_inflight: vec![0; files.len()].into_boxed_slice(),
            files: files.into(),
            slots: vec![slot; units].into_boxed_slice(),
            opts: cfg.opts.sg,
            depth,
            fresh: 0,
            inflight: 0,
            pollfds,
            events: vec![Completion { unit: 0, result: 0 }; depth as usize].into_boxed_slice(),
        })
    }

    /// Fill unit `i`'s slot with the command for `unit`; the refusing errno otherwise
    /// (a range that is not whole blocks, a sync: SCSI has no file to sync here).
    fn prepare(&mut self, i: usize, unit: &IoUnit) -> Result<(), i64> {
        let f = self.files[unit.file as usize];
        let bs = u64::from(f.block);
        if unit.offset % bs != 0 || u64::from(unit.len) % bs != 0 || unit.len == 0 {
            return Err(-(libc::EINVAL as i64));
        }
        let lba = unit.offset / bs;
        let blocks = unit.len / f.block;
        let o = self.opts;
        let s = &mut self.slots[i];
        let (len, dir, data) = match (unit.ddir, o.write_mode) {
            (Ddir::Read, _) => {
                let fua = if o.readfua { scsi::FUA } else { 0 };
                let n = scsi::lba_cdb(&mut s.cdb, scsi::READ, fua, lba, blocks);
                (n, scsi::SG_DXFER_FROM_DEV, (unit.buf, unit.len))
            }
            (Ddir::Write, mode) => write_cdb(s, mode, o.writefua, (lba, blocks), unit, f.block),
            (Ddir::Trim, _) => {
                let n = scsi::unmap(&mut s.cdb, &mut s.params, lba, blocks);
                (n, scsi::SG_DXFER_TO_DEV, (s.params.as_mut_ptr(), 24))
            }
            (Ddir::Sync | Ddir::DataSync, _) => return Err(-(libc::EINVAL as i64)),
        };
        s.hdr = SgIoHdr {
            dxfer_direction: if data.1 == 0 {
                scsi::SG_DXFER_NONE
            } else {
                dir
            },
            cmd_len: len,
            mx_sb_len: scsi::SENSE_LEN as u8,
            dxfer_len: data.1,
            dxferp: data.0,
            cmdp: s.cdb.as_ptr(),
            sbp: s.sense.as_mut_ptr(),
            pack_id: i as i32,
            ..SgIoHdr::default()
        };
        s.len = unit.len;
        Ok(())
    }

    /// The completion of the command in slot `i`: bytes done, or what went wrong.
    fn result_of(&self, i: usize) -> i64 {
        let s = &self.slots[i];
        match scsi::outcome(&s.hdr, &s.sense) {
            0 => i64::from(s.len) - i64::from(s.hdr.resid.max(0)),
            r => r,
        }
    }

    /// Reap what the sg devices have ready, up to `max`, without waiting.
    fn reap(&mut self, max: usize, n: &mut usize) -> io::Result<()> {
        for fi in 0..self.files.len() {
            while *n < max && self.file_inflight[fi] > 0 {
                let mut h = SgIoHdr::default();
                let fd = self.files[fi].fd;
                // SAFETY: read(2) of an sg device fills one sg_io_hdr, 88 bytes.
                let r = unsafe {
                    libc::read(
                        fd,
                        (&mut h as *mut SgIoHdr).cast(),
                        std::mem::size_of::<SgIoHdr>(),
                    )
                };
                if r < 0 {
                    match crate::ops::errno() {
                        libc::EAGAIN => break,
                        libc::EINTR => continue,
                        e => return Err(io::Error::from_raw_os_error(e)),
                    }
                }
                let i = h.pack_id as usize;
                let Some(slot) = self.slots.get_mut(i) else {
                    continue;
                };
                // The kernel wrote the sense into the slot's buffer; keep the status.
                slot.hdr = h;
                self.events[*n] = Completion {
                    unit: i as u32,
                    result: self.result_of(i),
                };
                *n += 1;
                self.file_inflight[fi] -= 1;
                self.inflight -= 1;
            }
        }
        Ok(())
    }

    /// Wait until an sg device has a completion.
    fn wait(&mut self) -> io::Result<()> {
        for (p, &n) in self.pollfds.iter_mut().zip(self.file_inflight.iter()) {
            p.events = if n > 0 { libc::POLLIN } else { 0 };
        }
        loop {
            // SAFETY: pollfds is a valid array of this many pollfd.
            let r = unsafe {
                libc::poll(
                    self.pollfds.as_mut_ptr(),
                    self.pollfds.len() as libc::nfds_t,
                    -1,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            if crate::ops::errno() != libc::EINTR {
                return Err(io::Error::last_os_error());
            }
        }
    }
}

/// The CDB of a write in `mode`: (CDB length, direction, data).
fn write_cdb(
    s: &mut Slot,
    mode: SgWriteMode,
    fua: bool,
    (lba, blocks): (u64, u32),
    unit: &IoUnit,
    block: u32,
) -> (u8, i32, (*mut u8, u32)) {
    let to = scsi::SG_DXFER_TO_DEV;
    let all = (unit.buf, unit.len);
    let one = (unit.buf, block);
    let none = (std::ptr::null_mut(), 0);
    match mode {
        SgWriteMode::Write => {
            let b1 = if fua { scsi::FUA } else { 0 };
            (
                scsi::lba_cdb(&mut s.cdb, scsi::WRITE, b1, lba, blocks),
                to,
                all,
            )
        }
        SgWriteMode::WriteAndVerify => (
            scsi::lba_cdb(&mut s.cdb, scsi::WRITE_AND_VERIFY, 0, lba, blocks),
            to,
            all,
        ),
        SgWriteMode::WriteSame => (
            scsi::lba_cdb(&mut s.cdb, scsi::WRITE_SAME, 0, lba, blocks),
            to,
            one,
        ),
        SgWriteMode::WriteSameNdob => {
            // NDOB exists only in WRITE SAME(16).
            s.cdb = [0; 16];
            s.cdb[0] = scsi::WRITE_SAME.1;
            s.cdb[1] = scsi::NDOB;
            s.cdb[2..10].copy_from_slice(&lba.to_be_bytes());
            s.cdb[10..14].copy_from_slice(&blocks.to_be_bytes());
            (16, scsi::SG_DXFER_NONE, none)
        }
        SgWriteMode::Verify(bytchk) => {
            let n = scsi::lba_cdb(&mut s.cdb, scsi::VERIFY, bytchk << 1, lba, blocks);
            let data = match bytchk {
                0 => none,
                1 => all,
                _ => one,
            };
            (n, to, data)
        }
    }
}

/// An sg device (made non-blocking, so completions are reaped without waiting) or a
/// block device, with its block size from READ CAPACITY.
fn open_file(f: &crate::FileInfo, path: &std::path::Path) -> Result<SgFile, EngineError> {
    let setup = |what: String, source: io::Error| EngineError::Setup {
        engine: NAME,
        what,
        source,
    };
    let (block, _) = scsi::capacity(f.fd).map_err(|e| {
        setup(
            format!("{}: READ CAPACITY (is it a SCSI device?)", path.display()),
            e,
        )
    })?;
    if !f.is_block {
        // SAFETY: F_GETFL/F_SETFL on a descriptor this job holds open.
        let fl = unsafe { libc::fcntl(f.fd, libc::F_GETFL) };
        // SAFETY: as above.
        if fl < 0 || unsafe { libc::fcntl(f.fd, libc::F_SETFL, fl | libc::O_NONBLOCK) } < 0 {
            return Err(setup(
                format!("{}: O_NONBLOCK", path.display()),
                io::Error::last_os_error(),
            ));
        }
    }
    Ok(SgFile {
        fd: f.fd,
        block,
        ioctl: f.is_block,
    })
}

impl Engine for SgEngine {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        let i = idx as usize;
        if i >= self.slots.len() || unit.file as usize >= self.files.len() {
            unit.result = -(libc::EBADF as i64);
            return Ok(Queued::Done);
        }
        if matches!(unit.ddir, Ddir::Read | Ddir::Write) {
            if let Err(r) = crate::ops::check_rw(unit) {
                unit.result = r;
                return Ok(Queued::Done);
            }
        }
        if self.inflight >= self.depth {
            return Ok(Queued::Busy);
        }
        if let Err(r) = self.prepare(i, unit) {
            unit.result = r;
            return Ok(Queued::Done);
        }
        let f = self.files[unit.file as usize];
        let hdr: *mut SgIoHdr = &mut self.slots[i].hdr;
        if f.ioctl {
            // SAFETY: the header points at this slot's CDB, sense and the unit's
            // buffer (or the slot's parameters), alive for the synchronous ioctl.
            let r = unsafe { libc::ioctl(f.fd, scsi::SG_IO, hdr) };
            unit.result = match r {
                0 => self.result_of(i),
                _ => -(crate::ops::errno() as i64),
            };
            return Ok(Queued::Done);
        }
        // SAFETY: write(2) of an sg device reads one sg_io_hdr; the buffers it points
        // at (this slot's CDB, sense, parameters; the unit's buffer) stay untouched
        // until read(2) hands the command back.
        let r = unsafe { libc::write(f.fd, hdr.cast(), std::mem::size_of::<SgIoHdr>()) };
        if r < 0 {
            return match crate::ops::errno() {
                // The device's queue is full: reap first.
                libc::EAGAIN | libc::EDOM if self.inflight > 0 => Ok(Queued::Busy),
                e => {
                    unit.result = -(e as i64);
                    Ok(Queued::Done)
                }
            };
        }
        self.inflight += 1;
        self.file_inflight[unit.file as usize] += 1;
        self.fresh += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        Ok(std::mem::take(&mut self.fresh))
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        let max = (max as usize).min(self.events.len());
        let min = (min as usize).min(max).min(self.inflight as usize);
        let mut n = 0;
        loop {
            self.reap(max, &mut n)?;
            if n >= min || self.inflight == 0 {
                return Ok(n as u32);
            }
            self.wait()?;
        }
    }

    fn event(&mut self, i: u32) -> Completion {
        self.events[i as usize]
    }
}
