//! Verification triggers from the client, as fio's client handles them:
//! `--trigger-file`/`--trigger-timeout` fire; every server gets VTRIGGER with the
//! `--trigger-remote` command; each answers with its jobs' verify states, kept here as
//! `<server>-<job>-<index>-verify.state`; once all have answered, the local
//! `--trigger` command runs. A server's SENDFILE (verify_state_load) is answered with
//! such a file.

use super::quit::Quit;
use anyhow::{Context as _, Result};
use ioscope_verify::state;
use ioscope_wire::msg::op;
use ioscope_wire::vstate;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// How long the servers may take to send their states before the local command runs.
const STATES_BOUND: Duration = Duration::from_secs(30);

/// The client's trigger flags.
#[derive(Default)]
pub struct Trigger {
    pub file: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub local: Option<String>,
    pub remote: Option<String>,
    /// Servers whose states have come.
    pub answered: AtomicUsize,
}

impl Trigger {
    /// From the flags before `--client`; None when none of them fires anything.
    pub fn of(a: &crate::fio::args::FioArgs) -> Option<Trigger> {
        let t = a.trigger.as_ref()?;
        (t.file.is_some() || t.timeout.is_some()).then(|| Trigger {
            file: t.file.clone(),
            timeout: t.timeout,
            local: t.command.clone(),
            remote: a.trigger_remote.clone(),
            answered: AtomicUsize::new(0),
        })
    }

    /// Until every host's session ended: fire when due — VTRIGGER to every server,
    /// their states awaited, then the local command.
    pub fn watch(&self, quit: &Quit, hosts: usize) {
        let start = Instant::now();
        while !quit.all_done(hosts) {
            if self.due(start) {
                quit.send_all(
                    op::VTRIGGER,
                    &vstate::trigger(self.remote.as_deref().unwrap_or("")),
                );
                let want = quit.running(hosts);
                let deadline = Instant::now() + STATES_BOUND;
                while self.answered.load(Relaxed) < want && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                if let Some(cmd) = &self.local {
                    run_local(cmd);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn due(&self, start: Instant) -> bool {
        if self
            .file
            .as_deref()
            .is_some_and(ioscope_runner::take_trigger_file)
        {
            return true;
        }
        self.timeout.is_some_and(|t| start.elapsed() >= t)
    }
}

/// The local command, as a local run's trigger runs it (output on stderr).
fn run_local(cmd: &str) {
    match ioscope_runner::spawn_trigger_command(cmd).and_then(|mut c| c.wait()) {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("ioscope: failed executing {cmd} trigger ({s})"),
        Err(e) => eprintln!("ioscope: trigger {cmd}: {e}"),
    }
}

/// A server's states: each written as `<server>-<job>-<index>-verify.state` (the name
/// that server will ask for back).
pub fn keep_states(p: &[u8], server: &str) -> Result<()> {
    for rec in vstate::state_records(p)? {
        let file = vstate::state_file(rec, ioscope_verify::fio_crc32c(rec));
        let s = state::State::decode(&file).map_err(anyhow::Error::msg)?;
        let path = state::prefixed_name(server, &s.name, s.index);
        ioscope_fs::write_atomically(Path::new(&path), &file)
            .with_context(|| format!("verify state {path}"))?;
    }
    Ok(())
}

/// A server's SENDFILE: the state file it names, if it is one this client keeps for
/// that server (a server does not read the client's other files).
pub fn sendfile(p: &[u8], server: &str) -> Vec<u8> {
    let name = vstate::sendfile_name(p).unwrap_or_default();
    let ours = name.starts_with(&format!("{server}-"))
        && name.ends_with("-verify.state")
        && !name.contains('/');
    if !ours {
        return vstate::sendfile_reply(Err(libc::EACCES));
    }
    match std::fs::read(&name) {
        Ok(d) => vstate::sendfile_reply(Ok(&d)),
        Err(e) => vstate::sendfile_reply(Err(e.raw_os_error().unwrap_or(libc::EIO))),
    }
}
