//! The connection to a client: messages out, the reading thread's messages in, and
//! the flag that stops the session's jobs.

use anyhow::{anyhow, Result};
use ioscope_wire::conn::Conn;
use ioscope_wire::frame::{self, Message};
use ioscope_wire::msg::{self, op};
use ioscope_wire::WireError;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::Sender;

/// Stops the session's jobs: the client quit or went away. One session runs at a
/// time; each starts it afresh.
pub static SESSION_STOP: AtomicBool = AtomicBool::new(false);

/// What the reading thread passes on.
pub enum In {
    Msg(Message),
    /// The client closed the connection, or sent what is not fio's protocol.
    Gone(Option<WireError>),
}

/// Read the client's frames until it leaves: QUIT or a lost client stops the jobs.
pub fn read_loop(r: &mut Conn, tx: &Sender<In>) {
    loop {
        let got = frame::receive(r);
        let stop = !matches!(&got, Ok(Some(m)) if m.op != op::QUIT && m.op != op::EXIT);
        if stop {
            SESSION_STOP.store(true, Relaxed);
        }
        let (msg, last) = match got {
            Ok(Some(m)) => {
                let exit = m.op == op::EXIT;
                (In::Msg(m), exit)
            }
            Ok(None) => (In::Gone(None), true),
            Err(e) => (In::Gone(Some(e)), true),
        };
        if tx.send(msg).is_err() || last {
            return;
        }
    }
}

/// Send a message; a client that went away ends the session.
pub fn send(w: &mut Conn, op: u16, tag: u64, payload: &[u8]) -> Result<()> {
    frame::send(w, op, tag, payload).map_err(|e| anyhow!("sending {}: {e}", op::name(op)))
}

/// A TEXT line for the client's output.
pub fn text(w: &mut Conn, level: u32, s: &str) -> Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    send(w, op::TEXT, 0, &msg::text(level, s, now))
}

/// What the client asked for before RUN.
#[derive(Default)]
pub struct Request {
    /// Its arguments (JOBLINE), argv[0] left out.
    pub args: Vec<String>,
    /// Job file texts (JOB), in order.
    pub texts: Vec<String>,
    /// Job files on this host (LOAD_FILE: --remote-config).
    pub files: Vec<String>,
    /// The client inflates logs (its PROBE's zlib bit), as fio's client does.
    pub zlib: bool,
    /// This server's name as the client connected to it (its PROBE).
    pub server: String,
}
