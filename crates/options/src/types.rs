//! Typed option values and how each is parsed from its job-file text.
//! The field type in the option table picks the parser; the entry's `Kind`
//! supplies units (size vs time), limits and allowed choices.

use crate::def::{Kind, OptionDef};
use crate::units::{parse_int, parse_size, parse_time_us};
use serde::Serialize;

/// What a value parser may consult.
pub struct ValueCx<'a> {
    pub def: &'a OptionDef,
    pub kb_base: u64,
}

impl ValueCx<'_> {
    fn check_range(&self, v: i64) -> Result<(), String> {
        if let Some(min) = self.def.min {
            if v < min {
                return Err(format!("value {v} is below the minimum {min}"));
            }
        }
        if let Some(max) = self.def.max {
            if v > max {
                return Err(format!("value {v} is above the maximum {max}"));
            }
        }
        Ok(())
    }

    /// An unsigned number in the unit the option's kind implies.
    fn number(&self, raw: &str, kind: &Kind) -> Result<u64, String> {
        let v = match kind {
            Kind::Size | Kind::SizePct => parse_size(raw, self.kb_base)?,
            Kind::Time(u) | Kind::TimeRange(u) => parse_time_us(raw, u.micros())?,
            Kind::PerDir(inner) => return self.number(raw, inner),
            _ => {
                let v = parse_int(raw)?;
                if v < 0 {
                    self.check_range(v)?;
                    return Err(format!("value {v} must not be negative"));
                }
                v as u64
            }
        };
        self.check_range(i64::try_from(v).unwrap_or(i64::MAX))?;
        Ok(v)
    }
}

/// A type that can be an option's value.
pub trait OptValue: Sized {
    /// Parse `raw`; `prev` is the value in effect before (per-direction lists keep
    /// the entries the text leaves empty).
    fn parse(raw: &str, cx: &ValueCx, prev: &Self) -> Result<Self, String>;

    /// The value's spelling when ioscope accepts it but does not implement it yet
    /// (support status per value, e.g. `mem=shmhuge`); None when it is supported.
    fn not_yet(&self) -> Option<&'static str> {
        None
    }
}

impl OptValue for bool {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return if cx.def.is_flag() {
                Ok(true)
            } else {
                Err("a value (0 or 1) is required".into())
            };
        }
        match parse_int(raw) {
            Ok(0) => Ok(false),
            Ok(1) => Ok(true),
            Ok(n) if cx.def.is_flag() && n > 0 => Ok(true),
            _ => Err(format!("'{raw}' is not a boolean (use 0 or 1)")),
        }
    }
}

macro_rules! unsigned_value {
    ($($t:ty),*) => {$(
        impl OptValue for $t {
            fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
                let v = cx.number(raw, &cx.def.kind)?;
                <$t>::try_from(v).map_err(|_| format!("value {v} is too large"))
            }
        }
    )*};
}
unsigned_value!(u32, u64);

impl OptValue for i32 {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let v = parse_int(raw)?;
        cx.check_range(v)?;
        i32::try_from(v).map_err(|_| format!("value {v} is out of range"))
    }
}

impl OptValue for f64 {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let v: f64 = raw
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("'{raw}' is not a number"))?;
        if !v.is_finite() {
            return Err(format!("'{raw}' is not a finite number"));
        }
        if cx.def.min.is_some_and(|m| v < m as f64) || cx.def.max.is_some_and(|m| v > m as f64) {
            return Err(format!(
                "value {v} is outside {}..{}",
                cx.def.min.unwrap_or(i64::MIN),
                cx.def.max.unwrap_or(i64::MAX)
            ));
        }
        Ok(v)
    }
}

impl OptValue for String {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        if let Kind::Choice(choices) = cx.def.kind {
            let lower = raw.trim().to_ascii_lowercase();
            return choices
                .iter()
                .find(|(v, _)| *v == lower)
                .map(|(v, _)| (*v).to_string())
                .ok_or_else(|| bad_choice(raw, choices));
        }
        Ok(raw.to_string())
    }
}

pub(crate) fn bad_choice(raw: &str, choices: &[(&str, &str)]) -> String {
    let list: Vec<&str> = choices.iter().map(|(v, _)| *v).collect();
    format!("'{raw}' is not one of: {}", list.join(", "))
}

impl<T: OptValue + Default> OptValue for Option<T> {
    fn parse(raw: &str, cx: &ValueCx, prev: &Self) -> Result<Self, String> {
        if raw.is_empty() && !cx.def.is_flag() && !matches!(cx.def.kind, Kind::Str) {
            return Ok(None);
        }
        let base = T::default();
        T::parse(raw, cx, prev.as_ref().unwrap_or(&base)).map(Some)
    }

    fn not_yet(&self) -> Option<&'static str> {
        self.as_ref().and_then(T::not_yet)
    }
}

/// A byte count or a percentage of the file/device.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum SizePct {
    Bytes(u64),
    Percent(f64),
}

impl Default for SizePct {
    fn default() -> Self {
        SizePct::Bytes(0)
    }
}

