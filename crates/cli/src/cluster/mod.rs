//! `mpirun -np N ioscope [fio options] [job files]` (or `srun --mpi=pmix`): every rank
//! runs the same jobs, with its own `${IOSCOPE_RANK}`, `${IOSCOPE_RANKS}` and
//! `${IOSCOPE_HOST}`; the I/O of each phase starts on all ranks together; rank 0
//! prints one report — each host's jobs and their exact aggregate. The protocol is
//! in `ioscope_cluster`; this is the command line's side of it.

pub mod exec;
mod measure;

use measure::{measure, per_rank_logs};

use crate::command::Hosts;
use crate::fio::args::Invocation;
use crate::fio::jobs;
use crate::fio::report::{headers, with_act_table, Reporting};
use crate::live::{Feed, Live};
use crate::recording::capture::Capture;
use crate::term::signals;
use anyhow::{bail, Result};
use ioscope_cluster::launch::{self, Launch};
use ioscope_cluster::{gather, Rank, Transport};
use ioscope_options::JobSet;
use ioscope_report::OutputFormat;
use ioscope_runner::{Observer, Runner};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Was this process started as a rank of an MPI job it can take part in? A build
/// without MPI started as one of several ranks refuses (each would run alone).
pub fn launched() -> Result<Option<Launch>> {
    let Some(l) = launch::detect() else {
        return Ok(None);
    };
    if let Some(why) = launch::refuse_without_mpi(&l) {
        bail!(why);
    }
    Ok(launch::MPI_BUILT_IN.then_some(l))
}

/// Subcommands that run I/O but do not take part in an MPI job yet: under a launch
/// of several ranks each would run alone, so they refuse. (`sweep` and `compare` run
/// their job sets on every rank: [`workflow`].)
pub fn refuse_subcommand(name: &str) -> Option<String> {
    const ALONE: [&str; 3] = ["quick", "fairness", "peak"];
    let l = launch::detect().filter(|l| l.size > 1)?;
    ALONE.contains(&name).then(|| {
        format!(
            "`ioscope {name}` does not run across MPI ranks yet (started by {} as rank {} of {}); \
             run it on one host, or run job files under mpirun",
            l.by, l.rank, l.size
        )
    })
}

/// MPI, with as many ranks as the launcher started.
#[cfg(feature = "mpi")]
fn init_mpi(l: Launch) -> Result<ioscope_cluster::mpi::MpiTransport> {
    let t = ioscope_cluster::mpi::MpiTransport::init().map_err(|e| anyhow::anyhow!("MPI: {e}"))?;
    if t.size() != l.size {
        bail!(
            "{} started {} ranks but MPI sees {}: under Slurm, use srun --mpi=pmix",
            l.by,
            l.size,
            t.size()
        );
    }
    Ok(t)
}

/// Run as a rank of the MPI job. Returns the exit status; a run whose ranks did not
/// all report ends the process here, without waiting on the missing ranks.
#[cfg(feature = "mpi")]
pub fn main(c: &Invocation, l: Launch) -> Result<ExitCode> {
    let t = init_mpi(l)?;
    let (code, complete) = run(c, &t)?;
    if !complete {
        // A rank is gone: finalizing would wait for it.
        std::process::exit(i32::from(code));
    }
    drop(t);
    Ok(ExitCode::from(code))
}

#[cfg(not(feature = "mpi"))]
pub fn main(_c: &Invocation, l: Launch) -> Result<ExitCode> {
    bail!(
        "{}",
        launch::refuse_without_mpi(&Launch { size: 2, ..l }).unwrap_or_default()
    )
}

/// Every rank of the MPI job: workflows' job sets run on all of them.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
struct Ranks<'a>(&'a exec::Cluster<'a>);

impl Hosts for Ranks<'_> {
    fn exec(&self, opts: ioscope_runner::RunOptions) -> Box<dyn ioscope_runner::Execute + '_> {
        Box::new(self.0.exec(opts))
    }
}

/// A workflow subcommand (`sweep`, `compare`) started by an MPI launcher: rank 0 runs
/// it with every job set run on all ranks; the other ranks serve until it is over.
/// None when this is not a launch of several ranks.
pub fn workflow(
    name: &str,
    run: &dyn Fn(&dyn Hosts) -> Result<ExitCode>,
) -> Option<Result<ExitCode>> {
    let l = launch::detect().filter(|l| l.size > 1)?;
    if let Some(why) = launch::refuse_without_mpi(&l) {
        return Some(Err(anyhow::anyhow!(why)));
    }
    Some(workflow_mpi(name, l, run))
}

