//! fio's way of writing a server's address, for `--server` and `--client` alike:
//! `[ip:|ip6:]HOST[,PORT]`, or `sock:PATH` for a unix-domain socket.

use std::path::PathBuf;

/// fio's port.
pub const DEFAULT_PORT: u16 = 8765;

/// Where a server listens or a client connects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// A socket address, `host:port` or `[v6]:port`.
    Tcp(String),
    /// A unix-domain socket's path (`sock:PATH`).
    Unix(PathBuf),
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(a) => f.write_str(a),
            Address::Unix(p) => write!(f, "sock:{}", p.display()),
        }
    }
}

/// `sock:PATH`, or `[ip:|ip6:]HOST[,PORT]` as in [`socket_addr`].
pub fn address(arg: &str, default_host: Option<(&str, &str)>) -> Result<Address, String> {
    match arg.strip_prefix("sock:") {
        Some("") => Err(format!("{arg}: no socket path after sock:")),
        Some(p) if p.contains('\0') => Err(format!("{arg}: the socket path holds a NUL byte")),
        Some(p) => Ok(Address::Unix(PathBuf::from(p))),
        None => socket_addr(arg, default_host).map(Address::Tcp),
    }
}

/// `[ip:|ip6:]HOST[,PORT]` as a socket address (`host:port`, `[v6]:port`). An empty
/// host is `default_host` (`None`: refused); `sock:` is for [`address`].
pub fn socket_addr(arg: &str, default_host: Option<(&str, &str)>) -> Result<String, String> {
    if arg.starts_with("sock:") {
        return Err(format!("{arg}: a unix-domain socket, not a host and port"));
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
                .map_err(|_| format!("{arg}: port '{p}' is not a number 0-65535"))?;
            (h, port)
        }
        None => (rest, DEFAULT_PORT),
    };
    let host = match (host, default_host) {
        ("" | "localhost", Some((v4, v6h))) => {
            if v6 {
                v6h
            } else {
                v4
            }
        }
        ("", None) => return Err(format!("{arg}: no host")),
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
    use super::{address, socket_addr, Address};
    use std::path::PathBuf;

    const LOOPBACK: Option<(&str, &str)> = Some(("127.0.0.1", "::1"));

    #[test]
    fn addresses_as_fio_writes_them() {
        assert_eq!(socket_addr("", LOOPBACK).unwrap(), "127.0.0.1:8765");
        assert_eq!(
            socket_addr("ip:0.0.0.0,9000", LOOPBACK).unwrap(),
            "0.0.0.0:9000"
        );
        assert_eq!(socket_addr(",9000", LOOPBACK).unwrap(), "127.0.0.1:9000");
        assert_eq!(socket_addr("ip6:::1,9000", LOOPBACK).unwrap(), "[::1]:9000");
        assert_eq!(socket_addr("10.0.0.1", None).unwrap(), "10.0.0.1:8765");
        assert!(socket_addr("sock:/tmp/s", LOOPBACK).is_err());
        assert!(socket_addr("ip:h,99999", LOOPBACK).is_err());
        assert!(socket_addr(",1", None).is_err());
    }

    #[test]
    fn a_unix_socket_is_a_path() {
        assert_eq!(
            address("sock:/tmp/fio.sock", LOOPBACK).unwrap(),
            Address::Unix(PathBuf::from("/tmp/fio.sock"))
        );
        assert_eq!(
            address("sock:/tmp/fio.sock", LOOPBACK).unwrap().to_string(),
            "sock:/tmp/fio.sock"
        );
        assert_eq!(
            address(",9", LOOPBACK).unwrap(),
            Address::Tcp("127.0.0.1:9".into())
        );
        assert!(address("sock:", LOOPBACK).is_err());
    }
}
