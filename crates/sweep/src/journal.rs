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
            Event::Campaign { .. } | Event::Precondition { .. } | Event::Round { .. } => {}
        }
    }
}

/// The journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    pub fn open(dir: &Path) -> Result<Journal, SweepError> {
        let path = dir.join(FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| SweepError::Io {
                path: path.clone(),
                msg: e.to_string(),
            })?;
        Ok(Journal { path, file })
    }

    /// Append one event and sync it: the journal is the record of what finished.
    pub fn write(&mut self, ev: &Event) -> Result<(), SweepError> {
        let mut line = serde_json::to_string(ev).map_err(|e| SweepError::Run(e.to_string()))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| SweepError::Io {
                path: self.path.clone(),
                msg: e.to_string(),
            })
    }
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
        // A bad line that is not the last is an error with its line number.
        std::fs::write(d.path().join(FILE), "nonsense\n{}\n").unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(e.contains("journal.jsonl:1: not a journal entry"), "{e}");
    }
}
