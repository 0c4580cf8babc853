//! A session's run: the client's job files written to a private directory and read
//! as the fio face reads its command line, run here, with the progress and the
//! results sent to the client as fio's server sends them.

use super::link::{send, text, In, Request, SESSION_STOP};
use super::logs;
use super::vstate;
use crate::command::Context;
use crate::fio::{self, Front};
use anyhow::{bail, Context as _, Result};
use ioscope_report::{calc, OutputFormat};
use ioscope_runner::{JobProgress, Observer, Plan, RemoteTrigger, RunOptions, Runner};
use ioscope_stats::RunResult;
use ioscope_wire::conn::Conn;
use ioscope_wire::ext;
use ioscope_wire::msg::{self, op};
use ioscope_wire::stats;
use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Run what the client sent and report it; an error in its jobs is the client's to
/// read (a TEXT line and STOP 1), not the server's.
/// `sync`: an ioscope client lines up every server's start (READY, then GO).
pub fn run(cx: &Context, w: &mut Conn, rx: &Receiver<In>, req: &Request, sync: bool) -> Result<()> {
    let dir = JobDir::new()?;
    let argv = dir.argv(req)?;
    let inv = match prepare(cx, &argv) {
        Ok(x) => x,
        Err(e) => return refuse(w, &e),
    };
    let mut set = match fio::jobs::load(&inv) {
        Ok(s) => s,
        Err(e) => return refuse(w, &e),
    };
    let logs = match logs::redirect(&mut set, &dir.0, req.zlib) {
        Ok(l) => l,
        Err(e) => return refuse(w, &e),
    };
    let (opts, trigger) = run_options(&inv.args, &dir);
    let runner = Runner::new(opts).with_stop(&SESSION_STOP);
    let plan = match runner.plan(&set) {
        Ok(p) => p,
        Err(e) => return refuse(w, &e.into()),
    };
    if let Err(e) = vstate::fetch(w, rx, &plan, &req.server) {
        return refuse(w, &e);
    }
    let normal = normal_output(&req.args);
    if normal {
        // One TEXT a line: the client prefixes each with the server's name. The
        // client prints the version itself.
        let headers = fio::report::headers(&plan, true);
        let lines = headers.lines().filter(|l| *l != crate::version::FIO_COMPAT);
        for line in lines {
            text(w, msg::INFO, &format!("{line}\n"))?;
        }
    }
    let clones = plan.clones().count() as u32;
    send(w, op::START, 0, &msg::start(clones, reports(&plan)))?;
    for _ in 0..clones {
        send(w, op::SERVER_START, 0, &[])?;
    }
    let mut net = Net::new(w, rx, sync);
    net.trigger = Some((trigger, vstate::state_files(&plan)));
    let ran = runner.run(&plan, &mut net);
    let result = match ran {
        Ok(r) => r,
        Err(e) => return refuse(w, &e.into()),
    };
    logs::send_logs(w, &logs)?;
    results(w, &result, Some(&set.global_explicit))?;
    if normal {
        text(w, msg::INFO, "\n")?;
    }
    let failed = result
        .jobs
        .iter()
        .any(|j| j.error != 0 && !j.error_tolerated);
    send(w, op::STOP, 0, &msg::stop(u32::from(failed)))?;
    send(w, op::QUIT, 0, &[])
}

/// The run's options: the client's, with its verify states kept in the session's
/// directory (unless it named one), and its trigger able to fire the run's.
fn run_options(args: &fio::args::FioArgs, dir: &JobDir) -> (RunOptions, RemoteTrigger) {
    let mut o = fio::jobs::run_options(args);
    o.aux_path.get_or_insert_with(|| dir.0.clone());
    let remote = RemoteTrigger::default();
    o.trigger.get_or_insert_with(Default::default).remote = Some(remote.clone());
    (o, remote)
}

/// The client's jobs could not run: say why, and end with a failed status.
fn refuse(w: &mut Conn, e: &anyhow::Error) -> Result<()> {
    text(w, msg::ERROR, &format!("ioscope: {e:#}\n"))?;
    send(w, op::START, 0, &msg::start(0, 0))?;
    send(w, op::STOP, 0, &msg::stop(1))?;
    send(w, op::QUIT, 0, &[])
}

/// The client's arguments and job files as the fio face reads a command line.
fn prepare(cx: &Context, argv: &[OsString]) -> Result<fio::args::Invocation> {
    match fio::front(cx, argv)? {
        Front::Run(inv) => Ok(*inv),
        Front::Done(_) | Front::Serve(_) | Front::Client(_) => {
            bail!("the client's arguments ask for no run")
        }
    }
}

