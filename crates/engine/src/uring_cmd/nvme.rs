//! NVMe passthrough, as Linux exposes it on a namespace's generic character device
//! (`/dev/ngXnY`): the namespace's identity (NVME_IOCTL_ID, Identify Namespace through
//! NVME_IOCTL_ADMIN_CMD) and the `struct nvme_uring_cmd` an io_uring URING_CMD carries
//! (include/uapi/linux/nvme_ioctl.h; command layouts from the NVMe base and NVM command
//! set specifications).

use super::pi::Guard;
use std::io;
use std::os::fd::RawFd;

/// `_IO('N', 0x40)`: the namespace id of an NVMe block or generic device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
/// `_IOWR('N', 0x41, struct nvme_passthru_cmd)` (72 bytes): an admin command.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;
/// `_IOWR('N', 0x43, struct nvme_passthru_cmd)`: an I/O command, synchronously.
const NVME_IOCTL_IO_CMD: libc::c_ulong = 0xC048_4E43;
/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: an I/O command, data at `addr`.
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// `_IOWR('N', 0x81, struct nvme_uring_cmd)`: an I/O command, `addr` an iovec array.
pub const NVME_URING_CMD_IO_VEC: u32 = 0xC048_4E81;

/// NVM command set opcodes.
pub const OP_WRITE: u8 = 0x01;
pub const OP_READ: u8 = 0x02;
pub const OP_COMPARE: u8 = 0x05;
pub const OP_WRITE_UNCOR: u8 = 0x04;
pub const OP_WRITE_ZEROES: u8 = 0x08;
pub const OP_DSM: u8 = 0x09;
pub const OP_VERIFY: u8 = 0x0C;
/// Identify (admin); CNS 0: the namespace data structure, 1: the controller's, 5 (with
/// the command set in CDW11 bits 31:24, 0 for NVM): the command-set-specific
/// namespace data structure.
const OP_IDENTIFY: u8 = 0x06;
const CNS_CTRL: u32 = 1;
const CNS_CSI_NS: u32 = 5;
/// Identify Controller CTRATT bit 15: Extended LBA Formats Supported (ELBAF, and
/// with it the guard format of each LBA format).
const CTRATT_ELBAS: u32 = 1 << 15;
/// I/O Management Receive; management operation 1: Reclaim Unit Handle Status.
const OP_IO_MGMT_RECV: u8 = 0x12;
/// CDW12 DTYPE (bits 23:20) 2: the write carries a data placement directive, whose
/// placement identifier goes in CDW13 DSPEC (bits 31:16).
pub const CDW12_DTYPE_PLACEMENT: u32 = 2 << 20;
/// CDW12 bit 30: Force Unit Access.
pub const CDW12_FUA: u32 = 1 << 30;
/// Write Zeroes CDW12 bit 25: deallocate the blocks.
pub const CDW12_DEAC: u32 = 1 << 25;
/// Dataset Management CDW11 bit 2: attribute "deallocate".
pub const DSM_AD: u32 = 1 << 2;
/// CDW12 PRINFO: PRACT (the controller inserts and strips protection information) and
/// PRCHK (which PI fields the controller checks).
pub const CDW12_PRACT: u32 = 1 << 29;
pub const PRCHK_GUARD: u32 = 1 << 28;
pub const PRCHK_APPTAG: u32 = 1 << 27;
pub const PRCHK_REFTAG: u32 = 1 << 26;

/// What a job needs to know of a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NsInfo {
    pub nsid: u32,
    /// log2 of the LBA data size.
    pub lba_shift: u32,
    /// Metadata bytes per LBA in the current format.
    pub ms: u16,
    /// Namespace size in LBAs.
    pub nsze: u64,
    /// Protection information type (0: none; 1, 2, 3).
    pub pi_type: u8,
    /// The PI is the first bytes of the metadata (else the last).
    pub pi_first: bool,
    /// The PI's guard format (its size with it).
    pub guard: Guard,
    /// Metadata travels with each block's data (extended LBA) instead of in a
    /// separate buffer.
    pub extended: bool,
}

