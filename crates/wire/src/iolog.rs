//! IOLOG: a job's log (latency, bandwidth, IOPS) sent by the server when the job
//! ends, which the client writes as a file of its own, named as the job named it
//! plus `.<server address>`. Uncompressed here: the client's PROBE says it inflates
//! nothing, and the server's header says its samples are raw.
//!
//! Payload: a 296-byte header (samples, job number, log type, compressed flag, the
//! file name at 40) and the samples, each 40 bytes (+8 with an offset): time (ms),
//! value, a second value, the direction with flag bits, the priority, the block size,
//! the offset.

use crate::msg::{put_str, put_u32, put_u64};
use crate::read::{str_at, u32_at, u64_at};
use crate::WireError;

const HEADER: usize = 296;
const NAME_AT: usize = 40;
const NAME_MAX: usize = 256;
/// The direction's flag bits.
const HAS_OFFSET: u32 = 0x8000_0000;
const HAS_PRIO: u32 = 0x4000_0000;
const FLAGS: u32 = 0xf000_0000;

/// What a log holds (fio's log types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Latency = 1,
    Bandwidth = 4,
    Iops = 5,
}

impl Kind {
    /// From the file name's suffix (`_clat.1.log`, `_bw.1.log`, …).
    pub fn of_suffix(suffix: &str) -> Option<Kind> {
        let kind = suffix.strip_prefix('_')?.split('.').next()?;
        match kind {
            "lat" | "clat" | "slat" => Some(Kind::Latency),
            "bw" => Some(Kind::Bandwidth),
            "iops" => Some(Kind::Iops),
            _ => None,
        }
    }
}

/// One sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    pub ddir: u32,
    pub bs: u64,
    pub offset: Option<u64>,
    /// The priority, and whether it is the full value (`log_prio=1`, written in hex)
    /// rather than fio's high-priority bit.
    pub prio: u32,
    pub prio_full: bool,
}

impl Sample {
    /// A line of fio's text log: `time, value, ddir, bs[, offset], prio`.
    pub fn parse(line: &str) -> Option<Sample> {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let n = |s: &str| s.parse::<u64>().ok();
        let (offset, prio) = match f.len() {
            5 => (None, f[4]),
            6 => (Some(n(f[4])?), f[5]),
            _ => return None,
        };
        let (prio, prio_full) = match prio.strip_prefix("0x") {
            Some(h) => (u32::from_str_radix(h, 16).ok()?, true),
            None => (prio.parse().ok()?, false),
        };
        Some(Sample {
            time_ms: n(f[0])?,
            value: n(f[1])?,
            ddir: u32::try_from(n(f[2])?).ok()?,
            bs: n(f[3])?,
            offset,
            prio,
            prio_full,
        })
    }

    /// Its bytes on the wire: 40, and 8 more with an offset.
    fn size(&self) -> usize {
        40 + if self.offset.is_some() { 8 } else { 0 }
    }

    /// The line fio's client writes for it.
    pub fn line(&self) -> String {
        let offset = self.offset.map_or(String::new(), |o| format!(", {o}"));
        let prio = if self.prio_full {
            format!("0x{:04x}", self.prio)
        } else {
            self.prio.to_string()
        };
        format!(
            "{}, {}, {}, {}{offset}, {prio}\n",
            self.time_ms, self.value, self.ddir, self.bs
        )
    }
}

/// A whole log as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoLog {
    /// The job's number (1-based).
    pub job: u32,
    pub kind: Kind,
    /// The file name as the job gave it (`logs/a_clat.1.log`).
    pub name: String,
    pub samples: Vec<Sample>,
}