impl SizePct {
    /// Resolve against a total size.
    pub fn resolve(&self, total: u64) -> u64 {
        match *self {
            SizePct::Bytes(b) => b,
            SizePct::Percent(p) => ((total as f64) * p / 100.0) as u64,
        }
    }
}

impl OptValue for SizePct {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let t = raw.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("'{raw}' is not a valid percentage"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("percentage '{raw}' must be between 0% and 100%"));
            }
            return Ok(SizePct::Percent(v));
        }
        Ok(SizePct::Bytes(cx.number(t, &Kind::Size)?))
    }
}

/// A value for each data direction: read, write, trim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PerDir<T>(pub [T; 3]);

impl<T: Copy> PerDir<T> {
    pub fn all(v: T) -> Self {
        PerDir([v; 3])
    }
    pub fn read(&self) -> T {
        self.0[0]
    }
    pub fn write(&self) -> T {
        self.0[1]
    }
    pub fn trim(&self) -> T {
        self.0[2]
    }
}

/// fio's list rule: `a` sets all three; `a,b` sets read and write and carries b to
/// trim; an empty entry keeps the value in effect (`,8k` changes only write and trim).
pub(crate) fn parse_per_dir<T: Clone>(
    raw: &str,
    prev: &[T; 3],
    mut one: impl FnMut(&str) -> Result<T, String>,
) -> Result<[T; 3], String> {
    let parts: Vec<&str> = raw.split(',').collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{raw}' has more than three comma-separated values (read,write,trim)"
        ));
    }
    let mut out = prev.clone();
    let mut last: Option<T> = None;
    for (i, slot) in out.iter_mut().enumerate() {
        match parts.get(i) {
            Some(p) if !p.trim().is_empty() => {
                let v = one(p.trim())?;
                *slot = v.clone();
                last = Some(v);
            }
            Some(_) => last = None,
            None => {
                if let Some(v) = &last {
                    *slot = v.clone();
                }
            }
        }
    }
    Ok(out)
}

impl<T: OptValue + Clone> OptValue for PerDir<T> {
    fn parse(raw: &str, cx: &ValueCx, prev: &Self) -> Result<Self, String> {
        let inner = match cx.def.kind {
            Kind::PerDir(k) => k,
            _ => &cx.def.kind,
        };
        let inner_def = OptionDef {
            kind: *inner,
            ..OptionDef::BASE
        };
        let inner_cx = ValueCx {
            def: &OptionDef {
                min: cx.def.min,
                max: cx.def.max,
                ..inner_def
            },
            kb_base: cx.kb_base,
        };
        parse_per_dir(raw, &prev.0, |p| T::parse(p, &inner_cx, &prev.0[0])).map(PerDir)
    }
}

/// An inclusive range, e.g. of block sizes (`1k-4k`) or times (`2-5`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
}

fn parse_range(raw: &str, cx: &ValueCx, kind: &Kind) -> Result<Range, String> {
    let (a, b) = match raw.split_once('-').or_else(|| raw.split_once(':')) {
        Some((a, b)) => (a, b),
        None => (raw, raw),
    };
    let lo = cx.number(a, kind)?;
    let hi = cx.number(b, kind)?;
    if lo > hi {
        return Ok(Range { lo: hi, hi: lo });
    }
    Ok(Range { lo, hi })
}

impl OptValue for Range {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let kind = match cx.def.kind {
            Kind::TimeRange(u) => Kind::Time(u),
            _ => Kind::Size,
        };
        parse_range(raw.trim(), cx, &kind)
    }
}

/// Per-direction block-size ranges (`bsrange=1k-4k,8k-16k`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RangeList(pub PerDir<Range>);

impl OptValue for RangeList {
    fn parse(raw: &str, cx: &ValueCx, prev: &Self) -> Result<Self, String> {
        parse_per_dir(raw, &prev.0 .0, |p| {
            let r = parse_range(p, cx, &Kind::Size)?;
            if r.lo == 0 {
                return Err(format!("block size range '{p}' must not start at 0"));
            }
            Ok(r)
        })
        .map(|v| RangeList(PerDir(v)))
    }
}

/// One `bssplit` entry: block size and percentage (None = share of the remainder).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SplitEntry {
    pub bs: u64,
    pub pct: Option<u32>,
    /// cmdprio_bssplit only: (class, level) for I/Os of this size.
    pub prio: Option<(u8, u8)>,
    /// cmdprio_bssplit's third form (fio 3.42): the priority hint with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<u16>,
}

/// `sync_file_range=FLAGS:N`: sync_file_range(2) over the range written since the last
/// one, after every N writes; FLAGS from wait_before, write, wait_after (Linux's
/// SYNC_FILE_RANGE_* bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SyncFileRange {
    pub flags: u32,
    pub every: u32,
}