impl NsInfo {
    pub fn lba_size(&self) -> u64 {
        1 << self.lba_shift
    }

    /// Whether the namespace's metadata reaches the host: it has some, and the
    /// controller does not insert and strip all of it (`pi_act=1` on metadata that is
    /// all PI, fio's rule).
    pub fn carries_md(&self, pi_act: bool) -> bool {
        self.ms > 0
            && !(pi_act && self.pi_type != 0 && usize::from(self.ms) == self.guard.pi_bytes())
    }

    /// Bytes of a block on the host's side: its data, and in an extended-LBA format
    /// the metadata after it, when that reaches the host.
    pub fn host_block(&self, pi_act: bool) -> u64 {
        match self.extended && self.carries_md(pi_act) {
            true => self.lba_size() + u64::from(self.ms),
            false => self.lba_size(),
        }
    }

    /// The namespace's size in the host's bytes (what fio takes as its size).
    pub fn host_bytes(&self, pi_act: bool) -> u64 {
        self.nsze * self.host_block(pi_act)
    }
}

/// The 64-byte passthrough command of both ioctls and URING_CMD, in the kernel's
/// layout (`struct nvme_passthru_cmd` / `struct nvme_uring_cmd`: the same first 72
/// bytes, the ioctl's last word being its result).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PassthruCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    pub result: u32,
}

const _: () = assert!(std::mem::size_of::<PassthruCmd>() == 72);

impl PassthruCmd {
    /// The command as the 80 bytes of a URING_CMD SQE's command area.
    pub fn to_sqe_cmd(&self) -> [u8; 80] {
        let mut out = [0u8; 80];
        // SAFETY: PassthruCmd is repr(C), 72 bytes of plain integers (no padding:
        // every field is naturally aligned in order); reading it as bytes is sound.
        let bytes: &[u8; 72] = unsafe { &*(self as *const PassthruCmd).cast::<[u8; 72]>() };
        out[..72].copy_from_slice(bytes);
        out
    }
}

/// A read, write or other LBA-range command of `nlb` blocks at `slba`.
pub fn rw(opcode: u8, nsid: u32, slba: u64, nlb: u32, (addr, len): (u64, u32)) -> PassthruCmd {
    PassthruCmd {
        opcode,
        nsid,
        addr,
        data_len: len,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        // Number of logical blocks, 0-based.
        cdw12: nlb.saturating_sub(1),
        ..Default::default()
    }
}

/// Identify the namespace open as `fd` (its generic or block device).
pub fn ns_info(fd: RawFd) -> io::Result<NsInfo> {
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the nsid or -1.
    let nsid = unsafe { libc::ioctl(fd, NVME_IOCTL_ID) };
    if nsid <= 0 {
        return Err(io::Error::last_os_error());
    }
    let nsid = nsid as u32;
    // CNS 0: Identify Namespace.
    let data = identify(fd, nsid, (0, 0), "Identify Namespace failed")?;
    let mut ns = parse_identify(nsid, &data)?;
    if ns.pi_type != 0 {
        ns.guard = guard_format(fd, nsid, format_index(&data))?;
    }
    Ok(ns)
}

/// The guard format of LBA format `index`: from its ELBAF entry when the controller
/// reports extended LBA formats, else the 16-bit guard (as fio 3.42 takes it). Storage
/// tags and the 32-bit guard (which needs them) are refused.
fn guard_format(fd: RawFd, nsid: u32, index: usize) -> io::Result<Guard> {
    let ctrl = identify(fd, 0, (CNS_CTRL, 0), "Identify Controller failed")?;
    let ctratt = u32::from_le_bytes([ctrl[96], ctrl[97], ctrl[98], ctrl[99]]);
    if ctratt & CTRATT_ELBAS == 0 {
        return Ok(Guard::Crc16);
    }
    let nvm = identify(
        fd,
        nsid,
        (CNS_CSI_NS, 0),
        "Identify Namespace (NVM command set) failed",
    )?;
    parse_elbaf(&nvm, index)
}

