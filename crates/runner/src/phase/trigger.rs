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
    last_check: Instant,
    fired: bool,
    child: Option<(String, Child)>,
}

impl TriggerWatch {
    pub fn new(spec: Option<&Trigger>, run_start: Instant) -> Option<TriggerWatch> {
        Some(TriggerWatch {
            spec: spec?.clone(),
            run_start,
            last_check: Instant::now() - CHECK_EVERY,
            fired: false,
            child: None,
        })
    }

    /// Fire when due; true when it fired (the run must end).
    pub fn tick(&mut self, running: &[Running], obs: &mut dyn Observer) -> bool {
        if self.fired || self.last_check.elapsed() < CHECK_EVERY {
            return false;
        }
        self.last_check = Instant::now();
        if !self.due() {
            return false;
        }
        self.fired = true;
        save_states(running, obs);
        obs.states_saved();
        let remote = self.spec.remote.as_ref();
        let remote_cmd = remote.and_then(|r| r.command.lock().ok().and_then(|c| c.clone()));
        if let Some(cmd) = remote_cmd.or_else(|| self.spec.command.clone()) {
            self.child = spawn(&cmd, obs).map(|c| (cmd, c));
        }
        true
    }

    fn due(&self) -> bool {
        if let Some(f) = &self.spec.file {
            // Removed as it fires, as fio does; a file that cannot be removed still fires.
            if std::fs::symlink_metadata(f).is_ok() {
                let _ = std::fs::remove_file(f);
                return true;
            }
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

/// The trigger command, through the shell; its output goes to stderr so that the
/// run's machine output stays whole.
fn spawn(cmd: &str, obs: &mut dyn Observer) -> Option<Child> {
    let out = std::io::stderr().as_fd().try_clone_to_owned().ok();
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(cmd).stdin(Stdio::null());
    if let Some(fd) = out {
        c.stdout(Stdio::from(fd));
    }
    match c.spawn() {
        Ok(child) => Some(child),
        Err(e) => {
            obs.warning(&format!("ioscope: trigger {cmd}: {e}"));
            None
        }
    }
}