/// The client prints the normal report (its header lines come from the server).
fn normal_output(args: &[String]) -> bool {
    let formats = args
        .iter()
        .rev()
        .find_map(|a| a.strip_prefix("--output-format="))
        .map_or(
            Ok(vec![OutputFormat::Normal]),
            ioscope_report::parse_formats,
        );
    formats.map_or(true, |f| f.contains(&OutputFormat::Normal))
}

/// Statistics reports the run will send: one per job, one per group that reports as
/// one (the client prints "All clients" once it has them all).
fn reports(plan: &Plan) -> u32 {
    let keys: HashSet<(bool, u32)> = plan
        .clones()
        .map(|c| match c.spec.opts.group_reporting {
            true => (true, c.groupid),
            false => (false, c.number),
        })
        .collect();
    keys.len() as u32
}

/// Each job's options and statistics, each group's, the disks'. The final report
/// (`globals`: the job files' global options) has the global options and the disks;
/// an interim one the jobs' options and the statistics.
fn results(w: &mut Conn, r: &RunResult, globals: Option<&[(String, String)]>) -> Result<()> {
    let last = globals.is_some();
    for (name, value) in globals.unwrap_or_default() {
        send(w, op::JOB_OPT, 0, &msg::job_opt(true, 0, name, value))?;
    }
    for (i, j) in r.jobs.iter().enumerate() {
        // Each report has its jobs' options, as fio's (its client lists them with
        // every report's entries).
        for (name, value) in &j.info.options {
            send(
                w,
                op::JOB_OPT,
                0,
                &msg::job_opt(false, i as u32, name, value),
            )?;
        }
        let g = r.groups.iter().find(|g| g.groupid == j.groupid);
        send(w, op::TS, 0, &stats::ts(j, i as u32 + 1, g))?;
    }
    for g in &r.groups {
        let first = r.jobs.iter().find(|j| j.groupid == g.groupid);
        let figs = first.map_or(4, |j| j.info.significant_figures);
        let unified = first.map_or(0, calc::unified);
        send(w, op::GS, 0, &stats::gs(g, figs, unified))?;
    }
    if last {
        let period = r
            .jobs
            .iter()
            .map(|j| j.runtime_ms)
            .max()
            .unwrap_or(0)
            .max(1);
        for d in &r.disks {
            send(w, op::DISK_UTIL, 0, &msg::disk_util(d, period))?;
        }
    }
    Ok(())
}

/// The run's messages, warnings, progress and interim reports, to the client.
struct Net<'a> {
    w: &'a mut Conn,
    rx: &'a Receiver<In>,
    /// Each phase starts on the client's GO.
    sync: bool,
    started: Instant,
    /// Bytes and I/Os per direction at the last ETA, and when.
    last: ([u64; 3], [u64; 3], Instant),
    /// The run's trigger, and where each job keeps its verify state.
    trigger: Option<(RemoteTrigger, Vec<PathBuf>)>,
}

impl<'a> Net<'a> {
    fn new(w: &'a mut Conn, rx: &'a Receiver<In>, sync: bool) -> Net<'a> {
        Net {
            w,
            rx,
            sync,
            started: Instant::now(),
            last: ([0; 3], [0; 3], Instant::now()),
            trigger: None,
        }
    }

    /// A failed send means the client is gone: stop the jobs.
    fn check(&mut self, r: Result<()>) {
        if r.is_err() {
            SESSION_STOP.store(true, Relaxed);
        }
    }

    fn eta(&mut self, jobs: &[JobProgress]) -> msg::Eta {
        let sum = |f: fn(&JobProgress) -> [u64; 3]| {
            jobs.iter().fold([0u64; 3], |mut a, j| {
                let v = f(j);
                (0..3).for_each(|d| a[d] += v[d]);
                a
            })
        };
        let (bytes, ios) = (sum(|j| j.bytes), sum(|j| j.ios));
        let secs = self.last.2.elapsed().as_secs_f64().max(1e-3);
        let rate = |now: u64, then: u64| (now.saturating_sub(then) as f64 / secs) as u64;
        let running = jobs.iter().filter(|j| j.running && !j.done).count() as u32;
        let mut e = msg::Eta {
            running,
            // A file per running job, as the local status line counts them.
            files_open: running,
            pending: jobs.iter().filter(|j| !j.running && !j.done).count() as u32,
            elapsed_s: self.started.elapsed().as_secs(),
            eta_s: eta_s(jobs),
            jobs: jobs.len() as u32,
            states: states(jobs),
            ..msg::Eta::default()
        };
        for d in 0..3 {
            e.kib_s[d] = rate(bytes[d], self.last.0[d]) / 1024;
            e.iops[d] = rate(ios[d], self.last.1[d]) as u32;
        }
        self.last = (bytes, ios, Instant::now());
        e
    }
}

