//! A device's own answer to a failed command (an NVMe completion status, a SCSI sense),
//! carried through the engine's `-errno` completion result so the runner can say which
//! it was: `-(base + code)`, with bases far above any errno. The job still counts it as
//! an EIO.

/// `-(NVME + status)`: the NVMe status field (status code type and status code).
const NVME: i64 = 0x10_0000;
/// `-(SCSI + (sense key << 16 | ASC << 8 | ASCQ))`; a bare SCSI status (no sense) is
/// `-(SCSI_STATUS + status)`.
const SCSI: i64 = 0x20_0000;
const SCSI_STATUS: i64 = 0x30_0000;
const END: i64 = 0x31_0000;

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

/// What a completion result says about the device, when it is a device's answer.
pub fn describe(result: i64) -> Option<String> {
    let v = result.checked_neg()?;
    if !(NVME..END).contains(&v) {
        return None;
    }
    Some(match v {
        v if v < SCSI => format!(
            "NVMe {}",
            crate::uring_cmd::nvme::status_text((v - NVME) as u16)
        ),
        v if v < SCSI_STATUS => {
            let c = v - SCSI;
            crate::sg::scsi::sense_text((c >> 16) as u8, (c >> 8) as u8, c as u8)
        }
        v => format!("SCSI status 0x{:02x}", v - SCSI_STATUS),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
