//! Numbers as fio writes them: size suffixes (honouring kb_base), time suffixes,
//! hex, and arithmetic expressions such as `($ncpus*2)` or `2*$mb_memory`.

/// Parse a byte count: `4096`, `4k`, `1.5g`, `0x1000`, `(4k*2)`.
///
/// Suffix rules follow fio 3.33: with kb_base=1024 (the default) `k`, `kb`, `K`, `KB`
/// and `Ki` mean 1024 while the IEC forms `KiB`, `MiB`… mean powers of 1000 (fio's
/// "compatibility mode"); with kb_base=1000 it is the other way round.
pub fn parse_size(s: &str, kb_base: u64) -> Result<u64, String> {
    let v = eval_number(s, &|tok| size_token(tok, kb_base))?;
    to_u64(v, s)
}

/// Parse an integer with optional size suffix and arithmetic (fio treats int options so).
pub fn parse_int(s: &str) -> Result<i64, String> {
    let v = eval_number(s, &|tok| size_token(tok, 1024))?;
    if v.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number"));
    }
    if v.abs() > i64::MAX as f64 {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(v as i64)
}

/// Parse a time into microseconds; `default_us` is the multiplier for a bare number.
pub fn parse_time_us(s: &str, default_us: u64) -> Result<u64, String> {
    let v = eval_number(s, &|tok| time_token(tok, default_us))?;
    to_u64(v.round(), s)
}

fn to_u64(v: f64, s: &str) -> Result<u64, String> {
    if v < 0.0 {
        return Err(format!("'{s}' must not be negative"));
    }
    if v > u64::MAX as f64 {
        return Err(format!("'{s}' is too large"));
    }
    Ok(v.round() as u64)
}

/// Split "12.5kib" into ("12.5", "kib").
fn split_num(tok: &str) -> Result<(f64, &str), String> {
    let t = tok.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(|v| (v as f64, ""))
            .map_err(|_| format!("'{tok}' is not a valid hexadecimal number"));
    }
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(end);
    if num.is_empty() {
        return Err(format!("'{tok}' is not a number"));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{tok}' is not a number"))?;
    Ok((v, suffix))
}

fn size_token(tok: &str, kb_base: u64) -> Result<f64, String> {
    let (v, suffix) = split_num(tok)?;
    Ok(v * size_multiplier(suffix, kb_base).ok_or_else(|| bad_unit(tok, "size"))? as f64)
}

/// Multiplier for a size suffix, or None if the suffix is not a size unit.
pub fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let mut chars = s.chars();
    let prefix = chars.next()?;
    let rest = chars.as_str();
    let power = "kmgtpe".find(prefix)? as u32 + 1;
    let base = match rest {
        "" | "b" | "i" => kb_base,
        // fio's inverted IEC handling: "KiB" is the *other* base.
        "ib" => {
            if kb_base == 1024 {
                1000
            } else {
                1024
            }
        }
        _ => return None,
    };
    base.checked_pow(power)
}

fn time_token(tok: &str, default_us: u64) -> Result<f64, String> {
    let (v, suffix) = split_num(tok)?;
    let mult: f64 = match suffix.to_ascii_lowercase().as_str() {
        "" => default_us as f64,
        "ns" | "nsec" => 0.001,
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" | "hour" => 3600e6,
        "d" | "day" => 86400e6,
        _ => return Err(bad_unit(tok, "time")),
    };
    Ok(v * mult)
}

fn bad_unit(tok: &str, what: &str) -> String {
    match what {
        "time" => format!("'{tok}' has an unknown time unit (use us, ms, s, m, h or d)"),
        _ => format!("'{tok}' has an unknown size unit (use k, m, g, t or p, optionally with b)"),
    }
}

/// Evaluate `s` as a number, or as an arithmetic expression when it contains operators.
fn eval_number(s: &str, leaf: &dyn Fn(&str) -> Result<f64, String>) -> Result<f64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("a value is required".into());
    }
    if !t.contains(['+', '-', '*', '/', '%', '^', '(', ')']) {
        return leaf(t);
    }
    let mut p = Expr {
        src: t.as_bytes(),
        pos: 0,
        leaf,
    };
    let v = p.sum()?;
    p.skip_ws();
    if p.pos != p.src.len() {
        return Err(format!("'{s}': unexpected '{}'", &t[p.pos..]));
    }
    if !v.is_finite() {
        return Err(format!("'{s}' does not evaluate to a finite number"));
    }
    Ok(v)
}

