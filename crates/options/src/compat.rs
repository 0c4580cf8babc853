//! `--compat=fio`: values read the way fio 3.33 reads them.
//!
//! ioscope is strict by default (`bs=4q` is an error). Legacy job files and harnesses
//! rely on fio's leniency instead: fio reads the leading number and looks only at the
//! first characters after it, so `4q` is 4, `65536)` is 65536 and `8k junk` is 8192;
//! a range splits at the first `-` (else the first `:`) and its ends are read the same
//! way. Choices stay exact, as in fio 3.33 (`rw=readx` fails there too).
//!
//! This module never parses a value itself: it rewrites a value the strict parser
//! refused into the plain form fio would have read it as (`4q` → `4`), and the strict
//! parser then reads that. Values the strict parser accepts keep their meaning, so
//! `bs=1.5k` stays 1536 bytes (fio 3.33 reads it as 1 byte: it stops at the dot).
//! Behaviour observed on fio 3.33 (Debian): see `crates/options/tests/compat.rs`.

use crate::def::{Kind, TimeUnit};

/// The value fio would read for `raw`, written so the strict parser accepts it, or
/// None when fio would refuse it too (or the kind has no lenient reading).
pub fn fio_value(kind: &Kind, raw: &str, kb_base: u64) -> Option<String> {
    match kind {
        Kind::SizePct => size(raw, kb_base, true),
        Kind::Int | Kind::Size => size(raw, kb_base, false),
        Kind::Bool | Kind::Set => boolean(raw),
        Kind::Float => float(raw),
        Kind::Time(u) => time(raw, *u).map(|us| format!("{us}us")),
        Kind::TimeRange(u) => range(raw, |s| time(s, *u).map(|us| format!("{us}us"))),
        Kind::PerDir(inner) => per_dir(raw, |p| fio_value(inner, p, kb_base)),
        Kind::RangeList => per_dir(raw, |p| range(p, |s| size(s, kb_base, false))),
        Kind::SizeRange => range(raw, |s| size(s, kb_base, false)),
        Kind::Choice(_) | Kind::Str | Kind::Special(_) => None,
    }
}

/// `read,write,trim` lists: each part on its own; an empty part stays empty.
fn per_dir(raw: &str, part: impl Fn(&str) -> Option<String>) -> Option<String> {
    raw.split(',')
        .map(|p| {
            if p.is_empty() {
                Some(String::new())
            } else {
                part(p)
            }
        })
        .collect::<Option<Vec<_>>>()
        .map(|v| v.join(","))
}

/// fio splits a range at its first `-`, or else its first `:`, and swaps reversed ends.
fn range(raw: &str, end: impl Fn(&str) -> Option<String>) -> Option<String> {
    let at = raw.find('-').or_else(|| raw.find(':'));
    match at {
        None => end(raw),
        Some(i) => {
            let lo = end(&raw[..i])?;
            let hi = end(&raw[i + 1..])?;
            Some(format!("{lo}-{hi}"))
        }
    }
}

/// The leading integer (strtoll: blanks, sign, decimal digits or 0x hex) and the rest.
fn leading_int(raw: &str) -> Option<(i128, &str)> {
    let t = raw.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    // fio reads the whole value as hex when it contains "0x" anywhere.
    let hex = raw.contains("0x") || raw.contains("0X");
    let body = if hex {
        t.strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t)
    } else {
        t
    };
    let radix = if hex { 16 } else { 10 };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if end == 0 {
        return None;
    }
    let v = i128::from_str_radix(&body[..end], radix).ok()?;
    Some((if neg { -v } else { v }, &body[end..]))
}

/// After the number fio skips further digits and signs, then looks at what follows:
/// a letter starts a unit, anything else means no unit.
fn unit_text(rest: &str) -> String {
    let t = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
    t.to_ascii_lowercase()
}

