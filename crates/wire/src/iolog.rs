//! IOLOG: a job's log (latency, bandwidth, IOPS, clat histogram) sent by the server
//! when the job ends, which the client writes as a file of its own, named as the job
//! named it plus `.<server address>`.
//!
//! Payload: a 296-byte header (samples, job number, log type, compressed flag,
//! log_offset, log_prio, the histogram's coarseness at 32, per-job logs at 36, the
//! file name at 40) and the samples, each 40 bytes (+8 with an offset, +8 with an
//! issue time): time (ms), value, a second value (the window's maximum with
//! log_window_value=both), the direction with flag bits, the priority, the block size,
//! the offset, the issue time. A histogram sample is followed by 16 unused bytes and the interval's
//! counts in fio's 1856 clat bins, always at full resolution: the client sums them
//! 2^coarseness at a time as it writes the line. The samples may travel as a zlib
//! stream (the compressed flag), which a client asks for in its PROBE; a histogram's
//! only travel so (uncompressed, fio's server sends its memory addresses instead).

use crate::msg::{put_str, put_u32, put_u64};
use crate::read::{str_at, u32_at, u64_at};
use crate::WireError;
use ioscope_stats::hist::FIO_BUCKETS;

const HEADER: usize = 296;
const NAME_AT: usize = 40;
const NAME_MAX: usize = 256;
/// The direction's flag bits.
const HAS_OFFSET: u32 = 0x8000_0000;
const HAS_PRIO: u32 = 0x4000_0000;
const HAS_MAX: u32 = 0x2000_0000;
const HAS_ISSUE: u32 = 0x1000_0000;
const FLAGS: u32 = 0xf000_0000;
/// A histogram sample's bytes after the 40 of its sample: 16 unused, then the bins.
const HIST_EXTRA: usize = 16 + FIO_BUCKETS * 8;
/// The most a compressed log inflates to (an hour of 100 ms histograms is ~0.5 GB):
/// a server cannot make the client hold more.
const MAX_INFLATED: u64 = 1 << 30;

/// What a log holds (fio's log types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Latency = 1,
    Bandwidth = 4,
    Iops = 5,
    Histogram = 6,
}

