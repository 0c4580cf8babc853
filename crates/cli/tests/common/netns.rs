//! Hosts on one machine: network namespaces on a private bridge, each with its own
//! address (`SUBNET.11`, `.12`, …; the machine is `SUBNET.1`) and, for what runs in it
//! through [`NetHosts::command`], its own host name. Removed when dropped.

use super::tmpdir;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct NetHosts {
    pub names: Vec<String>,
    pub bridge: String,
    /// The first three bytes of the hosts' addresses (`10.N.77`).
    pub subnet: String,
    /// Scratch space for scripts that reach the hosts.
    pub dir: tempfile::TempDir,
}

pub fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

impl NetHosts {
    /// `n` hosts. Each set made in this process gets its own names and subnet, so
    /// that tests running side by side do not meet.
    pub fn new(n: usize) -> Result<NetHosts, String> {
        static SETS: AtomicU32 = AtomicU32::new(0);
        let set = SETS.fetch_add(1, Ordering::Relaxed);
        let id = (std::process::id() + 37 * set) % 200 + 20;
        let h = NetHosts {
            names: (0..n).map(|i| format!("iosh{id}n{i}")).collect(),
            bridge: format!("iosbr{id}"),
            subnet: format!("10.{id}.77"),
            dir: tmpdir(),
        };
        ip(&["link", "add", &h.bridge, "type", "bridge"])?;
        ip(&[
            "addr",
            "add",
            &format!("{}.1/24", h.subnet),
            "dev",
            &h.bridge,
        ])?;
        ip(&["link", "set", &h.bridge, "up"])?;
        for (i, name) in h.names.iter().enumerate() {
            let veth = format!("v{name}");
            ip(&["netns", "add", name])?;
            ip(&[
                "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", name,
            ])?;
            ip(&["link", "set", &veth, "master", &h.bridge, "up"])?;
            ip(&[
                "-n",
                name,
                "addr",
                "add",
                &format!("{}/24", h.addr(i)),
                "dev",
                "eth0",
            ])?;
            ip(&["-n", name, "link", "set", "eth0", "up"])?;
            ip(&["-n", name, "link", "set", "lo", "up"])?;
        }
        Ok(h)
    }

    /// Host `i`'s address.
    pub fn addr(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, 11 + i)
    }

    /// `program args…` to run on host `i`: in its network namespace, with its name as
    /// the host name (a UTS namespace of its own).
    pub fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.names[i],
            "unshare",
            "--uts",
            "sh",
            "-c",
        ])
        .arg("hostname \"$0\" && exec \"$@\"")
        .arg(&self.names[i])
        .arg(program);
        c
    }
}

impl Drop for NetHosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = ip(&["netns", "del", n]);
        }
        let _ = ip(&["link", "del", &self.bridge]);
    }
}
