//! Option values with a syntax of their own — CPU lists and masks, NUMA node lists and
//! memory policies, data patterns, lists of directions and of numbers — parsed into
//! types when the option is read, so that a syntax error is refused with its file and
//! line (also by `--parse-only`) before anything is opened.
//!
//! What needs the machine (do these CPUs or nodes exist, can the pattern's file be
//! read) is checked later, by the runner's plan.

use crate::types::{OptValue, ValueCx};
use serde::Serialize;

/// The largest CPU number a list may name (the kernel's cpu_set_t holds 1024).
pub const MAX_CPU: usize = 1023;

/// A CPU list (`0-3,6`), as cpus_allowed, verify_async_cpus and log_compression_cpus
/// take it; also the syntax of NUMA node lists.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuList(pub Vec<usize>);

impl CpuList {
    /// `0-3,6` → [0, 1, 2, 3, 6] (empty parts are ignored, as fio does).
    pub fn parse(s: &str) -> Result<CpuList, String> {
        let mut v = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let num = |t: &str| {
                t.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("'{s}' is not a CPU list (e.g. 0-3,6)"))
            };
            let (a, b) = (num(a)?, num(b)?);
            if a > b || b > MAX_CPU {
                return Err(format!("'{s}': bad range {part}"));
            }
            v.extend(a..=b);
        }
        Ok(CpuList(v))
    }
}

impl OptValue for CpuList {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        CpuList::parse(raw)
    }
}

/// cpumask: a bit mask of CPUs, in hex (`0x3`, or `3`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuMask(pub Vec<usize>);

impl OptValue for CpuMask {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let t = raw.trim();
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        let m = u64::from_str_radix(t, 16)
            .map_err(|_| format!("'{raw}' is not a hex CPU mask (e.g. 0x3)"))?;
        Ok(CpuMask((0..64).filter(|i| m & (1 << i) != 0).collect()))
    }
}

/// A NUMA node list: `all`, or CPU-list syntax (`0`, `0-1`, `0,2`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub enum NodeList {
    /// Every node the machine has.
    #[default]
    All,
    Nodes(Vec<usize>),
}

impl NodeList {
    pub fn parse(s: &str) -> Result<NodeList, String> {
        if s.trim() == "all" {
            return Ok(NodeList::All);
        }
        let nodes = CpuList::parse(s)
            .map_err(|_| format!("'{s}' is not a node list (e.g. 0, 0-1, all)"))?
            .0;
        if nodes.is_empty() {
            return Err(format!("'{s}' names no node"));
        }
        Ok(NodeList::Nodes(nodes))
    }
}

impl OptValue for NodeList {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        NodeList::parse(raw)
    }
}

/// numa_mem_policy, as fio 3.33 accepts it: `default`, `local` (no node list),
/// `prefer:N` (exactly one node), `bind:LIST` and `interleave[:LIST]` (all nodes when
/// no list is given).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub enum NumaPolicy {
    #[default]
    Default,
    Local,
    Prefer(usize),
    Bind(NodeList),
    Interleave(NodeList),
}

impl OptValue for NumaPolicy {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let (mode, list) = match raw.split_once(':') {
            Some((m, l)) => (m.trim(), Some(l.trim())),
            None => (raw.trim(), None),
        };
        match (mode, list) {
            ("default", None) => Ok(NumaPolicy::Default),
            ("local", None) => Ok(NumaPolicy::Local),
            ("default" | "local", Some(_)) => Err(format!("'{mode}' takes no node list")),
            ("prefer", Some(l)) => match NodeList::parse(l)? {
                NodeList::Nodes(n) if n.len() == 1 => Ok(NumaPolicy::Prefer(n[0])),
                _ => Err(format!("'prefer' takes one node, not '{l}'")),
            },
            ("prefer", None) => Err("'prefer' needs a node (prefer:N)".into()),
            ("bind", Some(l)) => Ok(NumaPolicy::Bind(NodeList::parse(l)?)),
            ("bind", None) => Err("'bind' needs a node list (bind:LIST)".into()),
            ("interleave", Some(l)) => Ok(NumaPolicy::Interleave(NodeList::parse(l)?)),
            ("interleave", None) => Ok(NumaPolicy::Interleave(NodeList::All)),
            _ => Err(format!(
                "'{raw}': the policies are default, prefer:N, bind:LIST, interleave[:LIST] and local"
            )),
        }
    }
}

/// buffer_pattern: fio's pattern elements in any order and number: `0xHEX`,
/// `"string"`, a decimal number (its bytes, little-endian, 32 bits) and `'file'`, whose
/// contents are read when the job is set up ([`BufferPattern::resolve`]). Text that is
/// none of these is taken as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferPattern(pub Vec<PatternPart>);

