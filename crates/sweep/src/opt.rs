//! A sweep file's fio options and TOML values as option text.

/// One fio option as written in the sweep file.
#[derive(Clone, Debug, PartialEq)]
pub struct Opt {
    pub key: String,
    pub value: String,
    /// 1-based line in the sweep file (0: built in).
    pub line: usize,
}

/// A TOML scalar as fio option text (booleans as 1/0).
pub(crate) fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1" } else { "0" }.into()),
        _ => None,
    }
}