/// Recursive-descent evaluator: + - * / % ^ and parentheses, numbers with unit suffixes.
struct Expr<'a> {
    src: &'a [u8],
    pos: usize,
    leaf: &'a dyn Fn(&str) -> Result<f64, String>,
}

impl Expr<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.src.len() && self.src[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.src.get(self.pos).copied()
    }
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.product()?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.pos += 1;
            let r = self.power()?;
            if op != b'*' && r == 0.0 {
                return Err("division by zero".into());
            }
            v = match op {
                b'*' => v * r,
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            let exp = self.power()?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }
    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                Ok(-self.unary()?)
            }
            Some(b'+') => {
                self.pos += 1;
                self.unary()
            }
            Some(b'(') => {
                self.pos += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err("missing ')'".into());
                }
                self.pos += 1;
                // A unit may follow a parenthesised group: (2*4)k.
                let start = self.pos;
                while self.pos < self.src.len() && self.src[self.pos].is_ascii_alphabetic() {
                    self.pos += 1;
                }
                if start == self.pos {
                    return Ok(v);
                }
                let unit = std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("");
                Ok(v * (self.leaf)(&format!("1{unit}"))?)
            }
            Some(_) => {
                let start = self.pos;
                while self.pos < self.src.len() && self.src[self.pos].is_ascii_alphanumeric()
                    || self.pos < self.src.len() && self.src[self.pos] == b'.'
                {
                    self.pos += 1;
                }
                if start == self.pos {
                    return Err(format!(
                        "unexpected '{}'",
                        String::from_utf8_lossy(&self.src[start..])
                    ));
                }
                let tok = std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("");
                (self.leaf)(tok)
            }
            None => Err("expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("4k", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4K", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4kb", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4KB", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4Ki", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4KiB", 1024).unwrap(), 4000);
        assert_eq!(parse_size("4MiB", 1024).unwrap(), 4_000_000);
        assert_eq!(parse_size("4k", 1000).unwrap(), 4000);
        assert_eq!(parse_size("4KiB", 1000).unwrap(), 4096);
        assert_eq!(parse_size("1m", 1024).unwrap(), 1 << 20);
        assert_eq!(parse_size("4g", 1024).unwrap(), 4 << 30);
        assert_eq!(parse_size("1.5g", 1024).unwrap(), 3 << 29);
        assert_eq!(parse_size("0x10", 1024).unwrap(), 16);
        assert_eq!(parse_size("4B", 1024).unwrap(), 4);
        assert_eq!(parse_size("(4k*2)", 1024).unwrap(), 8192);
        assert_eq!(parse_size("(2*4)k", 1024).unwrap(), 8192);
        assert!(parse_size("4q", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
    }

    #[test]
    fn times_follow_fio() {
        assert_eq!(parse_time_us("2m", 1_000_000).unwrap(), 120_000_000);
        assert_eq!(parse_time_us("100ms", 1_000_000).unwrap(), 100_000);
        assert_eq!(parse_time_us("1h", 1_000_000).unwrap(), 3_600_000_000);
        assert_eq!(parse_time_us("3", 1).unwrap(), 3);
        assert_eq!(parse_time_us("3s", 1).unwrap(), 3_000_000);
        assert_eq!(parse_time_us("1.5", 1_000_000).unwrap(), 1_500_000);
        assert!(parse_time_us("3x", 1).is_err());
    }

    #[test]
    fn arithmetic() {
        assert_eq!(parse_int("(1+2)*2").unwrap(), 6);
        assert_eq!(parse_int("2*24105").unwrap(), 48210);
        assert_eq!(parse_int("2^10").unwrap(), 1024);
        assert_eq!(parse_int("7%4").unwrap(), 3);
        assert!(parse_int("1/0").is_err());
        assert!(parse_int("(1+2").is_err());
        assert!(parse_int("3/2").is_err());
    }

    proptest::proptest! {
        #[test]
        fn size_roundtrip(n in 0u64..(1u64 << 40), p in 0usize..5) {
            let unit = ["", "k", "m", "g", "t"][p];
            let mult = 1024u64.pow(p as u32);
            let s = format!("{n}{unit}");
            if let Some(expect) = n.checked_mul(mult) {
                if expect < (1u64 << 53) {
                    proptest::prop_assert_eq!(parse_size(&s, 1024).unwrap(), expect);
                }
            }
        }

        #[test]
        fn never_panics(s in ".{0,40}") {
            let _ = parse_size(&s, 1024);
            let _ = parse_int(&s);
            let _ = parse_time_us(&s, 1);
        }
    }
}