impl Kind {
    /// From the file name's suffix (`_clat.1.log`, `_bw.1.log`, …).
    pub fn of_suffix(suffix: &str) -> Option<Kind> {
        let kind = suffix.strip_prefix('_')?.split('.').next()?;
        match kind {
            "clat_hist" => Some(Kind::Histogram),
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
    /// The window's maximum (log_window_value=both).
    pub max: Option<u64>,
    /// The I/O's issue time (log_issue_time).
    pub issue: Option<u64>,
    /// The priority, and whether it is the full value (`log_prio=1`, written in hex)
    /// rather than fio's high-priority bit.
    pub prio: u32,
    pub prio_full: bool,
    /// A histogram sample's counts in fio's 1856 bins (empty for other logs).
    pub bins: Vec<u64>,
}

impl Sample {
    /// A line of fio's text log with `columns`:
    /// `time, value[, max], ddir, bs[, offset], prio[, issue time]`.
    pub fn parse(line: &str, columns: Columns) -> Option<Sample> {
        let mut f = line.split(',').map(str::trim);
        let mut n = || f.next()?.parse::<u64>().ok();
        let (time_ms, value) = (n()?, n()?);
        let max = if columns.max { Some(n()?) } else { None };
        let (ddir, bs) = (u32::try_from(n()?).ok()?, n()?);
        let offset = if columns.offset { Some(n()?) } else { None };
        let prio = f.next()?;
        let (prio, prio_full) = match prio.strip_prefix("0x") {
            Some(h) => (u32::from_str_radix(h, 16).ok()?, true),
            None => (prio.parse().ok()?, false),
        };
        let mut n = || f.next()?.parse::<u64>().ok();
        let issue = if columns.issue { Some(n()?) } else { None };
        if f.next().is_some() {
            return None;
        }
        Some(Sample {
            time_ms,
            value,
            ddir,
            bs,
            offset,
            max,
            issue,
            prio,
            prio_full,
            bins: Vec::new(),
        })
    }

    /// A line of fio's histogram log at full resolution: `time, ddir, bs, bins…`
    /// with 1856 bins (log_hist_coarseness=0).
    pub fn parse_hist(line: &str) -> Option<Sample> {
        let mut f = line.split(',').map(|x| x.trim().parse::<u64>().ok());
        let (time_ms, ddir, bs) = (f.next()??, f.next()??, f.next()??);
        let bins = f.collect::<Option<Vec<u64>>>()?;
        (bins.len() == FIO_BUCKETS).then_some(Sample {
            time_ms,
            ddir: u32::try_from(ddir).ok()?,
            bs,
            bins,
            ..Sample::default()
        })
    }

    /// Its bytes on the wire: 40, 8 more with an offset, the bins after a histogram's.
    fn size(&self, kind: Kind) -> usize {
        let extra = match kind {
            Kind::Histogram => HIST_EXTRA,
            _ => 0,
        };
        40 + 8 * (usize::from(self.offset.is_some()) + usize::from(self.issue.is_some())) + extra
    }

    /// The histogram line fio's client writes for it: the bins summed `2^coarse` at
    /// a time.
    pub fn hist_line(&self, coarse: u32) -> String {
        let group = 1usize << coarse.min(6);
        let mut s = format!("{}, {}, {}", self.time_ms, self.ddir, self.bs);
        for c in self.bins.chunks(group) {
            s.push_str(&format!(", {}", c.iter().sum::<u64>()));
        }
        s.push('\n');
        s
    }

    /// The line fio's client writes for it.
    pub fn line(&self) -> String {
        let col = |v: Option<u64>| v.map_or(String::new(), |v| format!(", {v}"));
        let prio = if self.prio_full {
            format!("0x{:04x}", self.prio)
        } else {
            self.prio.to_string()
        };
        format!(
            "{}, {}{}, {}, {}{}, {prio}{}\n",
            self.time_ms,
            self.value,
            col(self.max),
            self.ddir,
            self.bs,
            col(self.offset),
            col(self.issue)
        )
    }

    /// The direction with its flag bits, as sent.
    fn flagged_ddir(&self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        (self.ddir & !FLAGS)
            | bit(self.offset.is_some(), HAS_OFFSET)
            | bit(self.prio_full, HAS_PRIO)
            | bit(self.max.is_some(), HAS_MAX)
            | bit(self.issue.is_some(), HAS_ISSUE)
    }

    /// The priority as sent: in full, or fio's ioprio with the realtime class for a
    /// high-priority I/O (the `1` of the text).
    fn sent_prio(&self) -> u32 {
        match (self.prio_full, self.prio) {
            (true, p) => p,
            (false, 0) => 0,
            (false, _) => 1 << 13,
        }
    }
}

/// The columns of a text log beyond `time, value, ddir, bs, prio`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    /// log_offset.
    pub offset: bool,
    /// log_window_value=both: the window's maximum after its mean.
    pub max: bool,
    /// log_issue_time.
    pub issue: bool,
}

/// A whole log as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoLog {
    /// The job's number (1-based).
    pub job: u32,
    pub kind: Kind,
    /// The file name as the job gave it (`logs/a_clat.1.log`).
    pub name: String,
    /// A histogram's log_hist_coarseness (0 for other logs).
    pub coarse: u32,
    pub samples: Vec<Sample>,
    /// log_store_compressed: the file as stored (zlib chunks of fio's samples), sent
    /// as it is (fio's compressed flag 2, no sample count).
    pub stored: Option<Vec<u8>>,
}

/// The compressed flag of a stored log.
const STORED: u32 = 2;

