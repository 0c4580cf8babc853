//! `ioscope --server[=ADDR]`: a server that fio 3.42's client drives (`fio
//! --client=HOST job.fio`), speaking fio's wire format (`ioscope_wire`). Each client
//! connection is a session ([`session`]): the client's job files and arguments in,
//! the run here, the statistics out, from which the client prints its own report.
//! Sessions are served one after another; the server outlives every client.
//!
//! The server binds only where told: without an address it listens on the loopback
//! interface (fio listens on every interface), so that nobody on the network can run
//! jobs on this machine unless `--server=ip:0.0.0.0` says so.

mod jobs;
mod link;
mod session;

use crate::command::Context;
use anyhow::{bail, Context as _, Result};
use std::io::Write;
use std::net::TcpListener;
use std::process::ExitCode;

/// fio's port.
const DEFAULT_PORT: u16 = 8765;

/// Listen and serve clients until killed.
pub fn main(cx: &Context, arg: Option<&str>) -> Result<ExitCode> {
    let addr = listen_addr(arg)?;
    let listener =
        TcpListener::bind(&addr).with_context(|| format!("--server: cannot listen on {addr}"))?;
    let bound = listener.local_addr()?;
    println!(
        "ioscope: fio server listening on {},{}",
        bound.ip(),
        bound.port()
    );
    std::io::stdout().flush()?;
    for conn in listener.incoming() {
        match conn {
            Ok(s) => {
                let peer = s
                    .peer_addr()
                    .map_or_else(|_| "?".to_string(), |a| a.to_string());
                if let Err(e) = session::serve(cx, s) {
                    eprintln!("ioscope: --server: client {peer}: {e:#}");
                }
            }
            Err(e) => eprintln!("ioscope: --server: accept: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// fio's `[ip:|ip6:]HOST[,PORT]` (`,PORT` alone: the default host) as a socket address.
fn listen_addr(arg: Option<&str>) -> Result<String> {
    let arg = arg.unwrap_or("");
    if arg.starts_with("sock:") {
        bail!("--server={arg}: unix-domain sockets (sock:) are not supported; give ip:HOST,PORT");
    }
    let (v6, rest) = match (arg.strip_prefix("ip6:"), arg.strip_prefix("ip:")) {
        (Some(r), _) => (true, r),
        (_, Some(r)) => (false, r),
        _ => (arg.contains(':') && !arg.contains('.'), arg),
    };
    let (host, port) = match rest.rsplit_once(',') {
        Some((h, p)) => {
            let port: u16 = p
                .parse()
                .with_context(|| format!("--server={arg}: port '{p}' is not a number 0-65535"))?;
            (h, port)
        }
        None => (rest, DEFAULT_PORT),
    };
    let host = match (host, v6) {
        ("", false) | ("localhost", false) => "127.0.0.1",
        ("", true) | ("localhost", true) => "::1",
        (h, _) => h,
    };
    Ok(if v6 || host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    })
}

#[cfg(test)]
mod tests {
    use super::listen_addr;

    #[test]
    fn addresses_as_fio_writes_them() {
        assert_eq!(listen_addr(None).unwrap(), "127.0.0.1:8765");
        assert_eq!(
            listen_addr(Some("ip:0.0.0.0,9000")).unwrap(),
            "0.0.0.0:9000"
        );
        assert_eq!(listen_addr(Some(",9000")).unwrap(), "127.0.0.1:9000");
        assert_eq!(listen_addr(Some("ip6:::1,9000")).unwrap(), "[::1]:9000");
        assert_eq!(listen_addr(Some("10.0.0.1")).unwrap(), "10.0.0.1:8765");
        assert!(listen_addr(Some("sock:/tmp/s")).is_err());
        assert!(listen_addr(Some("ip:h,99999")).is_err());
    }
}
