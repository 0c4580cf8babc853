//! A device's own answer to a failed command (an NVMe completion status, a SCSI sense),
//! in words, and carried through the engine's `-errno` completion result so the runner
//! can say which it was: `-(base + code)`, with bases far above any errno. The job still counts it as
//! an EIO.

/// `-(NVME + status)`: the NVMe status field (status code type and status code).
const NVME: i64 = 0x10_0000;
/// `-(SCSI + (sense key << 16 | ASC << 8 | ASCQ))`; a bare SCSI status (no sense) is
/// `-(SCSI_STATUS + status)`.
const SCSI: i64 = 0x20_0000;
const SCSI_STATUS: i64 = 0x30_0000;
const SCSI_END: i64 = 0x31_0000;
/// `-(HOST_PI + field << 20 | block)`: the host's own check of a read's protection
/// information failed (field 1 guard, 2 application tag, 3 reference tag; the block's
/// index in the read, below 2^20).
const HOST_PI: i64 = 0x40_0000;
const END: i64 = HOST_PI + (4 << 20);

/// The completion result for NVMe status `status`.
pub fn nvme(status: u16) -> i64 {
    -(NVME + i64::from(status))
}

/// The completion result for a SCSI check condition with this sense.
pub fn scsi_sense(key: u8, asc: u8, ascq: u8) -> i64 {
    -(SCSI + (i64::from(key & 0xf) << 16 | i64::from(asc) << 8 | i64::from(ascq)))
}

/// The completion result for a SCSI status without sense data (or a transport error).
pub fn scsi_status(status: u8) -> i64 {
    -(SCSI_STATUS + i64::from(status))
}

/// The completion result for a read whose protection information the host found
/// wrong: `field` 1 (guard), 2 (application tag) or 3 (reference tag), in the read's
/// block `block`.
pub fn host_pi(field: u8, block: usize) -> i64 {
    -(HOST_PI + (i64::from(field & 3) << 20 | (block as i64 & 0xf_ffff)))
}

/// What a completion result says about the device, when it is a device's answer (or
/// the host's check of what the device returned).
pub fn describe(result: i64) -> Option<String> {
    let v = result.checked_neg()?;
    if !(NVME..SCSI_END).contains(&v) && !(HOST_PI..END).contains(&v) {
        return None;
    }
    Some(match v {
        v if v >= HOST_PI => {
            let field = match (v - HOST_PI) >> 20 {
                1 => "guard",
                2 => "application tag",
                _ => "reference tag",
            };
            let block = (v - HOST_PI) & 0xf_ffff;
            format!("the host's protection information check: the {field} of the read's block {block} (counting from 0) is wrong")
        }
        v if v < SCSI => format!("NVMe {}", nvme_text((v - NVME) as u16)),
        v if v < SCSI_STATUS => {
            let c = v - SCSI;
            sense_text((c >> 16) as u8, (c >> 8) as u8, c as u8)
        }
        v => format!("SCSI status 0x{:02x}", v - SCSI_STATUS),
    })
}

/// A completion status as fio 3.42 prints it: the status code type and status code.
pub fn nvme_text(status: u16) -> String {
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

/// A sense as words: the key's name, and the ASC/ASCQ codes.
pub fn sense_text(key: u8, asc: u8, ascq: u8) -> String {
    const KEYS: [&str; 16] = [
        "NO SENSE",
        "RECOVERED ERROR",
        "NOT READY",
        "MEDIUM ERROR",
        "HARDWARE ERROR",
        "ILLEGAL REQUEST",
        "UNIT ATTENTION",
        "DATA PROTECT",
        "BLANK CHECK",
        "VENDOR SPECIFIC",
        "COPY ABORTED",
        "ABORTED COMMAND",
        "reserved (0xc)",
        "VOLUME OVERFLOW",
        "MISCOMPARE",
        "COMPLETED",
    ];
    let name = KEYS[usize::from(key & 0xf)];
    format!(
        "SCSI sense key {name} (asc=0x{asc:02x}, ascq=0x{ascq:02x}){}",
        asc_meaning(asc, ascq)
    )
}

fn asc_meaning(asc: u8, ascq: u8) -> &'static str {
    match (asc, ascq) {
        (0x11, _) => ": unrecovered read error",
        (0x1d, 0x00) => ": miscompare during verify operation",
        (0x20, 0x00) => ": invalid command operation code",
        (0x21, 0x00) => ": logical block address out of range",
        (0x24, 0x00) => ": invalid field in CDB",
        (0x26, _) => ": invalid field in parameter list",
        (0x27, _) => ": write protected",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_fio_prints_them() {
        assert_eq!(
            nvme_text(0x0281),
            "cq entry status (sct=0x02; sc=0x81): unrecovered read error"
        );
        assert_eq!(
            nvme_text(0x0080),
            "cq entry status (sct=0x00; sc=0x80): LBA out of range"
        );
        assert!(
            sense_text(5, 0x24, 0).contains("ILLEGAL REQUEST (asc=0x24, ascq=0x00): invalid field")
        );
    }

    #[test]
    fn device_answers_round_trip_and_errnos_are_left_alone() {
        assert_eq!(describe(-5), None);
        assert_eq!(describe(4096), None);
        let d = describe(nvme(0x0281)).unwrap();
        assert!(d.contains("sct=0x02; sc=0x81"), "{d}");
        let d = describe(scsi_sense(3, 0x11, 0)).unwrap();
        assert!(
            d.contains("MEDIUM ERROR") && d.contains("asc=0x11, ascq=0x00"),
            "{d}"
        );
        assert_eq!(describe(scsi_status(0x18)).unwrap(), "SCSI status 0x18");
        let d = describe(host_pi(1, 7)).unwrap();
        assert!(d.contains("the guard of the read's block 7"), "{d}");
        let d = describe(host_pi(3, 0)).unwrap();
        assert!(d.contains("reference tag of the read's block 0"), "{d}");
        // Every result fits the errno the runner carries (i32).
        assert!(i32::try_from(host_pi(3, 0xf_ffff)).is_ok());
        assert_eq!(describe(-(SCSI_END + 1)), None);
    }
}
