//! fio's log files, read as a stream (per-I/O logs can hold billions of lines):
//! - `_bw`, `_iops`, `_lat`, `_clat`, `_slat` logs: `time_ms, value, ddir, bs[,
//!   offset], prio` (prio decimal, or hex like `0x4004` with `log_prio=1`);
//! - `_clat_hist` logs: `time_ms, ddir, bs, bin0, bin1, …` — fio's 1856 latency bins
//!   (fewer with `log_hist_coarseness`), counts since the row before.
//!
//! Bad lines are reported with the file and line number.

use crate::LogError;
use std::io::BufRead;
use std::path::Path;

/// One line of a bw/iops/lat/clat/slat log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub t_ms: u64,
    /// KiB/s for bw logs, I/Os for iops logs, ns for latency logs.
    pub value: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: Option<u64>,
    /// The prio field as written (1/0, or the ioprio value with log_prio=1).
    pub prio: u32,
}

/// A log's prio field as text: fio's 0/1 (real time or not), or the ioprio value
/// (log_prio=1) as class/level.
pub fn prio_name(p: u32) -> String {
    match p {
        0 | 1 => p.to_string(),
        v => {
            let class = match v >> 13 {
                1 => "rt",
                2 => "be",
                3 => "idle",
                _ => "none",
            };
            format!("{class}/{}", v & 7)
        }
    }
}

fn num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parse one log line: 5 fields, 6 with an offset (log_offset=1), 7 with an offset
/// and the issue time (log_issue_time=1, which is read past).
pub fn parse_entry(line: &str) -> Result<Entry, String> {
    let mut f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() == 7 {
        f.pop();
    }
    let bad = |i: usize| format!("field {}: '{}' is not a number", i + 1, f[i]);
    if f.len() != 5 && f.len() != 6 {
        return Err(format!(
            "expected 'time, value, ddir, bs[, offset], prio[, issue time]', got {} fields",
            f.len()
        ));
    }
    let get = |i: usize| num(f[i]).ok_or_else(|| bad(i));
    let ddir = get(2)?;
    if ddir > 2 {
        return Err(format!("field 3: direction {ddir} is not 0, 1 or 2"));
    }
    Ok(Entry {
        t_ms: get(0)?,
        value: get(1)?,
        ddir: ddir as u8,
        bs: get(3)?,
        offset: if f.len() == 6 { Some(get(4)?) } else { None },
        prio: get(f.len() - 1)? as u32,
    })
}

/// One row of a clat_hist log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistRow {
    pub t_ms: u64,
    pub ddir: u8,
    pub bs: u64,
    pub bins: Vec<u64>,
}

pub fn parse_hist_row(line: &str) -> Result<HistRow, String> {
    let mut it = line.split(',').map(str::trim);
    let mut head = [0u64; 3];
    for (i, h) in head.iter_mut().enumerate() {
        let t = it.next().ok_or("expected 'time, ddir, bs, bins...'")?;
        *h = num(t).ok_or_else(|| format!("field {}: '{t}' is not a number", i + 1))?;
    }
    let bins = it
        .enumerate()
        .map(|(i, t)| num(t).ok_or_else(|| format!("field {}: '{t}' is not a number", i + 4)))
        .collect::<Result<Vec<u64>, String>>()?;
    if bins.is_empty() {
        return Err("no latency bins after time, ddir, bs".into());
    }
    Ok(HistRow {
        t_ms: head[0],
        ddir: head[1].min(2) as u8,
        bs: head[2],
        bins,
    })
}

/// Call `f` for each line of the file parsed by `parse` (blank lines skipped). fio
/// ends every line with a newline: a last line without one was cut short (a full
/// disk, a crash, a copy still running) and is an error, not a row with a truncated
/// last number.
pub fn for_each<T>(
    path: &Path,
    parse: impl Fn(&str) -> Result<T, String>,
    mut f: impl FnMut(T),
) -> Result<(), LogError> {
    let io = |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    for i in 1.. {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            break;
        }
        let bad = |why: String| LogError::Line {
            path: path.to_path_buf(),
            line: i,
            why,
        };
        let Some(text) = line.strip_suffix('\n') else {
            return Err(bad(
                "cut short: the last line has no end (the log was not written to the end)".into(),
            ));
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        f(parse(text).map_err(bad)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clat_hist log whose last row was cut short (mid-number, so it still has every
    /// field) is an error naming the line, not a row with a wrong last bin.
    #[test]
    fn a_log_cut_short_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h_clat_hist.1.log");
        std::fs::write(&p, "1000, 0, 4096, 1, 2, 3\n2000, 0, 4096, 4, 5, 60").unwrap();
        let mut rows = Vec::new();
        let e = for_each(&p, parse_hist_row, |r| rows.push(r)).unwrap_err();
        assert!(e.to_string().contains(":2: cut short"), "{e}");
        std::fs::write(&p, "1000, 0, 4096, 1, 2, 3\r\n\n2000, 0, 4096, 4, 5, 6\n").unwrap();
        rows.clear();
        for_each(&p, parse_hist_row, |r| rows.push(r)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].bins, [4, 5, 6]);
    }

    #[test]
    fn entries_with_and_without_offset_and_hex_prio() {
        let e = parse_entry("12, 5380, 0, 4096, 0").unwrap();
        assert_eq!(
            (e.t_ms, e.value, e.ddir, e.bs, e.offset, e.prio),
            (12, 5380, 0, 4096, None, 0)
        );
        let e = parse_entry("7, 100, 1, 4096, 81920, 0x4004").unwrap();
        assert_eq!((e.offset, e.prio), (Some(81920), 0x4004));
        assert!(parse_entry("1, x, 0, 0, 0")
            .unwrap_err()
            .contains("field 2: 'x'"));
        assert!(parse_entry("1, 2, 7, 0, 0")
            .unwrap_err()
            .contains("direction 7"));
        assert!(parse_entry("1, 2").unwrap_err().contains("got 2 fields"));
    }

    #[test]
    fn hist_rows() {
        let r = parse_hist_row("1000, 0, 4096, 0, 3, 0, 1").unwrap();
        assert_eq!(r.bins, [0, 3, 0, 1]);
        assert!(parse_hist_row("1000, 0, 4096")
            .unwrap_err()
            .contains("no latency bins"));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let d = std::env::temp_dir().join(format!("ioscope-logs-{}", std::process::id()));
        std::fs::write(&d, "1, 2, 0, 4096, 0\n\n3, oops, 0, 4096, 0\n").unwrap();
        let mut n = 0;
        let e = for_each(&d, parse_entry, |_| n += 1)
            .unwrap_err()
            .to_string();
        assert_eq!(n, 1);
        assert!(e.contains(":3: field 2: 'oops'"), "{e}");
        let _ = std::fs::remove_file(&d);
    }
}