impl IoLog {
    /// The bytes fio's client writes: a stored log named `.fz` as stored, any other as
    /// text (fio's client writes the stored bytes under a `.log` name too, when the job
    /// had log_compression without log_store_compressed: unreadable as text).
    pub fn file_bytes(&self) -> Vec<u8> {
        match &self.stored {
            Some(b) if self.name.ends_with(".fz") => b.clone(),
            _ => self.text().into_bytes(),
        }
    }

    /// The file's text, as fio's client writes it.
    pub fn text(&self) -> String {
        self.samples
            .iter()
            .map(|s| match self.kind {
                Kind::Histogram => s.hist_line(self.coarse),
                _ => s.line(),
            })
            .collect()
    }
}

/// The IOLOG payload of `log`, its samples compressed (zlib) with `compress`; a
/// histogram only travels compressed.
pub fn encode(log: &IoLog, compress: bool) -> Result<Vec<u8>, WireError> {
    if log.name.len() >= NAME_MAX {
        return Err(malformed(format!(
            "log file name of {} bytes (at most {})",
            log.name.len(),
            NAME_MAX - 1
        )));
    }
    if log.kind == Kind::Histogram && !compress {
        return Err(malformed(
            "a histogram log travels compressed only, and the client inflates nothing".into(),
        ));
    }
    let mut h = vec![0u8; HEADER];
    let flag = if log.stored.is_some() {
        STORED
    } else {
        u32::from(compress)
    };
    let count = if log.stored.is_some() {
        0
    } else {
        log.samples.len()
    };
    put_u64(&mut h, 0, count as u64);
    put_u32(&mut h, 8, log.job);
    put_u32(&mut h, 12, log.kind as u32);
    put_u32(&mut h, 16, flag);
    put_u32(&mut h, 32, log.coarse);
    put_u32(&mut h, 36, 1);
    put_str(&mut h, NAME_AT, NAME_MAX, &log.name);
    if let Some(b) = &log.stored {
        h.extend_from_slice(b);
        return Ok(h);
    }
    let body = samples(log);
    if !compress {
        h.extend_from_slice(&body);
        return Ok(h);
    }
    let mut z = flate2::write::ZlibEncoder::new(h, flate2::Compression::fast());
    std::io::Write::write_all(&mut z, &body).map_err(WireError::Io)?;
    z.finish().map_err(WireError::Io)
}

/// The samples' bytes, uncompressed.
fn samples(log: &IoLog) -> Vec<u8> {
    let mut b = Vec::with_capacity(log.samples.iter().map(|s| s.size(log.kind)).sum());
    for s in &log.samples {
        let at = b.len();
        b.resize(at + s.size(log.kind), 0);
        put_u64(&mut b, at, s.time_ms);
        put_u64(&mut b, at + 8, s.value);
        put_u64(&mut b, at + 16, s.max.unwrap_or(0));
        put_u32(&mut b, at + 24, s.flagged_ddir());
        put_u32(&mut b, at + 28, s.sent_prio());
        put_u64(&mut b, at + 32, s.bs);
        for (k, v) in [s.offset, s.issue].into_iter().flatten().enumerate() {
            put_u64(&mut b, at + 40 + 8 * k, v);
        }
        if log.kind == Kind::Histogram {
            let bins = at + s.size(log.kind) - FIO_BUCKETS * 8;
            for (i, v) in s.bins.iter().take(FIO_BUCKETS).enumerate() {
                put_u64(&mut b, bins + i * 8, *v);
            }
        }
    }
    b
}

