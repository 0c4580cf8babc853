//! `ioscope --server`: fio 3.42's own client drives it over fio's wire format, as it
//! drives fio's servers — compared side by side with fio servers on the same jobs —
//! and a server refuses a foreign protocol, stops the jobs of a client that quits or
//! goes away, and serves the next.

use crate::common::netns::NetHosts;
use crate::common::*;
use ioscope_wire::frame;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process, killed when dropped.
struct Server {
    child: Child,
    ip: String,
    port: u16,
}

impl Server {
    /// ioscope on a port of the kernel's choosing, read from its first line.
    fn ioscope(dir: &Path) -> Server {
        let mut c = Command::new(bin());
        c.arg("--server=ip:127.0.0.1,0");
        Server::ioscope_by(c, dir, "127.0.0.1")
    }

    /// ioscope on host `i` of `hosts`, on fio's port.
    fn ioscope_on(hosts: &NetHosts, i: usize, dir: &Path) -> Server {
        let mut c = hosts.command(i, &bin());
        c.arg(format!("--server=ip:{}", hosts.addr(i)));
        Server::ioscope_by(c, dir, &hosts.addr(i))
    }

    /// `c` (an `ioscope --server`), once its first line says it listens on `ip`.
    fn ioscope_by(c: Command, dir: &Path, ip: &str) -> Server {
        let (child, line) = Server::listening(c, dir);
        let port = line
            .trim()
            .rsplit(',')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        assert!(
            line.starts_with(&format!("ioscope: fio server listening on {ip},")),
            "{line}"
        );
        Server {
            child,
            ip: ip.to_string(),
            port,
        }
    }

    /// `c` (an `ioscope --server`) started in `dir`, and its first line (it prints
    /// it once it listens).
    fn listening(mut c: Command, dir: &Path) -> (Child, String) {
        let mut child = c
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ioscope --server");
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        BufReader::new(out)
            .read_line(&mut line)
            .expect("first line");
        (child, line)
    }

