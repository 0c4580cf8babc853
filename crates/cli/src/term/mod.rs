//! The terminal and the process: the status line, signals, and report files named by
//! flags.

pub mod colour;
pub mod signals;
pub mod status;

use anyhow::Result;

/// A report file named by a flag (`--svg`, `--html`), created now: before any run, so
/// that a bad path fails at once rather than after the I/O (never through a link).
pub fn out_file(path: Option<&str>) -> Result<Option<(String, std::fs::File)>> {
    path.map(|p| {
        let f = ioscope_fs::create_output(std::path::Path::new(p))
            .map_err(|e| anyhow::anyhow!("{p}: {e}"))?;
        Ok((p.to_string(), f))
    })
    .transpose()
}
