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
use std::time::{Duration, Instant};

/// Serve one client until its run is reported or it leaves. With `token`, only a
/// client that gives it (an ioscope client's HELLO) has jobs run.
pub fn serve(cx: &Context, stream: Conn, token: Option<&str>) -> Result<()> {
    SESSION_STOP.store(false, Relaxed);
    let (tx, rx) = channel();
    let mut r = stream.try_clone()?;
    let reader = std::thread::spawn(move || read_loop(&mut r, &tx));
    let mut w = stream;
    let result = converse(cx, &mut w, &rx, token);
    close_after_client(&w, &rx, CLIENT_CLOSE_LIMIT);
    let _ = reader.join();
    result
}

/// How long a session's end waits for its client to close.
const CLIENT_CLOSE_LIMIT: Duration = Duration::from_secs(5);

/// End the session without losing what was sent: our end's FIN goes after the data,
/// then the client's last frames (a SEND_ETA asked before it read our QUIT) are read
/// until it closes, or for `limit` at most. Closing a socket with unread data sends
/// an RST and drops what is still queued to go: a client whose reading lagged
/// (loaded machine) lost the end of the report and saw "Connection reset by peer".
fn close_after_client(w: &Conn, rx: &Receiver<In>, limit: Duration) {
    let _ = w.shutdown(Shutdown::Write);
    let end = Instant::now() + limit;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(In::Msg(_)) => {}
            Ok(In::Gone(_)) | Err(_) => break,
        }
    }
    let _ = w.shutdown(Shutdown::Both);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// A client that keeps asking for its progress while it reads slowly: the server
    /// ends the session after sending `MIB` MiB, and the client still gets every byte
    /// and then a clean end of the stream. (With a plain close, the frames it sent
    /// last were unread, the kernel answered with an RST, and the client lost what
    /// was still queued: "Connection reset by peer".)
    #[test]
    fn a_slow_client_asking_for_progress_gets_everything_sent() {
        const MIB: usize = 4;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let conn = Conn::from(l.accept().unwrap().0);
        let server = std::thread::spawn(move || {
            let (tx, rx) = channel();
            let mut r = conn.try_clone().unwrap();
            let reader = std::thread::spawn(move || read_loop(&mut r, &tx));
            let mut w = conn;
            for _ in 0..MIB * 16 {
                send(&mut w, op::TEXT, 0, &[7u8; 65536]).unwrap();
            }
            close_after_client(&w, &rx, Duration::from_secs(30));
            reader.join().unwrap();
        });
        let done = Arc::new(AtomicBool::new(false));
        let mut asks = client.try_clone().unwrap();
        let asking = {
            let done = done.clone();
            std::thread::spawn(move || {
                while !done.load(Relaxed) {
                    let _ = ioscope_wire::frame::send(&mut asks, op::SEND_ETA, 0, &[]);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        let (mut got, mut buf) = (0usize, vec![0u8; 65536]);
        let end = loop {
            std::thread::sleep(Duration::from_millis(2));
            match client.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => got += n,
                Err(e) => break Err(e),
            }
        };
        done.store(true, Relaxed);
        asking.join().unwrap();
        drop(client);
        server.join().unwrap();
        use ioscope_wire::frame::{HEADER, MAX_FRAME};
        let message = 65536 + 65536 / MAX_FRAME * HEADER;
        assert_eq!(
            (end.map_err(|e| e.kind()), got),
            (Ok(()), MIB * 16 * message)
        );
    }
}
