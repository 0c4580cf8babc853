//! fio's text log lines: `time, value[, value2], ddir, bs[, offset], prio`, made from
//! binary records (per-I/O logs, after the run or by `ioscope log convert`) and from
//! window rows (log_avg_msec, written as the run goes).

use crate::binary::{Meta, Reader, Rec};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::kind::LogKind;

/// The per-I/O kinds as indexes (of the binary log's columns and of per-kind arrays).
pub const LAT: usize = LogKind::Lat as usize;
pub const SLAT: usize = LogKind::Slat as usize;
pub const CLAT: usize = LogKind::Clat as usize;
pub const BW: usize = LogKind::Bw as usize;
pub const IOPS: usize = LogKind::Iops as usize;

/// How lines are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Format {
    pub offset: bool,
    pub prio_hex: bool,
    /// log_window_value=both: a second value (the window's maximum).
    pub both: bool,
    /// log_issue_time: a last column, the I/O's issue time (ns since the log's zero;
    /// 0 in lat, bw and iops logs and in windowed rows, as in fio 3.42).
    pub issue: bool,
}

/// One line's fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Line {
    pub t_ms: u64,
    pub value: u64,
    pub value2: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: u64,
    pub prio: u16,
    pub issue_ns: u64,
}

/// Append the line to `out` as fio writes it.
pub fn format_line(out: &mut Vec<u8>, num: &mut itoa::Buffer, l: &Line, fmt: Format) {
    let mut field = |out: &mut Vec<u8>, v: u64, first: bool| {
        if !first {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(num.format(v).as_bytes());
    };
    field(out, l.t_ms, true);
    field(out, l.value, false);
    if fmt.both {
        field(out, l.value2, false);
    }
    field(out, l.ddir as u64, false);
    field(out, l.bs, false);
    if fmt.offset {
        field(out, l.offset, false);
    }
    if fmt.prio_hex {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.extend_from_slice(b", 0x");
        for shift in [12, 8, 4, 0] {
            out.push(HEX[((l.prio >> shift) & 0xf) as usize]);
        }
    } else {
        // Without log_prio fio writes 1 for the real-time class, 0 otherwise.
        out.extend_from_slice(if l.prio >> 13 == 1 { b", 1" } else { b", 0" });
    }
    if fmt.issue {
        out.extend_from_slice(b", ");
        out.extend_from_slice(num.format(l.issue_ns).as_bytes());
    }
    out.push(b'\n');
}

/// The line of log `kind` for one I/O; `None` for the slat log of an I/O without slat.
pub fn record_line(r: &Rec, kind: usize, base_ms: u64) -> Option<Line> {
    let clat = r.clat();
    // The I/O was issued its clat before it completed: the clat and slat logs carry
    // that time with log_issue_time.
    let issue_ns = match kind {
        SLAT | CLAT => r.t_ns.saturating_sub(clat),
        _ => 0,
    };
    let (t_ns, value) = match kind {
        LAT => (r.t_ns, r.lat()),
        // The slat log is stamped when the I/O was submitted.
        SLAT => (r.t_ns.saturating_sub(clat), r.slat()?),
        CLAT => (r.t_ns, clat),
        // fio's per-I/O bandwidth: bytes over completion latency, in KB/s.
        BW => (r.t_ns, (r.bs() * 1_000_000).checked_div(clat).unwrap_or(0)),
        _ => (r.t_ns, 1),
    };
    Some(Line {
        t_ms: base_ms + t_ns / 1_000_000,
        value,
        value2: 0,
        ddir: r.ddir(),
        bs: r.bs(),
        offset: r.offset,
        prio: r.prio(),
        issue_ns,
    })
}

/// Every record of the binary log at `path` into the text logs it names (`outs[kind]`);
/// `progress` hears (records done, records in all) now and then. Returns the records
/// read. The kinds are shared out among one worker per CPU, each decoding the log on
/// its own: formatting is the cost, and lat, slat and clat lines are independent.
pub fn convert(
    path: &Path,
    outs: Vec<Option<BufWriter<File>>>,
    progress: &mut dyn FnMut(u64, u64),
) -> std::io::Result<u64> {
    let reader = Reader::open(path).map_err(std::io::Error::other)?;
    let total = reader.len();
    let mut kinds: Vec<(usize, BufWriter<File>)> = outs
        .into_iter()
        .enumerate()
        .filter_map(|(k, o)| o.map(|w| (k, w)))
        .collect();
    // slat has no lines for synchronous engines: share it out last so that lat and
    // clat, always full, land on different workers.
    kinds.sort_by_key(|(k, _)| *k == SLAT);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cpus.clamp(1, kinds.len().max(1));
    let mut shares: Vec<Vec<(usize, BufWriter<File>)>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, kw) in kinds.into_iter().enumerate() {
        shares[i % workers].push(kw);
    }
    let done: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let mut readers = vec![reader];
    for _ in 1..workers {
        readers.push(Reader::open(path).map_err(std::io::Error::other)?);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = readers
            .into_iter()
            .zip(shares)
            .zip(&done)
            .map(|((r, share), d)| s.spawn(move || convert_share(r, share, d)))
            .collect();
        // The slowest worker is the progress.
        let mut ticks = 0u32;
        while handles.iter().any(|h| !h.is_finished()) {
            // Short naps so that small logs cost no wait; progress every 100 ms.
            std::thread::sleep(std::time::Duration::from_millis(5));
            ticks += 1;
            if ticks % 20 != 0 {
                continue;
            }
            let least = done.iter().map(|d| d.load(Relaxed)).min().unwrap_or(0);
            progress(least, total);
        }
        let mut n = 0;
        for h in handles {
            n = h
                .join()
                .map_err(|_| std::io::Error::other("log writer panicked"))??;
        }
        progress(n, total);
        Ok(n)
    })
}

