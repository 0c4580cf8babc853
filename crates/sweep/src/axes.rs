//! An axis: an option (or a template variable) and its values, written as a list
//! (`[1, 2, 4]`, `["4k", "128k"]`), a power-of-two range (`"pow2:1..64"`,
//! `"pow2:4k..1m"`), a linear range (`"1..8"`, `"8..64:8"`) or a single value.

use crate::opt::scalar;
use ioscope_options::units;

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    /// The values as option text, in order.
    pub values: Vec<String>,
    /// Line of the sweep file (errors in a value point there).
    pub line: usize,
}

/// At most this many values on one axis: a typo like `1..100000` should not plan
/// a week of runs.
const MAX_VALUES: usize = 4096;

pub fn parse(name: &str, v: &toml::Value) -> Result<Axis, String> {
    let values = match v {
        toml::Value::Array(a) => a
            .iter()
            .map(|x| {
                scalar(x)
                    .ok_or_else(|| "list values must be strings, numbers or booleans".to_string())
            })
            .collect::<Result<Vec<_>, _>>()?,
        toml::Value::String(s) => range(s)?,
        other => vec![scalar(other).ok_or("give a list, a range or a value")?],
    };
    if values.is_empty() {
        return Err("no values".into());
    }
    Ok(Axis {
        name: name.to_string(),
        values,
        line: 0,
    })
}

/// `pow2:A..B`, `A..B`, `A..B:STEP`, or one value.
fn range(s: &str) -> Result<Vec<String>, String> {
    let (pow2, body) = match s.strip_prefix("pow2:") {
        Some(b) => (true, b),
        None => (false, s),
    };
    let Some((lo, rest)) = body.split_once("..") else {
        if pow2 {
            return Err(format!("'{s}' is not a range (write pow2:1..64)"));
        }
        return Ok(vec![s.to_string()]);
    };
    let (hi, step) = match rest.split_once(':') {
        Some((h, st)) if !pow2 => (h, Some(st)),
        Some(_) => return Err(format!("'{s}': a pow2 range has no step")),
        None => (rest, None),
    };
    let help = || format!("'{s}' is not a range (write pow2:1..64, 1..8, 8..64:8 or a list)");
    let num = |t: &str| -> Result<u64, String> {
        if t.trim().is_empty() {
            return Err(help());
        }
        units::parse_size(t.trim(), 1024).map_err(|e| format!("'{s}': {e}"))
    };
    let (a, b) = (num(lo)?, num(hi)?);
    if a > b {
        return Err(format!("'{s}': the range runs backwards"));
    }
    let sized = [lo, hi]
        .iter()
        .any(|t| t.trim().ends_with(|c: char| c.is_ascii_alphabetic()));
    let text = |v: u64| if sized { size_text(v) } else { v.to_string() };
    let mut out = Vec::new();
    if pow2 {
        if a == 0 || !a.is_power_of_two() || !b.is_power_of_two() {
            return Err(format!(
                "'{s}': both ends of a pow2 range must be powers of two"
            ));
        }
        let mut v = a;
        while v <= b {
            out.push(text(v));
            v = match v.checked_mul(2) {
                Some(n) => n,
                None => break,
            };
        }
    } else {
        let st = match step {
            Some(t) => num(t)?,
            None => 1,
        };
        if st == 0 {
            return Err(format!("'{s}': the step is 0"));
        }
        let mut v = a;
        while v <= b {
            out.push(text(v));
            if out.len() > MAX_VALUES {
                break;
            }
            v += st;
        }
    }
    if out.len() > MAX_VALUES {
        return Err(format!("'{s}' has more than {MAX_VALUES} values"));
    }
    Ok(out)
}

/// Sizes as they would be written: 4k, 128k, 1m.
fn size_text(v: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (u, s) in UNITS {
        if v >= u && v % u == 0 {
            return format!("{}{s}", v / u);
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Result<Vec<String>, String> {
        parse("x", &toml::Value::String(t.into())).map(|a| a.values)
    }

    #[test]
    fn ranges() {
        assert_eq!(
            s("pow2:1..64").unwrap(),
            ["1", "2", "4", "8", "16", "32", "64"]
        );
        assert_eq!(
            s("pow2:4k..1m").unwrap(),
            ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m"]
        );
        assert_eq!(s("1..4").unwrap(), ["1", "2", "3", "4"]);
        assert_eq!(s("8..32:8").unwrap(), ["8", "16", "24", "32"]);
        assert_eq!(s("4k").unwrap(), ["4k"]);
        assert_eq!(s("pow2:1..4096").unwrap().len(), 13);
    }

    #[test]
    fn bad_ranges_say_why() {
        assert!(s("pow2:1..").unwrap_err().contains("not a range"));
        assert!(s("pow2:3..64").unwrap_err().contains("powers of two"));
        assert!(s("9..1").unwrap_err().contains("backwards"));
        assert!(s("1..10:0").unwrap_err().contains("step is 0"));
        assert!(s("1..1000000").unwrap_err().contains("more than 4096"));
        let list = toml::Value::Array(vec![toml::Value::Integer(1), toml::Value::Array(vec![])]);
        assert!(parse("x", &list).is_err());
        assert!(parse("x", &toml::Value::Array(vec![]))
            .unwrap_err()
            .contains("no values"));
    }
}