impl OptValue for SyncFileRange {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let usage =
            "use FLAGS:N, FLAGS from wait_before, write, wait_after (e.g. wait_before,write:32)";
        let (names, n) = raw.trim().split_once(':').ok_or(usage)?;
        let mut flags = 0;
        for name in names.split(',') {
            flags |= match name.trim() {
                "wait_before" => 1,
                "write" => 2,
                "wait_after" => 4,
                other => return Err(format!("unknown flag '{other}': {usage}")),
            };
        }
        let every = match parse_int(n.trim()) {
            Ok(v) if v > 0 && v <= u32::MAX as i64 => v as u32,
            _ => return Err(format!("'{n}' is not a count of writes: {usage}")),
        };
        Ok(SyncFileRange { flags, every })
    }
}

/// `bssplit` / `cmdprio_bssplit`: `bs/pct[/class/level[/hint]]:…` per direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BsSplit(pub [Vec<SplitEntry>; 3]);

impl OptValue for BsSplit {
    fn parse(raw: &str, cx: &ValueCx, prev: &Self) -> Result<Self, String> {
        let with_prio = cx.def.name == "cmdprio_bssplit";
        parse_per_dir(raw, &prev.0, |p| parse_split_list(p, cx.kb_base, with_prio)).map(BsSplit)
    }
}

fn parse_split_list(p: &str, kb_base: u64, with_prio: bool) -> Result<Vec<SplitEntry>, String> {
    let mut out = Vec::new();
    for item in p.split(':').filter(|s| !s.trim().is_empty()) {
        let fields: Vec<&str> = item.split('/').map(str::trim).collect();
        let max_fields = if with_prio { 5 } else { 2 };
        if fields.len() > max_fields || (with_prio && fields.len() == 3) {
            return Err(format!(
                "'{item}' is not of the form bs/percentage{}",
                if with_prio {
                    "[/class/level[/hint]]"
                } else {
                    ""
                }
            ));
        }
        let bs = parse_size(fields[0], kb_base)?;
        if bs == 0 {
            return Err(format!("'{item}': block size must not be 0"));
        }
        let pct = match fields.get(1) {
            Some(s) if !s.is_empty() => {
                let v = parse_int(s)?;
                if !(0..=100).contains(&v) {
                    return Err(format!("'{item}': percentage must be 0..100"));
                }
                Some(v as u32)
            }
            _ => None,
        };
        let hint = match fields.get(4) {
            Some(h) => match parse_int(h)? {
                v @ 0..=1023 => Some(v as u16),
                _ => return Err(format!("'{item}': the hint must be 0..1023")),
            },
            None => None,
        };
        let prio = if fields.len() >= 4 {
            let class = parse_int(fields[2])?;
            let level = parse_int(fields[3])?;
            if !(0..=3).contains(&class) || !(0..=7).contains(&level) {
                return Err(format!("'{item}': class must be 0..3 and level 0..7"));
            }
            Some((class as u8, level as u8))
        } else {
            None
        };
        out.push(SplitEntry {
            bs,
            pct,
            prio,
            hint,
        });
    }
    let total: u32 = out.iter().filter_map(|e| e.pct).sum();
    if total > 100 {
        return Err(format!(
            "'{p}': percentages add up to {total}%, more than 100%"
        ));
    }
    Ok(out)
}

/// Data direction pattern (`rw=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum RwMode {
    #[default]
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

pub const RW_CHOICES: &[(&str, &str)] = &[
    ("read", "Sequential reads"),
    ("write", "Sequential writes"),
    ("trim", "Sequential trims"),
    ("randread", "Random reads"),
    ("randwrite", "Random writes"),
    ("randtrim", "Random trims"),
    ("rw", "Sequential mixed reads and writes"),
    ("readwrite", "Sequential mixed reads and writes"),
    ("randrw", "Random mixed reads and writes"),
    ("trimwrite", "Trim then write each block, sequentially"),
    ("randtrimwrite", "Trim then write each block, randomly"),
];

impl RwMode {
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
}

/// `rw=MODE[:N]`: N is I/Os per new random offset, or a hole (may be negative) after
/// each sequential I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RwSpec {
    pub mode: RwMode,
    /// Random patterns: I/Os issued per generated offset (1 = fio default).
    pub nr: u32,
    /// Sequential patterns: bytes to skip (or go back) after each I/O.
    pub hole: i64,
}

impl OptValue for RwSpec {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let (m, modifier) = match raw.split_once(':') {
            Some((m, n)) => (m.trim(), Some(n.trim())),
            None => (raw.trim(), None),
        };
        let mode = match m.to_ascii_lowercase().as_str() {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "trim" => RwMode::Trim,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "randtrim" => RwMode::RandTrim,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return Err(bad_choice(m, RW_CHOICES)),
        };
        let mut spec = RwSpec {
            mode,
            nr: 1,
            hole: 0,
        };
        if let Some(n) = modifier {
            if mode.is_random() {
                let v = parse_int(n)?;
                if v < 1 || v > u32::MAX as i64 {
                    return Err(format!("'{raw}': I/Os per offset must be at least 1"));
                }
                spec.nr = v as u32;
            } else {
                let (neg, body) = match n.strip_prefix('-') {
                    Some(b) => (true, b),
                    None => (false, n),
                };
                let v = parse_size(body, cx.kb_base)? as i64;
                spec.hole = if neg { -v } else { v };
            }
        }
        Ok(spec)
    }
}

