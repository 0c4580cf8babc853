//! Where the server listens: TCP, or a unix-domain socket (`--server=sock:PATH`).
//!
//! The socket file is made owner-only (fio's is open to every local user, who could
//! then run jobs as the server's user), and never replaces a file: only a socket
//! left behind by a server that is gone (nobody accepts on it) and owned by this
//! user is removed first; anything else at the path is refused.

use anyhow::{bail, Context as _, Result};
use ioscope_wire::addr::Address;
use ioscope_wire::conn::Conn;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

impl Listener {
    pub fn bind(addr: &Address) -> Result<Listener> {
        match addr {
            Address::Tcp(a) => TcpListener::bind(a)
                .map(Listener::Tcp)
                .with_context(|| format!("--server: cannot listen on {a}")),
            Address::Unix(p) => {
                clear_stale(p)?;
                let l = bind_private(p)
                    .with_context(|| format!("--server: cannot listen on sock:{}", p.display()))?;
                Ok(Listener::Unix(l, p.clone()))
            }
        }
    }

    /// Where it listens, as fio writes an address (`IP,PORT` or `sock:PATH`).
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l
                .local_addr()
                .map_or_else(|_| "?".into(), |a| format!("{},{}", a.ip(), a.port())),
            Listener::Unix(_, p) => format!("sock:{}", p.display()),
        }
    }

    /// The next client, and how to name it in messages.
    pub fn accept(&self) -> std::io::Result<(Conn, String)> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, a)| (Conn::from(s), a.to_string())),
            Listener::Unix(l, p) => l
                .accept()
                .map(|(s, _)| (Conn::from(s), format!("sock:{}", p.display()))),
        }
    }
}

/// A socket at `p` that nobody listens on any more and that this user owns is
/// removed; a live one, another user's, or any other file is refused. lstat: a link
/// at the path is refused, never followed.
fn clear_stale(p: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => bail!("--server=sock:{}: {e}", p.display()),
    };
    let shown = p.display();
    if !meta.file_type().is_socket() {
        bail!("--server=sock:{shown}: the path exists and is not a socket; it is left alone");
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if meta.uid() != unsafe { libc::geteuid() } {
        bail!(
            "--server=sock:{shown}: a socket of another user (uid {}) is there; it is left alone",
            meta.uid()
        );
    }
    match UnixStream::connect(p) {
        Ok(_) => bail!("--server=sock:{shown}: a server already listens on it"),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => std::fs::remove_file(p)
            .with_context(|| format!("--server=sock:{shown}: removing the stale socket")),
        Err(e) => bail!("--server=sock:{shown}: {e}"),
    }
}

/// Bind with a umask that leaves the socket to its owner alone: its mode is set as
/// it is made, so there is no moment at which another user could connect.
fn bind_private(p: &Path) -> std::io::Result<UnixListener> {
    // SAFETY: umask only swaps the process's file-creation mask. The server binds
    // before it starts any thread, so no other file is created under this mask.
    let old = unsafe { libc::umask(0o177) };
    let l = UnixListener::bind(p);
    // SAFETY: as above, restoring the mask it had.
    unsafe { libc::umask(old) };
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_socket_is_private_and_a_stale_one_replaced() {
        let dir = std::env::temp_dir().join(format!("ioscope-listen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s");
        let addr = Address::Unix(p.clone());
        let l = Listener::bind(&addr).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        assert_eq!(l.describe(), format!("sock:{}", p.display()));
        // A server listens: refused, and its socket stays.
        let e = Listener::bind(&addr).err().unwrap().to_string();
        assert!(e.contains("already listens"), "{e}");
        drop(l);
        // Gone (its socket left behind): replaced.
        let _l = Listener::bind(&addr).unwrap();
        // A file or a link at the path is never touched.
        let f = dir.join("f");
        std::fs::write(&f, b"keep").unwrap();
        let e = Listener::bind(&Address::Unix(f.clone()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a socket"), "{e}");
        let link = dir.join("l");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(Listener::bind(&Address::Unix(link)).is_err());
        assert_eq!(std::fs::read(&f).unwrap(), b"keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
