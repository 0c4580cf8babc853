//! `ioscope --server[=ADDR]`: a server that fio 3.42's client drives (`fio
//! --client=HOST job.fio`), speaking fio's wire format (`ioscope_wire`). Each client
//! connection is a session ([`session`]): the client's job files and arguments in,
//! the run here, the statistics out, from which the client prints its own report.
//! Sessions are served one after another; the server outlives every client.
//!
//! The server binds only where told: without an address it listens on the loopback
//! interface (fio listens on every interface), so that nobody on the network can run
//! jobs on this machine unless `--server=ip:0.0.0.0` says so.

mod daemon;
mod jobs;
mod link;
mod listen;
mod logs;
mod session;
mod vstate;

use crate::command::Context;
use crate::fio::Serve;
use anyhow::{anyhow, Result};
use ioscope_wire::addr::{address, Address};
use listen::Listener;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Listen and serve clients until killed.
pub fn main(cx: &Context, how: &Serve) -> Result<ExitCode> {
    let addr = listen_addr(how.addr.as_deref())?;
    let listener = Listener::bind(&addr)?;
    let token = how
        .token
        .as_deref()
        .map(|f| ioscope_wire::ext::read_token(Path::new(f)))
        .transpose()
        .map_err(|e| anyhow!("--server-token={e}"))?;
    if let Some(p) = &how.pidfile {
        // As fio: a daemon prints nothing; it listens before the command returns.
        daemon::detach(Path::new(p))?;
    } else {
        println!("ioscope: fio server listening on {}", listener.describe());
        std::io::stdout().flush()?;
    }
    loop {
        match listener.accept() {
            Ok((s, peer)) => {
                if let Err(e) = session::serve(cx, s, token.as_deref()) {
                    eprintln!("ioscope: --server: client {peer}: {e:#}");
                }
            }
            Err(e) => eprintln!("ioscope: --server: accept: {e}"),
        }
    }
}

/// fio's `[ip:|ip6:]HOST[,PORT]` (`,PORT` alone or no address: the loopback) or
/// `sock:PATH`.
fn listen_addr(arg: Option<&str>) -> Result<Address> {
    let loopback = Some(("127.0.0.1", "::1"));
    address(arg.unwrap_or(""), loopback).map_err(|e| anyhow!("--server={e}"))
}