    /// fio 3.42's server on a free port, once it accepts connections.
    fn fio(dir: &Path) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut c = Command::new(fio342_path());
        c.arg(format!("--server=ip:127.0.0.1,{port}"));
        Server::fio_by(c, dir, "127.0.0.1", port)
    }

    /// fio 3.42's server on host `i` of `hosts`, on the port after fio's.
    fn fio_on(hosts: &NetHosts, i: usize, dir: &Path) -> Server {
        let mut c = hosts.command(i, &fio342_path());
        c.arg(format!("--server=ip:{},8766", hosts.addr(i)));
        Server::fio_by(c, dir, &hosts.addr(i), 8766)
    }

    fn fio_by(mut c: Command, dir: &Path, ip: &str, port: u16) -> Server {
        let child = c
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fio --server");
        let start = Instant::now();
        while TcpStream::connect((ip, port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "fio --server never listened on {ip},{port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Server {
            child,
            ip: ip.to_string(),
            port,
        }
    }

    /// ioscope on the unix-domain socket `path`, once its first line says so.
    fn ioscope_sock(dir: &Path, path: &Path) -> Server {
        let mut c = Command::new(bin());
        c.arg(format!("--server=sock:{}", path.display()));
        let (child, line) = Server::listening(c, dir);
        let want = format!("ioscope: fio server listening on sock:{}\n", path.display());
        assert_eq!(line, want);
        Server::on_sock(child, path)
    }

    /// fio 3.42's server on the unix-domain socket `path`, once it accepts.
    fn fio_sock(dir: &Path, path: &Path) -> Server {
        let child = Command::new(fio342_path())
            .arg(format!("--server=sock:{}", path.display()))
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fio --server");
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(path).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "fio --server never listened on {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Server::on_sock(child, path)
    }

    fn on_sock(child: Child, path: &Path) -> Server {
        Server {
            child,
            ip: format!("sock:{}", path.display()),
            port: 0,
        }
    }

    fn client(&self) -> String {
        match self.ip.starts_with("sock:") {
            true => format!("--client={}", self.ip),
            false => format!("--client={},{}", self.ip, self.port),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const JOBS: &str = "[global]\nioengine=null\nsize=8m\nbs=4k\n\n[seqread]\nrw=read\n\n[randwrite]\nrw=randwrite\nbs=16k\n";

/// fio's client against two servers with `--output-format=json` after each
/// `--client` (sent to the server, as fio's client does): its JSON document.
fn client_json(dir: &Path, servers: &[&Server]) -> Value {
    client_json_by(&fio342_path(), dir, servers)
}

/// [`client_json`] with `client` (fio or ioscope) as the client.
fn client_json_by(client: &Path, dir: &Path, servers: &[&Server]) -> Value {
    std::fs::write(dir.join("j.fio"), JOBS).unwrap();
    let mut args: Vec<String> = Vec::new();
    for s in servers {
        args.extend([s.client(), "--output-format=json".into(), "j.fio".into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run_tool(client, dir, &args, &[]);
    assert_eq!(r.code, 0, "{}: {}{}", client.display(), r.stdout, r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// A client_stats entry: job name, (read bytes, write bytes, read I/Os, write I/Os),
/// its keys.
type Entry = (String, (u64, u64, u64, u64), Vec<String>);

/// Every client_stats entry, sorted.
fn per_host(doc: &Value) -> Vec<Entry> {
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let mut out: Vec<_> = doc["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .map(|c| {
            let mut keys: Vec<String> = c.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            let figures = (
                u(&c["read"]["io_bytes"]),
                u(&c["write"]["io_bytes"]),
                u(&c["read"]["total_ios"]),
                u(&c["write"]["total_ios"]),
            );
            (
                c["jobname"].as_str().unwrap_or("").to_string(),
                figures,
                keys,
            )
        })
        .collect();
    out.sort();
    out
}

/// Two ioscope servers driven by fio 3.42's client give what two fio 3.42 servers
/// give: per host each job's bytes and I/Os, "All clients", the same JSON keys, the
/// job and global options.
#[test]
fn a_fio_client_drives_ioscope_servers_as_it_drives_fios() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let ours = [Server::ioscope(d.path()), Server::ioscope(d.path())];
    let theirs = [Server::fio(d.path()), Server::fio(d.path())];
    let i = client_json(d.path(), &[&ours[0], &ours[1]]);
    let f = client_json(d.path(), &[&theirs[0], &theirs[1]]);
    let (pi, pf) = (per_host(&i), per_host(&f));
    assert_eq!(pi, pf, "ioscope servers (left) and fio servers (right)");
    // Each server ran both jobs: 8 MiB read in 4k, 8 MiB written in 16k.
    let seq = pi.iter().filter(|(n, ..)| n == "seqread");
    assert_eq!(
        seq.map(|x| x.1).collect::<Vec<_>>(),
        [(8 << 20, 0, 2048, 0); 2]
    );
    let rw = pi.iter().filter(|(n, ..)| n == "randwrite");
    assert_eq!(
        rw.map(|x| x.1).collect::<Vec<_>>(),
        [(0, 8 << 20, 0, 512); 2]
    );
    assert!(pi.iter().any(|(n, ..)| n == "All clients"), "{pi:?}");
    // The same options, each host's entry naming the host (ports differ).
    let globals = |doc: &Value| -> Vec<Value> {
        let mut v = doc["global options"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        v.iter_mut().for_each(|o| {
            o.as_object_mut().map(|m| m.remove("port"));
        });
        v
    };
    assert_eq!(globals(&i), globals(&f));
    assert_eq!(globals(&i).len(), 2, "{}", i["global options"]);
    let opts = |doc: &Value| doc["client_stats"][0]["job options"].clone();
    assert_eq!(opts(&i), opts(&f));
}

/// The normal report: the client prints the server's lines under its name, then the
/// jobs' results computed from what the server sent.
#[test]
fn the_normal_report_comes_out_of_fios_client() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let r = run_tool(&fio342_path(), d.path(), &[&s.client(), "j.fio"], &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let host = ioscope_options_hostname();
    for want in [
        format!("hostname={host}, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.42"),
        format!("<{host}> seqread: (g=0): rw=read, bs=(R) 4096B-4096B"),
        format!("<{host}> Starting 2 processes"),
        "seqread: (groupid=0, jobs=1): err= 0".into(),
        "issued rwts: total=2048,0,0,0 short=0,0,0,0 dropped=0,0,0,0".into(),
        "issued rwts: total=0,512,0,0 short=0,0,0,0 dropped=0,0,0,0".into(),
        "io=8192KiB (8389kB)".into(),
    ] {
        assert!(r.stdout.contains(&want), "{want:?} not in:\n{}", r.stdout);
    }
    // The client names the version itself; the server sends no line of it.
    assert!(
        !r.stdout.contains(&format!("<{host}> fio-3.42")),
        "{}",
        r.stdout
    );
}

/// `--status-interval` given after `--client` reaches the server, which sends interim
/// reports while the job runs (3 s at 1000 I/O per second: one at least before the
/// final one), as fio's server does; `--remote-config` names a job file on the
/// server's side.
#[test]
fn interim_reports_and_remote_job_files() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    let job = "[paced]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=3\nrate_iops=1000\n";
    std::fs::write(d.path().join("paced.fio"), job).unwrap();
    let r = run_tool(
        &fio342_path(),
        d.path(),
        &[&s.client(), "--status-interval=1", "paced.fio"],
        &[],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // A 3 s run with a 1 s interval: at least one interim report besides the final
    // one, however loaded the machine (more when the intervals come on time).
    let reports = r.stdout.matches("paced: (groupid=0, jobs=1)").count();
    assert!(reports >= 2, "{reports} reports:\n{}", r.stdout);
    // ioscope's client prints them too, from fio's server and from its own: in the
    // normal report as they come, in JSON as entries before the final one (each
    // with the job's options, its I/O growing), as fio's client does.
    let f = Server::fio(d.path());
    for server in [&f, &s] {
        let client = server.client();
        let r = run_in(d.path(), &[&client, "--status-interval=1", "paced.fio"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let reports = r.stdout.matches("paced: (groupid=0, jobs=1)").count();
        assert!(reports >= 2, "{reports} reports:\n{}", r.stdout);
        let args = [
            &*client,
            "--output-format=json",
            "--status-interval=1",
            "paced.fio",
        ];
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let entries = v["client_stats"].as_array().unwrap();
        let ios: Vec<u64> = entries
            .iter()
            .map(|e| e["read"]["total_ios"].as_u64().unwrap())
            .collect();
        assert!(
            ios.len() >= 2 && ios.windows(2).all(|w| w[0] < w[1]),
            "{ios:?}"
        );
        // The last is the final report: the whole 3 s run.
        let runtimes: Vec<u64> = entries
            .iter()
            .map(|e| e["read"]["runtime"].as_u64().unwrap())
            .collect();
        let (last, interim) = runtimes.split_last().unwrap();
        assert!(
            *last >= 3000 && interim.iter().all(|&t| t < 3000),
            "{runtimes:?}"
        );
        assert!(entries
            .iter()
            .all(|e| e["job options"]["rate_iops"] == "1000"));
    }
    // The same job file, named on the server's side.
    let path = d.path().join("paced.fio");
    let r = run_tool(
        &fio342_path(),
        d.path(),
        &[&s.client(), "--remote-config", &path.display().to_string()],
        &[],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("issued rwts: total="), "{}", r.stdout);
    assert_eq!(r.stdout.matches("paced: (groupid=0, jobs=1)").count(), 1);
    // ioscope's client sends it too, to a fio server and to its own, in both of
    // fio's spellings.
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let path = d.path().join("j.fio").display().to_string();
    let f = Server::fio(d.path());
    for (server, form) in [(&f, 0), (&s, 1)] {
        let by_eq = format!("--remote-config={path}");
        let args: Vec<&str> = match form {
            0 => vec![&by_eq],
            _ => vec!["--remote-config", &path],
        };
        let client = server.client();
        let args = [&[&*client, "--output-format=json"][..], &args].concat();
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let got: Vec<_> = per_host(&v).into_iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(
            got,
            [
                ("All clients".to_string(), (8 << 20, 8 << 20, 2048, 512)),
                ("randwrite".to_string(), (0, 8 << 20, 0, 512)),
                ("seqread".to_string(), (8 << 20, 0, 2048, 0)),
            ],
            "{args:?}"
        );
    }
}

/// The host name the server's PROBE reply carries (uname's node name).
fn ioscope_options_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A job the server cannot run fails the client (exit 1) with ioscope's reason on
/// its output; the server serves the next client.
#[test]
fn a_bad_job_fails_the_client_with_the_reason() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    std::fs::write(
        d.path().join("bad.fio"),
        "[x]\nioengine=null\nsize=1m\nbogus_option=3\n",
    )
    .unwrap();
    let r = run_tool(&fio342_path(), d.path(), &[&s.client(), "bad.fio"], &[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains(":4: option 'bogus_option': unknown option"),
        "{}",
        r.stdout
    );
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let r = run_tool(&fio342_path(), d.path(), &[&s.client(), "j.fio"], &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// A frame of fio 3.33's protocol (version 97) gets one error line in 3.42's and a
/// closed connection, as fio's server answers it; the server serves on.
#[test]
fn a_foreign_protocol_version_is_refused() {
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut h = [0u8; frame::HEADER];
    h[0..2].copy_from_slice(&97u16.to_le_bytes());
    h[2..4].copy_from_slice(&10u16.to_le_bytes()); // PROBE
    let crc = frame::crc16(&h[..20]);
    h[20..22].copy_from_slice(&crc.to_le_bytes());
    c.write_all(&h).unwrap();
    let m = frame::receive(&mut c).unwrap().expect("an answer");
    assert_eq!(m.op, 5, "TEXT");
    let text = String::from_utf8_lossy(&m.payload[24..]).into_owned();
    assert_eq!(text, "fio: bad server cmd version 97\n");
    assert!(
        frame::receive(&mut c).unwrap().is_none(),
        "then the connection closes"
    );
    // The next client is served.
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    frame::send(&mut c, 10, 0x1234, &[0u8; 136]).unwrap();
    let m = frame::receive(&mut c).unwrap().expect("a PROBE reply");
    assert_eq!((m.op, m.tag, m.payload.len()), (10, 0x1234, 112));
}

/// A job that would run a minute at 500 I/O per second, stopped by the client: on
/// Ctrl-C fio's client sends QUIT and prints the results of what ran (the server
/// stops the job and still reports it); when the client is killed, the server stops
/// the job itself and serves the next client. Neither waits for the minute: the
/// bound is half of it.
#[test]
fn a_client_that_quits_or_vanishes_stops_its_jobs() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    let long = "[long]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=60\nrate_iops=500\n";
    std::fs::write(d.path().join("long.fio"), long).unwrap();
    for signal in [libc::SIGINT, libc::SIGKILL] {
        let start = Instant::now();
        let c = Command::new(fio342_path())
            .args([&s.client(), "--output-format=json", "long.fio"])
            .current_dir(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        // SAFETY: kill has no memory preconditions; the pid is our child's.
        unsafe { libc::kill(c.id() as i32, signal) };
        let out = c.wait_with_output().unwrap();
        if signal == libc::SIGINT {
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            let job = &v["client_stats"][0];
            let ms = job["read"]["runtime"].as_u64().unwrap();
            assert!(ms > 0 && ms < 30_000, "ran {ms} ms after the client's QUIT");
            assert!(job["read"]["total_ios"].as_u64().unwrap() > 0);
        }
        // The server is free again: a short job is served at once.
        std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
        let r = run_tool(&fio342_path(), d.path(), &[&s.client(), "j.fio"], &[]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let took = start.elapsed();
        assert!(
            took < Duration::from_secs(30),
            "after {signal}: the next client was served {took:?} after the first began"
        );
    }
}

/// `--server` takes its jobs from clients: with a job (or --parse-only) it refuses,
/// naming why, rather than listening and ignoring them.
#[test]
fn server_with_jobs_is_refused() {
    let d = tmpdir();
    for extra in [&["--name=x", "--size=1m"][..], &["--parse-only"]] {
        let r = run_in(
            d.path(),
            &[&["--server=ip:127.0.0.1,0"][..], extra].concat(),
        );
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stdout);
        assert!(r.stderr.contains("--server takes no jobs"), "{}", r.stderr);
        assert!(!r.stdout.contains("listening"), "{}", r.stdout);
    }
}

/// ioscope's client against two fio 3.42 servers and against two ioscope servers: per
/// host each job's bytes and I/Os as fio's client reports them from the same servers,
/// and "All clients" summing the hosts.
#[test]
fn an_ioscope_client_drives_fio_and_ioscope_servers() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let fios = [Server::fio(d.path()), Server::fio(d.path())];
    let ours = [Server::ioscope(d.path()), Server::ioscope(d.path())];
    let want = per_host(&client_json(d.path(), &[&fios[0], &fios[1]]));
    let figures = |v: &[Entry]| -> Vec<(String, (u64, u64, u64, u64))> {
        v.iter().map(|(n, f, _)| (n.clone(), *f)).collect()
    };
    for servers in [&fios, &ours] {
        let mut args: Vec<String> = Vec::new();
        for s in servers.iter() {
            args.extend([s.client(), "--output-format=json".into(), "j.fio".into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let v: Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
        let got = per_host(&v);
        // fio's client prints "All clients" once per server's last report (its quirk);
        // ours once, over both.
        let mut once = figures(&want);
        once.dedup_by(|a, b| a.0 == "All clients" && b.0 == "All clients");
        let all = got.iter().find(|(n, ..)| n == "All clients").map(|x| x.1);
        assert_eq!(all, Some((16 << 20, 16 << 20, 4096, 1024)), "{got:?}");
        let hosts: Vec<_> = figures(&got)
            .into_iter()
            .filter(|(n, _)| n != "All clients")
            .collect();
        let theirs: Vec<_> = once
            .into_iter()
            .filter(|(n, _)| n != "All clients")
            .collect();
        assert_eq!(hosts, theirs);
    }
    // The normal report: each server's lines under its name, then the aggregate.
    let r = run_in(
        d.path(),
        &[&ours[0].client(), "j.fio", &ours[1].client(), "j.fio"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("All clients"), "{}", r.stdout);
    assert_eq!(
        r.stdout.matches("Starting 2 processes").count(),
        2,
        "{}",
        r.stdout
    );
}

/// A server that cannot be reached is that host's error: the others' results are
/// reported and the run fails.
#[test]
fn an_unreachable_server_fails_only_its_host() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let s = Server::ioscope(d.path());
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = run_in(
        d.path(),
        &[
            &s.client(),
            "j.fio",
            &format!("--client=127.0.0.1,{closed}"),
            "j.fio",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("issued rwts: total=2048,0,0,0"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("cannot connect"),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// The client's own flags (before `--client`) are refused by name, not ignored: only
/// the report's format is taken yet.
#[test]
fn client_flags_before_client_are_refused() {
    let d = tmpdir();
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let r = run_in(
        d.path(),
        &["--status-interval=1", "--client=127.0.0.1,1", "j.fio"],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "--status-interval=1 before --client is not taken by ioscope --client (after --client=HOST it is sent to that server)"
        ),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["j.fio", "--client=127.0.0.1,1", "j.fio"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("the job file j.fio comes before any --client"),
        "{}",
        r.stderr
    );
}

/// The client's own flags: `--eta=always` draws one status line over every server's
/// progress (their SEND_ETA replies summed, on stderr), `--eta=never` none; `--minimal`
/// gives terse lines, one per host's job and the aggregate.
#[test]
fn the_clients_status_line_sums_the_servers() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (a, b) = (Server::ioscope(d.path()), Server::fio(d.path()));
    let job = "[paced]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=3\nrate_iops=1000\n";
    std::fs::write(d.path().join("paced.fio"), job).unwrap();
    let (ca, cb) = (a.client(), b.client());
    let hosts = [&*ca, "paced.fio", &*cb, "paced.fio"];
    let r = run_in(
        d.path(),
        &[&["--eta=always", "--eta-interval=500ms"][..], &hosts].concat(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("Jobs:"), "{}", r.stdout);
    let lines: Vec<&str> = r.stderr.split(['\r', '\n']).collect();
    // While both servers run their job at 1000 IOPS each, the line shows both jobs
    // and their sum; 1200 leaves each server 60% of its rate on a loaded machine.
    let both: Vec<f64> = lines
        .iter()
        .filter(|l| l.starts_with("Jobs: 2 (f=2): [R(1),R(1)]"))
        .filter_map(|l| {
            let v = l.split("[r=").nth(2)?.split(" IOPS").next()?;
            match v.strip_suffix('k') {
                Some(k) => k.parse::<f64>().ok().map(|k| k * 1000.0),
                None => v.parse().ok(),
            }
        })
        .collect();
    assert!(
        both.iter().any(|&v| v >= 1200.0),
        "summed IOPS {both:?}:\n{}",
        r.stderr
    );
    let r = run_in(d.path(), &[&["--eta=never"][..], &hosts].concat());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("Jobs:"), "{}", r.stderr);
    let r = run_in(d.path(), &[&["--minimal"][..], &hosts].concat());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let names: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split(';').nth(2))
        .collect();
    assert_eq!(names, ["paced", "paced", "All clients"], "{}", r.stdout);
}

/// What the harness kept of each test (the client's output and errors, the
/// servers' logs), for a failure's message: each file's first 4000 bytes.
fn artifacts(art: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(art)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let b = std::fs::read(f).unwrap_or_default();
            let head = String::from_utf8_lossy(&b[..b.len().min(4000)]).into_owned();
            format!("--- {}\n{head}\n", f.display())
        })
        .collect()
}

/// fio 3.42's own client/server test, `t/client_server.py` (four servers on ports
/// 8765–8768 started with `--daemonize`, eleven runs checking each server's jobs, the
/// global options per server and the percentiles of "All clients"), passes with
/// ioscope as the binary, and with ioscope on one side and fio 3.42 on the other.
#[test]
fn fios_client_server_harness_passes() {
    require!(Prereq::Fio342, Prereq::Fio342Harness);
    let d = tmpdir();
    let wrapper = |name: &str, server: &Path, client: &Path| {
        let p = d.path().join(name);
        let text = format!(
            "#!/bin/sh\ncase \"$*\" in *--server*) exec {} \"$@\";; *) exec {} \"$@\";; esac\n",
            server.display(),
            client.display()
        );
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        p
    };
    let fio = fio342_path();
    let runs = [
        ("ioscope", bin(), ""),
        (
            "fio's client, ioscope's servers",
            wrapper("fio-client", &bin(), &fio),
            "5 11",
        ),
        (
            "ioscope's client, fio's servers",
            wrapper("ioscope-client", &fio, &bin()),
            "5 11",
        ),
    ];
    for (i, (what, exe, only)) in runs.iter().enumerate() {
        let art = d.path().join(format!("art{i}"));
        let mut c = Command::new("python3");
        c.arg(fio342_t().join("client_server.py"))
            .arg("-f")
            .arg(exe)
            .arg("-a")
            .arg(&art)
            .current_dir(d.path());
        if !only.is_empty() {
            c.arg("-o").args(only.split(' '));
        }
        let out = c.output().expect("python3 t/client_server.py");
        let text = String::from_utf8_lossy(&out.stdout);
        let want = if only.is_empty() {
            "11 test(s) passed, 0 failed, 0 skipped"
        } else {
            "2 test(s) passed, 0 failed, 9 skipped"
        };
        assert!(
            out.status.success() && text.contains(want),
            "{what}: {}\n{text}{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            artifacts(&art)
        );
        // Test 5: four servers ran three jobs each; "All clients" adds them up.
        let doc = std::fs::read_to_string(art.join("0005/client_server005.output")).unwrap();
        let v: Value = serde_json::from_str(&doc[doc.find('{').unwrap()..]).unwrap();
        let stats = v["client_stats"].as_array().unwrap();
        let (all, hosts): (Vec<&Value>, Vec<&Value>) =
            stats.iter().partition(|e| e["jobname"] == "All clients");
        assert_eq!((hosts.len(), all.len()), (12, 1), "{what}");
        let ios = |e: &Value| e["read"]["total_ios"].as_u64().unwrap();
        assert_eq!(
            ios(all[0]),
            hosts.iter().map(|e| ios(e)).sum::<u64>(),
            "{what}"
        );
        let ports: std::collections::BTreeSet<u64> =
            hosts.iter().map(|e| e["port"].as_u64().unwrap()).collect();
        assert_eq!(
            ports.into_iter().collect::<Vec<_>>(),
            [8765, 8766, 8767, 8768]
        );
    }
}

/// Two hosts (network namespaces, each with its own address and host name), each
/// running an ioscope server and a fio 3.42 server; the client on this machine. Every
/// pairing — fio's client with ioscope's servers, ioscope's client with fio's, and
/// ioscope's with ioscope's — reports what fio's client reports from fio's servers:
/// per host each job's bytes and I/Os under the address it was reached at, the same
/// JSON keys, and "All clients" adding up both hosts.
#[test]
fn clients_and_servers_on_two_network_hosts() {
    require!(Prereq::Fio342, Prereq::NetNs);
    let hosts = match NetHosts::new(2) {
        Ok(h) => h,
        Err(e) => skip!("network namespaces on a bridge: {e}"),
    };
    let d = tmpdir();
    let ours = [0, 1].map(|i| Server::ioscope_on(&hosts, i, d.path()));
    let fios = [0, 1].map(|i| Server::fio_on(&hosts, i, d.path()));
    let (fio, ioscope) = (fio342_path(), bin());
    let base = client_json(d.path(), &[&fios[0], &fios[1]]);
    let split = |v: &Value| -> (Vec<Entry>, Vec<Entry>) {
        per_host(v).into_iter().partition(|e| e.0 != "All clients")
    };
    let (want_hosts, want_all) = split(&base);
    let addrs = |v: &Value| -> Vec<String> {
        let mut a: Vec<String> = v["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["jobname"] != "All clients")
            .map(|e| e["hostname"].as_str().unwrap_or("").to_string())
            .collect();
        a.sort();
        a.dedup();
        a
    };
    assert_eq!(addrs(&base), [hosts.addr(0), hosts.addr(1)]);
    for (what, client, servers) in [
        ("fio's client, ioscope's servers", &fio, &ours),
        ("ioscope's client, fio's servers", &ioscope, &fios),
        ("ioscope's client, ioscope's servers", &ioscope, &ours),
    ] {
        let v = client_json_by(client, d.path(), &[&servers[0], &servers[1]]);
        let (got_hosts, got_all) = split(&v);
        assert_eq!(got_hosts, want_hosts, "{what} (left), fio's (right)");
        assert_eq!(addrs(&v), addrs(&base), "{what}");
        // "All clients": both hosts' 16 MiB read and written, with fio's keys.
        assert_eq!(
            got_all[0].1,
            (16 << 20, 16 << 20, 4096, 1024),
            "{what}: {got_all:?}"
        );
        assert_eq!(got_all[0].2, want_all[0].2, "{what}: All clients keys");
    }
    // The normal report names each host by the name it gave itself.
    let r = run_in(
        d.path(),
        &[&ours[0].client(), "j.fio", &ours[1].client(), "j.fio"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for n in &hosts.names {
        assert!(
            r.stdout.contains(&format!("hostname={n}, ")),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains(&format!("<{n}> Starting 2 processes")),
            "{}",
            r.stdout
        );
    }
}

const LOG_JOBS: &str = "[lj]\nioengine=null\nsize=64k\nrw=randread\nwrite_lat_log=logs/a\nwrite_bw_log=logs/b\nwrite_iops_log=logs/c\n\n[lk]\nioengine=null\nsize=32k\nrw=randwrite\nwrite_lat_log=logs/d\nlog_offset=1\nlog_prio=1\n";

/// The log files a client run left in `dir/logs`: name, and each line's fields.
fn client_logs(client: &Path, dir: &Path, s: &Server) -> Vec<(String, Vec<Vec<String>>)> {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir(&logs).unwrap();
    std::fs::write(dir.join("lj.fio"), LOG_JOBS).unwrap();
    let r = run_tool(
        client,
        dir,
        &[&s.client(), "--output-format=json", "lj.fio"],
        &[],
    );
    assert_eq!(r.code, 0, "{}: {}{}", client.display(), r.stdout, r.stderr);
    let mut out: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let lines = std::fs::read_to_string(&p)
                .unwrap()
                .lines()
                .map(|l| l.split(", ").map(String::from).collect())
                .collect();
            (p.file_name().unwrap().to_string_lossy().into_owned(), lines)
        })
        .collect();
    out.sort();
    out
}

/// Jobs that log (`write_lat_log`, `write_bw_log`, `write_iops_log`) on a server: the
/// client gets each log and writes it as fio's client does, under the job's name plus
/// the server's address, with fio's columns. fio's client writes the same files from
/// an ioscope server as from a fio server; ioscope's client from either server writes
/// one line per I/O (16 reads, 8 writes with their offsets and hex priorities).
#[test]
fn job_logs_travel_to_the_client() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (ours, theirs) = (Server::ioscope(d.path()), Server::fio(d.path()));
    let (fio, ioscope) = (fio342_path(), bin());
    let shape = |v: &[(String, Vec<Vec<String>>)]| -> Vec<(String, usize, usize)> {
        v.iter()
            .map(|(n, l)| (n.clone(), l.len(), l.first().map_or(0, Vec::len)))
            .collect()
    };
    let want = shape(&client_logs(&fio, d.path(), &theirs));
    let names: Vec<&str> = want.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "a_clat.1.log.127.0.0.1",
            "a_lat.1.log.127.0.0.1",
            "a_slat.1.log.127.0.0.1",
            "b_bw.1.log.127.0.0.1",
            "c_iops.1.log.127.0.0.1",
            "d_clat.2.log.127.0.0.1",
            "d_lat.2.log.127.0.0.1",
            "d_slat.2.log.127.0.0.1"
        ]
    );
    assert_eq!(shape(&client_logs(&fio, d.path(), &ours)), want);
    for s in [&theirs, &ours] {
        let got = client_logs(&ioscope, d.path(), s);
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(names, want.iter().map(|w| w.0.as_str()).collect::<Vec<_>>());
        for (name, lines) in &got {
            let ios = match &name[..1] {
                _ if name.contains("slat") => 0,
                "d" => 8,
                _ => 16,
            };
            assert_eq!(lines.len(), ios, "{name}: {lines:?}");
            if name.starts_with('d') && ios > 0 {
                let mut offsets: Vec<u64> = lines.iter().map(|l| l[4].parse().unwrap()).collect();
                offsets.sort_unstable();
                assert_eq!(offsets, (0..8).map(|i| i * 4096).collect::<Vec<_>>());
                assert!(lines.iter().all(|l| l[2] == "1" && l[5].starts_with("0x")));
            } else if !lines.is_empty() {
                assert!(lines
                    .iter()
                    .all(|l| l.len() == 5 && l[2] == "0" && l[3] == "4096"));
            }
        }
    }
}

const HIST_JOBS: &str = "[hj]\nioengine=null\nrw=randread\nsize=1g\ntime_based=1\nruntime=1200ms\nwrite_hist_log=logs/h\nlog_hist_msec=100\nlog_hist_coarseness=2\n\n[hk]\nioengine=null\nrw=randwrite\nbs=8k\nsize=1g\ntime_based=1\nruntime=1200ms\nwrite_hist_log=logs/k\nlog_hist_msec=100\n";

/// `client` run in `dir` on the job file `name` holding `text`, against `s`: it must
/// succeed; its JSON.
fn client_run_json(client: &Path, dir: &Path, s: &Server, name: &str, text: &str) -> Value {
    std::fs::write(dir.join(name), text).unwrap();
    let r = run_tool(
        client,
        dir,
        &[&s.client(), "--output-format=json", name],
        &[],
    );
    assert_eq!(r.code, 0, "{}: {}{}", client.display(), r.stdout, r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// A histogram log's file name and its lines' fields.
type HistLog = (String, Vec<Vec<u64>>);

/// A client run of [`HIST_JOBS`] in `dir`: each job's (read, write) I/Os from its
/// JSON, and each histogram log left in `dir/logs` with its lines' fields as numbers.
fn client_hist_logs(client: &Path, dir: &Path, s: &Server) -> (Vec<u64>, Vec<HistLog>) {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir(&logs).unwrap();
    let doc = client_run_json(client, dir, s, "hj.fio", HIST_JOBS);
    let mut jobs: Vec<(String, u64)> = doc["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .filter(|c| c["jobname"] != "All clients")
        .map(|c| {
            let ios = c["read"]["total_ios"].as_u64().unwrap()
                + c["write"]["total_ios"].as_u64().unwrap();
            (c["jobname"].as_str().unwrap().to_string(), ios)
        })
        .collect();
    jobs.sort();
    let mut out: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            let lines = text
                .lines()
                .map(|l| {
                    l.split(", ")
                        .map(|f| f.parse().unwrap_or_else(|_| panic!("{l}")))
                        .collect()
                })
                .collect();
            (p.file_name().unwrap().to_string_lossy().into_owned(), lines)
        })
        .collect();
    out.sort();
    (jobs.into_iter().map(|j| j.1).collect(), out)
}

/// Histogram logs (`write_hist_log`) travel to the client compressed, at full
/// resolution, and the client sums the bins by the job's log_hist_coarseness, as
/// between fio's client and server: fio 3.42's client writes, from an ioscope server,
/// the files it writes from a fio server (names, `time, ddir, bs` and 1856 or 464
/// bins a line, ddir and block size as the job's), and their counts add up to the
/// job's I/Os; ioscope's client writes the same files from a fio server and from an
/// ioscope server.
#[test]
fn histogram_logs_travel_to_the_client() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (ours, theirs) = (Server::ioscope(d.path()), Server::fio(d.path()));
    let (fio, ioscope) = (fio342_path(), bin());
    let names = ["h_clat_hist.1.log.127.0.0.1", "k_clat_hist.2.log.127.0.0.1"];
    for (client, server, exact) in [
        (&fio, &theirs, false),
        (&fio, &ours, true),
        (&ioscope, &theirs, false),
        (&ioscope, &ours, true),
    ] {
        let (ios, logs) = client_hist_logs(client, d.path(), server);
        let got: Vec<&str> = logs.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(got, names, "{} from {}", client.display(), server.client());
        for ((name, lines), (ios, (ddir, bs, bins))) in logs
            .iter()
            .zip(ios.iter().zip([(0, 4096, 464), (1, 8192, 1856)]))
        {
            // 1.2 s at 100 ms: 12 rows on an idle machine, past the 160 KiB where a
            // fio server's log was once cut short; a stress pass has starved a 600 ms
            // job down to 2 rows (the bound is what "times go up" needs).
            assert!(lines.len() >= 2, "{name}: {} lines in 1.2 s", lines.len());
            let mut sum = 0;
            for l in lines {
                assert_eq!(
                    (l.len(), l[1], l[2]),
                    (3 + bins, ddir, bs),
                    "{name}: {:?}",
                    &l[..3]
                );
                sum += l[3..].iter().sum::<u64>();
            }
            // A starved fio job logs the windows it missed as rows of one time (seen
            // under a stress pass: 598, 598, 598, 598, 601): fio's times only never go
            // down.
            let times: Vec<u64> = lines.iter().map(|l| l[0]).collect();
            assert!(
                times
                    .windows(2)
                    .all(|w| w[0] < w[1] || (!exact && w[0] == w[1])),
                "{name} ({} from {}'s server): times go up: {times:?}",
                client.display(),
                if exact { "ioscope" } else { "fio" }
            );
            // A fio server's rows do not add up to the job's I/Os (measured: their
            // sums grow through the run, with fio's own client too): only ours do.
            if exact {
                assert_eq!(sum, *ios, "{name}: the bins count every I/O of the job");
            }
        }
    }
}

const COLUMN_JOBS: &str = "[w]\nioengine=null\nrw=randread\nsize=1g\nbs=4k\ntime_based=1\nruntime=600ms\nwrite_lat_log=logs/w\nlog_avg_msec=100\nlog_window_value=both\nlog_offset=1\nlog_issue_time=1\n\n[i]\nioengine=null\nrw=randwrite\nsize=1g\nbs=8k\nnumber_ios=200\nwrite_lat_log=logs/i\nlog_offset=1\nlog_issue_time=1\n\n[z]\nioengine=null\nrw=randread\nsize=1g\nbs=4k\nnumber_ios=3000\nwrite_lat_log=logs/z\nlog_store_compressed=1\nlog_compression=16k\n";

/// A client run of [`COLUMN_JOBS`] in `dir`: each log it left in `dir/logs`, by name,
/// as text (a `.fz` one as fio 3.42's --inflate-log prints it, which ioscope's
/// --inflate-log must print alike).
fn client_column_logs(client: &Path, dir: &Path, s: &Server) -> Vec<(String, String)> {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir(&logs).unwrap();
    client_run_json(client, dir, s, "cj.fio", COLUMN_JOBS);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // fio 3.42's --inflate-log fails on an empty log ("short read on reading
            // log"): the empty slat logs are read by ioscope's alone.
            let text = match name.contains(".fz.") {
                true if name.contains("slat") => {
                    let i = run_tool(
                        &bin(),
                        dir,
                        &[&format!("--inflate-log={}", p.display())],
                        &[],
                    );
                    assert_eq!(i.code, 0, "{name}: {}", i.stderr);
                    i.stdout
                }
                true => {
                    let arg = format!("--inflate-log={}", p.display());
                    let (f, i) = (
                        run_tool(&fio342_path(), dir, &[&arg], &[]),
                        run_tool(&bin(), dir, &[&arg], &[]),
                    );
                    assert_eq!((f.code, i.code), (0, 0), "{name}: {}{}", f.stderr, i.stderr);
                    assert_eq!(i.stdout, f.stdout, "{name}: both inflate it alike");
                    f.stdout
                }
                false => std::fs::read_to_string(&p).unwrap(),
            };
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// Logs with more columns, and stored compressed, travel to the client as between
/// fio's client and server, in all four pairings:
/// - log_window_value=both with log_offset and log_issue_time (100 ms windows): `time,
///   mean, max, ddir, bs, offset, prio, issue time`, the mean at most the maximum;
/// - log_issue_time per I/O: `time, value, ddir, bs, offset, prio, issue time`, an
///   issue time in the clat log and 0 in the lat log (fio's shape). ioscope's client
///   writes a line per I/O (200); fio 3.42's writes 142 of them from either server
///   (it counts the samples' bytes as 40 each, then walks them 56 at a time);
/// - log_store_compressed: the `.fz` file as stored, whose 3000 samples fio 3.42's
///   --inflate-log and ioscope's print alike.
#[test]
fn logs_with_more_columns_and_stored_ones_reach_the_client() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (ours, theirs) = (Server::ioscope(d.path()), Server::fio(d.path()));
    let (fio, ioscope) = (fio342_path(), bin());
    let text_logs = [
        "w_clat.1", "w_lat.1", "w_slat.1", "i_clat.2", "i_lat.2", "i_slat.2",
    ];
    let mut names: Vec<String> = text_logs
        .map(|n| format!("{n}.log.127.0.0.1"))
        .into_iter()
        .chain(["clat", "lat", "slat"].map(|k| format!("z_{k}.3.log.fz.127.0.0.1")))
        .collect();
    names.sort();
    for (client, server) in [
        (&fio, &theirs),
        (&fio, &ours),
        (&ioscope, &theirs),
        (&ioscope, &ours),
    ] {
        let who = format!("{} from {}", client.display(), server.client());
        let logs = client_column_logs(client, d.path(), server);
        let got: Vec<&String> = logs.iter().map(|l| &l.0).collect();
        assert_eq!(got, names.iter().collect::<Vec<_>>(), "{who}");
        let per_io = if *client == fio { 200 * 40 / 56 } else { 200 };
        for (name, text) in &logs {
            let lines: Vec<Vec<u64>> = text
                .lines()
                .map(|l| {
                    let f = l
                        .split(", ")
                        .map(|f| f.parse().unwrap_or_else(|_| panic!("{who} {name}: {l}")));
                    f.collect()
                })
                .collect();
            let is = |p: &str| name.starts_with(p);
            if is("w_slat") || is("i_slat") || is("z_slat") {
                assert!(lines.is_empty(), "{who} {name}");
            } else if is("w_") {
                assert!(lines.len() >= 3, "{who} {name}: {} lines", lines.len());
                // Windows of 100 ms, stamped when they close (later on a loaded machine).
                for l in &lines {
                    assert_eq!(l.len(), 8, "{who} {name}: {l:?}");
                    assert!(
                        l[1] <= l[2] && l[0] >= 100 && l[3] == 0,
                        "{who} {name}: {l:?}"
                    );
                }
                assert!(lines.windows(2).all(|w| w[0][0] <= w[1][0]), "{who} {name}");
            } else if is("i_") {
                assert_eq!(lines.len(), per_io, "{who} {name}");
                for l in &lines {
                    assert_eq!(l.len(), 7, "{who} {name}: {l:?}");
                    assert_eq!(
                        (l[2], l[3], l[4] % 8192),
                        (1, 8192, 0),
                        "{who} {name}: {l:?}"
                    );
                    assert_eq!(l[6] > 0, is("i_clat"), "{who} {name}: issue time {l:?}");
                }
            } else {
                assert_eq!(lines.len(), 3000, "{who} {name}");
                assert!(
                    lines.iter().all(|l| l.len() == 5 && l[3] == 4096),
                    "{who} {name}"
                );
            }
        }
    }
}

const SS_JOBS: &str = "[s]\nioengine=null\nrw=randread\nsize=1g\ntime_based=1\nruntime=3\nsteadystate=iops:1\nsteadystate_duration=2\n\n[t]\nnew_group\nioengine=null\nrw=randwrite\nsize=1g\ntime_based=1\nruntime=3\nsteadystate=lat:90%\nsteadystate_duration=2\n";

/// Each client_stats entry's name and steady-state object (Null: none).
fn client_steady_states(client: &Path, dir: &Path, s: &Server) -> Vec<(String, Value)> {
    let doc = client_run_json(client, dir, s, "ss.fio", SS_JOBS);
    let mut out: Vec<(String, Value)> = doc["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .map(|c| {
            (
                c["jobname"].as_str().unwrap().to_string(),
                c["steadystate"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Steady-state detection for a client: fio 3.42's client prints, from an ioscope
/// server, the steadystate object it prints from a fio server — the criterion, the
/// duration, whether it was attained (iops:1 is not, within 3 s; lat:90% is), the
/// window's IOPS, bandwidth and, for lat, latency, their means the window's — and
/// none for "All clients"; ioscope's client prints the same from either server.
#[test]
fn steady_state_reaches_the_client() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (ours, theirs) = (Server::ioscope(d.path()), Server::fio(d.path()));
    let (fio, ioscope) = (fio342_path(), bin());
    let shape = |v: &Value| -> Value {
        let mut v = v.clone();
        for k in ["criterion", "max_deviation", "slope"] {
            v[k] = Value::Null;
        }
        let data = v["data"]
            .as_object_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let mut keys: Vec<&String> = data.keys().collect();
        keys.sort();
        let lens: Vec<usize> = keys
            .iter()
            .map(|k| data[*k].as_array().map_or(0, Vec::len))
            .collect();
        v["data"] = serde_json::json!({"keys": keys, "lens": lens});
        v
    };
    // The jobs' entries; every "All clients" entry has none (fio's client prints one
    // for the two groups, ioscope's one per group).
    let jobs = |v: Vec<(String, Value)>, what: &str| -> Vec<(String, Value)> {
        let (all, jobs): (Vec<_>, Vec<_>) = v.into_iter().partition(|e| e.0 == "All clients");
        assert!(
            !all.is_empty() && all.iter().all(|e| e.1.is_null()),
            "{what}: {all:?}"
        );
        jobs
    };
    let want = jobs(client_steady_states(&fio, d.path(), &theirs), "fio");
    let names: Vec<&str> = want.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(names, ["s", "t"]);
    assert_eq!(want[0].1["ss"], "iops:1.000000");
    assert_eq!(
        (
            want[0].1["attained"].as_u64(),
            want[1].1["attained"].as_u64()
        ),
        (Some(0), Some(1))
    );
    for (client, server) in [(&fio, &ours), (&ioscope, &theirs), (&ioscope, &ours)] {
        let what = format!("{} from {}", client.display(), server.client());
        let got = jobs(client_steady_states(client, d.path(), server), &what);
        assert_eq!(got.len(), want.len(), "{what}");
        for ((name, g), (_, w)) in got.iter().zip(&want) {
            assert_eq!(shape(g), shape(w), "{what}: {name}");
            let mean = |k: &str| {
                let v: Vec<u64> = g["data"][k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect();
                v.iter().sum::<u64>() / v.len() as u64
            };
            assert_eq!(
                g["data"]["iops_mean"].as_u64(),
                Some(mean("iops")),
                "{what}: {name}"
            );
            assert_eq!(
                g["data"]["bw_mean"].as_u64(),
                Some(mean("bw")),
                "{what}: {name}"
            );
            assert!(mean("iops") > 0, "{what}: {name}: {g}");
        }
    }
}

/// Servers on unix-domain sockets (`--server=sock:PATH`, `--client=sock:PATH`): fio
/// 3.42's client drives an ioscope server and ioscope's client a fio server, each
/// giving per job what fio's client gets from fio's server, the socket's path as the
/// host. ioscope's socket is its owner's alone (fio's is every user's); a socket left
/// by a server that is gone is replaced, a file at the path is refused and kept. Logs
/// come back under the socket's file name (fio's client appends the whole path and
/// cannot create them).
#[test]
fn servers_and_clients_on_unix_sockets() {
    require!(Prereq::Fio342);
    use std::os::unix::fs::PermissionsExt;
    let d = tmpdir();
    let (ours_at, theirs_at) = (d.path().join("ours.sock"), d.path().join("theirs.sock"));
    let ours = Server::ioscope_sock(d.path(), &ours_at);
    let theirs = Server::fio_sock(d.path(), &theirs_at);
    let mode = std::fs::metadata(&ours_at).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "ioscope's socket mode {mode:o}");
    let want = per_host(&client_json(d.path(), &[&theirs]));
    assert_eq!(
        want.iter().map(|e| (e.0.as_str(), e.1)).collect::<Vec<_>>(),
        [
            ("All clients", (8 << 20, 8 << 20, 2048, 512)),
            ("randwrite", (0, 8 << 20, 0, 512)),
            ("seqread", (8 << 20, 0, 2048, 0))
        ]
    );
    for (client, server, path) in [
        (fio342_path(), &ours, &ours_at),
        (bin(), &theirs, &theirs_at),
        (bin(), &ours, &ours_at),
    ] {
        let doc = client_json_by(&client, d.path(), &[server]);
        assert_eq!(per_host(&doc), want, "{} → {}", client.display(), server.ip);
        let host = &doc["client_stats"][0]["hostname"];
        assert_eq!(host.as_str(), Some(&*path.display().to_string()), "{doc}");
    }
    let logs = client_logs(&bin(), d.path(), &ours);
    let names: Vec<&str> = logs.iter().map(|l| l.0.as_str()).collect();
    assert!(names.contains(&"a_clat.1.log.ours.sock"), "{names:?}");
    let clat = logs
        .iter()
        .find(|l| l.0 == "a_clat.1.log.ours.sock")
        .unwrap();
    assert_eq!(clat.1.len(), 16, "{:?}", clat.1);
    // Killed, the server leaves its socket behind; the next one replaces it.
    drop(ours);
    assert!(ours_at.exists());
    let again = Server::ioscope_sock(d.path(), &ours_at);
    let doc = client_json_by(&bin(), d.path(), &[&again]);
    assert_eq!(per_host(&doc), want);
    // A server already listening there, or a file, is refused; the file is kept.
    let plain = d.path().join("plain");
    std::fs::write(&plain, "keep").unwrap();
    for (at, why) in [
        (&ours_at, "a server already listens on it"),
        (&plain, "is not a socket"),
    ] {
        let r = run_tool(
            &bin(),
            d.path(),
            &[&format!("--server=sock:{}", at.display())],
            &[],
        );
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(why), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "keep");
}

/// fio-plot's `bench-fio --remote` (from PyPI) runs a small sweep — random reads at
/// depths 1 and 4 — through fio 3.42's client on two ioscope servers, on this host's
/// loopback and on two network hosts: a JSON document per point with both servers'
/// jobs and "All clients" adding them up, and the logs bench-fio asks each job for.
#[test]
fn bench_fio_remote_sweeps_on_ioscope_servers() {
    require!(Prereq::Fio342, Prereq::BenchFio, Prereq::NetNs);
    let d = tmpdir();
    // The file every server reads, laid out beforehand (they share this machine).
    std::fs::create_dir(d.path().join("data")).unwrap();
    std::fs::write(d.path().join("data/f1"), vec![7u8; 16 << 20]).unwrap();
    let local = [Server::ioscope(d.path()), Server::ioscope(d.path())];
    bench_fio_sweep(d.path(), &local, &["127.0.0.1", "127.0.0.1"], "loopback");
    // And across a network: two hosts (network namespaces on a bridge).
    let hosts = match NetHosts::new(2) {
        Ok(h) => h,
        Err(e) => skip!("network namespaces on a bridge: {e}"),
    };
    let remote = [0, 1].map(|i| Server::ioscope_on(&hosts, i, d.path()));
    let addrs = [hosts.addr(0), hosts.addr(1)];
    bench_fio_sweep(d.path(), &remote, &[&addrs[0], &addrs[1]], "two hosts");
}

/// fio-plot's bench-fio sweeps iodepth 1 and 4 with `--remote` on `servers` (at
/// `ips`), through fio 3.42's client: each depth's JSON has both hosts and their sum,
/// and each server's logs come back under its address.
fn bench_fio_sweep(dir: &Path, servers: &[Server], ips: &[&str], what: &str) {
    let hosts: String = servers
        .iter()
        .zip(ips)
        .map(|(s, ip)| format!("{ip},{}\n", s.port))
        .collect();
    std::fs::write(dir.join("host.list"), hosts).unwrap();
    let target = dir.join("data/f1");
    // bench-fio runs `fio` from PATH: fio 3.42's client.
    let bin_dir = dir.join("bin");
    if !bin_dir.exists() {
        std::fs::create_dir(&bin_dir).unwrap();
        std::os::unix::fs::symlink(fio342_path(), bin_dir.join("fio")).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = dir.join(format!("out-{}", what.replace(' ', "-")));
    let r = Command::new(bench_fio())
        .args(["--target", target.to_str().unwrap()])
        .args(["--type", "file", "--size", "16M", "--mode", "randread"])
        .args(["--iodepth", "1", "4", "--numjobs", "1", "--runtime", "1"])
        .args([
            "--engine",
            "psync",
            "--direct",
            "0",
            "--remote",
            "host.list",
        ])
        .args(["--output", out.to_str().unwrap()])
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .expect("bench-fio");
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success() && !text.contains("An error occurred"),
        "{what}: {text}{}",
        String::from_utf8_lossy(&r.stderr)
    );
    for depth in [1, 4] {
        let doc = out.join(format!("f1/4k/randread-{depth}-1.json"));
        let v = json_file(&doc);
        let stats = v["client_stats"].as_array().expect("client_stats");
        let (all, hosts): (Vec<&Value>, Vec<&Value>) =
            stats.iter().partition(|e| e["jobname"] == "All clients");
        assert_eq!(
            (hosts.len(), all.len()),
            (2, 1),
            "{what}, depth {depth}: {v}"
        );
        let ios = |e: &Value| e["read"]["total_ios"].as_u64().unwrap_or(0);
        assert!(hosts.iter().all(|h| ios(h) > 0), "{what}, depth {depth}");
        assert_eq!(ios(all[0]), hosts.iter().map(|h| ios(h)).sum::<u64>());
        let mut named: Vec<&str> = hosts
            .iter()
            .filter_map(|h| h["hostname"].as_str())
            .collect();
        named.sort();
        let mut want = ips.to_vec();
        want.sort();
        assert_eq!(named, want, "{what}, depth {depth}");
        for e in &hosts {
            assert_eq!(e["job options"]["iodepth"], depth.to_string());
        }
        // Every log, from every server; a run shorter than the 1 s averaging window
        // has latency lines only (as with fio's servers).
        for (kind, ip) in ["bw", "iops", "clat", "lat"]
            .iter()
            .flat_map(|k| ips.iter().map(move |ip| (k, ip)))
        {
            let log = out.join(format!(
                "f1/4k/randread-iodepth-{depth}-numjobs-1_{kind}.1.log.{ip}"
            ));
            let lines = std::fs::read_to_string(&log)
                .unwrap_or_else(|e| panic!("{what}: {}: {e}", log.display()));
            let averaged = matches!(*kind, "bw" | "iops");
            assert!(
                averaged || lines.lines().count() > 0,
                "{what}: {} is empty",
                log.display()
            );
        }
    }
}

/// Job options on ioscope's client command line, after a `--client`, are sent to that
/// server as a job file (fio's client drops them silently): fio's server and ioscope's
/// run the same jobs — global options before the first `--name` — and report them.
#[test]
fn command_line_jobs_reach_the_servers() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (f, s) = (Server::fio(d.path()), Server::ioscope(d.path()));
    let args = [
        "--ioengine=null",
        "--size=1m",
        "--name=x",
        "--rw=read",
        "--name=y",
        "--rw=write",
        "--bs=64k",
    ];
    let (fc, sc) = (f.client(), s.client());
    let mut argv = vec!["--output-format=json", &fc];
    argv.extend(args);
    argv.push(&sc);
    argv.extend(args);
    let r = run_in(d.path(), &argv);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let got: Vec<_> = per_host(&v).into_iter().map(|e| (e.0, e.1)).collect();
    let x = ("x".to_string(), (1 << 20, 0, 256, 0));
    let y = ("y".to_string(), (0, 1 << 20, 0, 16));
    let all = ("All clients".to_string(), (2 << 20, 2 << 20, 512, 32));
    assert_eq!(got, [all, x.clone(), x, y.clone(), y]);
    for g in v["global options"].as_array().unwrap() {
        assert_eq!((&g["ioengine"], &g["size"]), (&"null".into(), &"1m".into()));
    }
}

/// A server with `--server-token=FILE` runs jobs only for a client that gives that
/// token: fio's client (which cannot) and ioscope's without it or with another are
/// refused with the reason, on the client's output and with a failed exit; with it,
/// the jobs run. A token file others can read is refused at start, and a token is
/// not given to a fio server.
#[test]
fn a_token_server_runs_jobs_only_for_its_token() {
    require!(Prereq::Fio342);
    use std::os::unix::fs::PermissionsExt;
    let d = tmpdir();
    let write = |name: &str, text: &str, mode: u32| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p.display().to_string()
    };
    let (good, bad, open) = (
        write("tok", "s3cret-1\n", 0o600),
        write("tok2", "other\n", 0o600),
        write("tok3", "s3cret-1\n", 0o644),
    );
    let r = run_in(
        d.path(),
        &["--server=ip:127.0.0.1,0", &format!("--server-token={open}")],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("others can read it"), "{}", r.stderr);
    // Neither a server nor a client: the token would be ignored, so it is refused.
    let flag = format!("--server-token={good}");
    let r = run_in(
        d.path(),
        &[&flag, "--name=x", "--ioengine=null", "--size=1m"],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("--server-token: only a server"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("Run status group"), "{}", r.stdout);
    let mut c = Command::new(bin());
    c.args(["--server=ip:127.0.0.1,0", &format!("--server-token={good}")]);
    let s = Server::ioscope_by(c, d.path(), "127.0.0.1");
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let r = run_tool(&fio342_path(), d.path(), &[&s.client(), "j.fio"], &[]);
    assert_ne!(r.code, 0, "fio's client: {}", r.stdout);
    assert!(
        r.stdout
            .contains("runs jobs only for a client that gives its token"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("issued rwts"), "{}", r.stdout);
    for (token, why) in [
        (None, "this server needs its token"),
        (Some(&bad), "the client's token is not this server's"),
    ] {
        let flag = token.map(|t| format!("--server-token={t}"));
        let mut args: Vec<&str> = flag.iter().map(String::as_str).collect();
        let client = s.client();
        args.extend([client.as_str(), "j.fio"]);
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        assert!(r.stdout.contains(why), "{args:?}: {}", r.stdout);
        assert!(!r.stdout.contains("issued rwts"), "{}", r.stdout);
    }
    let flag = format!("--server-token={good}");
    let r = run_in(d.path(), &[&flag, &s.client(), "j.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("issued rwts: total=2048,0,0,0"),
        "{}",
        r.stdout
    );
    let f = Server::fio(d.path());
    let r = run_in(d.path(), &[&flag, &f.client(), "j.fio"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("the server is not ioscope's"),
        "{}",
        r.stdout
    );
}

/// ioscope's client starts every ioscope server's I/O together: one server takes a
/// second longer to prepare (its exec_prerun sleeps), and the jobs still start
/// within a tenth of the spread fio's client leaves between the same servers.
#[test]
fn ioscope_servers_start_together() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let (fast, slow) = (d.path().join("fast"), d.path().join("slow"));
    for (dir, script) in [(&fast, "true\n"), (&slow, "sleep 1\n")] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join("prep.sh"), script).unwrap();
    }
    let servers = [Server::ioscope(&fast), Server::ioscope(&slow)];
    let job = "[j]\nioengine=null\nsize=64m\nrw=read\nexec_prerun=sh prep.sh\n";
    std::fs::write(d.path().join("s.fio"), job).unwrap();
    let spread = |client: &Path| -> u64 {
        let (a, b) = (servers[0].client(), servers[1].client());
        let json = "--output-format=json";
        let r = run_tool(
            client,
            d.path(),
            &[&a, json, "s.fio", &b, json, "s.fio"],
            &[],
        );
        assert_eq!(r.code, 0, "{}: {}", client.display(), r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let starts: Vec<u64> = v["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["jobname"] == "j")
            .map(|e| e["job_start"].as_u64().unwrap())
            .collect();
        assert_eq!(starts.len(), 2, "{}", r.stdout);
        starts.iter().max().unwrap() - starts.iter().min().unwrap()
    };
    let apart = spread(&fio342_path());
    assert!(
        apart >= 900,
        "fio's client: the jobs started {apart} ms apart"
    );
    let together = spread(&bin());
    assert!(
        together * 10 <= apart,
        "ioscope's client: the jobs started {together} ms apart (fio's client: {apart} ms)"
    );
}

/// An ioscope client of another extension protocol is refused with both versions
/// named (on the client's side as a TEXT line, then a closed connection).
#[test]
fn another_ioscope_extension_version_is_refused_by_name() {
    let d = tmpdir();
    let s = Server::ioscope(d.path());
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    frame::send(&mut c, 10, 1, &[0u8; 136]).unwrap();
    let m = frame::receive(&mut c).unwrap().expect("a PROBE reply");
    assert_eq!(
        ioscope_wire::ext::probe_ext(&m.payload),
        Some(ioscope_wire::ext::EXT_VERSION)
    );
    let hello = ioscope_wire::ext::Hello {
        ext: 99,
        version: "9.9.9".into(),
        token: None,
        sync: true,
    };
    frame::send(&mut c, ioscope_wire::ext::op::HELLO, 0, &hello.encode()).unwrap();
    let m = frame::receive(&mut c).unwrap().expect("an answer");
    assert_eq!(m.op, 5, "TEXT");
    let text = String::from_utf8_lossy(&m.payload[24..]).into_owned();
    assert!(
        text.contains("the client (ioscope 9.9.9) speaks ioscope's extension protocol 99")
            && text.contains(&format!("speaks {}", ioscope_wire::ext::EXT_VERSION)),
        "{text}"
    );
    assert!(frame::receive(&mut c).unwrap().is_none(), "then it closes");
}

/// Ctrl-C on an ioscope client sends every server QUIT (fio 3.42's client exits
/// printing nothing): an ioscope server and a fio 3.42 server stop their jobs and send
/// what they did, and the client prints it in full — valid JSON marked interrupted,
/// each host's I/O counted — and exits 130, as an interrupted run does.
#[test]
fn ctrl_c_on_the_client_reports_what_the_servers_did() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let ours = Server::ioscope(d.path());
    let fio = Server::fio(d.path());
    let long = "[long]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=60\nrate_iops=500\n";
    std::fs::write(d.path().join("long.fio"), long).unwrap();
    let start = Instant::now();
    let c = Command::new(bin())
        .args([
            "--output-format=json",
            &ours.client(),
            "long.fio",
            &fio.client(),
            "long.fio",
        ])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for both jobs to have started (their I/O is checked below).
    std::thread::sleep(Duration::from_millis(3000));
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
    let out = c.wait_with_output().unwrap();
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    schema::validate("ioscope-meta", &v["ioscope"]);
    assert_eq!(v["ioscope"]["interrupted"], true, "{}", v["ioscope"]);
    assert_eq!(v["ioscope"]["signal"], "SIGINT");
    let stats = v["client_stats"].as_array().expect("client_stats");
    for port in [ours.port, fio.port] {
        let job = stats
            .iter()
            .find(|j| j["port"] == port && j["jobname"] == "long")
            .unwrap_or_else(|| panic!("no entry for port {port}: {v}"));
        let ms = job["read"]["runtime"].as_u64().unwrap();
        assert!(ms > 0 && ms < 30_000, "port {port}: ran {ms} ms after QUIT");
        assert!(job["read"]["total_ios"].as_u64().unwrap() > 0, "{job}");
    }
    assert!(took < Duration::from_secs(30), "the client took {took:?}");
}

/// A verification trigger from the client (`--trigger-file`, touched once the job is
/// writing): each server sends its job's verify state, kept by the client as
/// `127.0.0.1-w-0-verify.state`, then runs `--trigger-remote`; the client then runs
/// `--trigger`. A read job with verify_state_load gets that state back from the
/// client (SENDFILE) and reads exactly the writes before the first in flight — for
/// fio 3.42's and ioscope's client, each with fio 3.42's and ioscope's server.
#[test]
fn verification_triggers_between_clients_and_servers() {
    require!(Prereq::Fio342);
    let d = tmpdir();
    let data = d.path().join("data");
    let servers = [Server::fio(d.path()), Server::ioscope(d.path())];
    for (cname, client) in [("fio", fio342_path()), ("ioscope", bin())] {
        for (sname, s) in [("fio", &servers[0]), ("ioscope", &servers[1])] {
            let m = format!("{cname} client, {sname} server");
            let dir = d.path().join(format!("{cname}-{sname}"));
            std::fs::create_dir(&dir).unwrap();
            // Sparse: the job writes at once (no layout), and its first blocks show.
            let _ = std::fs::remove_file(&data);
            std::fs::File::create(&data)
                .unwrap()
                .set_len(64 << 20)
                .unwrap();
            let job = |rw: &str| {
                format!(
                    "[w]\nfilename={}\nrw={rw}\nbs=4k\nsize=64m\nverify=crc32c\nrate_iops=2000\n",
                    data.display()
                )
            };
            std::fs::write(dir.join("w.fio"), job("write")).unwrap();
            let trig = dir.join("trig");
            let mut c = Command::new(&client);
            c.current_dir(&dir).args([
                format!("--trigger-file={}", trig.display()),
                format!(
                    "--trigger-remote=touch {}",
                    dir.join("remote-fired").display()
                ),
                "--trigger=test -f 127.0.0.1-w-0-verify.state && touch local-fired".into(),
                s.client(),
                "--output-format=json".into(),
                "w.fio".into(),
            ]);
            let child = c
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            wait_for_writes(&data, &m);
            std::fs::write(&trig, "").unwrap();
            let out = child.wait_with_output().unwrap();
            let (so, se) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert!(out.status.success(), "{m}: {so}{se}");
            let v: Value = serde_json::from_str(&so).unwrap_or_else(|e| panic!("{m}: {e}: {so}"));
            let written = u(&v["client_stats"][0]["write"]["total_ios"]);
            assert!(written > 0 && written < 16384, "{m}: {written} writes");
            assert!(!trig.exists(), "{m}: the trigger file is removed");
            assert!(
                dir.join("remote-fired").exists(),
                "{m}: the remote command ran"
            );
            assert!(
                dir.join("local-fired").exists(),
                "{m}: the local command ran, after the state came"
            );
            let b = std::fs::read(dir.join("127.0.0.1-w-0-verify.state")).unwrap();
            let st = ioscope_verify::state::State::decode(&b).unwrap();
            assert!(
                st.numberio > 0 && st.numberio <= written,
                "{m}: {st:?}, {written} written"
            );
            let read = job("read").replace("rw=read", "rw=read\nverify_state_load=1");
            std::fs::write(dir.join("r.fio"), read).unwrap();
            let r = run_tool(
                &client,
                &dir,
                &[&s.client(), "--output-format=json", "r.fio"],
                &[],
            );
            assert_eq!(r.code, 0, "{m}: {}{}", r.stdout, r.stderr);
            // fio's client prints its server's notes ("Stop verify because …") first.
            let t = &r.stdout[r.stdout.find('{').unwrap_or(0)..];
            let v: Value = serde_json::from_str(t).unwrap_or_else(|e| panic!("{m}: {e}: {t}"));
            let j = &v["client_stats"][0];
            assert_eq!(j["error"], 0, "{m}");
            assert_eq!(u(&j["read"]["total_ios"]), st.stop_at(), "{m}: {st:?}");
        }
    }
}

/// Until the job has written its first blocks to the sparse `data` (60 s at most).
fn wait_for_writes(data: &Path, m: &str) {
    use std::os::unix::fs::MetadataExt;
    let start = Instant::now();
    while std::fs::metadata(data).map_or(0, |md| md.blocks()) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{m}: no write within 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A few hundred writes before the trigger.
    std::thread::sleep(Duration::from_millis(200));
}
