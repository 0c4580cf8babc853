//! `dp_scheme`: the placement ID of each write by its offset (plid_select=scheme),
//! read from the job's scheme file before the job starts.

use crate::error::RunError;
use ioscope_engine::uring_cmd::SchemeEntry;
use ioscope_options::{JobOptions, PlidSelect};

/// fio applies a scheme's first 32 lines, and says so when there are more.
const MAX_ENTRIES: usize = 32;
/// A scheme is a few lines: a larger file is not one (and must not fill memory).
const MAX_BYTES: u64 = 1 << 20;

/// The job's scheme entries (none unless it places writes by a scheme). `say`: fio's
/// message when lines past the 32nd are left out.
pub(super) fn read(
    o: &JobOptions,
    say: &mut dyn FnMut(String),
) -> Result<Vec<SchemeEntry>, RunError> {
    if !crate::plan::info::places_writes(o) || o.plid_select != PlidSelect::Scheme {
        return Ok(Vec::new());
    }
    let refuse = |why: String| RunError::Setup(format!("job '{}': {why}", o.name));
    let Some(path) = o.dp_scheme.as_deref() else {
        return Err(refuse(
            "plid_select=scheme places writes by the dp_scheme file: set dp_scheme=FILE".into(),
        ));
    };
    let bytes = ioscope_fs::read_file_limited(std::path::Path::new(path), MAX_BYTES)
        .map_err(|e| refuse(format!("dp_scheme={path}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    parse(path, &text, say).map_err(refuse)
}

/// Lines `start, end, placement ID` (byte offsets, end excluded); blank lines are
/// skipped, anything else is an error naming its line.
fn parse(path: &str, text: &str, say: &mut dyn FnMut(String)) -> Result<Vec<SchemeEntry>, String> {
    let mut out = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if out.len() == MAX_ENTRIES {
            say(format!(
                "fio: too many scheme entries in {path}. Only the first {MAX_ENTRIES} scheme \
                 entries are applied"
            ));
            break;
        }
        let at = format!("dp_scheme={path} line {}", n + 1);
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed = match fields[..] {
            [a, b, c] => a.parse().ok().zip(b.parse().ok()).zip(c.parse().ok()),
            _ => None,
        };
        let Some(((start, end), plid)) = parsed else {
            return Err(format!(
                "{at}: expected `start, end, placement ID` (byte offsets, then an ID of \
                 0-65535), found `{}`",
                line.trim()
            ));
        };
        if start >= end {
            return Err(format!(
                "{at}: the range {start}-{end} is empty (start must be below end)"
            ));
        }
        out.push(SchemeEntry { start, end, plid });
    }
    if out.is_empty() {
        return Err(format!("dp_scheme={path}: no entries"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> (Result<Vec<SchemeEntry>, String>, Vec<String>) {
        let mut lines = Vec::new();
        let r = parse("s.txt", text, &mut |l| lines.push(l));
        (r, lines)
    }

    #[test]
    fn lines_become_ranges_and_errors_name_their_line() {
        let (r, _) = said("0, 4096, 2\n\n4096,8192 , 5\n");
        assert_eq!(
            r.unwrap(),
            [
                SchemeEntry {
                    start: 0,
                    end: 4096,
                    plid: 2
                },
                SchemeEntry {
                    start: 4096,
                    end: 8192,
                    plid: 5
                }
            ]
        );
        let (r, _) = said("0, 4096, 2\n4096 8192 5\n");
        assert!(r
            .unwrap_err()
            .starts_with("dp_scheme=s.txt line 2: expected"));
        let (r, _) = said("0, 4096, 70000\n");
        assert!(r.unwrap_err().contains("line 1"));
        let (r, _) = said("8192, 4096, 1\n");
        assert!(r.unwrap_err().contains("is empty"));
        assert!(said("\n").0.unwrap_err().contains("no entries"));
    }

    #[test]
    fn the_first_32_lines_apply_as_in_fio() {
        let text: String = (0..40)
            .map(|i| format!("{}, {}, 1\n", i * 10, i * 10 + 10))
            .collect();
        let (r, lines) = said(&text);
        assert_eq!(r.unwrap().len(), 32);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("Only the first 32 scheme entries are applied"));
    }
}
