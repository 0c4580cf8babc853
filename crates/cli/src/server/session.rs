//! One client's session, in fio's order: PROBE answered; JOBLINE (the client's
//! arguments), JOB (job file text) or LOAD_FILE (a job file here) taken; on RUN the
//! jobs run here ([`super::jobs`]); then each job's options and statistics, each
//! group's, the disks', STOP with the run's status and QUIT.
//!
//! A thread reads the client's frames: QUIT stops the jobs (their results are still
//! sent, as fio's server does), a lost client stops them too; SEND_ETA is answered
//! from the run's progress.

use super::jobs;
use super::link::{read_loop, send, text, In, Request, SESSION_STOP};
use crate::command::Context;
use anyhow::Result;
use ioscope_wire::msg::{self, op};
use ioscope_wire::WireError;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{channel, Receiver};

/// Serve one client until its run is reported or it leaves.
pub fn serve(cx: &Context, stream: TcpStream) -> Result<()> {
    let _ = stream.set_nodelay(true);
    SESSION_STOP.store(false, Relaxed);
    let (tx, rx) = channel();
    let mut r = stream.try_clone()?;
    let reader = std::thread::spawn(move || read_loop(&mut r, &tx));
    let mut w = stream;
    let result = converse(cx, &mut w, &rx);
    let _ = w.shutdown(Shutdown::Both);
    let _ = reader.join();
    result
}

fn converse(cx: &Context, w: &mut TcpStream, rx: &Receiver<In>) -> Result<()> {
    let mut req = Request::default();
    loop {
        let m = match rx.recv() {
            Ok(In::Msg(m)) => m,
            Ok(In::Gone(None)) | Err(_) => return Ok(()),
            Ok(In::Gone(Some(WireError::Version { got }))) => {
                // As fio: one error line in our version, then the connection closes.
                let _ = text(
                    w,
                    msg::ERROR,
                    &format!("fio: bad server cmd version {got}\n"),
                );
                return Err(WireError::Version { got }.into());
            }
            Ok(In::Gone(Some(e))) => return Err(e.into()),
        };
        match m.op {
            op::PROBE => send(w, op::PROBE, m.tag, &probe_reply())?,
            op::JOBLINE => req.args = msg::job_line(&m.payload)?,
            op::JOB => req.texts.push(msg::job_text(&m.payload)?),
            op::LOAD_FILE => req.files.push(msg::load_file(&m.payload)?),
            op::RUN => return jobs::run(cx, w, rx, &req),
            op::QUIT | op::EXIT => return Ok(()),
            // Nothing runs yet: there is nothing to tell.
            op::SEND_ETA => {}
            other => {
                let line = format!(
                    "ioscope: the fio client's {} command is not supported by ioscope --server\n",
                    op::name(other)
                );
                text(w, msg::ERROR, &line)?;
            }
        }
    }
}

/// The PROBE reply: this host's name, the fio version we answer as, its CPUs.
fn probe_reply() -> Vec<u8> {
    let name = ioscope_options::jobfile::hostname();
    msg::probe_reply(&msg::Host {
        hostname: &name,
        version: crate::version::FIO_COMPAT,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    })
}