/// A size or integer: unit by prefix (`k…`, `kib…` for the other base); `%` makes a
/// percentage where the option takes one and is ignored elsewhere, as in fio.
fn size(raw: &str, kb_base: u64, pct: bool) -> Option<String> {
    let (v, rest) = leading_int(raw)?;
    let unit = unit_text(rest);
    if unit.starts_with('%') {
        return Some(if pct { format!("{v}%") } else { v.to_string() });
    }
    let Some(power) = unit.chars().next().and_then(|c| "kmgtpe".find(c)) else {
        return Some(v.to_string());
    };
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let base = if unit[1..].starts_with("ib") {
        other
    } else {
        kb_base
    };
    let mult = (base as i128).checked_pow(power as u32 + 1)?;
    v.checked_mul(mult).map(|b| b.to_string())
}

/// A time: `us…` and `ms…` by prefix; `s`, `m`, `h`, `d` only when the unit is
/// exactly that letter; any other letters mean microseconds, as in fio.
fn time(raw: &str, default: TimeUnit) -> Option<u64> {
    let (v, rest) = leading_int(raw)?;
    let v = u64::try_from(v).ok()?;
    let unit = unit_text(rest);
    let mult: u64 = if !unit.starts_with(|c: char| c.is_ascii_alphabetic()) {
        default.micros()
    } else if unit.starts_with("us") {
        1
    } else if unit.starts_with("ms") {
        1_000
    } else {
        match unit.as_str() {
            "s" => 1_000_000,
            "m" => 60_000_000,
            "h" => 3_600_000_000,
            "d" => 86_400_000_000,
            _ => 1,
        }
    };
    v.checked_mul(mult)
}

/// fio reads booleans with sscanf("%u"): the leading digits.
fn boolean(raw: &str) -> Option<String> {
    let (v, _) = leading_int(raw)?;
    Some(if v != 0 { "1" } else { "0" }.to_string())
}

/// strtod: the longest prefix that is a number.
fn float(raw: &str) -> Option<String> {
    let t = raw.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&n| t.is_char_boundary(n))
        .find_map(|n| t[..n].parse::<f64>().ok().filter(|v| v.is_finite()))
        .map(|v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row was checked against fio 3.33: `--size=V --bs=V --ioengine=null` and the
    /// io_bytes fio reports.
    #[test]
    fn sizes_read_as_fio_3_33_reads_them() {
        for (raw, fio) in [
            ("4q", "4"),
            ("4kq", "4096"),
            ("4k)", "4096"),
            ("65536)", "65536"),
            ("8k junk", "8192"),
            ("4kib", "4000"),
            ("4KiB", "4000"),
            ("3m5", "3145728"),
            ("4 k", "4"),
            ("4b", "4"),
            ("4kb", "4096"),
            ("2K", "2048"),
            ("4k*2", "4096"),
            ("0x10", "16"),
        ] {
            assert_eq!(size(raw, 1024, false).as_deref(), Some(fio), "{raw}");
        }
        assert_eq!(size("k", 1024, false), None);
        assert_eq!(size("4kib", 1000, false).as_deref(), Some("4096"));
        assert_eq!(size("70%", 1024, true).as_deref(), Some("70%"));
    }

    #[test]
    fn ranges_split_at_the_first_dash_or_colon() {
        // fio's own t0023 job has this typo; fio 3.33 runs it as 512-1024.
        let k = Kind::RangeList;
        assert_eq!(
            fio_value(&k, "512/25:1k:25:2k:25:4k/25", 1024).as_deref(),
            Some("512-1024")
        );
        assert_eq!(fio_value(&k, "1k-4kx", 1024).as_deref(), Some("1024-4096"));
        assert_eq!(
            fio_value(&k, "1k-2k,4k", 1024).as_deref(),
            Some("1024-2048,4096")
        );
    }

    #[test]
    fn times_booleans_and_floats() {
        assert_eq!(time("10s)", TimeUnit::Seconds), Some(10));
        assert_eq!(time("10", TimeUnit::Seconds), Some(10_000_000));
        assert_eq!(time("10 s", TimeUnit::Seconds), Some(10_000_000));
        assert_eq!(time("5msx", TimeUnit::Micros), Some(5_000));
        assert_eq!(time("2m", TimeUnit::Seconds), Some(120_000_000));
        assert_eq!(boolean("1x").as_deref(), Some("1"));
        assert_eq!(boolean("x"), None);
        assert_eq!(float("99.9x").as_deref(), Some("99.9"));
    }
}