/// `random_distribution=`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub enum Distribution {
    #[default]
    Random,
    Zipf {
        theta: f64,
        center: f64,
    },
    Pareto {
        h: f64,
        center: f64,
    },
    Normal {
        dev: f64,
        center: f64,
    },
    /// (access %, % of the file) per direction.
    Zoned([Vec<(f64, f64)>; 3]),
    /// (access %, bytes) per direction.
    ZonedAbs([Vec<(f64, u64)>; 3]),
}

impl OptValue for Distribution {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let (kind, rest) = match raw.split_once(':') {
            Some((k, r)) => (k.trim(), Some(r.trim())),
            None => (raw.trim(), None),
        };
        let nums = |def: f64| -> Result<(f64, f64), String> {
            let mut it = rest.unwrap_or("").split(':');
            let a = match it.next().filter(|s| !s.is_empty()) {
                Some(s) => s.parse().map_err(|_| format!("'{s}' is not a number"))?,
                None => def,
            };
            let c = match it.next().filter(|s| !s.is_empty()) {
                Some(s) => s.parse().map_err(|_| format!("'{s}' is not a number"))?,
                None => 0.0,
            };
            if !(0.0..=1.0).contains(&c) {
                return Err(format!("center {c} must be between 0 and 1"));
            }
            Ok((a, c))
        };
        match kind.to_ascii_lowercase().as_str() {
            "random" => Ok(Distribution::Random),
            "zipf" => {
                let (theta, center) = nums(1.1)?;
                if theta == 1.0 || theta <= 0.0 {
                    return Err("zipf theta must be positive and not 1".into());
                }
                Ok(Distribution::Zipf { theta, center })
            }
            "pareto" => {
                let (h, center) = nums(0.2)?;
                if !(h > 0.0 && h < 1.0) {
                    return Err("pareto h must be between 0 and 1 (exclusive)".into());
                }
                Ok(Distribution::Pareto { h, center })
            }
            "normal" | "gauss" => {
                let (dev, center) = nums(0.0)?;
                if !(0.0..100.0).contains(&dev) {
                    return Err("normal deviation must be 0 <= dev < 100".into());
                }
                Ok(Distribution::Normal { dev, center })
            }
            "zoned" => parse_zones(
                rest.unwrap_or(""),
                |s| {
                    s.trim_end_matches('%')
                        .parse::<f64>()
                        .map_err(|_| format!("'{s}' is not a percentage"))
                },
                |z| (100.0 - z.iter().map(|x| x.1).sum::<f64>()).max(0.0),
            )
            .map(Distribution::Zoned),
            // An empty last size means "to the end of the file".
            "zoned_abs" => parse_zones(
                rest.unwrap_or(""),
                |s| parse_size(s, cx.kb_base),
                |_| u64::MAX,
            )
            .map(Distribution::ZonedAbs),
            _ => Err(format!(
                "'{kind}' is not a distribution (random, zipf, pareto, normal, zoned, zoned_abs)"
            )),
        }
    }
}

/// `pct/range:...`; an empty range in the last zone means "the rest" (fio accepts
/// `zoned:50/5:30/15:20/`). `rest` computes the remainder from the ranges given.
fn parse_zones<T: Clone>(
    rest: &str,
    second: impl Fn(&str) -> Result<T, String>,
    remainder: impl Fn(&[(f64, T)]) -> T,
) -> Result<[Vec<(f64, T)>; 3], String> {
    let empty: [Vec<(f64, T)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    parse_per_dir(rest, &empty, |p| {
        let mut zones = Vec::new();
        let mut total = 0.0;
        let items: Vec<&str> = p.split(':').filter(|s| !s.trim().is_empty()).collect();
        for (i, z) in items.iter().enumerate() {
            let (a, b) = z
                .split_once('/')
                .ok_or_else(|| format!("zone '{z}' is not of the form access%/range"))?;
            let pct: f64 = a
                .trim()
                .trim_end_matches('%')
                .parse()
                .map_err(|_| format!("'{a}' is not a percentage"))?;
            total += pct;
            let range = match b.trim() {
                "" if i + 1 == items.len() => remainder(&zones),
                "" => {
                    return Err(format!(
                        "zone '{z}': only the last zone may leave its range empty"
                    ))
                }
                r => second(r)?,
            };
            zones.push((pct, range));
        }
        if zones.len() > 256 {
            return Err("at most 256 zones are allowed".into());
        }
        if (total - 100.0).abs() > 0.001 {
            return Err(format!(
                "zone access percentages add up to {total}, not 100"
            ));
        }
        Ok(zones)
    })
}

/// `ignore_error=READ_ERRS,WRITE_ERRS,VERIFY_ERRS`: per direction, `:`-separated errno
/// names (EIO, ENOSPC, ...) or numbers that do not end the job.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IgnoreErrors(pub [Vec<i32>; 3]);

const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("ENODEV", libc::ENODEV),
    ("EINVAL", libc::EINVAL),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("ERANGE", libc::ERANGE),
    ("ENODATA", libc::ENODATA),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("EILSEQ", libc::EILSEQ),
    ("EDQUOT", libc::EDQUOT),
    ("ECANCELED", libc::ECANCELED),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("ENOLINK", libc::ENOLINK),
    ("EISDIR", libc::EISDIR),
    ("ENOTDIR", libc::ENOTDIR),
    ("EMFILE", libc::EMFILE),
    ("ENFILE", libc::ENFILE),
    ("ENOTTY", libc::ENOTTY),
    ("ETXTBSY", libc::ETXTBSY),
    ("EXDEV", libc::EXDEV),
    ("ENOSYS", libc::ENOSYS),
    ("ESTALE", libc::ESTALE),
    ("EBADMSG", libc::EBADMSG),
    ("EOVERFLOW", libc::EOVERFLOW),
];