impl OptValue for BufferPattern {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let t = raw.trim();
        let mut parts = Vec::new();
        let mut rest = t;
        while !rest.is_empty() {
            match pattern_part(rest) {
                Ok((PatternPart::Offset, _)) => {
                    return Err(format!("'{raw}': %o is for verify_pattern only"))
                }
                Ok((part, r)) => {
                    parts.push(part);
                    rest = r;
                }
                // Plain text: its bytes (ioscope has always taken it so).
                Err(_) if !t.contains(['"', '\'']) => {
                    parts = vec![PatternPart::Bytes(t.as_bytes().to_vec())];
                    break;
                }
                Err(e) => return Err(format!("'{raw}': {e}")),
            }
        }
        let bytes: usize = parts
            .iter()
            .map(|p| match p {
                PatternPart::Bytes(b) => b.len(),
                _ => 0,
            })
            .sum();
        if bytes > MAX_PATTERN {
            return Err(format!("'{raw}': longer than {MAX_PATTERN} bytes"));
        }
        if parts.is_empty() || parts == [PatternPart::Bytes(Vec::new())] {
            return Err(format!("'{raw}' is empty"));
        }
        Ok(BufferPattern(parts))
    }
}

impl BufferPattern {
    /// The pattern's bytes, with its files read now (as much of each as fits in
    /// [`MAX_PATTERN`], as fio reads them).
    pub fn resolve(&self) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        for p in &self.0 {
            match p {
                PatternPart::Bytes(b) => bytes.extend(b),
                PatternPart::Offset => {}
                PatternPart::File(f) => read_pattern_file(f, &mut bytes)?,
            }
        }
        if bytes.is_empty() {
            return Err("empty".into());
        }
        Ok(bytes)
    }
}

/// Append what fits of file `f` to a pattern: at most [`MAX_PATTERN`] bytes in all.
fn read_pattern_file(f: &str, bytes: &mut Vec<u8>) -> Result<(), String> {
    use std::io::Read;
    let room = MAX_PATTERN.saturating_sub(bytes.len()) as u64;
    std::fs::File::open(f)
        .and_then(|file| file.take(room).read_to_end(bytes))
        .map(|_| ())
        .map_err(|e| format!("'{f}': {e}"))
}

/// The longest pattern fio takes (fio 3.42: 128 MiB; 512 bytes before).
pub const MAX_PATTERN: usize = 128 << 20;

/// One element of a verify_pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PatternPart {
    Bytes(Vec<u8>),
    /// `%o`: the block's offset, 8 little-endian bytes.
    Offset,
    /// `'file'`: the file's contents, read when the run is planned.
    File(String),
}

/// verify_pattern (fio's pattern syntax): elements one after another — `0x…` hex bytes
/// in the order typed (an odd digit count gets a leading 0), a decimal number as the
/// fewest little-endian bytes that hold it (negative: 32-bit two's complement),
/// `"text"`, `'file'` (its contents) and `%o`, the block's offset. At most 512 bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VerifyPattern(pub Vec<PatternPart>);

impl VerifyPattern {
    pub fn parse(s: &str) -> Result<VerifyPattern, String> {
        let mut parts = Vec::new();
        let mut rest = s.trim();
        let mut len = 0;
        while !rest.is_empty() {
            let (part, r) = pattern_part(rest)?;
            len += match &part {
                PatternPart::Bytes(b) => b.len(),
                PatternPart::Offset => 8,
                PatternPart::File(_) => 0,
            };
            if len > MAX_PATTERN {
                return Err(format!("'{s}': longer than {MAX_PATTERN} bytes"));
            }
            parts.push(part);
            rest = r;
        }
        if parts.is_empty() {
            return Err("empty".into());
        }
        Ok(VerifyPattern(parts))
    }

    /// The pattern's bytes and where `%o` goes in them, with files read now.
    pub fn resolve(&self) -> Result<(Vec<u8>, Vec<usize>), String> {
        let mut bytes = Vec::new();
        let mut offset_at = Vec::new();
        for p in &self.0 {
            match p {
                PatternPart::Bytes(b) => bytes.extend(b),
                PatternPart::Offset => {
                    offset_at.push(bytes.len());
                    bytes.extend([0u8; 8]);
                }
                PatternPart::File(f) => read_pattern_file(f, &mut bytes)?,
            }
            if bytes.len() > MAX_PATTERN {
                return Err(format!("longer than {MAX_PATTERN} bytes"));
            }
        }
        if bytes.is_empty() {
            return Err("empty".into());
        }
        Ok((bytes, offset_at))
    }
}