/// One worker of [`convert`]: every record, the lines of the kinds in `share`.
fn convert_share(
    mut reader: Reader,
    mut share: Vec<(usize, BufWriter<File>)>,
    done: &AtomicU64,
) -> std::io::Result<u64> {
    let meta: Meta = reader.meta.clone();
    let fmt = Format {
        offset: meta.offset,
        prio_hex: meta.prio_hex,
        both: meta.both,
        issue: meta.issue_time,
    };
    let base = meta.unix_epoch_ms.unwrap_or(0);
    let mut buf = vec![Rec::default(); 1 << 16];
    let mut line = Vec::with_capacity(128);
    let mut num = itoa::Buffer::new();
    let mut n_done = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for r in &buf[..n] {
            for (k, w) in share.iter_mut() {
                let Some(l) = record_line(r, *k, base) else {
                    continue;
                };
                line.clear();
                format_line(&mut line, &mut num, &l, fmt);
                w.write_all(&line)?;
            }
        }
        n_done += n as u64;
        done.store(n_done, Relaxed);
    }
    for (_, w) in share.iter_mut() {
        w.flush()?;
    }
    Ok(n_done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(l: &Line, fmt: Format) -> String {
        let mut v = Vec::new();
        format_line(&mut v, &mut itoa::Buffer::new(), l, fmt);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn lines_match_fio() {
        let r = Rec::new(2_500_000, 61440, 2_081_839, Some(5), 131072, 0x2000, 0);
        let hex = Format {
            prio_hex: true,
            ..Format::default()
        };
        assert_eq!(
            text(&record_line(&r, CLAT, 0).unwrap(), hex),
            "2, 2081839, 0, 131072, 0x2000\n"
        );
        let off = Format {
            offset: true,
            ..Format::default()
        };
        assert_eq!(
            text(&record_line(&r, LAT, 0).unwrap(), off),
            "2, 2081844, 0, 131072, 61440, 1\n"
        );
        // log_issue_time: clat and slat lines end with the issue time (2.5 ms less the
        // clat), the lat line with 0.
        let issue = Format {
            offset: true,
            issue: true,
            ..Format::default()
        };
        assert_eq!(
            text(&record_line(&r, CLAT, 0).unwrap(), issue),
            "2, 2081839, 0, 131072, 61440, 1, 418161\n"
        );
        assert_eq!(
            text(&record_line(&r, LAT, 0).unwrap(), issue),
            "2, 2081844, 0, 131072, 61440, 1, 0\n"
        );
        assert_eq!(
            text(&record_line(&r, IOPS, 0).unwrap(), off),
            "2, 1, 0, 131072, 61440, 1\n"
        );
        assert_eq!(
            text(&record_line(&r, BW, 0).unwrap(), Format::default()),
            "2, 62959, 0, 131072, 1\n"
        );
        // slat: stamped at submission, 2081839 ns before the completion at 2.5 ms.
        assert_eq!(
            text(&record_line(&r, SLAT, 0).unwrap(), Format::default()),
            "0, 5, 0, 131072, 1\n"
        );
        let no_slat = Rec::new(1, 0, 7, None, 4096, 0, 0);
        assert!(record_line(&no_slat, SLAT, 0).is_none());
    }

    #[test]
    fn epoch_stamps_keep_the_submission_time() {
        // log_unix_epoch=1: the slat line is stamped at submission in epoch ms too.
        let r = Rec::new(123_000_000, 0, 7_000_000, Some(5), 4096, 0, 0);
        let base = 1_700_000_000_000;
        assert_eq!(record_line(&r, SLAT, base).unwrap().t_ms, base + 116);
        assert_eq!(record_line(&r, CLAT, base).unwrap().t_ms, base + 123);
    }
}