impl OptValue for IgnoreErrors {
    fn parse(raw: &str, _: &ValueCx, prev: &Self) -> Result<Self, String> {
        let parts: Vec<&str> = raw.split(',').collect();
        if parts.len() > 3 {
            return Err(format!(
                "'{raw}' has more than three lists (read,write,verify)"
            ));
        }
        let mut out = prev.clone();
        for (d, part) in parts.iter().enumerate() {
            let mut list = Vec::new();
            for name in part.split(':').map(str::trim).filter(|n| !n.is_empty()) {
                let code = match name.parse::<i32>() {
                    Ok(n) if n > 0 => n,
                    _ => ERRNO_NAMES
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(name))
                        .map(|(_, c)| *c)
                        .ok_or_else(|| format!("'{name}' is not an error name or number"))?,
                };
                list.push(code);
            }
            out.0[d] = list;
        }
        Ok(out)
    }
}

/// `steadystate=iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%]` (fio's ss=).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SteadySpec {
    /// bw (else iops, unless lat).
    pub bw: bool,
    /// Mean completion latency per interval (fio 3.42's lat, lat_slope); the limit
    /// is in ns.
    pub lat: bool,
    /// Least-squares slope instead of maximum deviation from the mean.
    pub slope: bool,
    /// Limit in IOPS, bytes/s, or percent of the mean.
    pub limit: f64,
    pub pct: bool,
}

impl SteadySpec {
    /// What fio's `--debug=parse` says of it ("set steady state IOPS threshold to
    /// 10.000000", "… threshold to 0.100000%", "… BW threshold to 12").
    pub fn debug_line(&self) -> String {
        match (self.pct, self.bw, self.lat) {
            (true, _, _) => format!("set steady state threshold to {:.6}%", self.limit),
            (false, _, true) => format!(
                "set steady state latency threshold to {} nsec",
                self.limit as u64
            ),
            (false, false, _) => format!("set steady state IOPS threshold to {:.6}", self.limit),
            (false, true, _) => format!("set steady state BW threshold to {}", self.limit as u64),
        }
    }

    pub fn metric(&self) -> &'static str {
        match (self.lat, self.bw, self.slope) {
            (true, _, false) => "lat",
            (true, _, true) => "lat_slope",
            (false, false, false) => "iops",
            (false, false, true) => "iops_slope",
            (false, true, false) => "bw",
            (false, true, true) => "bw_slope",
        }
    }
}

impl OptValue for SteadySpec {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let (crit, limit) = raw.split_once(':').ok_or_else(|| {
            format!("'{raw}' is not of the form iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%]")
        })?;
        let (bw, lat, slope) = match crit.trim().to_ascii_lowercase().as_str() {
            "iops" => (false, false, false),
            "iops_slope" => (false, false, true),
            "bw" => (true, false, false),
            "bw_slope" => (true, false, true),
            "lat" => (false, true, false),
            "lat_slope" => (false, true, true),
            other => {
                return Err(format!(
                    "'{other}' is not a steady-state criterion (iops, iops_slope, bw, bw_slope, \
                     lat, lat_slope)"
                ))
            }
        };
        let limit = limit.trim();
        let (limit, pct) = match limit.strip_suffix('%') {
            Some(p) => (
                p.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("'{limit}' is not a percentage"))?,
                true,
            ),
            None if bw => (parse_size(limit, cx.kb_base)? as f64, false),
            None => (
                limit
                    .parse::<f64>()
                    .map_err(|_| format!("'{limit}' is not a number"))?,
                false,
            ),
        };
        if !(limit.is_finite() && limit >= 0.0) {
            return Err(format!(
                "steady-state limit '{limit}' must be a non-negative number"
            ));
        }
        Ok(SteadySpec {
            bw,
            lat,
            slope,
            limit,
            pct,
        })
    }
}

/// `percentile_list=1:5:99.9` (at most 20 values).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FloatList(pub Vec<f64>);