#[cfg(feature = "mpi")]
fn workflow_mpi(
    name: &str,
    l: Launch,
    run: &dyn Fn(&dyn Hosts) -> Result<ExitCode>,
) -> Result<ExitCode> {
    let t = init_mpi(l)?;
    signals::install_mpi();
    if t.rank() != 0 {
        let whole = exec::serve(&t);
        if !whole {
            std::process::exit(1);
        }
        drop(t);
        return Ok(signals::exit_code(false));
    }
    let cluster = exec::Cluster::new(&t);
    let result = run(&Ranks(&cluster));
    if cluster.broken() {
        // A rank is gone: finalizing MPI would wait for it.
        if let Err(e) = &result {
            eprintln!("ioscope {name}: {e:#}");
        }
        std::process::exit(1);
    }
    drop(cluster);
    drop(t);
    result
}

#[cfg(not(feature = "mpi"))]
fn workflow_mpi(
    _name: &str,
    l: Launch,
    _run: &dyn Fn(&dyn Hosts) -> Result<ExitCode>,
) -> Result<ExitCode> {
    bail!(
        "{}",
        launch::refuse_without_mpi(&Launch { size: 2, ..l }).unwrap_or_default()
    )
}

/// What a rank needs to run, all checked before the ranks agree to start.
struct Ready {
    set: JobSet,
    /// The prefixes of this rank's per-I/O logs.
    logs: Vec<PathBuf>,
    runner: Runner,
    rep: Option<Reporting>,
    /// Rank 0: the live stream and metrics of every rank, and the history.
    live: Option<Live>,
    history: Option<Capture>,
}

/// Read the jobs, check them and set up reporting (rank 0). Errors here are this
/// rank's verdict.
fn ready(c: &Invocation, t: &dyn Transport) -> Result<Ready> {
    if c.args.bandwidth_log.is_some() {
        bail!("--bandwidth-log is not supported under MPI yet: each rank's jobs are in the report");
    }
    let kw = jobs::keywords(&c.args)?.with_rank(t.rank(), t.size(), t.host());
    let mut set = jobs::load_with(c, &kw)?;
    let logs = per_rank_logs(&mut set, t);
    let runner = Runner::new(jobs::run_options(&c.args));
    runner.plan(&set)?;
    let (rep, live, history) = if t.rank() == 0 {
        let rep = Reporting::new(&c.args)?;
        let live = Live::open(&c.args.live, rep.output.is_none())?;
        let history = Capture::from_args(&c.args.history)?;
        (Some(rep), Some(live), history)
    } else {
        (None, None, None)
    };
    Ok(Ready {
        set,
        logs,
        runner,
        rep,
        live,
        history,
    })
}

