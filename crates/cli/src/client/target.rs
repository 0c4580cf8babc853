//! The client's command line as fio reads it: local flags, then each `--client=HOST`
//! (or a file of hosts) with the flags and job files that follow it.

use anyhow::{bail, Context as _, Result};
use ioscope_report::Endpoint;
use ioscope_wire::addr::{self, Address, DEFAULT_PORT};
use std::ffi::OsString;

/// One server and what it is sent.
pub struct Target {
    /// As given (`host` or `host,port`), for messages.
    pub name: String,
    pub addr: Address,
    /// The host and port as the report names them (fio's `hostname`, `port`).
    pub at: Endpoint,
    /// Flags after its `--client`, sent as they are (JOBLINE).
    pub args: Vec<String>,
    pub job_files: Vec<String>,
    /// `--remote-config=PATH`: job files on the server's side, loaded there.
    pub remote_files: Vec<String>,
    /// Job options given after its `--client`, as a job file.
    pub inline_job: Option<String>,
}

/// The local flags and each server with its flags and job files, as fio reads them.
pub fn targets(argv: &[OsString]) -> Result<(Vec<String>, Vec<Target>)> {
    let mut local = Vec::new();
    let mut out: Vec<Target> = Vec::new();
    // Where the targets of the latest --client begin.
    let mut latest: Option<usize> = None;
    let mut argv = argv.iter();
    while let Some(a) = argv.next() {
        let a = a
            .to_str()
            .with_context(|| format!("--client: argument {a:?} is not UTF-8"))?;
        if let Some(v) = a
            .strip_prefix("--client=")
            .or_else(|| a.strip_prefix("-client="))
        {
            latest = Some(out.len());
            for h in hosts_of(v)? {
                out.push(Target {
                    addr: address(&h)?,
                    at: endpoint(&h),
                    name: h,
                    args: Vec::new(),
                    job_files: Vec::new(),
                    remote_files: Vec::new(),
                    inline_job: None,
                });
            }
            continue;
        }
        let Some(first) = latest else {
            local.push(a.to_string());
            continue;
        };
        let remote = match a {
            // fio's own way: the path as the next argument.
            "--remote-config" | "-remote-config" => {
                let p = argv.next().and_then(|p| p.to_str());
                Some(p.context("--remote-config: no file named")?)
            }
            _ => a
                .strip_prefix("--remote-config=")
                .or_else(|| a.strip_prefix("-remote-config=")),
        };
        for t in &mut out[first..] {
            match (remote, a.starts_with('-')) {
                (Some(p), _) => t.remote_files.push(p.to_string()),
                (None, true) => t.args.push(a.to_string()),
                (None, false) => t.job_files.push(a.to_string()),
            }
        }
    }
    for t in &mut out {
        t.inline_job = inline_job(&mut t.args);
    }
    if let Some(t) = out
        .iter()
        .find(|t| t.job_files.is_empty() && t.remote_files.is_empty() && t.inline_job.is_none())
    {
        bail!("--client={}: no job for this server", t.name);
    }
    if let Some(a) = local.iter().find(|a| job_option(a).is_some()) {
        bail!("--client: the job option {a} comes before any --client: give it after the --client it is for");
    }
    Ok((local, out))
}

/// The job option an argument sets (`--rw=read` → `rw`), if it is one and not a
/// program flag.
fn job_option(a: &str) -> Option<&str> {
    let body = a.strip_prefix("--").or_else(|| a.strip_prefix('-'))?;
    let name = body.split('=').next().unwrap_or(body);
    let flag = crate::command::defs::<crate::fio::args::FioArgs>()
        .iter()
        .any(|f| f.name == name);
    let option = ioscope_options::OPTIONS.iter().any(|d| d.matches(name));
    (option && !flag).then_some(name)
}

/// Job options among a server's arguments, taken out and written as a job file
/// (fio's command-line rule: those before the first `--name` are global). fio's
/// client drops them silently; this one sends them, to fio's servers as to its own.
fn inline_job(args: &mut Vec<String>) -> Option<String> {
    let (opts, flags): (Vec<String>, Vec<String>) =
        args.drain(..).partition(|a| job_option(a).is_some());
    *args = flags;
    if opts.is_empty() {
        return None;
    }
    let mut text = String::from("[global]\n");
    for a in opts {
        let body = a.trim_start_matches('-');
        match body.strip_prefix("name=") {
            Some(name) => text.push_str(&format!("\n[{name}]\n")),
            None => text.push_str(&format!("{body}\n")),
        }
    }
    Some(text)
}

