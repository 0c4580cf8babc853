//! NVMe passthrough, as Linux exposes it on a namespace's generic character device
//! (`/dev/ngXnY`): the namespace's identity (NVME_IOCTL_ID, Identify Namespace through
//! NVME_IOCTL_ADMIN_CMD) and the `struct nvme_uring_cmd` an io_uring URING_CMD carries
//! (include/uapi/linux/nvme_ioctl.h; command layouts from the NVMe base and NVM command
//! set specifications).

use std::io;
use std::os::fd::RawFd;

/// `_IO('N', 0x40)`: the namespace id of an NVMe block or generic device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
/// `_IOWR('N', 0x41, struct nvme_passthru_cmd)` (72 bytes): an admin command.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;
/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: an I/O command, data at `addr`.
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// `_IOWR('N', 0x81, struct nvme_uring_cmd)`: an I/O command, `addr` an iovec array.
pub const NVME_URING_CMD_IO_VEC: u32 = 0xC048_4E81;

/// NVM command set opcodes.
pub const OP_WRITE: u8 = 0x01;
pub const OP_READ: u8 = 0x02;
pub const OP_WRITE_UNCOR: u8 = 0x04;
pub const OP_WRITE_ZEROES: u8 = 0x08;
pub const OP_DSM: u8 = 0x09;
pub const OP_VERIFY: u8 = 0x0C;
/// Identify (admin), CNS 0: the namespace data structure.
const OP_IDENTIFY: u8 = 0x06;
/// CDW12 bit 30: Force Unit Access.
pub const CDW12_FUA: u32 = 1 << 30;
/// Write Zeroes CDW12 bit 25: deallocate the blocks.
pub const CDW12_DEAC: u32 = 1 << 25;
/// Dataset Management CDW11 bit 2: attribute "deallocate".
pub const DSM_AD: u32 = 1 << 2;

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
}

impl NsInfo {
    pub fn lba_size(&self) -> u64 {
        1 << self.lba_shift
    }

    pub fn bytes(&self) -> u64 {
        self.nsze << self.lba_shift
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
    let mut data = vec![0u8; 4096];
    let mut cmd = PassthruCmd {
        opcode: OP_IDENTIFY,
        nsid,
        addr: data.as_mut_ptr() as u64,
        data_len: data.len() as u32,
        // CNS 0: Identify Namespace.
        cdw10: 0,
        ..Default::default()
    };
    // SAFETY: the command points at `data`, 4096 writable bytes that outlive the
    // synchronous ioctl; `cmd` is the kernel's 72-byte struct.
    let r = unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD, &mut cmd as *mut PassthruCmd) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if r > 0 {
        return Err(io::Error::other(format!(
            "Identify Namespace failed: {}",
            status_text(r as u16)
        )));
    }
    parse_identify(nsid, &data)
}

/// NSZE, and the current LBA format's data and metadata sizes, from Identify
/// Namespace data.
fn parse_identify(nsid: u32, d: &[u8]) -> io::Result<NsInfo> {
    let u64_at = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().unwrap_or([0; 8]));
    let nsze = u64_at(0);
    let flbas = d[26];
    // FLBAS bits 3:0 and 6:5 index the LBA format (up to 64 formats).
    let index = usize::from((flbas & 0x0f) | ((flbas >> 1) & 0x30));
    let f = 128 + 4 * index;
    let ms = u16::from_le_bytes([d[f], d[f + 1]]);
    let lba_shift = u32::from(d[f + 2]);
    if !(9..=16).contains(&lba_shift) || nsze == 0 {
        return Err(io::Error::other(format!(
            "Identify Namespace: LBA format {index} has 2^{lba_shift}-byte blocks and the \
             namespace {nsze} of them"
        )));
    }
    Ok(NsInfo {
        nsid,
        lba_shift,
        ms,
        nsze,
    })
}

/// A completion status as fio 3.42 prints it: the status code type and status code.
pub fn status_text(status: u16) -> String {
    let sct = (status >> 8) & 0x7;
    let sc = status & 0xff;
    format!(
        "cq entry status (sct=0x{sct:02x}; sc=0x{sc:02x}){}",
        meaning(sct, sc)
    )
}

/// The common statuses by name (NVMe base specification, figure "Generic Command
/// Status Values", and the NVM command set's media errors).
fn meaning(sct: u16, sc: u16) -> &'static str {
    match (sct, sc) {
        (0, 0x01) => ": invalid command opcode",
        (0, 0x02) => ": invalid field in command",
        (0, 0x04) => ": data transfer error",
        (0, 0x06) => ": internal error",
        (0, 0x0b) => ": invalid namespace or format",
        (0, 0x80) => ": LBA out of range",
        (0, 0x81) => ": capacity exceeded",
        (2, 0x81) => ": unrecovered read error",
        (2, 0x82) => ": end-to-end guard check error",
        (2, 0x83) => ": end-to-end application tag check error",
        (2, 0x84) => ": end-to-end reference tag check error",
        (2, 0x85) => ": compare failure",
        (2, 0x86) => ": access denied",
        _ => "",
    }
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
            (ns.nsid, ns.lba_size(), ns.ms, ns.bytes()),
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
    fn statuses_read_as_fio_prints_them() {
        assert_eq!(
            status_text(0x0281),
            "cq entry status (sct=0x02; sc=0x81): unrecovered read error"
        );
        assert_eq!(
            status_text(0x0080),
            "cq entry status (sct=0x00; sc=0x80): LBA out of range"
        );
    }
}
