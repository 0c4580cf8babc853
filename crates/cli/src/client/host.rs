//! One server: connect, the handshake, the job files and flags, RUN; then its messages
//! until QUIT — text printed under its name, options, statistics, disks, the run's
//! status — gathered as that host's run.

use super::lineup::{Lineup, Member};
use super::target::Target;
use anyhow::{bail, Context as _, Result};
use ioscope_stats::hosts::HostRun;
use ioscope_stats::RunResult;
use ioscope_wire::addr::Address;
use ioscope_wire::conn::Conn;
use ioscope_wire::frame;
use ioscope_wire::msg::{self, op};
use ioscope_wire::{ext, iolog, read};
use std::io::Write;

/// Where the report and the servers' text go: stdout or `--output`.
pub type Sink = std::sync::Mutex<Box<dyn Write + Send>>;

/// What one server gave.
pub struct Outcome {
    pub run: HostRun,
    /// The server's STOP status (0: every job ran without error).
    pub status: u32,
}

impl Outcome {
    pub fn failed(why: &str) -> Outcome {
        Outcome {
            run: HostRun {
                error: Some(why.to_string()),
                ..HostRun::default()
            },
            status: 1,
        }
    }
}

/// Run `texts` on the server; its failure is its host's error, not the others'.
/// What every host's session shares: the token to give ioscope servers, the
/// synchronised start.
pub struct Shared {
    pub token: Option<String>,
    pub lineup: Lineup,
    pub quit: super::quit::Quit,
    /// --trigger-file / --trigger-timeout, when given.
    pub trigger: Option<super::trigger::Trigger>,
    /// The status line over every server's progress.
    pub eta: super::eta::Board,
}

/// `normal`: where the server's text goes as it comes (with the normal report only).
/// `i`: the host's place among the servers.
pub fn run(i: usize, t: &Target, texts: &[String], normal: Option<&Sink>, sh: &Shared) -> Outcome {
    let member = Member::new(&sh.lineup);
    let outcome = match session((i, t), texts, normal, sh, &member) {
        Ok(o) => o,
        Err(e) => {
            let mut o = Outcome::failed(&format!("{e:#}"));
            o.run.host = t.name.clone();
            o
        }
    };
    sh.eta.set(i, None);
    sh.quit.finished(i);
    outcome
}

