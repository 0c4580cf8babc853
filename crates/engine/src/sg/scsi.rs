//! SCSI through Linux's sg driver (version 3 interface, `struct sg_io_hdr` from
//! scsi/sg.h): the header, the command descriptor blocks the sg engine issues (SBC-4
//! layouts), READ CAPACITY, and sense data in words.

use std::io;
use std::os::fd::RawFd;

/// `SG_IO`: one command, synchronously (sg devices and block devices alike).
pub const SG_IO: libc::c_ulong = 0x2285;
/// `dxfer_direction` values.
pub const SG_DXFER_NONE: i32 = -1;
pub const SG_DXFER_TO_DEV: i32 = -2;
pub const SG_DXFER_FROM_DEV: i32 = -3;
/// Sense buffer bytes asked for.
pub const SENSE_LEN: usize = 32;
/// A command's timeout (ms): long enough for any medium operation of a healthy disk.
const TIMEOUT_MS: u32 = 60_000;

/// `struct sg_io_hdr` (x86-64 and every LP64 Linux: 88 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SgIoHdr {
    pub interface_id: i32,
    pub dxfer_direction: i32,
    pub cmd_len: u8,
    pub mx_sb_len: u8,
    pub iovec_count: u16,
    pub dxfer_len: u32,
    pub dxferp: *mut u8,
    pub cmdp: *const u8,
    pub sbp: *mut u8,
    pub timeout: u32,
    pub flags: u32,
    pub pack_id: i32,
    pub usr_ptr: *mut libc::c_void,
    pub status: u8,
    pub masked_status: u8,
    pub msg_status: u8,
    pub sb_len_wr: u8,
    pub host_status: u16,
    pub driver_status: u16,
    pub resid: i32,
    pub duration: u32,
    pub info: u32,
}

const _: () = assert!(std::mem::size_of::<SgIoHdr>() == 88);

impl Default for SgIoHdr {
    fn default() -> Self {
        SgIoHdr {
            interface_id: i32::from(b'S'),
            dxfer_direction: SG_DXFER_NONE,
            cmd_len: 0,
            mx_sb_len: 0,
            iovec_count: 0,
            dxfer_len: 0,
            dxferp: std::ptr::null_mut(),
            cmdp: std::ptr::null(),
            sbp: std::ptr::null_mut(),
            timeout: TIMEOUT_MS,
            flags: 0,
            pack_id: -1,
            usr_ptr: std::ptr::null_mut(),
            status: 0,
            masked_status: 0,
            msg_status: 0,
            sb_len_wr: 0,
            host_status: 0,
            driver_status: 0,
            resid: 0,
            duration: 0,
            info: 0,
        }
    }
}

/// SBC opcodes, (10-byte, 16-byte) where both exist.
pub const READ: (u8, u8) = (0x28, 0x88);
pub const WRITE: (u8, u8) = (0x2A, 0x8A);
pub const WRITE_AND_VERIFY: (u8, u8) = (0x2E, 0x8E);
pub const VERIFY: (u8, u8) = (0x2F, 0x8F);
pub const WRITE_SAME: (u8, u8) = (0x41, 0x93);
const UNMAP: u8 = 0x42;
const READ_CAPACITY_10: u8 = 0x25;
const SERVICE_ACTION_IN_16: u8 = 0x9E;
/// Byte 1 bits: FUA (reads and writes), BYTCHK (verify, 2 bits at bit 1), NDOB
/// (WRITE SAME(16)).
pub const FUA: u8 = 0x08;
pub const NDOB: u8 = 0x01;

/// A CDB for an LBA range command: the 10-byte form when the range fits it (as fio
/// does), else the 16-byte one. Returns its length.
pub fn lba_cdb(cdb: &mut [u8; 16], ops: (u8, u8), byte1: u8, lba: u64, blocks: u32) -> u8 {
    *cdb = [0; 16];
    if lba <= u64::from(u32::MAX) && blocks <= u32::from(u16::MAX) {
        cdb[0] = ops.0;
        cdb[1] = byte1;
        cdb[2..6].copy_from_slice(&(lba as u32).to_be_bytes());
        cdb[7..9].copy_from_slice(&(blocks as u16).to_be_bytes());
        10
    } else {
        cdb[0] = ops.1;
        cdb[1] = byte1;
        cdb[2..10].copy_from_slice(&lba.to_be_bytes());
        cdb[10..14].copy_from_slice(&blocks.to_be_bytes());
        16
    }
}

/// UNMAP of one range: the CDB (10 bytes) and its 24-byte parameter list.
pub fn unmap(cdb: &mut [u8; 16], params: &mut [u8; 24], lba: u64, blocks: u32) -> u8 {
    *cdb = [0; 16];
    cdb[0] = UNMAP;
    cdb[7..9].copy_from_slice(&24u16.to_be_bytes());
    *params = [0; 24];
    // Header: UNMAP data length (bytes after this field), block descriptor data length.
    params[0..2].copy_from_slice(&22u16.to_be_bytes());
    params[2..4].copy_from_slice(&16u16.to_be_bytes());
    params[8..16].copy_from_slice(&lba.to_be_bytes());
    params[16..20].copy_from_slice(&blocks.to_be_bytes());
    10
}