impl OptValue for FloatList {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let mut v = Vec::new();
        for s in raw.split(':').filter(|s| !s.trim().is_empty()) {
            let f: f64 = s
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not a number"))?;
            if !(0.0..=100.0).contains(&f) {
                return Err(format!("percentile {f} must be between 0 and 100"));
            }
            v.push(f);
        }
        if v.len() > 20 {
            return Err("at most 20 percentiles may be listed".into());
        }
        Ok(FloatList(v))
    }
}

/// Declare an enum option: variants, their job-file spellings and meanings.
/// The same list serves parsing and help (`Kind::Choice(Enum::CHOICES)`).
macro_rules! choice_enum {
    ($(#[$m:meta])* $name:ident { $($var:ident = [$($spelling:literal),+] : $help:literal $(; $status:ident)?),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
        pub enum $name { #[default] $($var),+ }
        impl $name {
            pub const CHOICES: &'static [(&'static str, &'static str)] = &[$($( ($spelling, $help) ),+),+];
            pub fn name(self) -> &'static str {
                match self { $($name::$var => [$($spelling),+][0]),+ }
            }
        }
        impl OptValue for $name {
            fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
                let v = raw.trim().to_ascii_lowercase();
                $( if [$($spelling),+].contains(&v.as_str()) { return Ok($name::$var); } )+
                Err(bad_choice(raw, Self::CHOICES))
            }
            fn not_yet(&self) -> Option<&'static str> {
                match self { $($name::$var => choice_status!($($status)?, self.name())),+ }
            }
        }
    };
}

/// A choice value's support: unmarked values are supported, `not_yet` ones are not.
macro_rules! choice_status {
    (, $n:expr) => {
        None
    };
    (not_yet, $n:expr) => {
        Some($n)
    };
}

choice_enum!(
    /// `lockfile=`
    LockMode {
        None = ["none"]: "No file locking",
        Exclusive = ["exclusive"]: "One I/O at a time to the file, across the jobs sharing it",
        ReadWrite = ["readwrite"]: "Reads together, each write alone",
    }
);

choice_enum!(
    /// `zonemode=`
    ZoneMode {
        None = ["none"]: "The file is one region",
        Strided = ["strided"]: "zonesize bytes of I/O per zone of zonerange bytes, then the next zone (zoneskip apart)",
        Zbd = ["zbd"]: "Zoned block device rules: writes at each zone's write pointer, reads below it, open-zone limits",
    }
);

choice_enum!(
    /// `cmd_type=` (io_uring_cmd): the passthrough command set.
    CmdType {
        Nvme = ["nvme"]: "NVMe commands to a namespace's generic device (/dev/ngXnY)",
    }
);

choice_enum!(
    /// `write_mode=` (io_uring_cmd): the NVMe command a write issues.
    CmdWriteMode {
        Write = ["write"]: "Write commands",
        Uncor = ["uncor"]: "Write Uncorrectable commands (no data moves)",
        Zeroes = ["zeroes"]: "Write Zeroes commands (no data moves; deac=1 deallocates)",
        Verify = ["verify"]: "Verify commands (no data moves)",
    }
);

choice_enum!(
    /// `verify_mode=` (io_uring_cmd): the command the verify phase reads with.
    CmdVerifyMode {
        Read = ["read"]: "Read commands, data compared by ioscope",
        Compare = ["compare"]: "Compare commands: the device compares the blocks with verify_pattern",
    }
);

choice_enum!(
    /// `dataplacement=` (io_uring_cmd): the directive writes carry.
    DataPlacement {
        None = ["none"]: "No data placement directive",
        Fdp = ["fdp"]: "Flexible Data Placement (as fdp=1)",
        Streams = ["streams"]: "Streams directives (not yet: QEMU's emulated NVMe has no Streams directive to prove it on)"; not_yet,
    }
);

choice_enum!(
    /// `plid_select=` (io_uring_cmd): how the next placement ID is chosen.
    PlidSelect {
        RoundRobin = ["roundrobin"]: "Round robin over the placement IDs",
        Random = ["random"]: "Uniformly at random",
        Scheme = ["scheme"]: "By offset range, from the dp_scheme file",
    }
);

choice_enum!(
    /// `sg_write_mode=` (sg): the SCSI command a write issues.
    SgWriteModeOpt {
        Write = ["write"]: "WRITE commands",
        WriteAndVerify = ["write_and_verify", "verify"]: "WRITE AND VERIFY (BYTCHK 0: medium verification, no compare); 'verify' is the deprecated name",
        WriteSame = ["write_same", "same"]: "WRITE SAME: one block transferred, written over the whole range; 'same' is the deprecated name",
        WriteSameNdob = ["write_same_ndob"]: "WRITE SAME(16) with NDOB: no data transferred (the device writes zeros)",
        WriteStream = ["write_stream"]: "WRITE STREAM(16) with stream_id (not yet: QEMU's emulated SCSI disk has no streams to prove it on)"; not_yet,
        VerifyBytchk00 = ["verify_bytchk_00"]: "VERIFY, BYTCHK 00: medium verification, no data",
        VerifyBytchk01 = ["verify_bytchk_01"]: "VERIFY, BYTCHK 01: the device compares the data sent",
        VerifyBytchk11 = ["verify_bytchk_11"]: "VERIFY, BYTCHK 11: one block sent, compared over the range",
    }
);