fn session(
    (i, t): (usize, &Target),
    texts: &[String],
    normal: Option<&Sink>,
    sh: &Shared,
    member: &Member,
) -> Result<Outcome> {
    let mut s = Conn::connect(&t.addr)
        .with_context(|| format!("client {}: cannot connect to {}", t.name, t.addr))?;
    sh.quit.add(i, &s);
    let (host, suffix) = log_suffix(&t.addr);
    let mut g = Gathered::new(&t.name, &suffix, super::logs::Names::of(texts), normal);
    g.eta = Some((i, &sh.eta));
    frame::send(&mut s, op::PROBE, 1, &msg::probe_request(&host))?;
    let reply = until(&mut s, &mut g, op::PROBE)?;
    let ioscope = ext::probe_ext(&reply.payload).is_some();
    g.take(reply)?;
    match (ioscope, &sh.token) {
        (true, token) => greet(&mut s, &mut g, token.clone())?,
        (false, Some(_)) => bail!(
            "client {}: --server-token: the server is not ioscope's (fio's servers take no token)",
            t.name
        ),
        // A fio server: nobody waits for it.
        (false, None) => member.leave(),
    }
    if !t.args.is_empty() {
        frame::send(&mut s, op::JOBLINE, 0, &msg::job_line_request(&t.args))?;
    }
    for text in texts {
        frame::send(&mut s, op::JOB, 0, &msg::job_request(text))?;
    }
    for path in &t.remote_files {
        frame::send(&mut s, op::LOAD_FILE, 0, &msg::load_file_request(path))?;
    }
    frame::send(&mut s, op::RUN, 0, &[])?;
    loop {
        let m = match frame::receive(&mut s) {
            Ok(Some(m)) => m,
            Ok(None) if g.stopped => break,
            Ok(None) => bail!(
                "client {}: the server closed the connection before the run ended",
                t.name
            ),
            Err(e) => return Err(e).with_context(|| format!("client {}", t.name)),
        };
        if m.op == ext::op::READY {
            // Every ioscope server's phase starts together.
            member.arrive(ext::phase_of(&m.payload)?);
            frame::send(&mut s, ext::op::GO, 0, &m.payload)?;
            continue;
        }
        match m.op {
            op::SENDFILE => {
                // verify_state_load on the server: the state kept here for it, under
                // the request's tag (fio's server keeps its own pointer there).
                let reply = super::trigger::sendfile(&m.payload, &host);
                frame::send(&mut s, op::SENDFILE, m.tag, &reply)?;
                continue;
            }
            op::VTRIGGER => {
                super::trigger::keep_states(&m.payload, &host)
                    .with_context(|| format!("client {}", t.name))?;
                if let Some(tr) = &sh.trigger {
                    tr.answered
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                continue;
            }
            _ => {}
        }
        if !g.take(m)? {
            break;
        }
    }
    Ok(g.outcome())
}

/// The server's host as the PROBE names it, and the suffix of the log files it sends
/// (fio's client appends the server's address). For a unix socket, fio appends the
/// socket's path, which names no file it can create; this client appends its file
/// name.
fn log_suffix(a: &Address) -> (String, String) {
    match a {
        Address::Tcp(a) => {
            let host = a.rsplit_once(':').map_or(a.as_str(), |h| h.0);
            let ip = host.trim_start_matches('[').trim_end_matches(']');
            (host.to_string(), ip.to_string())
        }
        Address::Unix(p) => {
            let name = p
                .file_name()
                .map_or_else(|| "sock".to_string(), |n| n.to_string_lossy().into_owned());
            (p.display().to_string(), name)
        }
    }
}

/// Messages until one of `op`, which is returned; the others taken as they come.
fn until(s: &mut Conn, g: &mut Gathered, op: u16) -> Result<frame::Message> {
    loop {
        match frame::receive(s) {
            Ok(Some(m)) if m.op == op => return Ok(m),
            Ok(Some(m)) => {
                g.take(m)?;
            }
            Ok(None) => bail!(
                "client {}: the server closed the connection{}",
                g.name,
                g.said
                    .as_deref()
                    .map_or(String::new(), |w| format!(": {w}"))
            ),
            Err(e) => return Err(e).with_context(|| format!("client {}", g.name)),
        }
    }
}

/// An ioscope server: HELLO (the token, a synchronised start), then its WELCOME — or
/// its reason for refusing, as this host's error.
fn greet(s: &mut Conn, g: &mut Gathered, token: Option<String>) -> Result<()> {
    let hello = ext::Hello {
        ext: ext::EXT_VERSION,
        version: env!("CARGO_PKG_VERSION").into(),
        token,
        sync: true,
    };
    frame::send(s, ext::op::HELLO, 0, &hello.encode())?;
    until(s, g, ext::op::WELCOME).map(|_| ())
}

/// A server's messages as they arrive.
struct Gathered<'a> {
    name: String,
    normal: Option<&'a Sink>,
    /// The server's own host name (its PROBE reply): the prefix of its text.
    host: String,
    run: RunResult,
    options: Vec<(bool, u32, String, String)>,
    status: u32,
    stopped: bool,
    /// The server's address as connected (the suffix of its log files).
    ip: String,
    /// The log names the jobs sent may give.
    logs: super::logs::Names,
    /// The server's last error line (why it closed, when it does).
    said: Option<String>,
    /// Where its progress goes (its place among the servers, the status line).
    eta: Option<(usize, &'a super::eta::Board)>,
    /// Its interim reports, in order.
    interim: Vec<RunResult>,
}

impl<'a> Gathered<'a> {
    fn new(
        name: &str,
        ip: &str,
        logs: super::logs::Names,
        normal: Option<&'a Sink>,
    ) -> Gathered<'a> {
        Gathered {
            name: name.to_string(),
            normal,
            host: name.to_string(),
            run: RunResult::default(),
            options: Vec::new(),
            status: 0,
            stopped: false,
            ip: ip.to_string(),
            logs,
            said: None,
            eta: None,
            interim: Vec::new(),
        }
    }

    /// Take one message; `false` once the server is done (QUIT).
    fn take(&mut self, m: frame::Message) -> Result<bool> {
        let p = &m.payload;
        match m.op {
            op::PROBE => {
                let (host, version) = read::probe_reply(p)?;
                self.say(&format!(
                    "hostname={host}, be=0, 64-bit, os=Linux, arch=x86-64, fio={version}\n"
                ));
                self.host = host;
            }
            op::TEXT => {
                let (level, line) = read::text(p);
                if level >= msg::ERROR {
                    self.said = Some(line.trim().to_string());
                }
                self.text(p);
            }
            op::JOB_OPT => {
                self.close_interim();
                self.options.push(read::job_opt(p));
            }
            op::TS => {
                self.close_interim();
                self.run.jobs.push(read::ts(p)?);
            }
            op::GS => self.run.groups.push(read::gs(p)?),
            op::DISK_UTIL => self.run.disks.push(read::disk_util(p)),
            op::IOLOG => self.iolog(p)?,
            op::STOP => {
                self.status = read::stop(p);
                self.stopped = true;
            }
            op::QUIT => return Ok(false),
            op::ETA => {
                if let Some((i, board)) = self.eta {
                    board.set(i, Some(read::eta(p)?));
                }
            }
            op::START | op::SERVER_START | op::ADD_JOB => {}
            other => bail!(
                "client {}: the server sent {}, which ioscope --client does not take yet",
                self.name,
                op::name(other)
            ),
        }
        Ok(true)
    }

    /// The server's text under its name: with the normal report, where it goes;
    /// errors on stderr otherwise (machine output stays clean). A blank line is
    /// fio's separator before a server's statistics, which the report writes itself.
    fn text(&self, p: &[u8]) {
        let (level, text) = read::text(p);
        let lines: String = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("<{}> {l}\n", self.host))
            .collect();
        if self.normal.is_some() {
            self.say(&lines);
        } else if level >= msg::ERROR {
            self.clear_line();
            eprint!("{lines}");
        }
    }

    /// A job's log, written here as fio's client writes it: the name the job gave it
    /// plus `.<server address>`, and only under a name this client's jobs gave (a
    /// server does not choose which file of the client's is written).
    fn iolog(&mut self, p: &[u8]) -> Result<()> {
        let log = iolog::decode(p).with_context(|| format!("client {}", self.name))?;
        if !self.logs.allows(&log.name) {
            bail!(
                "client {}: the server sent a log named {:?}, which no job sent to it names",
                self.name,
                log.name
            );
        }
        let path = format!("{}.{}", log.name, self.ip);
        let bytes = log.file_bytes();
        ioscope_fs::open_output(std::path::Path::new(&path), false)
            .and_then(|mut f| f.write_all(&bytes))
            .with_context(|| format!("client {}: log {path}", self.name))
    }

    /// Write to the normal report's output as it comes (nothing without it).
    fn say(&self, text: &str) {
        let Some(sink) = self.normal else { return };
        self.clear_line();
        if let Ok(mut out) = sink.lock() {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// The status line cleared before other text is written.
    fn clear_line(&self) {
        if let Some((_, board)) = self.eta {
            board.clear();
        }
    }

    /// A report begins (a job's options or statistics after a group's): the one
    /// before was an interim report (fio's `--status-interval`), kept for the JSON and
    /// terse reports and printed now with the normal one.
    fn close_interim(&mut self) {
        if self.run.groups.is_empty() {
            return;
        }
        let mut r = RunResult {
            jobs: std::mem::take(&mut self.run.jobs),
            groups: std::mem::take(&mut self.run.groups),
            disks: std::mem::take(&mut self.run.disks),
            ..RunResult::default()
        };
        self.complete(&mut r);
        if self.normal.is_some() {
            self.say(&ioscope_report::client_host_normal(&r));
        }
        self.interim.push(r);
    }

    /// A report as received made whole: each job's options, the server's name, the
    /// start.
    fn complete(&mut self, r: &mut RunResult) {
        for (global, job, name, value) in std::mem::take(&mut self.options) {
            match (global, r.jobs.get_mut(job as usize)) {
                (true, _) => r.global_options.push((name, value)),
                (false, Some(j)) => j.info.options.push((name, value)),
                (false, None) => {}
            }
        }
        r.meta.hostname = self.host.clone();
        r.meta.report_version = Some("fio-3.42".into());
        r.timestamp_ms = r.jobs.iter().map(|j| j.start_unix_ms).min().unwrap_or(0);
    }

    fn outcome(mut self) -> Outcome {
        let mut run = std::mem::take(&mut self.run);
        self.complete(&mut run);
        Outcome {
            run: HostRun {
                host: self.name.clone(),
                result: Some(run),
                interim: self.interim,
                ..HostRun::default()
            },
            status: self.status,
        }
    }
}
