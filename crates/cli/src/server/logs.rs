//! A client's job logs (`write_lat_log`, `write_bw_log`, `write_iops_log`,
//! `write_hist_log`): written here into the session's private directory, not where
//! the job names them (a path on the client's side, which fio's client writes with
//! the server's address appended), then sent as IOLOG messages when the run ends.
//! A histogram log is kept at full resolution here and sent compressed with the
//! job's log_hist_coarseness, which the client applies as it writes the file.

use super::link::{send, text};
use anyhow::{bail, Result};
use ioscope_options::types::LogWindowValue;
use ioscope_options::JobSet;
use ioscope_wire::conn::Conn;
use ioscope_wire::iolog::{self, Columns, IoLog, Kind, Sample};
use ioscope_wire::msg::{self, op};
use std::path::{Path, PathBuf};

/// Where each job's logs were redirected: the file-name stem used here, and the
/// prefix the job gave.
pub struct Redirected {
    dir: PathBuf,
    stems: Vec<Stem>,
}

/// A log's file-name stem here, the prefix its job gave, the job's
/// log_hist_coarseness and its text logs' columns.
struct Stem {
    here: String,
    given: String,
    coarse: u32,
    columns: Columns,
}

/// Point every job's logs into `dir`; refuse the logs not sent yet. `zlib`: the
/// client inflates samples (a histogram log travels only so).
pub fn redirect(set: &mut JobSet, dir: &Path, zlib: bool) -> Result<Redirected> {
    let mut stems = Vec::new();
    for (i, j) in set.jobs.iter_mut().enumerate() {
        let o = &mut j.opts;
        if o.write_hist_log.is_some() && !zlib {
            bail!(
                "job '{}': write_hist_log: the client does not inflate logs (its PROBE), and a histogram log travels compressed only",
                j.name
            );
        }
        let columns = Columns {
            offset: o.log_offset,
            // As the job's text logs have it: a maximum (0 in per-I/O rows).
            max: o.log_window_value == LogWindowValue::Both,
            issue: o.log_issue_time,
        };
        let coarse = o.log_hist_coarseness;
        // Full resolution here; the client sums the bins as the job asked.
        o.log_hist_coarseness = 0;
        let logs = [
            ("lat", &mut o.write_lat_log),
            ("bw", &mut o.write_bw_log),
            ("iops", &mut o.write_iops_log),
            ("hist", &mut o.write_hist_log),
        ];
        for (kind, prefix) in logs {
            let Some(p) = prefix.as_mut() else { continue };
            // fio's bare option: the job's name is the prefix.
            let given = if p.is_empty() {
                j.name.clone()
            } else {
                p.clone()
            };
            let stem = format!("job{i}-{kind}");
            *p = dir.join(&stem).display().to_string();
            stems.push(Stem {
                here: stem,
                given,
                coarse,
                columns,
            });
        }
    }
    Ok(Redirected {
        dir: dir.to_path_buf(),
        stems,
    })
}

/// Send every log the run wrote, named as its job named it.
pub fn send_logs(w: &mut Conn, r: &Redirected) -> Result<()> {
    let mut files: Vec<(PathBuf, String, String, &Stem)> = Vec::new();
    for entry in std::fs::read_dir(&r.dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        for st in &r.stems {
            if let Some(suffix) = name.strip_prefix(st.here.as_str()) {
                if suffix.starts_with('_') {
                    let file = r.dir.join(&name);
                    let given = format!("{}{suffix}", st.given);
                    files.push((file, given, suffix.to_string(), st));
                }
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, name, suffix, st) in files {
        let coarse = st.coarse;
        let encoded = read_log(&path, &name, &suffix, st.columns).and_then(|l| {
            // Only a histogram goes compressed; redirect let one through only for a
            // client that inflates.
            let compress = l.kind == Kind::Histogram;
            Ok(iolog::encode(&IoLog { coarse, ..l }, compress)?)
        });
        match encoded {
            Ok(p) if p.len() <= ioscope_wire::frame::MAX_MESSAGE => {
                send(w, op::IOLOG, 0, &p)?;
            }
            Ok(p) => text(
                w,
                msg::ERROR,
                &format!(
                    "ioscope: log {name}: {} bytes, more than one message carries ({}); not sent\n",
                    p.len(),
                    ioscope_wire::frame::MAX_MESSAGE
                ),
            )?,
            Err(e) => text(w, msg::ERROR, &format!("ioscope: log {name}: {e:#}\n"))?,
        }
    }
    Ok(())
}

/// A text log written here, as the samples it holds, or a stored one
/// (log_store_compressed, `.fz`) as its bytes; `suffix` is what follows the prefix in
/// its name (`_clat.2.log`).
fn read_log(path: &Path, name: &str, suffix: &str, columns: Columns) -> Result<IoLog> {
    let Some(kind) = Kind::of_suffix(suffix) else {
        bail!("not a log kind fio's client takes");
    };
    // `_clat.2.log`: job 2; per_job_logs=0 has no number.
    let job = suffix
        .split('.')
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if suffix.ends_with(".fz") {
        return Ok(IoLog {
            job,
            kind,
            name: name.to_string(),
            coarse: 0,
            samples: Vec::new(),
            stored: Some(std::fs::read(path)?),
        });
    }
    let text = std::fs::read_to_string(path)?;
    let mut samples = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let sample = match kind {
            Kind::Histogram => Sample::parse_hist(line),
            _ => Sample::parse(line, columns),
        };
        match sample {
            Some(s) => samples.push(s),
            None => bail!("line {}: {line:?} is not a text log line", i + 1),
        }
    }
    Ok(IoLog {
        job,
        kind,
        name: name.to_string(),
        coarse: 0,
        samples,
        stored: None,
    })
}