/// The IOLOG payload of `log`.
pub fn encode(log: &IoLog) -> Result<Vec<u8>, WireError> {
    if log.name.len() >= NAME_MAX {
        return Err(malformed(format!(
            "log file name of {} bytes (at most {})",
            log.name.len(),
            NAME_MAX - 1
        )));
    }
    let mut b = vec![0u8; HEADER];
    b.reserve(log.samples.iter().map(Sample::size).sum());
    put_u64(&mut b, 0, log.samples.len() as u64);
    put_u32(&mut b, 8, log.job);
    put_u32(&mut b, 12, log.kind as u32);
    put_u32(&mut b, 36, 1);
    put_str(&mut b, NAME_AT, NAME_MAX, &log.name);
    for s in &log.samples {
        let mut dir = s.ddir & !FLAGS;
        if s.offset.is_some() {
            dir |= HAS_OFFSET;
        }
        if s.prio_full {
            dir |= HAS_PRIO;
        }
        let at = b.len();
        b.resize(at + s.size(), 0);
        put_u64(&mut b, at, s.time_ms);
        put_u64(&mut b, at + 8, s.value);
        put_u32(&mut b, at + 24, dir);
        put_u32(&mut b, at + 28, s.prio);
        put_u64(&mut b, at + 32, s.bs);
        if let Some(o) = s.offset {
            put_u64(&mut b, at + 40, o);
        }
    }
    Ok(b)
}

/// An uncompressed IOLOG payload (a compressed one is refused: this client asks for
/// raw samples).
pub fn decode(p: &[u8]) -> Result<IoLog, WireError> {
    if p.len() < HEADER {
        return Err(malformed("shorter than its header".into()));
    }
    let count = u64_at(p, 0);
    let kind = match u32_at(p, 12) {
        1 => Kind::Latency,
        4 => Kind::Bandwidth,
        5 => Kind::Iops,
        other => return Err(malformed(format!("log type {other} is not taken yet"))),
    };
    if u32_at(p, 16) != 0 {
        return Err(malformed(
            "compressed samples, which were not asked for".into(),
        ));
    }
    let mut samples = Vec::new();
    let mut at = HEADER;
    while (samples.len() as u64) < count {
        let dir = u32_at(p, at + 24);
        let s = Sample {
            time_ms: u64_at(p, at),
            value: u64_at(p, at + 8),
            ddir: dir & !FLAGS,
            prio: u32_at(p, at + 28),
            prio_full: dir & HAS_PRIO != 0,
            bs: u64_at(p, at + 32),
            offset: (dir & HAS_OFFSET != 0).then(|| u64_at(p, at + 40)),
        };
        at += s.size();
        if at > p.len() {
            return Err(malformed(format!("{count} samples announced, fewer sent")));
        }
        samples.push(s);
    }
    Ok(IoLog {
        job: u32_at(p, 8),
        kind,
        name: str_at(p, NAME_AT, NAME_MAX),
        samples,
    })
}

fn malformed(what: String) -> WireError {
    WireError::Malformed {
        op: crate::msg::op::IOLOG,
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines_travel_and_come_back_as_fio_writes_them() {
        for line in ["14, 300, 0, 4096, 0\n", "22, 490, 1, 4096, 57344, 0x2003\n"] {
            let s = Sample::parse(line.trim_end()).unwrap();
            assert_eq!(s.line(), line);
            let log = IoLog {
                job: 2,
                kind: Kind::Latency,
                name: "logs/a_clat.2.log".into(),
                samples: vec![s.clone(), s],
            };
            let p = encode(&log).unwrap();
            assert_eq!(decode(&p).unwrap(), log);
        }
        assert_eq!(Kind::of_suffix("_clat.1.log"), Some(Kind::Latency));
        assert_eq!(Kind::of_suffix("_iops.log"), Some(Kind::Iops));
        assert_eq!(Kind::of_suffix("_clat_hist.1.log"), None);
        assert!(Sample::parse("1, 2, 3").is_none());
        let mut p = encode(&IoLog {
            job: 1,
            kind: Kind::Bandwidth,
            name: "b_bw.1.log".into(),
            samples: vec![Sample::default()],
        })
        .unwrap();
        p[0] = 9; // more samples than sent
        assert!(decode(&p).is_err());
    }
}