/// Guard format from ELBAF entry `index` (bytes 12.. of the NVM command set's
/// Identify Namespace): STS bits 6:0 (storage tag size), PIF bits 8:7.
fn parse_elbaf(d: &[u8], index: usize) -> io::Result<Guard> {
    let at = 12 + 4 * index;
    let elbaf = u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
    let (sts, pif) = (elbaf & 0x7f, (elbaf >> 7) & 0x3);
    match (sts, pif) {
        (0, 0) => Ok(Guard::Crc16),
        (0, 2) => Ok(Guard::Crc64),
        (0, _) => Err(io::Error::other(format!(
            "protection information with a {} guard: not supported (16-bit and 64-bit are)",
            if pif == 1 { "32-bit" } else { "reserved" }
        ))),
        _ => Err(io::Error::other(format!(
            "protection information with a {sts}-bit storage tag: not supported"
        ))),
    }
}

/// The current LBA format's index: FLBAS bits 3:0, and 6:5 above them (up to 64
/// formats).
fn format_index(d: &[u8]) -> usize {
    let flbas = d[26];
    usize::from((flbas & 0x0f) | ((flbas >> 1) & 0x30))
}

/// The 4096 bytes of an Identify of namespace `nsid` with CDW10 and CDW11 as given
/// (CNS, and the command set for command-set-specific data).
pub(crate) fn identify(
    fd: RawFd,
    nsid: u32,
    (cdw10, cdw11): (u32, u32),
    what: &str,
) -> io::Result<Vec<u8>> {
    let mut data = vec![0u8; 4096];
    let mut cmd = PassthruCmd {
        opcode: OP_IDENTIFY,
        nsid,
        addr: data.as_mut_ptr() as u64,
        data_len: data.len() as u32,
        cdw10,
        cdw11,
        ..Default::default()
    };
    // SAFETY: the command points at `data`, 4096 writable bytes that outlive the
    // synchronous call.
    unsafe { submit(fd, Queue::Admin, &mut cmd, what) }?;
    Ok(data)
}

/// The placement identifiers of the namespace's reclaim unit handles, in the order of
/// the Reclaim Unit Handle Status list (what fio's `plids` index, and `nvme fdp
/// status` lists).
pub fn placement_ids(fd: RawFd, nsid: u32) -> io::Result<Vec<u16>> {
    let mut data = vec![0u8; 16 + 32 * 128];
    let mut cmd = PassthruCmd {
        opcode: OP_IO_MGMT_RECV,
        nsid,
        addr: data.as_mut_ptr() as u64,
        data_len: data.len() as u32,
        cdw10: 1,
        // Dwords to transfer, 0-based.
        cdw11: (data.len() / 4 - 1) as u32,
        ..Default::default()
    };
    // SAFETY: the command points at `data`, writable for data_len bytes, alive for
    // the synchronous call.
    unsafe { submit(fd, Queue::Io, &mut cmd, "Reclaim Unit Handle Status") }?;
    Ok(parse_ruh_status(&data))
}

/// Which queue a synchronous passthrough command goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queue {
    Admin,
    Io,
}

