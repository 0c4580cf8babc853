//! Zoned namespaces (NVMe ZNS) through passthrough, for `zonemode=zbd` with
//! io_uring_cmd on `/dev/ngXnY`: the namespace's open and active limits (Identify, ZNS
//! command set), its zones (Zone Management Receive) and the zone actions the runner
//! issues (Zone Management Send). Layouts from the NVMe Zoned Namespace Command Set
//! specification. LBAs here; the runner converts.

use super::nvme::{identify, submit, PassthruCmd, Queue};
use std::io;
use std::os::fd::RawFd;

/// Zone Management Send and Receive opcodes.
const OP_ZONE_SEND: u8 = 0x79;
const OP_ZONE_RECV: u8 = 0x7A;
/// Identify CNS 05h (command-set-specific namespace data), CSI 02h (zoned).
const CNS_CSI_NS: u32 = 0x05;
const CSI_ZNS: u32 = 0x02;
/// Zone descriptors asked for per report.
const BATCH: usize = 256;
const DESC: usize = 64;

/// One zone as the namespace reports it, in LBAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvmeZone {
    pub slba: u64,
    /// Writable blocks from `slba` (ZCAP).
    pub cap: u64,
    pub wp: u64,
    /// Zone type 2: sequential write required.
    pub sequential: bool,
    /// Zone state (the ZS values, which are the kernel's blk_zone conditions).
    pub state: u8,
}

/// What the runner asks of a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAction {
    Finish,
    Reset,
}

/// The namespace's open and active zone limits (0: none), or None when it is not a
/// zoned namespace (the ZNS Identify is refused).
pub fn limits(fd: RawFd, nsid: u32) -> Option<(u32, u32)> {
    let data = identify(
        fd,
        nsid,
        (CNS_CSI_NS, CSI_ZNS << 24),
        "Identify (zoned namespace)",
    )
    .ok()?;
    // MAR (bytes 4-7) and MOR (8-11), 0-based; all ones: no limit.
    let limit = |at: usize| {
        let v = u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        v.checked_add(1).unwrap_or(0)
    };
    Some((limit(8), limit(4)))
}

/// Every zone of the namespace, in order.
pub fn report(fd: RawFd, nsid: u32) -> io::Result<Vec<NvmeZone>> {
    let mut data = vec![0u8; DESC * (BATCH + 1)];
    let mut out = Vec::new();
    let mut slba = 0u64;
    loop {
        let mut cmd = PassthruCmd {
            opcode: OP_ZONE_RECV,
            nsid,
            addr: data.as_mut_ptr() as u64,
            data_len: data.len() as u32,
            cdw10: slba as u32,
            cdw11: (slba >> 32) as u32,
            // Dwords to transfer, 0-based.
            cdw12: (data.len() / 4 - 1) as u32,
            // Report Zones (ZRA 0) of every state (ZRASF 0), partial: the count in
            // the header is of the descriptors returned.
            cdw13: 1 << 16,
            ..Default::default()
        };
        // SAFETY: the command points at `data`, writable for data_len bytes, alive
        // for the call.
        unsafe { submit(fd, Queue::Io, &mut cmd, "Zone Management Receive") }?;
        let zones = parse_report(&data);
        let Some(last) = zones.last() else {
            return Ok(out);
        };
        let next = zones
            .get(1)
            .map_or(last.slba + 1, |z1| last.slba + (z1.slba - zones[0].slba));
        out.extend_from_slice(&zones);
        if zones.len() < BATCH || next <= slba {
            return Ok(out);
        }
        slba = next;
    }
}

