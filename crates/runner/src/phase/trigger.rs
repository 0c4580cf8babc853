//! Verification triggers (--trigger-file, --trigger-timeout, --trigger, or a client's
//! trigger on a server): the monitor checks for one; when it fires, every running job
//! saves its verify state as it stands and stops, and the command runs while they
//! wind down, as fio's does. The run waits for the command before it reports.

use super::running::Running;
use crate::env::Trigger;
use crate::observe::Observer;
use crate::record::{STATE_DONE, WANT_VSTATE};
use std::os::fd::AsFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::time::{Duration, Instant};

/// How often the trigger file is looked for.
const CHECK_EVERY: Duration = Duration::from_millis(50);
/// How long a job may take to answer (one I/O's wait at most, normally).
const SAVE_BOUND: Duration = Duration::from_secs(10);

pub(crate) struct TriggerWatch {
    spec: Trigger,
    run_start: Instant,
    last_check: Option<Instant>,
    fired: bool,
    child: Option<(String, Child)>,
}

impl TriggerWatch {
    pub fn new(spec: Option<&Trigger>, run_start: Instant) -> Option<TriggerWatch> {
        Some(TriggerWatch {
            spec: spec?.clone(),
            run_start,
            last_check: None,
            fired: false,
            child: None,
        })
    }

    /// Fire when due; true when it fired (the run must end).
    pub fn tick(&mut self, running: &[Running], obs: &mut dyn Observer) -> bool {
        let recent = self.last_check.is_some_and(|t| t.elapsed() < CHECK_EVERY);
        if self.fired || recent {
            return false;
        }
        self.last_check = Some(Instant::now());
        if !self.due() {
            return false;
        }
        self.fired = true;
        save_states(running, obs);
        obs.states_saved();
        let remote = self.spec.remote.as_ref();
        let remote_cmd = remote.and_then(|r| r.command.lock().ok().and_then(|c| c.clone()));
        if let Some(cmd) = remote_cmd.or_else(|| self.spec.command.clone()) {
            match spawn_trigger_command(&cmd) {
                Ok(c) => self.child = Some((cmd, c)),
                Err(e) => obs.warning(&format!("ioscope: trigger {cmd}: {e}")),
            }
        }
        true
    }

    fn due(&self) -> bool {
        if self.spec.file.as_deref().is_some_and(take_trigger_file) {
            return true;
        }
        if self
            .spec
            .timeout
            .is_some_and(|t| self.run_start.elapsed() >= t)
        {
            return true;
        }
        self.spec
            .remote
            .as_ref()
            .is_some_and(|r| r.fire.load(Acquire))
    }

    /// The command's end, waited for (fio reports after it).
    pub fn finish(&mut self, obs: &mut dyn Observer) {
        let Some((cmd, mut child)) = self.child.take() else {
            return;
        };
        match child.wait() {
            Ok(s) if s.success() => {}
            Ok(s) => obs.warning(&format!("ioscope: failed executing {cmd} trigger ({s})")),
            Err(e) => obs.warning(&format!("ioscope: trigger {cmd}: {e}")),
        }
    }
}

/// Ask every running job for its state now, stop it, and wait until each answered.
fn save_states(running: &[Running], obs: &mut dyn Observer) {
    for r in running {
        r.shared.snapshot_request.fetch_or(WANT_VSTATE, Relaxed);
        r.shared.stop.store(true, Relaxed);
    }
    let deadline = Instant::now() + SAVE_BOUND;
    for r in running {
        let answered =
            || r.shared.vstate_saved.load(Acquire) || r.shared.state.load(Relaxed) == STATE_DONE;
        while !answered() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !answered() {
            obs.warning(&format!(
                "ioscope: job '{}' did not save its verify state within {} s of the trigger",
                r.meta.name,
                SAVE_BOUND.as_secs()
            ));
        }
    }
}

/// Whether the trigger file exists; removed as it fires, as fio does (a file that
/// cannot be removed still fires). The client's trigger uses it too.
pub fn take_trigger_file(f: &std::path::Path) -> bool {
    if std::fs::symlink_metadata(f).is_err() {
        return false;
    }
    let _ = std::fs::remove_file(f);
    true
}

/// The trigger command, through the shell; its output goes to stderr so that the
/// run's machine output stays whole. The client's trigger runs its command so too.
pub fn spawn_trigger_command(cmd: &str) -> std::io::Result<Child> {
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(cmd).stdin(Stdio::null());
    if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
        c.stdout(Stdio::from(fd));
    }
    c.spawn()
}