/// `--client=VALUE`: a host, or a file listing hosts (one per line).
fn hosts_of(v: &str) -> Result<Vec<String>> {
    let p = std::path::Path::new(v);
    if !v.contains(',') && !v.starts_with("sock:") && p.is_file() {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("--client={v}: host list"))?;
        let hosts: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect();
        if hosts.is_empty() {
            bail!("--client={v}: the host list names no host");
        }
        return Ok(hosts);
    }
    Ok(vec![v.to_string()])
}

/// fio's `[ip:|ip6:]HOST[,PORT]` or `sock:PATH` as an address to connect to; no host
/// (`,PORT`) is this one, as fio's client connects to 0.0.0.0 then.
fn address(h: &str) -> Result<Address> {
    addr::address(h, Some(("127.0.0.1", "::1"))).map_err(|e| anyhow::anyhow!("--client={e}"))
}

/// The host as written (without `ip:`/`ip6:`) and the port: what fio's report calls
/// the server; for `sock:PATH`, the path and fio's port, as fio's client names it.
/// `h` was checked by [`address`].
fn endpoint(h: &str) -> Endpoint {
    if let Some(path) = h.strip_prefix("sock:") {
        return Endpoint {
            host: path.to_string(),
            port: DEFAULT_PORT,
        };
    }
    let rest = h
        .strip_prefix("ip6:")
        .or_else(|| h.strip_prefix("ip:"))
        .unwrap_or(h);
    let (host, port) = match rest.rsplit_once(',') {
        Some((host, p)) => (host, p.parse().unwrap_or(DEFAULT_PORT)),
        None => (rest, DEFAULT_PORT),
    };
    Endpoint {
        host: host.to_string(),
        port,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn each_server_gets_what_follows_its_client_flag() {
        let (local, t) = targets(&os(&[
            "--output-format=json",
            "--client=a",
            "--status-interval=1",
            "a.fio",
            "--client=b,9000",
            "b.fio",
            "--remote-config=/srv/c.fio",
        ]))
        .unwrap();
        assert_eq!(local, ["--output-format=json"]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].addr.to_string(), &t[0].args[..], &t[0].job_files[..]),
            (
                "a:8765".to_string(),
                &["--status-interval=1".to_string()][..],
                &["a.fio".to_string()][..]
            )
        );
        assert_eq!(
            (t[1].addr.to_string(), &t[1].job_files[..]),
            ("b:9000".to_string(), &["b.fio".to_string()][..])
        );
        assert_eq!(t[1].remote_files, ["/srv/c.fio"]);
        assert!(t[1].args.is_empty());
        assert!(targets(&os(&["--client=a"])).is_err());
        let (_, t) = targets(&os(&[
            "--client=a",
            "--output-format=json",
            "--ioengine=null",
            "--name=x",
            "--rw=read",
            "--size=1m",
        ]))
        .unwrap();
        assert_eq!(t[0].args, ["--output-format=json"]);
        assert_eq!(
            t[0].inline_job.as_deref(),
            Some("[global]\nioengine=null\n\n[x]\nrw=read\nsize=1m\n")
        );
        assert!(targets(&os(&["--rw=read", "--client=a", "j.fio"])).is_err());
        assert_eq!(
            address("sock:/x").unwrap(),
            Address::Unix(std::path::PathBuf::from("/x"))
        );
        assert_eq!(endpoint("sock:/x").host, "/x");
        assert_eq!(address(",9").unwrap().to_string(), "127.0.0.1:9");
        assert_eq!(
            (endpoint(",8766").host.as_str(), endpoint(",8766").port),
            ("", 8766)
        );
        assert_eq!(endpoint("ip:h").host, "h");
        assert_eq!(address("ip6:::1,1").unwrap().to_string(), "[::1]:1");
    }
}