/// The device's block size and number of blocks: READ CAPACITY(16), or (10) for a
/// device that does not know the former.
pub fn capacity(fd: RawFd) -> io::Result<(u32, u64)> {
    let mut cdb = [0u8; 16];
    cdb[0] = SERVICE_ACTION_IN_16;
    cdb[1] = 0x10; // READ CAPACITY(16)
    cdb[13] = 32; // allocation length
    let mut data = [0u8; 32];
    if sync_command(fd, &cdb, 16, &mut data).is_ok() {
        let last = u64::from_be_bytes(data[0..8].try_into().unwrap_or_default());
        let bs = u32::from_be_bytes(data[8..12].try_into().unwrap_or_default());
        if bs > 0 {
            return Ok((bs, last + 1));
        }
    }
    let mut cdb = [0u8; 16];
    cdb[0] = READ_CAPACITY_10;
    let mut data = [0u8; 8];
    sync_command(fd, &cdb, 10, &mut data)?;
    let last = u32::from_be_bytes(data[0..4].try_into().unwrap_or_default());
    let bs = u32::from_be_bytes(data[4..8].try_into().unwrap_or_default());
    if bs == 0 {
        return Err(io::Error::other("READ CAPACITY gave a block size of 0"));
    }
    Ok((bs, u64::from(last) + 1))
}

/// One data-in command through SG_IO; its outcome as a completion result.
fn sync_command(fd: RawFd, cdb: &[u8; 16], len: u8, data: &mut [u8]) -> io::Result<()> {
    let mut sense = [0u8; SENSE_LEN];
    let mut h = SgIoHdr {
        dxfer_direction: SG_DXFER_FROM_DEV,
        cmd_len: len,
        mx_sb_len: SENSE_LEN as u8,
        dxfer_len: data.len() as u32,
        dxferp: data.as_mut_ptr(),
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        ..Default::default()
    };
    // SAFETY: the header points at `cdb`, `data` and `sense`, all alive and of the
    // lengths it says for the whole synchronous ioctl.
    if unsafe { libc::ioctl(fd, SG_IO, &mut h as *mut SgIoHdr) } < 0 {
        return Err(io::Error::last_os_error());
    }
    match outcome(&h, &sense) {
        0 => Ok(()),
        r => Err(io::Error::other(
            crate::device_status::describe(r).unwrap_or_else(|| format!("error {r}")),
        )),
    }
}

/// 0 when the command succeeded; else a completion result naming what went wrong
/// (sense key and additional sense code when there is sense data).
pub fn outcome(h: &SgIoHdr, sense: &[u8]) -> i64 {
    // SAM status CHECK CONDITION with sense: its key, ASC, ASCQ.
    if h.status == 0 && h.host_status == 0 && h.driver_status & 0x0f == 0 {
        return 0;
    }
    let sense = &sense[..usize::from(h.sb_len_wr).min(sense.len())];
    if let Some((k, asc, ascq)) = parse_sense(sense) {
        return crate::device_status::scsi_sense(k, asc, ascq);
    }
    if h.host_status != 0 {
        return -(libc::EIO as i64);
    }
    crate::device_status::scsi_status(h.status)
}

/// (sense key, ASC, ASCQ) of fixed (0x70/0x71) or descriptor (0x72/0x73) sense data.
fn parse_sense(s: &[u8]) -> Option<(u8, u8, u8)> {
    match s.first()? & 0x7f {
        0x70 | 0x71 if s.len() >= 14 => Some((s[2] & 0xf, s[12], s[13])),
        0x72 | 0x73 if s.len() >= 4 => Some((s[1] & 0xf, s[2], s[3])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdbs_take_the_short_form_when_the_range_fits() {
        let mut c = [0u8; 16];
        assert_eq!(lba_cdb(&mut c, READ, FUA, 0x1234, 8), 10);
        assert_eq!(&c[..10], &[0x28, 0x08, 0, 0, 0x12, 0x34, 0, 0, 8, 0]);
        assert_eq!(lba_cdb(&mut c, WRITE, 0, 1 << 33, 8), 16);
        assert_eq!(c[0], 0x8A);
        assert_eq!(&c[2..10], &(1u64 << 33).to_be_bytes());
        assert_eq!(&c[10..14], &8u32.to_be_bytes());
        let mut p = [0u8; 24];
        assert_eq!(unmap(&mut c, &mut p, 100, 16), 10);
        assert_eq!((c[0], c[8]), (0x42, 24));
        assert_eq!(&p[..4], &[0, 22, 0, 16]);
        assert_eq!(&p[8..16], &100u64.to_be_bytes());
    }

    #[test]
    fn sense_of_both_formats_reads_as_words() {
        let mut fixed = [0u8; 18];
        fixed[0] = 0x70;
        fixed[2] = 0x03;
        fixed[12] = 0x11;
        assert_eq!(parse_sense(&fixed), Some((3, 0x11, 0)));
        assert_eq!(parse_sense(&[0x72, 0x05, 0x24, 0x00]), Some((5, 0x24, 0)));
    }
}
