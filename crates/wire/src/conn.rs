//! A connection between client and server: TCP, or a unix-domain socket
//! (`sock:PATH`). fio's protocol is the same on both.

use crate::addr::Address;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;

/// One connected stream.
#[derive(Debug)]
pub enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    /// Connect to a server.
    pub fn connect(to: &Address) -> io::Result<Conn> {
        Ok(match to {
            Address::Tcp(a) => {
                let s = TcpStream::connect(a)?;
                // Small messages both ways: no waiting for more to send.
                let _ = s.set_nodelay(true);
                Conn::Tcp(s)
            }
            Address::Unix(p) => Conn::Unix(UnixStream::connect(p)?),
        })
    }

    /// Another handle to the same stream (one thread reads, another writes).
    pub fn try_clone(&self) -> io::Result<Conn> {
        Ok(match self {
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Conn::Tcp(s) => s.shutdown(how),
            Conn::Unix(s) => s.shutdown(how),
        }
    }
}

impl From<TcpStream> for Conn {
    fn from(s: TcpStream) -> Conn {
        let _ = s.set_nodelay(true);
        Conn::Tcp(s)
    }
}

impl From<UnixStream> for Conn {
    fn from(s: UnixStream) -> Conn {
        Conn::Unix(s)
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Tcp(s) => s.flush(),
            Conn::Unix(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn frames_travel_over_a_unix_socket() {
        let dir = std::env::temp_dir().join(format!("ioscope-conn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let l = UnixListener::bind(&path).unwrap();
        let mut c = Conn::connect(&Address::Unix(path.clone())).unwrap();
        let mut s = Conn::from(l.accept().unwrap().0);
        crate::frame::send(&mut c, crate::msg::op::PROBE, 7, b"hi").unwrap();
        let m = crate::frame::receive(&mut s).unwrap().unwrap();
        assert_eq!(
            (m.op, m.tag, &m.payload[..]),
            (crate::msg::op::PROBE, 7, &b"hi"[..])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