/// Take one element from the front of `s`; the element and what is left.
fn pattern_part(s: &str) -> Result<(PatternPart, &str), String> {
    if let Some(r) = s.strip_prefix("%o") {
        return Ok((PatternPart::Offset, r));
    }
    if let Some(r) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let n = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len());
        if n == 0 {
            return Err("'0x' without hex digits".into());
        }
        let mut digits = r[..n].to_string();
        if digits.len() % 2 == 1 {
            digits.insert(0, '0');
        }
        let bytes = (0..digits.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|e| e.to_string()))
            .collect::<Result<Vec<u8>, String>>()?;
        return Ok((PatternPart::Bytes(bytes), &r[n..]));
    }
    if let Some(r) = s.strip_prefix('"') {
        let end = r
            .find('"')
            .ok_or("a '\"' string without its closing quote")?;
        return Ok((
            PatternPart::Bytes(r.as_bytes()[..end].to_vec()),
            &r[end + 1..],
        ));
    }
    if let Some(r) = s.strip_prefix('\'') {
        let end = r
            .find('\'')
            .ok_or("a '…' file name without its closing quote")?;
        return Ok((PatternPart::File(r[..end].to_string()), &r[end + 1..]));
    }
    decimal_part(s)
}

fn decimal_part(s: &str) -> Result<(PatternPart, &str), String> {
    let neg = s.starts_with('-');
    let digits = if neg { &s[1..] } else { s };
    let mut n = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    // "-120xdeadface" is -12 then 0xdeadface: a number ends before a "0x".
    if n > 1 && digits[n..].starts_with(['x', 'X']) && digits.as_bytes()[n - 1] == b'0' {
        n -= 1;
    }
    if n == 0 {
        return Err(format!(
            "cannot read '{s}' (hex 0x.., decimal, \"text\", 'file' or %o)"
        ));
    }
    let v: u64 = digits[..n]
        .parse()
        .map_err(|_| format!("'{}' is too large", &digits[..n]))?;
    let bytes = if neg {
        let v = i32::try_from(v).map_err(|_| format!("-{v} does not fit 32 bits"))?;
        (-v).to_le_bytes().to_vec()
    } else {
        let v = u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"))?;
        let len = (4 - (v.leading_zeros() / 8) as usize).max(1);
        v.to_le_bytes()[..len].to_vec()
    };
    Ok((PatternPart::Bytes(bytes), &digits[n..]))
}

impl OptValue for VerifyPattern {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        VerifyPattern::parse(raw)
    }
}

/// replay_skip: the kinds of an iolog's I/O to leave out (`read,write,trim,sync`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReplaySkip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

impl OptValue for ReplaySkip {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let mut s = ReplaySkip::default();
        for k in raw.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            match k {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                _ => return Err(format!("'{k}' is not one of read, write, trim, sync")),
            }
        }
        Ok(s)
    }
}

/// A list of indices and ranges (`0,2-4`): `plids`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IndexList(pub Vec<u32>);

impl OptValue for IndexList {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let mut v = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let num = |t: &str| {
                t.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("'{raw}' is not a list of indices (e.g. 0,2-4)"))
            };
            let (a, b) = (num(a)?, num(b)?);
            if a > b || b > u32::from(u16::MAX) {
                return Err(format!("'{raw}': bad range {part}"));
            }
            v.extend(a..=b);
        }
        Ok(IndexList(v))
    }
}

/// `pi_chk=`: the protection information fields the controller checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PiChk {
    pub guard: bool,
    pub reftag: bool,
    pub apptag: bool,
}

impl OptValue for PiChk {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        let mut c = PiChk::default();
        for k in raw.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            match k.to_ascii_uppercase().as_str() {
                "GUARD" => c.guard = true,
                "REFTAG" => c.reftag = true,
                "APPTAG" => c.apptag = true,
                _ => return Err(format!("'{k}' is not one of GUARD, REFTAG, APPTAG")),
            }
        }
        Ok(c)
    }
}

/// A `:`-separated list of non-negative numbers, fractions cut off
/// (merge_blktrace_scalars, merge_blktrace_iters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NumList(pub Vec<u64>);

