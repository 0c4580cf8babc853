//! Verify states for a client, as fio's server handles them: before the run, each
//! job with verify_state_load gets the state its client saved (SENDFILE, answered
//! with the file); during it, the client's VTRIGGER fires the run's trigger, and the
//! states the jobs save are sent back (VTRIGGER) before the client's command runs.

use super::link::{send, In};
use anyhow::{bail, Context as _, Result};
use ioscope_runner::{Plan, RemoteTrigger};
use ioscope_verify::state;
use ioscope_wire::conn::Conn;
use ioscope_wire::msg::op;
use ioscope_wire::vstate;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Release;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a client may take to send a state file.
const FETCH_BOUND: Duration = Duration::from_secs(30);

/// The jobs' state files, in the run's order (where the jobs that verify save them).
pub fn state_files(plan: &Plan) -> Vec<PathBuf> {
    plan.clones()
        .filter_map(|c| c.job.verify_state.clone())
        .collect()
}

/// verify_state_load: fetch each such job's state from the client, saved there as
/// `<this server's name>-<job>-<index>-verify.state` (`server`: the name the client
/// connected to).
pub fn fetch(w: &mut Conn, rx: &Receiver<In>, plan: &Plan, server: &str) -> Result<()> {
    for c in plan.clones() {
        let o = &c.spec.opts;
        let Some(path) = c.job.verify_state.as_ref().filter(|_| o.verify_state_load) else {
            continue;
        };
        let name = state::prefixed_name(server, &c.spec.name, u64::from(c.number - 1));
        send(w, op::SENDFILE, 0, &vstate::sendfile_request(&name))?;
        let data = match vstate::sendfile_data(&answer(rx)?)? {
            Ok(d) => d,
            Err(errno) => {
                let e = std::io::Error::from_raw_os_error(errno as i32);
                bail!("verify_state_load: the client could not send {name}: {e}");
            }
        };
        let _ = std::fs::remove_file(path);
        let mut f = ioscope_fs::create_new(path)
            .with_context(|| format!("verify_state_load: {}", path.display()))?;
        f.write_all(&data)?;
    }
    Ok(())
}

/// The client's SENDFILE answer.
fn answer(rx: &Receiver<In>) -> Result<Vec<u8>> {
    let deadline = Instant::now() + FETCH_BOUND;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(In::Msg(m)) if m.op == op::SENDFILE => return Ok(m.payload),
            Ok(In::Msg(_)) => {}
            Ok(In::Gone(_)) | Err(RecvTimeoutError::Disconnected) => {
                bail!("the client left before sending a verify state")
            }
            Err(RecvTimeoutError::Timeout) => bail!(
                "the client sent no verify state within {} s",
                FETCH_BOUND.as_secs()
            ),
        }
    }
}

/// The client's VTRIGGER: fire the run's trigger with its command.
pub fn fire(t: &RemoteTrigger, payload: &[u8]) -> Result<()> {
    let cmd = vstate::trigger_command(payload)?;
    if let Ok(mut c) = t.command.lock() {
        *c = cmd;
    }
    t.fire.store(true, Release);
    Ok(())
}

/// The states the jobs saved, to the client, in job order (a job that saved none,
/// one without verify, is left out).
pub fn send_states(w: &mut Conn, files: &[PathBuf]) -> Result<()> {
    let states: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    send(w, op::VTRIGGER, 0, &vstate::states(&states))
}
