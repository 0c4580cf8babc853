//! ioscope's extensions, spoken only when both ends are ioscope: fio's peers never
//! see them.
//!
//! - An ioscope server marks its PROBE reply: after the NUL of the fio version it
//!   answers as (`fio-3.42`, all fio's client prints), `ioscope-ext/N` names the
//!   extension protocol it speaks.
//! - An ioscope client that sees the mark sends HELLO before its jobs: its extension
//!   version, its ioscope version, the server's token when given, and whether the
//!   start is to be synchronised. The server answers WELCOME, or a TEXT saying why not
//!   (another extension version, a wrong or missing token) and closes.
//! - Synchronised start: before each phase's I/O the server sends READY and waits for
//!   GO, which the client sends every server once all of them are ready.

use crate::WireError;

/// The extension protocol this build speaks.
pub const EXT_VERSION: u32 = 1;
/// Where the mark goes in the PROBE reply (inside fio's 32-byte version field, 65..97).
const MARK_AT: usize = 65 + 16;
const MARK: &str = "ioscope-ext/";

/// The extension's commands, far above fio's (which end at 22).
pub mod op {
    pub const HELLO: u16 = 0x4001;
    pub const WELCOME: u16 = 0x4002;
    pub const READY: u16 = 0x4003;
    pub const GO: u16 = 0x4004;
}

/// Mark a PROBE reply as an ioscope server's.
pub fn mark_probe(reply: &mut [u8]) {
    let m = format!("{MARK}{EXT_VERSION}");
    if let Some(slot) = reply.get_mut(MARK_AT..MARK_AT + m.len()) {
        slot.copy_from_slice(m.as_bytes());
    }
}

/// The extension version an ioscope server's PROBE reply names (None: not ioscope).
pub fn probe_ext(reply: &[u8]) -> Option<u32> {
    let field = reply.get(MARK_AT..97)?;
    let end = field.iter().position(|&c| c == 0).unwrap_or(field.len());
    std::str::from_utf8(&field[..end])
        .ok()?
        .strip_prefix(MARK)?
        .parse()
        .ok()
}

/// HELLO (client) or WELCOME (server, no token or sync).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    pub ext: u32,
    /// The sender's ioscope version.
    pub version: String,
    pub token: Option<String>,
    pub sync: bool,
}

impl Hello {
    /// `key=value` lines.
    pub fn encode(&self) -> Vec<u8> {
        let mut s = format!(
            "ext={}\nversion={}\nsync={}\n",
            self.ext,
            self.version,
            u8::from(self.sync)
        );
        if let Some(t) = &self.token {
            s.push_str(&format!("token={t}\n"));
        }
        s.into_bytes()
    }

    pub fn decode(p: &[u8]) -> Result<Hello, WireError> {
        let text = std::str::from_utf8(p).map_err(|_| bad("not UTF-8"))?;
        let mut h = Hello::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                return Err(bad("a line without '='"));
            };
            match k {
                "ext" => h.ext = v.parse().map_err(|_| bad("ext is not a number"))?,
                "version" => h.version = v.to_string(),
                "token" => h.token = Some(v.to_string()),
                "sync" => h.sync = v == "1",
                _ => {}
            }
        }
        Ok(h)
    }
}

/// READY and GO: the phase (0-based).
pub fn phase(n: u32) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

pub fn phase_of(p: &[u8]) -> Result<u32, WireError> {
    let b: [u8; 4] = p
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| bad("no phase"))?;
    Ok(u32::from_le_bytes(b))
}

/// The token in `path`: its first line, which must not be empty, from a file only its
/// owner can read (as ssh asks of its keys).
pub fn read_token(path: &std::path::Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{shown}: others can read it (mode {:o}); chmod 600 it",
            meta.mode() & 0o777
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(format!("{shown}: no token on its first line"));
    }
    Ok(token)
}

/// Whether two tokens are the same, in time that does not depend on where they differ.
pub fn same_token(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn bad(what: &str) -> WireError {
    WireError::Malformed {
        op: op::HELLO,
        what: what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_invisible_to_fio_and_seen_by_ioscope() {
        let mut reply = crate::msg::probe_reply(&crate::msg::Host {
            hostname: "h",
            version: "fio-3.42",
            cpus: 2,
        });
        assert_eq!(probe_ext(&reply), None);
        mark_probe(&mut reply);
        assert_eq!(probe_ext(&reply), Some(EXT_VERSION));
        // fio's client reads the version up to its NUL.
        assert_eq!(crate::read::probe_reply(&reply).unwrap().1, "fio-3.42");
        let h = Hello {
            ext: 1,
            version: "0.1.0".into(),
            token: Some("s3cret".into()),
            sync: true,
        };
        assert_eq!(Hello::decode(&h.encode()).unwrap(), h);
        assert!(same_token("abc", "abc") && !same_token("abc", "abd") && !same_token("ab", "abc"));
        assert_eq!(phase_of(&phase(3)).unwrap(), 3);
    }
}