/// An IOLOG payload, its samples inflated when they came compressed.
pub fn decode(p: &[u8]) -> Result<IoLog, WireError> {
    if p.len() < HEADER {
        return Err(malformed("shorter than its header".into()));
    }
    let count = u64_at(p, 0);
    let kind = match u32_at(p, 12) {
        1 => Kind::Latency,
        4 => Kind::Bandwidth,
        5 => Kind::Iops,
        6 => Kind::Histogram,
        other => return Err(malformed(format!("log type {other} is not taken yet"))),
    };
    let flag = u32_at(p, 16);
    let compressed = flag != 0;
    if kind == Kind::Histogram && !compressed {
        return Err(malformed(
            "an uncompressed histogram log (fio's server sends its memory addresses then)".into(),
        ));
    }
    let inflated;
    let body = match compressed {
        true => {
            inflated = inflate(&p[HEADER..])?;
            &inflated[..]
        }
        false => &p[HEADER..],
    };
    // A stored log announces no count: its samples are all it inflates to.
    let stored = (flag == STORED).then(|| p[HEADER..].to_vec());
    let count = if stored.is_some() { None } else { Some(count) };
    let samples = read_samples(body, count, kind)?;
    Ok(IoLog {
        job: u32_at(p, 8),
        kind,
        name: str_at(p, NAME_AT, NAME_MAX),
        coarse: u32_at(p, 32).min(6),
        samples,
        stored,
    })
}

/// A compressed log's samples: one zlib stream or several back to back, at most
/// [`MAX_INFLATED`] bytes. fio's server does not end its stream (no final block):
/// what inflates from the bytes sent is taken, also what the inflater still holds
/// once every byte is in (it gives its output 32 KiB at a time).
fn inflate(z: &[u8]) -> Result<Vec<u8>, WireError> {
    let mut out: Vec<u8> = Vec::new();
    let mut d = flate2::Decompress::new(true);
    let mut at = 0;
    loop {
        if out.capacity() - out.len() < 64 << 10 {
            out.reserve(out.len().max(256 << 10));
        }
        let (before, made) = (d.total_in(), out.len());
        let status = d
            .decompress_vec(&z[at..], &mut out, flate2::FlushDecompress::Sync)
            .map_err(|e| malformed(format!("compressed samples that do not inflate: {e}")))?;
        at += (d.total_in() - before) as usize;
        if out.len() as u64 > MAX_INFLATED {
            return Err(malformed(format!(
                "compressed samples of more than {MAX_INFLATED} bytes"
            )));
        }
        match status {
            flate2::Status::StreamEnd if at >= z.len() => break,
            // The next stream follows.
            flate2::Status::StreamEnd => d.reset(true),
            // Neither input taken nor output made: all there is.
            _ if d.total_in() == before && out.len() == made => break,
            _ => {}
        }
    }
    Ok(out)
}

/// `count` samples of `kind` from their bytes (None: as many as there are).
fn read_samples(p: &[u8], count: Option<u64>, kind: Kind) -> Result<Vec<Sample>, WireError> {
    let mut samples = Vec::new();
    let mut at = 0;
    while count.map_or(at < p.len(), |c| (samples.len() as u64) < c) {
        let (s, end) = read_sample(p, at, kind);
        if end > p.len() {
            return Err(malformed(match count {
                Some(c) => format!("{c} samples announced, fewer sent"),
                None => "a stored log ends inside a sample".into(),
            }));
        }
        at = end;
        samples.push(s);
    }
    Ok(samples)
}

