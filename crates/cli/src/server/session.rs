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
use anyhow::bail;
use anyhow::Result;
use ioscope_wire::conn::Conn;
use ioscope_wire::ext::{self, Hello, EXT_VERSION};
use ioscope_wire::msg::{self, op};
use ioscope_wire::WireError;
use std::net::Shutdown;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{channel, Receiver};

/// Serve one client until its run is reported or it leaves. With `token`, only a
/// client that gives it (an ioscope client's HELLO) has jobs run.
pub fn serve(cx: &Context, stream: Conn, token: Option<&str>) -> Result<()> {
    SESSION_STOP.store(false, Relaxed);
    let (tx, rx) = channel();
    let mut r = stream.try_clone()?;
    let reader = std::thread::spawn(move || read_loop(&mut r, &tx));
    let mut w = stream;
    let result = converse(cx, &mut w, &rx, token);
    let _ = w.shutdown(Shutdown::Both);
    let _ = reader.join();
    result
}

fn converse(cx: &Context, w: &mut Conn, rx: &Receiver<In>, token: Option<&str>) -> Result<()> {
    let mut req = Request::default();
    // An ioscope client's HELLO, once accepted.
    let mut greeted: Option<Hello> = None;
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
        let jobs = matches!(m.op, op::JOBLINE | op::JOB | op::LOAD_FILE | op::RUN);
        if jobs && token.is_some() && greeted.is_none() {
            let why = "this server runs jobs only for a client that gives its token (ioscope --server-token=FILE --client=…)";
            text(w, msg::ERROR, &format!("ioscope: {why}\n"))?;
            bail!("a client without the token: {why}");
        }
        match m.op {
            op::PROBE => {
                req.zlib = ioscope_wire::read::probe_wants_zlib(&m.payload);
                req.server = ioscope_wire::read::probe_server(&m.payload);
                let mut reply = probe_reply();
                ext::mark_probe(&mut reply);
                send(w, op::PROBE, m.tag, &reply)?;
            }
            ext::op::HELLO => greeted = Some(welcome(w, &m.payload, token)?),
            op::JOBLINE => req.args = msg::job_line(&m.payload)?,
            op::JOB => req.texts.push(msg::job_text(&m.payload)?),
            op::LOAD_FILE => req.files.push(msg::load_file(&m.payload)?),
            op::RUN => {
                let sync = greeted.as_ref().is_some_and(|h| h.sync);
                return jobs::run(cx, w, rx, &req, sync);
            }
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

/// An ioscope client's HELLO: the same extension version and, when this server has a
/// token, the token; answered WELCOME, else refused with the reason on both ends.
fn welcome(w: &mut Conn, payload: &[u8], token: Option<&str>) -> Result<Hello> {
    let h = Hello::decode(payload)?;
    let ours = env!("CARGO_PKG_VERSION");
    let why = if h.ext != EXT_VERSION {
        Some(format!(
            "the client (ioscope {}) speaks ioscope's extension protocol {}, this server (ioscope {ours}) speaks {EXT_VERSION}: use the same ioscope release on both ends",
            h.version, h.ext
        ))
    } else {
        match (token, h.token.as_deref()) {
            (Some(_), None) => Some("this server needs its token (--server-token=FILE)".into()),
            (Some(t), Some(given)) if !ext::same_token(t, given) => {
                Some("the client's token is not this server's (--server-token)".into())
            }
            _ => None,
        }
    };
    if let Some(why) = why {
        text(w, msg::ERROR, &format!("ioscope: {why}\n"))?;
        bail!("{why}");
    }
    let back = Hello {
        ext: EXT_VERSION,
        version: ours.into(),
        ..Hello::default()
    };
    send(w, ext::op::WELCOME, 0, &back.encode())?;
    Ok(h)
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