choice_enum!(
    /// `write_hint=`: the expected lifetime of written data (RWH_WRITE_LIFE_*).
    WriteHint {
        None = ["none"]: "No particular lifetime (RWH_WRITE_LIFE_NONE)",
        Short = ["short"]: "Short-lived data",
        Medium = ["medium"]: "Medium-lived data",
        Long = ["long"]: "Long-lived data",
        Extreme = ["extreme"]: "Data kept the longest",
    }
);

choice_enum!(
    /// `filetype=`: the type of every file of the job, taken as given.
    FileType {
        None = ["none"]: "Unset: stat(2) each file (the default)",
        File = ["file"]: "Regular files",
        Block = ["block"]: "Block devices",
        Char = ["char"]: "Character devices",
    }
);

choice_enum!(
    /// `stat_type=` (filestat, dirstat)
    StatType {
        Stat = ["stat"]: "stat(2)",
        Lstat = ["lstat"]: "lstat(2): a symbolic link itself, not what it points to",
        Statx = ["statx"]: "statx(2) with STATX_ALL",
    }
);

choice_enum!(
    /// `sync=`
    SyncMode {
        None = ["none", "0"]: "No O_SYNC/O_DSYNC",
        Sync = ["sync", "1"]: "Open with O_SYNC",
        Dsync = ["dsync"]: "Open with O_DSYNC",
    }
);

choice_enum!(
    /// `random_generator=`
    RandomGenerator {
        Tausworthe = ["tausworthe"]: "Strong 2^88 cycle random number generator",
        Lfsr = ["lfsr"]: "Variable length LFSR (never repeats an offset)",
        Tausworthe64 = ["tausworthe64"]: "64-bit tausworthe random number generator",
    }
);

choice_enum!(
    /// `fallocate=`
    Fallocate {
        Native = ["native"]: "Use fallocate(2) if available, else nothing",
        None = ["none", "0"]: "Do not preallocate",
        Posix = ["posix", "1"]: "posix_fallocate(3)",
        Keep = ["keep"]: "fallocate with FALLOC_FL_KEEP_SIZE",
        Zero = ["zero"]: "fallocate with FALLOC_FL_ZERO_RANGE",
        Truncate = ["truncate"]: "ftruncate(2) to the file size",
    }
);

choice_enum!(
    /// `exit_what=`
    ExitWhat {
        Group = ["group"]: "End the jobs of the same group",
        Stonewall = ["stonewall"]: "End the jobs of the same stonewall",
        All = ["all"]: "End all jobs",
    }
);

choice_enum!(
    /// `continue_on_error=`
    ContinueOnError {
        None = ["none", "0"]: "Stop the job on any error",
        Read = ["read"]: "Continue on read errors",
        Write = ["write"]: "Continue on write errors",
        Io = ["io"]: "Continue on any I/O error",
        Verify = ["verify"]: "Continue on verify errors",
        All = ["all", "1"]: "Continue on all errors",
    }
);

choice_enum!(
    /// `unified_rw_reporting=`
    UnifiedRw {
        None = ["none", "0"]: "Report each direction separately",
        Mixed = ["mixed", "1"]: "Report all directions as one 'mixed' direction",
        Both = ["both", "2"]: "Report each direction and the mixed total",
    }
);

choice_enum!(
    /// `rate_process=`
    RateProcess {
        Linear = ["linear"]: "Evenly spaced submissions",
        Poisson = ["poisson"]: "Exponentially distributed gaps (Poisson process)",
    }
);

choice_enum!(
    /// `rw_sequencer=`
    RwSequencer {
        Sequential = ["sequential"]: "Generate a sequential offset for each :N",
        Identical = ["identical"]: "Repeat the same offset :N times",
    }
);

choice_enum!(
    /// `thinktime_blocks_type=`
    ThinktimeBlocksType {
        Complete = ["complete"]: "Count completed I/Os",
        Issue = ["issue"]: "Count issued I/Os",
    }
);

choice_enum!(
    /// `log_window_value=` (fio 3.33: `log_max_value=0|1`)
    LogWindowValue {
        Avg = ["avg", "0"]: "Log the window average",
        Max = ["max", "1"]: "Log the window maximum",
        Both = ["both", "2"]: "Log average and maximum",
    }
);

choice_enum!(
    /// `mem=` / `iomem=`
    MemType {
        Malloc = ["malloc"]: "Heap memory",
        Shm = ["shm"]: "SysV shared memory",
        ShmHuge = ["shmhuge"]: "SysV shared memory on huge pages (/proc/sys/vm/nr_hugepages must have them)",
        Mmap = ["mmap"]: "Anonymous mmap, or of a file: mmap:/path/to/file",
        MmapHuge = ["mmaphuge"]: "mmap of huge pages: anonymous, or of a hugetlbfs file: mmaphuge:/hugetlbfs/file",
        MmapShared = ["mmapshared"]: "Shared mmap, anonymous or of a file: mmapshared:/path/to/file",
        Cudamalloc = ["cudamalloc"]: "CUDA memory (GPUDirect RDMA; needs a GPU and the rdma engine)"; not_yet,
    }
);