/// Issue `cmd` synchronously on the namespace open as `fd`; an NVMe status other than
/// success is an error naming `what` and the status.
///
/// # Safety
/// `cmd.addr` must point at `cmd.data_len` bytes that the device may read or write
/// (or be 0 with no data), alive for the call.
pub(crate) unsafe fn submit(
    fd: RawFd,
    queue: Queue,
    cmd: &mut PassthruCmd,
    what: &str,
) -> io::Result<u32> {
    let req = match queue {
        Queue::Admin => NVME_IOCTL_ADMIN_CMD,
        Queue::Io => NVME_IOCTL_IO_CMD,
    };
    // SAFETY: `cmd` is the kernel's 72-byte struct; its buffer is valid (the caller's
    // promise) for the synchronous ioctl.
    let r = unsafe { libc::ioctl(fd, req, cmd as *mut PassthruCmd) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if r > 0 {
        return Err(io::Error::other(format!(
            "{what}: {}",
            crate::device_status::nvme_text(r as u16)
        )));
    }
    Ok(cmd.result)
}

/// The placement identifiers of a Reclaim Unit Handle Status page: NRUHSD at bytes
/// 14–15, then 32-byte descriptors whose first two bytes are the PID.
fn parse_ruh_status(d: &[u8]) -> Vec<u16> {
    let n = usize::from(u16::from_le_bytes([d[14], d[15]]));
    (0..n)
        .map(|i| 16 + 32 * i)
        .take_while(|&at| at + 2 <= d.len())
        .map(|at| u16::from_le_bytes([d[at], d[at + 1]]))
        .collect()
}

/// NSZE, and the current LBA format's data and metadata sizes, from Identify
/// Namespace data.
fn parse_identify(nsid: u32, d: &[u8]) -> io::Result<NsInfo> {
    let u64_at = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().unwrap_or([0; 8]));
    let nsze = u64_at(0);
    let flbas = d[26];
    let index = format_index(d);
    let f = 128 + 4 * index;
    let ms = u16::from_le_bytes([d[f], d[f + 1]]);
    let lba_shift = u32::from(d[f + 2]);
    if !(9..=16).contains(&lba_shift) || nsze == 0 {
        return Err(io::Error::other(format!(
            "Identify Namespace: LBA format {index} has 2^{lba_shift}-byte blocks and the \
             namespace {nsze} of them"
        )));
    }
    let dps = d[29];
    Ok(NsInfo {
        nsid,
        lba_shift,
        ms,
        nsze,
        pi_type: dps & 0x7,
        pi_first: dps & 0x8 != 0,
        guard: Guard::Crc16,
        extended: flbas & 0x10 != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identify_picks_the_current_lba_format() {
        let mut d = vec![0u8; 4096];
        d[..8].copy_from_slice(&262_144u64.to_le_bytes());
        d[26] = 1; // format 1
        d[128 + 4 + 2] = 12; // 4 KiB
        d[128 + 4] = 8; // 8 bytes of metadata
        let ns = parse_identify(3, &d).unwrap();
        assert_eq!(
            (ns.nsid, ns.lba_size(), ns.ms, ns.host_bytes(true)),
            (3, 4096, 8, 1 << 30)
        );
        d[26] = 0x20; // index 16 (bits 6:5 = 1)
        d[128 + 64 + 2] = 9;
        assert_eq!(parse_identify(3, &d).unwrap().lba_size(), 512);
    }

    #[test]
    fn a_read_command_is_laid_out_as_the_kernel_reads_it() {
        let c = rw(OP_READ, 1, 0x1_0000_0002, 8, (0x1000, 32768));
        let b = c.to_sqe_cmd();
        assert_eq!(b[0], OP_READ);
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 1);
        assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 0x1000);
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), 32768);
        assert_eq!(u32::from_le_bytes(b[40..44].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(b[44..48].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(b[48..52].try_into().unwrap()), 7);
    }

    #[test]
    fn a_ruh_status_page_lists_its_placement_ids() {
        let mut d = vec![0u8; 16 + 32 * 3];
        d[14] = 3;
        for (i, pid) in [0u16, 5, 9].iter().enumerate() {
            d[16 + 32 * i..][..2].copy_from_slice(&pid.to_le_bytes());
        }
        assert_eq!(parse_ruh_status(&d), vec![0, 5, 9]);
    }

    #[test]
    fn the_guard_format_is_read_from_the_extended_lba_format() {
        let mut d = vec![0u8; 4096];
        let elbaf = |d: &mut Vec<u8>, i: usize, v: u32| {
            d[12 + 4 * i..][..4].copy_from_slice(&v.to_le_bytes())
        };
        elbaf(&mut d, 2, 2 << 7);
        assert_eq!(parse_elbaf(&d, 0).unwrap(), Guard::Crc16);
        assert_eq!(parse_elbaf(&d, 2).unwrap(), Guard::Crc64);
        elbaf(&mut d, 1, 1 << 7);
        assert!(parse_elbaf(&d, 1)
            .unwrap_err()
            .to_string()
            .contains("32-bit guard"));
        elbaf(&mut d, 3, (2 << 7) | 16);
        assert!(parse_elbaf(&d, 3)
            .unwrap_err()
            .to_string()
            .contains("16-bit storage tag"));
    }
}
