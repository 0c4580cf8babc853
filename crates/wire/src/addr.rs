//! fio's way of writing a server's address, for `--server` and `--client` alike:
//! `[ip:|ip6:]HOST[,PORT]`.

/// fio's port.
pub const DEFAULT_PORT: u16 = 8765;

/// `[ip:|ip6:]HOST[,PORT]` as a socket address (`host:port`, `[v6]:port`). An empty
/// host is `default_host` (`None`: refused); `sock:` (a unix-domain socket) is refused.
pub fn socket_addr(arg: &str, default_host: Option<(&str, &str)>) -> Result<String, String> {
    if arg.starts_with("sock:") {
        return Err(format!(
            "{arg}: unix-domain sockets (sock:) are not supported; give ip:HOST,PORT"
        ));
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
    use super::socket_addr;

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
}
