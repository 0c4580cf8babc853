//! The run journal: one JSON object per line, appended and synced as each step starts,
//! finishes or fails, so a run killed at any moment leaves an exact record. Reading it
//! back gives the state a resumed run starts from.

use crate::error::SweepError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE: &str = "journal.jsonl";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A run of the campaign began.
    Campaign {
        t: u64,
        points: usize,
        identity: String,
    },
    /// A precondition step (purge, fill) began or ended.
    Precondition {
        t: u64,
        step: String,
        status: String,
    },
    /// A steady-state round ended with its tracking value.
    Round {
        t: u64,
        round: usize,
        value: f64,
        file: String,
        steady: bool,
    },
    /// Preconditioning is complete for this target.
    Conditioned {
        t: u64,
        identity: String,
        steady: Option<bool>,
        rounds: usize,
    },
    /// The target ran a point's workload unmeasured before the points.
    Warmup {
        t: u64,
        identity: String,
        point: String,
        seconds: f64,
    },
    Start {
        t: u64,
        key: String,
        id: String,
    },
    Finish {
        t: u64,
        key: String,
        id: String,
        file: String,
        seconds: f64,
    },
    Fail {
        t: u64,
        key: String,
        id: String,
        error: String,
    },
    Prune {
        t: u64,
        key: String,
        id: String,
        reason: String,
    },
    /// Stopped by a signal; the point counts as not run.
    Interrupted {
        t: u64,
        key: String,
        id: String,
    },
}

/// What the journal says of each point key (the last word wins).
#[derive(Clone, Debug, PartialEq)]
pub enum PointState {
    Running,
    Finished { file: String, seconds: f64 },
    Failed(String),
    Pruned(String),
    Interrupted,
}

#[derive(Debug, Default)]
pub struct State {
    pub points: HashMap<String, PointState>,
    /// Identities whose preconditioning completed.
    pub conditioned: Vec<String>,
    /// Measured seconds of finished points (for ETAs).
    pub seconds: Vec<f64>,
    pub events: Vec<Event>,
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Read the journal of `dir` (none yet: an empty state). A last line cut short by a
/// crash is ignored; a bad line elsewhere is an error naming it.
pub fn load(dir: &Path) -> Result<State, SweepError> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::default()),
        Err(e) => {
            return Err(SweepError::Io {
                path,
                msg: e.to_string(),
            })
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut st = State::default();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let ev: Event = match serde_json::from_str(line) {
            Ok(e) => e,
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
            Err(e) => {
                return Err(SweepError::At {
                    path,
                    line: i + 1,
                    msg: format!("not a journal entry: {e}"),
                })
            }
        };
        st.apply(&ev);
        st.events.push(ev);
    }
    Ok(st)
}

impl State {
    fn apply(&mut self, ev: &Event) {
        let mut set = |k: &str, s: PointState| {
            self.points.insert(k.to_string(), s);
        };
        match ev {
            Event::Start { key, .. } => set(key, PointState::Running),
            Event::Finish {
                key, file, seconds, ..
            } => {
                self.seconds.push(*seconds);
                set(
                    key,
                    PointState::Finished {
                        file: file.clone(),
                        seconds: *seconds,
                    },
                )
            }
            Event::Fail { key, error, .. } => set(key, PointState::Failed(error.clone())),
            Event::Prune { key, reason, .. } => set(key, PointState::Pruned(reason.clone())),
            Event::Interrupted { key, .. } => set(key, PointState::Interrupted),
            Event::Conditioned { identity, .. } => self.conditioned.push(identity.clone()),
            Event::Campaign { .. }
            | Event::Precondition { .. }
            | Event::Round { .. }
            | Event::Warmup { .. } => {}
        }
    }
}