/// The sample at `at`, and where it ends (past `p` when cut short).
fn read_sample(p: &[u8], at: usize, kind: Kind) -> (Sample, usize) {
    let dir = u32_at(p, at + 24);
    let (prio, prio_full) = (u32_at(p, at + 28), dir & HAS_PRIO != 0);
    let offset = (dir & HAS_OFFSET != 0).then(|| u64_at(p, at + 40));
    let issue_at = at + 40 + if offset.is_some() { 8 } else { 0 };
    let mut s = Sample {
        time_ms: u64_at(p, at),
        value: u64_at(p, at + 8),
        max: (dir & HAS_MAX != 0).then(|| u64_at(p, at + 16)),
        ddir: dir & !FLAGS,
        // fio's text: 1 for an I/O of the realtime class unless logged in full.
        prio: if prio_full {
            prio
        } else {
            u32::from(prio >> 13 == 1)
        },
        prio_full,
        bs: u64_at(p, at + 32),
        offset,
        issue: (dir & HAS_ISSUE != 0).then(|| u64_at(p, issue_at)),
        bins: Vec::new(),
    };
    let end = at + s.size(kind);
    if kind == Kind::Histogram && end <= p.len() {
        let bins = end - FIO_BUCKETS * 8;
        s.bins = (0..FIO_BUCKETS).map(|i| u64_at(p, bins + i * 8)).collect();
    }
    (s, end)
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
        let off = Columns {
            offset: true,
            ..Columns::default()
        };
        let all = Columns {
            offset: true,
            max: true,
            issue: true,
        };
        for (line, c) in [
            ("14, 300, 0, 4096, 0\n", Columns::default()),
            ("14, 300, 0, 4096, 1\n", Columns::default()),
            ("22, 490, 1, 4096, 57344, 0x2003\n", off),
            ("200, 90, 97663, 0, 4096, 8192, 0, 26329\n", all),
        ] {
            let s = Sample::parse(line.trim_end(), c).unwrap();
            assert_eq!(s.line(), line);
            let log = IoLog {
                job: 2,
                kind: Kind::Latency,
                name: "logs/a_clat.2.log".into(),
                coarse: 0,
                samples: vec![s.clone(), s],
                stored: None,
            };
            for compress in [false, true] {
                let p = encode(&log, compress).unwrap();
                assert_eq!(decode(&p).unwrap(), log);
            }
        }
        assert_eq!(Kind::of_suffix("_clat.1.log"), Some(Kind::Latency));
        assert_eq!(Kind::of_suffix("_iops.log"), Some(Kind::Iops));
        assert_eq!(Kind::of_suffix("_clat_hist.1.log"), Some(Kind::Histogram));
        assert_eq!(Kind::of_suffix("_x.1.log"), None);
        assert!(Sample::parse("1, 2, 3", Columns::default()).is_none());
        assert!(Sample::parse("1, 2, 3, 4, 5, 6", Columns::default()).is_none());
        assert!(Sample::parse("1, 2, 0, 4, 0", all).is_none());
        let mut p = encode(
            &IoLog {
                job: 1,
                kind: Kind::Bandwidth,
                name: "b_bw.1.log".into(),
                coarse: 0,
                samples: vec![Sample::default()],
                stored: None,
            },
            false,
        )
        .unwrap();
        p[0] = 9; // more samples than sent
        assert!(decode(&p).is_err());
    }

    /// A histogram travels compressed, at full resolution, with its coarseness; the
    /// line sums the bins as the client writes it. Several zlib streams back to back
    /// inflate as one; garbage and an uncompressed histogram are refused.
    #[test]
    fn histograms_travel_compressed_and_are_written_coarsened() {
        let mut bins = vec![0u64; FIO_BUCKETS];
        (bins[0], bins[1], bins[5], bins[FIO_BUCKETS - 1]) = (1, 2, 7, 9);
        let line = format!(
            "100, 1, 4096, {}",
            bins.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let s = Sample::parse_hist(&line).unwrap();
        assert_eq!(s.hist_line(0).trim_end(), line);
        let log = IoLog {
            job: 1,
            kind: Kind::Histogram,
            name: "h_clat_hist.1.log".into(),
            coarse: 2,
            samples: vec![s.clone(), s],
            stored: None,
        };
        assert!(encode(&log, false).is_err());
        let p = encode(&log, true).unwrap();
        assert!(p.len() < HEADER + 1000, "{} bytes: compressed", p.len());
        let back = decode(&p).unwrap();
        assert_eq!(back, log);
        let text = back.text();
        let first = text.lines().next().unwrap();
        let f: Vec<&str> = first.split(", ").collect();
        assert_eq!(f.len(), 3 + FIO_BUCKETS / 4);
        assert_eq!((f[3], f[4], f[f.len() - 1]), ("3", "7", "9"));
        assert_eq!(text.lines().count(), 2);
        // Two streams back to back, as a sender may deflate a log in pieces.
        let one = IoLog {
            samples: vec![log.samples[0].clone()],
            ..log.clone()
        };
        let z1 = encode(&one, true).unwrap();
        let mut two = z1.clone();
        two.extend_from_slice(&z1[HEADER..]);
        two[0] = 2;
        assert_eq!(decode(&two).unwrap().samples.len(), 2);
        let mut bad = z1.clone();
        bad[HEADER + 4] ^= 0xff;
        assert!(decode(&bad).is_err());
        let mut raw = z1;
        raw[16] = 0;
        assert!(decode(&raw).is_err());
        assert!(Sample::parse_hist("1, 0, 4096, 5").is_none());
    }

    /// fio's server deflates a histogram a block per sample (Z_BLOCK) and never ends
    /// the stream. Captured from fio 3.42's server (a 1.2 s job, 100 ms histograms, an 8 KiB randwrite):
    /// 11 samples, 160 KiB and 104 bytes inflated, of which the inflater still held
    /// the last 104 bytes once every byte sent was in; the log was refused as cut short.
    #[test]
    fn fios_unended_stream_of_eleven_histograms_inflates_whole() {
        let p = include_bytes!("testdata/fio-3.42-hist-11-rows.iolog");
        let log = decode(p).unwrap();
        assert_eq!((log.kind, log.samples.len()), (Kind::Histogram, 11));
        assert_eq!(log.name, "logs/k_clat_hist.2.log");
        let times: Vec<u64> = log.samples.iter().map(|s| s.time_ms).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
        assert!(log.samples.iter().all(|s| s.bins.len() == FIO_BUCKETS));
        assert!(log.samples[10].bins.iter().sum::<u64>() > 0);
    }

    /// Samples as fio 3.42's server sends them (captured): the window's maximum and the
    /// issue time flagged in the direction; a stored log (log_compression) as flag 2,
    /// no count, zlib chunks: written as sent under a `.fz` name, as text otherwise.
    #[test]
    fn fio_samples_with_max_issue_time_and_stored_chunks() {
        let unhex = |h: &str| -> Vec<u8> {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        };
        let mut h = vec![0u8; HEADER];
        put_u64(&mut h, 0, 2);
        put_u32(&mut h, 8, 1);
        put_u32(&mut h, 12, 1);
        put_u32(&mut h, 36, 1);
        put_str(&mut h, NAME_AT, NAME_MAX, "a_clat.1.log");
        h.extend(unhex("c8000000000000005a000000000000007f7d010000000000000000b000000000000000000000000000000000000000000000000000000000"));
        h.extend(unhex("0000000000000000da2c0000000000000000000000000000000000900020000000100000000000000090873e00000000d966000000000000"));
        let log = decode(&h).unwrap();
        assert_eq!(
            log.text(),
            "200, 90, 97663, 0, 0, 0, 0, 0\n0, 11482, 0, 4096, 1049071616, 1, 26329\n"
        );
        assert_eq!(encode(&log, false).unwrap(), h);
        let chunks = unhex(
            "789c636080000e4506ec4000954b481d0014160073789c636080000e4506ec40004201000597003a",
        );
        for name in ["d_clat.1.log.fz", "d_clat.1.log"] {
            let mut p = vec![0u8; HEADER];
            put_u32(&mut p, 8, 1);
            put_u32(&mut p, 12, 1);
            put_u32(&mut p, 16, STORED);
            put_u32(&mut p, 36, 1);
            put_str(&mut p, NAME_AT, NAME_MAX, name);
            p.extend(&chunks);
            let log = decode(&p).unwrap();
            assert_eq!(log.samples.len(), 3);
            assert_eq!(log.stored.as_deref(), Some(&chunks[..]));
            assert_eq!(encode(&log, false).unwrap(), p);
            let want = match name.ends_with(".fz") {
                true => chunks.clone(),
                false => "0, 8456, 0, 4096, 0\n".repeat(3).into_bytes(),
            };
            assert_eq!(log.file_bytes(), want);
        }
    }
}