/// A report's zone descriptors: the count at bytes 0-7, then 64-byte descriptors
/// (ZT byte 0 bits 3:0, ZS byte 1 bits 7:4, ZCAP 8-15, ZSLBA 16-23, WP 24-31).
fn parse_report(d: &[u8]) -> Vec<NvmeZone> {
    let u64_at = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().unwrap_or([0; 8]));
    let n = (u64_at(0) as usize).min(d.len() / DESC - 1);
    (1..=n)
        .map(|i| {
            let at = i * DESC;
            NvmeZone {
                slba: u64_at(at + 16),
                cap: u64_at(at + 8),
                wp: u64_at(at + 24),
                sequential: d[at] & 0x0f == 2,
                state: d[at + 1] >> 4,
            }
        })
        .collect()
}

/// Finish or reset the zone that starts at `slba`.
pub fn act(fd: RawFd, nsid: u32, slba: u64, action: ZoneAction) -> io::Result<()> {
    let zsa = match action {
        ZoneAction::Finish => 2,
        ZoneAction::Reset => 4,
    };
    let mut cmd = PassthruCmd {
        opcode: OP_ZONE_SEND,
        nsid,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        cdw13: zsa,
        ..Default::default()
    };
    // SAFETY: the command moves no data.
    unsafe { submit(fd, Queue::Io, &mut cmd, "Zone Management Send") }.map(|_| ())
}

/// Write Zeroes covers at most this many blocks (its count is 16 bits, 0-based).
const ZEROES_MAX: u64 = 1 << 16;

/// Write `nlb` blocks at `slba` (a zone's write pointer, which moves on): `data` (the
/// blocks' bytes) or, without, zeros (Write Zeroes, in commands of at most 65536
/// blocks). recover_zbd_write_error moves a write pointer past failed writes so.
pub fn write_from(
    fd: RawFd,
    nsid: u32,
    (slba, nlb): (u64, u64),
    data: Option<&[u8]>,
) -> io::Result<()> {
    use super::nvme::{rw, OP_WRITE, OP_WRITE_ZEROES};
    if let Some(d) = data {
        let mut cmd = rw(
            OP_WRITE,
            nsid,
            slba,
            nlb as u32,
            (d.as_ptr() as u64, d.len() as u32),
        );
        // SAFETY: the command reads `d`, data_len bytes, alive for the call.
        return unsafe { submit(fd, Queue::Io, &mut cmd, "Write") }.map(|_| ());
    }
    let mut at = slba;
    while at < slba + nlb {
        let n = (slba + nlb - at).min(ZEROES_MAX);
        let mut cmd = rw(OP_WRITE_ZEROES, nsid, at, n as u32, (0, 0));
        // SAFETY: Write Zeroes moves no data.
        unsafe { submit(fd, Queue::Io, &mut cmd, "Write Zeroes") }?;
        at += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_lists_its_descriptors() {
        let mut d = vec![0u8; DESC * 3];
        d[0] = 2;
        for (i, (slba, wp, state)) in [(0u64, 16u64, 2u8), (4096, 4096, 1)].iter().enumerate() {
            let at = (i + 1) * DESC;
            d[at] = 2;
            d[at + 1] = state << 4;
            d[at + 8..at + 16].copy_from_slice(&4096u64.to_le_bytes());
            d[at + 16..at + 24].copy_from_slice(&slba.to_le_bytes());
            d[at + 24..at + 32].copy_from_slice(&wp.to_le_bytes());
        }
        let z = parse_report(&d);
        assert_eq!(
            z,
            [
                NvmeZone {
                    slba: 0,
                    cap: 4096,
                    wp: 16,
                    sequential: true,
                    state: 2
                },
                NvmeZone {
                    slba: 4096,
                    cap: 4096,
                    wp: 4096,
                    sequential: true,
                    state: 1
                },
            ]
        );
        // A count larger than the buffer holds is cut to what it holds.
        d[0] = 200;
        assert_eq!(parse_report(&d).len(), 2);
    }

    #[test]
    fn a_regular_file_is_no_namespace() {
        use std::os::fd::AsRawFd;
        let f = tempfile::tempfile().expect("tempfile");
        assert!(report(f.as_raw_fd(), 1).is_err());
        assert_eq!(limits(f.as_raw_fd(), 1), None);
    }
}