impl Net<'_> {
    /// Tell the client this phase is ready; wait for its GO (or the session's end).
    fn line_up(&mut self, phase: usize) {
        let r = send(self.w, ext::op::READY, 0, &ext::phase(phase as u32));
        self.check(r);
        while !SESSION_STOP.load(Relaxed) {
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(In::Msg(m)) if m.op == ext::op::GO => return,
                Ok(In::Gone(_)) | Err(RecvTimeoutError::Disconnected) => {
                    SESSION_STOP.store(true, Relaxed);
                    return;
                }
                Ok(In::Msg(_)) | Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl Observer for Net<'_> {
    fn phase_ready(&mut self, phase: usize) {
        if self.sync {
            self.line_up(phase);
        }
    }
    fn message(&mut self, line: &str) {
        let r = text(
            self.w,
            msg::INFO,
            &format!("{}\n", line.trim_end_matches('\n')),
        );
        self.check(r);
    }
    fn warning(&mut self, line: &str) {
        let r = text(
            self.w,
            msg::ERROR,
            &format!("{}\n", line.trim_end_matches('\n')),
        );
        self.check(r);
    }
    fn progress(&mut self, jobs: &[JobProgress]) {
        while let Ok(m) = self.rx.try_recv() {
            if let In::Msg(m) = m {
                if m.op == op::SEND_ETA {
                    let e = self.eta(jobs);
                    let r = send(self.w, op::ETA, m.tag, &msg::eta(&e));
                    self.check(r);
                }
                if let (op::VTRIGGER, Some((t, _))) = (m.op, &self.trigger) {
                    let r = vstate::fire(t, &m.payload);
                    self.check(r);
                }
            }
        }
    }
    fn states_saved(&mut self) {
        if let Some((_, files)) = &self.trigger {
            let r = vstate::send_states(self.w, files);
            self.check(r);
        }
    }
    fn interim(&mut self, report: &RunResult) {
        let r = results(self.w, report, None).and_then(|()| text(self.w, msg::INFO, "\n"));
        self.check(r);
    }
}

/// Seconds left: the longest of the jobs' (by time, or by bytes at their rate so far).
fn eta_s(jobs: &[JobProgress]) -> Option<u64> {
    let left = |j: &JobProgress| -> Option<f64> {
        if j.done {
            return Some(0.0);
        }
        if let Some(t) = j.runtime_s {
            return Some((t - j.elapsed_s).max(0.0));
        }
        let done: u64 = j.bytes.iter().sum();
        let planned = j.planned?;
        (done > 0).then(|| j.elapsed_s * planned.saturating_sub(done) as f64 / done as f64)
    };
    jobs.iter()
        .map(left)
        .try_fold(0f64, |m, v| v.map(|v| m.max(v)))
        .map(|s| s.ceil() as u64)
}

/// fio's job states, run-length written: `R(2),_(1)`.
fn states(jobs: &[JobProgress]) -> String {
    let mut runs: Vec<(char, u32)> = Vec::new();
    for j in jobs {
        let c = match (j.done, j.running) {
            (true, _) => '_',
            (false, true) => j.rw,
            (false, false) => 'P',
        };
        match runs.last_mut() {
            Some((k, n)) if *k == c => *n += 1,
            _ => runs.push((c, 1)),
        }
    }
    let parts: Vec<String> = runs.iter().map(|(c, n)| format!("{c}({n})")).collect();
    parts.join(",")
}

/// A private directory (0700, an unpredictable name) for the client's job files,
/// removed with the session.
struct JobDir(PathBuf);

impl JobDir {
    fn new() -> Result<JobDir> {
        let d = ioscope_fs::create_temp_dir(&std::env::temp_dir(), "ioscope-server")
            .context("--server: a directory for the client's job files")?;
        Ok(JobDir(d))
    }

    /// The client's arguments, then its job files (written here), then those named
    /// on this host (--remote-config).
    fn argv(&self, req: &Request) -> Result<Vec<OsString>> {
        let mut argv: Vec<OsString> = req.args.iter().map(OsString::from).collect();
        for (i, t) in req.texts.iter().enumerate() {
            let p = self.0.join(format!("client-job-{}.fio", i + 1));
            let mut f = ioscope_fs::create_new(&p)?;
            f.write_all(t.as_bytes())?;
            argv.push(p.into());
        }
        argv.extend(req.files.iter().map(OsString::from));
        Ok(argv)
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
