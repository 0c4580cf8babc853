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
mod logs;
mod session;

use crate::command::Context;
use crate::fio::Serve;
use anyhow::{anyhow, Context as _, Result};
use ioscope_wire::addr::socket_addr;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::ExitCode;

/// Listen and serve clients until killed.
pub fn main(cx: &Context, how: &Serve) -> Result<ExitCode> {
    let addr = listen_addr(how.addr.as_deref())?;
    let listener =
        TcpListener::bind(&addr).with_context(|| format!("--server: cannot listen on {addr}"))?;
    let bound = listener.local_addr()?;
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
        println!(
            "ioscope: fio server listening on {},{}",
            bound.ip(),
            bound.port()
        );
        std::io::stdout().flush()?;
    }
    for conn in listener.incoming() {
        match conn {
            Ok(s) => {
                let peer = s
                    .peer_addr()
                    .map_or_else(|_| "?".to_string(), |a| a.to_string());
                if let Err(e) = session::serve(cx, s, token.as_deref()) {
                    eprintln!("ioscope: --server: client {peer}: {e:#}");
                }
            }
            Err(e) => eprintln!("ioscope: --server: accept: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// fio's `[ip:|ip6:]HOST[,PORT]` (`,PORT` alone or no address: the loopback).
fn listen_addr(arg: Option<&str>) -> Result<String> {
    let loopback = Some(("127.0.0.1", "::1"));
    socket_addr(arg.unwrap_or(""), loopback).map_err(|e| anyhow!("--server={e}"))
}