/// The journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Open (or make) the journal of `dir` for appending. A last line cut short by a
    /// crash or a full disk is cut off first (or, when it is a whole entry that lost
    /// only its newline, ended), so the next entry starts on a line of its own.
    pub fn open(dir: &Path) -> Result<Journal, SweepError> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join(FILE);
        let io = |e: std::io::Error| SweepError::Io {
            path: path.clone(),
            msg: e.to_string(),
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io)?;
        mend_tail(&mut file).map_err(io)?;
        Ok(Journal { path, file })
    }

    /// Append one event and sync it: the journal is the record of what finished.
    pub fn write(&mut self, ev: &Event) -> Result<(), SweepError> {
        let mut line = serde_json::to_string(ev).map_err(|e| SweepError::Run(e.to_string()))?;
        line.push('\n');
        let before = self.file.metadata().map(|m| m.len());
        let done = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data());
        if done.is_err() {
            // A full disk wrote part of the line: take it back now (the next open
            // would cut it off anyway).
            if let Ok(len) = before {
                let _ = self.file.set_len(len);
            }
        }
        done.map_err(|e| SweepError::Io {
            path: self.path.clone(),
            msg: e.to_string(),
        })
    }
}

/// A journal whose last line has no newline: the torn entry is cut off, or a whole one
/// is ended with its newline.
fn mend_tail(file: &mut std::fs::File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    // Entries are short: the tail to mend is within the last 64 KiB.
    let from = len.saturating_sub(64 << 10);
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(from))?;
    file.take(len - from).read_to_end(&mut tail)?;
    if tail.last() == Some(&b'\n') {
        return Ok(());
    }
    let start = tail.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let last = &tail[start..];
    if serde_json::from_slice::<Event>(last).is_ok() {
        file.write_all(b"\n")?;
    } else {
        file.set_len(from + start as u64)?;
    }
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word_on_each_point_wins_and_a_torn_tail_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let mut j = Journal::open(d.path()).unwrap();
        let ev = |e: Event| e;
        for e in [
            ev(Event::Start {
                t: 1,
                key: "a".into(),
                id: "p-a".into(),
            }),
            ev(Event::Fail {
                t: 2,
                key: "a".into(),
                id: "p-a".into(),
                error: "EIO".into(),
            }),
            ev(Event::Start {
                t: 3,
                key: "a".into(),
                id: "p-a".into(),
            }),
            ev(Event::Finish {
                t: 4,
                key: "a".into(),
                id: "p-a".into(),
                file: "points/p-a.json".into(),
                seconds: 2.5,
            }),
            ev(Event::Start {
                t: 5,
                key: "b".into(),
                id: "p-b".into(),
            }),
        ] {
            j.write(&e).unwrap();
        }
        // A crash in the middle of a line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join(FILE))
            .unwrap()
            .write_all(b"{\"event\":\"fin")
            .unwrap();
        let st = load(d.path()).unwrap();
        // The next run cuts the torn entry off before it appends.
        let mut j = Journal::open(d.path()).unwrap();
        j.write(&Event::Start {
            t: 6,
            key: "c".into(),
            id: "p-c".into(),
        })
        .unwrap();
        let again = load(d.path()).unwrap();
        assert_eq!(again.points["c"], PointState::Running);
        assert_eq!(again.events.len(), 6);
        assert_eq!(
            st.points["a"],
            PointState::Finished {
                file: "points/p-a.json".into(),
                seconds: 2.5
            }
        );
        assert_eq!(st.points["b"], PointState::Running);
        assert_eq!(st.seconds, [2.5]);
        assert_eq!(st.events.len(), 5);
        // A whole entry that lost only its newline is kept and ended.
        let text = std::fs::read_to_string(d.path().join(FILE)).unwrap();
        std::fs::write(d.path().join(FILE), text.trim_end_matches('\n')).unwrap();
        Journal::open(d.path()).unwrap();
        assert_eq!(load(d.path()).unwrap().events.len(), 6);
        // A bad line that is not the last is an error with its line number.
        std::fs::write(d.path().join(FILE), "nonsense\n{}\n").unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(e.contains("journal.jsonl:1: not a journal entry"), "{e}");
    }
}