/// `mem=TYPE[:FILE]`: where I/O buffers live; the mmap types may name a file to map.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemSpec {
    pub kind: MemType,
    pub file: Option<String>,
}

impl OptValue for MemSpec {
    fn parse(raw: &str, cx: &ValueCx, _: &Self) -> Result<Self, String> {
        let (kind, file) = match raw.split_once(':') {
            Some((k, f)) => (k, Some(f.to_string())),
            None => (raw, None),
        };
        let kind = MemType::parse(kind, cx, &MemType::default())?;
        let mapped = matches!(
            kind,
            MemType::Mmap | MemType::MmapHuge | MemType::MmapShared
        );
        match &file {
            Some(f) if !mapped => Err(format!(
                "'{raw}': only mmap, mmaphuge and mmapshared map a file (mem={}:{f})",
                MemType::Mmap.name()
            )),
            Some(f) if f.is_empty() => Err(format!("'{raw}': name the file after the ':'")),
            _ => Ok(MemSpec { kind, file }),
        }
    }

    fn not_yet(&self) -> Option<&'static str> {
        self.kind.not_yet()
    }
}

choice_enum!(
    /// `file_service_type=`
    FileService {
        RoundRobin = ["roundrobin"]: "Switch files round-robin",
        Random = ["random"]: "Pick a random file",
        Sequential = ["sequential"]: "Finish each file before the next",
    }
);

choice_enum!(
    /// `cpus_allowed_policy=`
    CpusPolicy {
        Shared = ["shared"]: "All jobs share the CPU set",
        Split = ["split"]: "Each job gets one CPU of the set",
    }
);

choice_enum!(
    /// `io_submit_mode=`
    SubmitMode {
        Inline = ["inline"]: "Submit from the job thread",
        Offload = ["offload"]: "Hand each I/O to one of iodepth worker threads, each with its own engine at depth 1",
    }
);

choice_enum!(
    /// `clocksource=`
    ClockSource {
        Cpu = ["cpu"]: "CPU time stamp counter (TSC), calibrated at start",
        Gettimeofday = ["gettimeofday"]: "gettimeofday(2)",
        ClockGettime = ["clock_gettime"]: "clock_gettime(2) CLOCK_MONOTONIC",
    }
);

choice_enum!(
    /// `dedupe_mode=`
    DedupeMode {
        Repeat = ["repeat"]: "Repeat earlier buffers",
        WorkingSet = ["working_set"]: "Pick from a working set of buffers",
    }
);

choice_enum!(
    /// `unit_base=`
    UnitBase {
        Auto = ["0"]: "Auto-detect",
        Bytes = ["8"]: "Bytes",
        Bits = ["1"]: "Bits",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(kind: Kind) -> OptionDef {
        OptionDef {
            kind,
            ..OptionDef::BASE
        }
    }

    #[test]
    fn per_dir_rules_match_fio() {
        let d = cx(Kind::PerDir(&Kind::Size));
        let c = ValueCx {
            def: &d,
            kb_base: 1024,
        };
        let def = PerDir::all(4096u64);
        assert_eq!(
            PerDir::parse("4k,8k", &c, &def).unwrap().0,
            [4096, 8192, 8192]
        );
        assert_eq!(
            PerDir::parse(",8k", &c, &def).unwrap().0,
            [4096, 8192, 8192]
        );
        assert_eq!(
            PerDir::parse("2k,,16k", &c, &def).unwrap().0,
            [2048, 4096, 16384]
        );
        assert_eq!(PerDir::parse("8k", &c, &def).unwrap().0, [8192; 3]);
        assert!(PerDir::parse("1,2,3,4", &c, &def).is_err());
    }

    #[test]
    fn rw_modifiers() {
        let d = cx(Kind::Str);
        let c = ValueCx {
            def: &d,
            kb_base: 1024,
        };
        let r = RwSpec::parse("randread:8", &c, &RwSpec::default()).unwrap();
        assert_eq!((r.mode, r.nr), (RwMode::RandRead, 8));
        let r = RwSpec::parse("read:-8k", &c, &RwSpec::default()).unwrap();
        assert_eq!((r.mode, r.hole), (RwMode::Read, -8192));
        assert!(RwSpec::parse("bogus", &c, &RwSpec::default()).is_err());
    }

    #[test]
    fn bssplit_forms() {
        let d = OptionDef {
            name: "cmdprio_bssplit",
            ..OptionDef::BASE
        };
        let c = ValueCx {
            def: &d,
            kb_base: 1024,
        };
        let v = BsSplit::parse("64k/40:1m/60/1/0,4k/100", &c, &BsSplit::default()).unwrap();
        assert_eq!(v.0[0][1].prio, Some((1, 0)));
        assert_eq!(v.0[1][0].bs, 4096);
        assert!(BsSplit::parse("4k/70:8k/40", &c, &BsSplit::default()).is_err());
    }
}