/// The files the run wrote under these log prefixes: `PREFIX_*` beside each.
fn log_files(prefixes: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for p in prefixes {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let start = format!("{}_", p.file_name().unwrap_or_default().to_string_lossy());
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&start) && !name.ends_with(".gather-tmp") {
                files.push(dir.join(name));
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// --gather-logs, after the results: ranks on other hosts than rank 0 send their logs;
/// rank 0 writes them and says what it got. Not after SIGTERM (mpirun is aborting).
fn gather_logs(c: &Invocation, rank: &Rank, t: &dyn Transport, prefixes: &[PathBuf]) {
    if !c.args.gather_logs || signals::received() == Some("SIGTERM") {
        return;
    }
    if !rank.is_root() {
        let remote = rank.hosts().first().map(String::as_str) != Some(rank.host());
        let files = if remote {
            log_files(prefixes)
        } else {
            Vec::new()
        };
        gather::send(t, &files);
        return;
    }
    let from: Vec<u32> = rank
        .reported()
        .iter()
        .copied()
        .filter(|&r| r != 0)
        .collect();
    let g = gather::receive(t, &from, GATHER_QUIET);
    eprintln!(
        "ioscope: gathered {} log file{} ({:.1} MiB) from the ranks on other hosts",
        g.files,
        if g.files == 1 { "" } else { "s" },
        g.bytes as f64 / (1 << 20) as f64
    );
    for p in &g.problems {
        eprintln!("ioscope: --gather-logs: {p}");
    }
}

/// How long rank 0 waits for the next piece of a rank's logs before giving up on it.
const GATHER_QUIET: std::time::Duration = std::time::Duration::from_secs(60);

/// The rank's whole run: agree, run with a gate per phase, collect. Returns the exit
/// status and whether every rank reported.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn run(c: &Invocation, t: &dyn Transport) -> Result<(u8, bool)> {
    let mut rank = Rank::new(t);
    let mine = ready(c, t);
    let failed = rank.agree(mine.as_ref().map(|_| ()).map_err(|e| format!("{e:#}")));
    if !failed.is_empty() {
        if rank.is_root() {
            for f in &failed {
                let e = f.error.as_deref().unwrap_or("");
                eprintln!("ioscope: rank {} ({}): {e}", f.rank, f.host);
            }
            eprintln!("ioscope: no rank started any I/O");
        }
        rank.wait_all();
        return Ok((1, true));
    }
    let Ok(Ready {
        set,
        logs,
        runner,
        mut rep,
        mut live,
        history,
    }) = mine
    else {
        bail!("rank {}: its jobs were valid and are not", t.rank());
    };
    let plan = runner.plan(&set)?;
    if c.args.parse_only {
        rank.wait_all();
        return Ok((0, true));
    }
    if let Some(r) = rep.as_mut() {
        // Not fatal here: the other ranks are about to meet this one.
        if let Err(e) = r.headers(format!("{}{}", headers(&plan, false), ranks_line(&rank))) {
            eprintln!("ioscope: {e:#}");
        }
    }
    signals::install_mpi();
    let measured = match (rep.as_mut(), live.as_mut()) {
        (Some(r), Some(l)) => {
            let mut feed = Feed {
                inner: &mut r.status,
                live: l,
            };
            measure(&mut rank, &runner, &plan, Some(&mut feed))
        }
        (r, _) => measure(
            &mut rank,
            &runner,
            &plan,
            r.map(|r| &mut r.status as &mut dyn Observer),
        ),
    };
    let Some((cluster, complete)) = measured else {
        gather_logs(c, &rank, t, &logs);
        rank.wait_all();
        return Ok((0, true));
    };
    let (Some(mut rep), Some(mut live)) = (rep, live) else {
        bail!("rank 0 without its report");
    };
    // Settled as the run ends (a Ctrl-C in the metrics' linger fails nothing).
    let code = signals::exit_value(cluster.failed());
    live.run_ended();
    rep.status.finish();
    let text = ioscope_report::render_cluster(&cluster, &rep.formats, rep.terse_version);
    let text = with_act_table(&cluster.all, &rep.formats, text);
    if rep.output.is_none() && signals::received() == Some("SIGTERM") {
        rescue(&rep, &text);
    }
    rep.write(&text)?;
    if cluster.interrupted() {
        eprintln!(
            "{}",
            ioscope_report::interrupted_line(&cluster.all).trim_end()
        );
    }
    for h in cluster.hosts.iter().filter(|h| h.error.is_some()) {
        let e = h.error.as_deref().unwrap_or("");
        eprintln!("ioscope: rank {} ({}): {e}", h.rank, h.host);
    }
    if let Some(h) = history {
        h.record(
            &set,
            &cluster.all,
            rep.output.as_ref().map(|(p, _)| p.as_path()),
        );
    }
    live.finish(Some(&cluster.all), cluster.interrupted());
    gather_logs(c, &rank, t, &logs);
    if complete {
        rank.wait_all();
    }
    Ok((code, complete))
}

/// Ctrl-C (SIGINT) or SIGTERM on mpirun aborts the job: Open MPI sends every rank
/// SIGTERM, SIGKILL a second later, and stops relaying the ranks' output, so only what
/// fits in the pipe (about 16 KiB) of a report on stdout reaches the user. The complete
/// report is saved in the working directory first, and stderr says where.
fn rescue(rep: &Reporting, text: &str) {
    let ext = match rep.formats.first() {
        Some(OutputFormat::Json | OutputFormat::JsonPlus) => "json",
        Some(OutputFormat::Terse) => "terse",
        _ => "txt",
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = format!("ioscope-interrupted-{stamp}.{}.{ext}", std::process::id());
    let saved = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(rep.head.as_bytes())?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
    match saved {
        Ok(()) => eprintln!(
            "ioscope: mpirun is aborting the job and relays only the start of the report: \
             the complete report is in {path} (`kill -USR1` on mpirun stops a run gracefully)"
        ),
        Err(e) => eprintln!("ioscope: could not save the report in {path}: {e}"),
    }
}

/// "Ranks: 3 on 2 hosts (ioh1: 0,1; ioh2: 2)", after fio's header lines.
fn ranks_line(rank: &Rank) -> String {
    let mut hosts: Vec<(String, Vec<usize>)> = Vec::new();
    for (r, h) in rank.hosts().iter().enumerate() {
        match hosts.iter_mut().find(|(n, _)| n == h) {
            Some((_, rs)) => rs.push(r),
            None => hosts.push((h.clone(), vec![r])),
        }
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|(h, rs)| {
            let rs: Vec<String> = rs.iter().map(|r| r.to_string()).collect();
            format!("{h}: {}", rs.join(","))
        })
        .collect();
    format!(
        "Ranks: {} on {} host{} ({})\n",
        rank.size(),
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        list.join("; ")
    )
}