impl OptValue for NumList {
    fn parse(raw: &str, _: &ValueCx, _: &Self) -> Result<Self, String> {
        raw.split(':')
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(|x| x as u64)
                    .ok_or_else(|| format!("'{s}' is not a number"))
            })
            .collect::<Result<Vec<u64>, String>>()
            .map(NumList)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_patterns_combine_hex_strings_numbers_and_files() {
        let def = crate::OPTIONS
            .iter()
            .find(|d| d.name == "buffer_pattern")
            .unwrap();
        let cx = ValueCx { def, kb_base: 1024 };
        let p = |s: &str| <BufferPattern as OptValue>::parse(s, &cx, &BufferPattern::default());
        let dir = std::env::temp_dir().join(format!("ioscope-pattern-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pat");
        std::fs::write(&file, b"FILE").unwrap();
        let text = format!("0xdeadface\"abcd\"-12'{}'", file.display());
        let got = p(&text).unwrap().resolve().unwrap();
        let mut want = vec![0xde, 0xad, 0xfa, 0xce];
        want.extend(b"abcd");
        want.extend((-12i32).to_le_bytes());
        want.extend(b"FILE");
        assert_eq!(got, want);
        // A 'file' is its contents, not its name; plain text is its bytes.
        assert_eq!(
            p(&format!("'{}'", file.display()))
                .unwrap()
                .resolve()
                .unwrap(),
            b"FILE"
        );
        assert_eq!(p("abc").unwrap().resolve().unwrap(), b"abc");
        // fio's harness test 28: a number ends where a "0x" begins.
        let mut want = b"abcd".to_vec();
        want.extend((-12i32).to_le_bytes());
        want.extend([0xde, 0xad, 0xfa, 0xce]);
        assert_eq!(p("\"abcd\"-120xdeadface").unwrap().resolve().unwrap(), want);
        // Longer than 512 bytes, as fio 3.42 takes it.
        let long = format!("0x{}", "ab".repeat(4096));
        assert_eq!(p(&long).unwrap().resolve().unwrap().len(), 4096);
        assert!(p("'/no/such/pattern'")
            .unwrap()
            .resolve()
            .unwrap_err()
            .contains("/no/such/pattern"));
        assert!(p("\"open").is_err());
        assert!(p("%o").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cpu_lists_and_masks() {
        assert_eq!(CpuList::parse("0-3,6").unwrap().0, [0, 1, 2, 3, 6]);
        assert_eq!(CpuList::parse("").unwrap().0, Vec::<usize>::new());
        for bad in ["abc", "3-1", "0-1024", "1,x"] {
            assert!(CpuList::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn policies_parse_as_fio_accepts_them() {
        let p = |s: &str| {
            let def = crate::OPTIONS
                .iter()
                .find(|d| d.name == "numa_mem_policy")
                .unwrap();
            let cx = ValueCx { def, kb_base: 1024 };
            <NumaPolicy as OptValue>::parse(s, &cx, &NumaPolicy::Default)
        };
        assert_eq!(
            p("bind:0").unwrap(),
            NumaPolicy::Bind(NodeList::Nodes(vec![0]))
        );
        assert_eq!(
            p("interleave").unwrap(),
            NumaPolicy::Interleave(NodeList::All)
        );
        assert_eq!(p("prefer:0").unwrap(), NumaPolicy::Prefer(0));
        assert_eq!(p("local").unwrap(), NumaPolicy::Local);
        assert_eq!(p("default").unwrap(), NumaPolicy::Default);
        for bad in [
            "prefer",
            "bind",
            "local:0",
            "default:0",
            "bogus",
            "bind:4096",
            "bind:x",
            "prefer:0-1",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fios_pattern_syntax() {
        let p = |s: &str| {
            VerifyPattern::parse(s)
                .and_then(|p| p.resolve())
                .map(|p| p.0)
        };
        assert_eq!(p("0xdeadbeef").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0x123").unwrap(), [0x01, 0x23]);
        assert_eq!(p("255").unwrap(), [0xff]);
        assert_eq!(p("4660").unwrap(), [0x34, 0x12]);
        assert_eq!(p("65536").unwrap(), [0, 0, 1]);
        assert_eq!(p("0").unwrap(), [0]);
        assert_eq!(p("-12").unwrap(), [0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(p("\"ab\"\"cd\"").unwrap(), b"abcd");
        assert!(p("4294967296").unwrap_err().contains("does not fit"));
        assert!(p("\"ab\"*3").is_err());
        assert!(p("0x01,0x02").is_err());
        assert!(p("").unwrap_err().contains("empty"));
    }

    #[test]
    fn verify_patterns() {
        let p = VerifyPattern::parse("0xdead\"ab\"%o17-1").unwrap();
        let (bytes, at) = p.resolve().unwrap();
        assert_eq!(
            bytes,
            [0xde, 0xad, b'a', b'b', 0, 0, 0, 0, 0, 0, 0, 0, 17, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(at, [4]);
        for bad in ["0xZZ", "\"open", "'open", "x", ""] {
            assert!(VerifyPattern::parse(bad).is_err(), "{bad}");
        }
        // fio 3.42 takes patterns of up to 128 MiB (512 bytes before).
        assert!(VerifyPattern::parse(&format!("0x{}", "ab".repeat(513))).is_ok());
        let missing = VerifyPattern::parse("'/nonexistent/pattern'").unwrap();
        assert!(missing
            .resolve()
            .unwrap_err()
            .contains("/nonexistent/pattern"));
    }
}
