//! `ioscope peak`: minimal-overhead peak IOPS, the t/io_uring of ioscope.
//!
//! It builds an ordinary job (so every engine option means what it means in a job
//! file) and runs it through the same runner, printing IOPS, bandwidth and I/Os per
//! submit/reap call once a second, and latency percentiles at the end (on by default;
//! the TSC clock is calibrated automatically). `--nop` issues IORING_OP_NOP: the
//! kernel's submission path alone.

use crate::command::{self, Context, Flag};
use crate::live::{self, Feed, Live, LiveArgs};
use crate::term::signals;
use anyhow::Result;
use ioscope_options::flags::{flag, FlagDef, FlagValue};
use ioscope_runner::{JobProgress, Observer, RunOptions, Runner};
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;
use FlagValue::{None as NoVal, Optional as OptVal, Required as ReqVal};

/// `ioscope peak`'s arguments.
pub struct Args {
    files: Vec<String>,
    engine: String,
    depth: u32,
    batch: u32,
    complete: Option<u32>,
    bs: String,
    threads: u32,
    seq: bool,
    write: bool,
    polled: bool,
    fixedbufs: bool,
    registerfiles: bool,
    sqpoll: Option<Option<u32>>,
    buffered: bool,
    nop: bool,
    /// With `nop`: the NOPs name the one file given (IORING_NOP_FILE).
    nop_file: bool,
    /// NVMe passthrough: io_uring_cmd on a namespace's generic device.
    passthrough: bool,
    runtime: String,
    lat: bool,
    json: bool,
    live: LiveArgs,
}

impl live::HasLive for Args {
    fn live_args(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl Default for Args {
    fn default() -> Args {
        Args {
            files: Vec::new(),
            engine: "io_uring".into(),
            depth: 128,
            batch: 32,
            complete: None,
            bs: "4k".into(),
            threads: 1,
            seq: false,
            write: false,
            polled: false,
            fixedbufs: false,
            registerfiles: false,
            sqpoll: None,
            buffered: false,
            nop: false,
            nop_file: false,
            passthrough: false,
            runtime: "10".into(),
            lat: true,
            json: false,
            live: LiveArgs::default(),
        }
    }
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.files.push(word);
        Ok(())
    }

    fn check(&mut self) -> Result<(), String> {
        if self.passthrough {
            if self.nop || !["io_uring", "io_uring_cmd"].contains(&self.engine.as_str()) {
                return Err(
                    "peak: --passthrough is io_uring's (io_uring_cmd), without --nop".into(),
                );
            }
            self.engine = "io_uring_cmd".into();
        }
        if self.nop {
            if self.engine != "io_uring" {
                return Err("peak: --nop needs --engine=io_uring".into());
            }
            match self.files.len() {
                0 => self.files.push("nop".into()),
                1 if self.write => {
                    return Err("peak: --nop with a file reads and writes nothing: \
                                --write is not for it"
                        .into())
                }
                1 => self.nop_file = true,
                _ => {
                    return Err("peak: --nop names at most one file (its NOPs name it, \
                                as t/io_uring's do)"
                        .into())
                }
            }
        }
        if self.files.is_empty() {
            return Err(
                "peak: name a file or device (or use --nop); see ioscope peak --help".into(),
            );
        }
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: FlagDef {
            choices: &["io_uring", "libaio", "pvsync2"],
            ..flag(
                "engine",
                ReqVal,
                "NAME",
                "I/O engine: io_uring (default), libaio or pvsync2",
            )
        },
        verbs: &[],
        set: |a, v| {
            a.engine = v.unwrap_or("").to_string();
            Ok(())
        },
    },
    Flag {
        def: flag(
            "depth",
            ReqVal,
            "N",
            "I/Os in flight per thread (default 128)",
        ),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            a.depth = v
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--depth={v}: a number of I/Os, at least 1"))?;
            Ok(())
        },
    },
    Flag {
        def: flag("batch", ReqVal, "N", "Submit batch (default 32)"),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            a.batch = v
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--batch={v}: a number of I/Os, at least 1"))?;
            Ok(())
        },
    },
    Flag {
        def: flag("complete", ReqVal, "N", "Reap batch (default = --batch)"),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let n = v
                .parse::<u32>()
                .map_err(|_| format!("--complete={v}: not a number"))?;
            a.complete = Some(n.max(1));
            Ok(())
        },
    },
    Flag {
        def: flag("bs", ReqVal, "SIZE", "Block size (default 4k)"),
        verbs: &[],
        set: |a, v| {
            a.bs = v.unwrap_or("").to_string();
            Ok(())
        },
    },
    Flag {
        def: flag(
            "threads",
            ReqVal,
            "N",
            "Threads, each on every file (default 1)",
        ),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let n = v
                .parse::<u32>()
                .map_err(|_| format!("--threads={v}: not a number"))?;
            a.threads = n.max(1);
            Ok(())
        },
    },
    Flag {
        def: flag("seq", NoVal, "", "Sequential instead of random I/O"),
        verbs: &[],
        set: |a, _| {
            a.seq = true;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "write",
            NoVal,
            "",
            "Writes instead of reads (refused on devices with data, as always)",
        ),
        verbs: &[],
        set: |a, _| {
            a.write = true;
            Ok(())
        },
    },
    Flag {
        def: flag("polled", NoVal, "", "Polled I/O (IOPOLL / RWF_HIPRI)"),
        verbs: &[],
        set: |a, _| {
            a.polled = true;
            Ok(())
        },
    },
    Flag {
        def: flag("fixedbufs", NoVal, "", "io_uring: register the I/O buffers"),
        verbs: &[],
        set: |a, _| {
            a.fixedbufs = true;
            Ok(())
        },
    },
    Flag {
        def: flag("registerfiles", NoVal, "", "io_uring: register the files"),
        verbs: &[],
        set: |a, _| {
            a.registerfiles = true;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "sqpoll",
            OptVal,
            "CPU",
            "io_uring: kernel submission thread (pinned to CPU if given)",
        ),
        verbs: &[],
        set: |a, v| {
            a.sqpoll = Some(match v {
                None => None,
                Some(v) => Some(
                    v.parse()
                        .map_err(|_| format!("--sqpoll={v}: not a CPU number"))?,
                ),
            });
            Ok(())
        },
    },
    Flag {
        def: flag("buffered", NoVal, "", "Buffered I/O (default O_DIRECT)"),
        verbs: &[],
        set: |a, _| {
            a.buffered = true;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "nop",
            NoVal,
            "",
            "IORING_OP_NOP: no file I/O, the kernel submission path alone; given a file, \
             each NOP names it (and the registered buffer with --fixedbufs), as \
             t/io_uring -N1's do (Linux 6.13 and later)",
        ),
        verbs: &[],
        set: |a, _| {
            a.nop = true;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "passthrough",
            NoVal,
            "",
            "NVMe passthrough: io_uring_cmd to /dev/ngXnY (t/io_uring -u1)",
        ),
        verbs: &[],
        set: |a, _| {
            a.passthrough = true;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "runtime",
            ReqVal,
            "TIME",
            "Run time (default 10s, seconds unless a unit is given)",
        ),
        verbs: &[],
        set: |a, v| {
            a.runtime = v.unwrap_or("").to_string();
            Ok(())
        },
    },
    Flag {
        def: flag(
            "no-lat",
            NoVal,
            "",
            "No latency tracking (no timestamps, no percentiles)",
        ),
        verbs: &[],
        set: |a, _| {
            a.lat = false;
            Ok(())
        },
    },
    Flag {
        def: flag(
            "json",
            NoVal,
            "",
            "Print the result as one JSON document on stdout",
        ),
        verbs: &[],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: live::LIVE,
        verbs: &[],
        set: live::set_live::<Args>,
    },
    Flag {
        def: live::LIVE_INTERVAL,
        verbs: &[],
        set: live::set_interval::<Args>,
    },
    Flag {
        def: live::METRICS,
        verbs: &[],
        set: live::set_metrics::<Args>,
    },
    Flag {
        def: live::METRICS_LINGER,
        verbs: &[],
        set: live::set_linger::<Args>,
    },
];

/// The job, written as fio options so the option table validates it.
fn job_args(a: &Args) -> Vec<String> {
    let rw = match (a.seq, a.write) {
        (false, false) => "randread",
        (false, true) => "randwrite",
        (true, false) => "read",
        (true, true) => "write",
    };
    let mut v = vec![
        "--name=peak".to_string(),
        format!("--filename={}", a.files.join(":")),
        format!("--ioengine={}", a.engine),
        format!("--rw={rw}"),
        format!("--bs={}", a.bs),
        format!("--iodepth={}", a.depth),
        format!("--iodepth_batch_submit={}", a.batch),
        format!(
            "--iodepth_batch_complete_min={}",
            a.complete.unwrap_or(a.batch).min(a.depth)
        ),
        format!("--iodepth_batch_complete_max={}", a.depth),
        format!("--numjobs={}", a.threads),
        format!("--direct={}", u8::from(!a.buffered && !a.nop)),
        "--time_based".into(),
        format!("--runtime={}", a.runtime),
        "--norandommap".into(),
        "--group_reporting".into(),
        "--file_service_type=random".into(),
    ];
    // NOPs without a file need a size to count against; with one, its size is it.
    if a.nop && !a.nop_file {
        v.push("--size=1g".into());
    }
    if a.polled {
        v.push("--hipri".into());
    }
    if a.engine.starts_with("io_uring") {
        if a.fixedbufs {
            v.push("--fixedbufs".into());
        }
        if a.registerfiles {
            v.push("--registerfiles".into());
        }
        if let Some(cpu) = a.sqpoll {
            v.push("--sqthread_poll=1".into());
            if let Some(c) = cpu {
                v.push(format!("--sqthread_poll_cpu={c}"));
            }
        }
    }
    if a.lat {
        // Like t/io_uring -t1: one latency per I/O (submission to completion).
        v.push("--disable_lat=1".into());
        v.push("--disable_slat=1".into());
    } else {
        v.push("--gtod_reduce=1".into());
    }
    v
}

/// Once-a-second lines like t/io_uring's. Windows end at whole seconds of the run
/// (the first progress call tells how long the run has been going), so a run of N
/// seconds yields N entries: the last window, which ends with the run, is closed by
/// [`PerSecond::close`] from the final counts.
struct PerSecond {
    json: bool,
    /// When the run started, from the first progress call.
    start: Option<Instant>,
    /// End of the last window: time, I/Os, bytes, submit calls, reap calls.
    last: (Instant, u64, u64, u64, u64),
    samples: Vec<f64>,
}

impl PerSecond {
    fn new(json: bool) -> PerSecond {
        PerSecond {
            json,
            start: None,
            last: (Instant::now(), 0, 0, 0, 0),
            samples: Vec::new(),
        }
    }

    /// One window: print its line and keep its IOPS.
    fn window(&mut self, now: Instant, ios: u64, bytes: u64, subs: u64, reaps: u64) {
        let (t, i0, b0, s0, r0) = self.last;
        let dt = now.duration_since(t).as_secs_f64().max(1e-3);
        let iops = ios.saturating_sub(i0) as f64 / dt;
        let bw = bytes.saturating_sub(b0) as f64 / dt;
        let per = |calls: u64, last: u64| {
            ios.saturating_sub(i0) as f64 / (calls.saturating_sub(last)).max(1) as f64
        };
        self.samples.push(iops);
        if !self.json {
            println!(
                "IOPS={:.0}, BW={:.0}MiB/s, IOS/call={:.0}/{:.0}",
                iops,
                bw / (1 << 20) as f64,
                per(subs, s0),
                per(reaps, r0)
            );
        }
        self.last = (now, ios, bytes, subs, reaps);
    }

    /// The run is over after `runtime_ms`: close the last, partial window with the
    /// final counts, unless the run's seconds are all accounted for.
    fn close(&mut self, runtime_ms: u64, ios: u64, bytes: u64, subs: u64, reaps: u64) {
        let seconds = ((runtime_ms + 500) / 1000).max(1) as usize;
        let now = Instant::now();
        if self.samples.len() < seconds && now > self.last.0 && ios > self.last.1 {
            self.window(now, ios, bytes, subs, reaps);
        }
    }
}

impl Observer for PerSecond {
    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn progress(&mut self, jobs: &[JobProgress]) {
        let ios: u64 = jobs.iter().map(|j| j.ios.iter().sum::<u64>()).sum();
        let bytes: u64 = jobs.iter().map(|j| j.bytes.iter().sum::<u64>()).sum();
        let subs: u64 = jobs.iter().map(|j| j.submit_calls).sum();
        let reaps: u64 = jobs.iter().map(|j| j.reap_calls).sum();
        let now = Instant::now();
        let start = *self.start.get_or_insert_with(|| {
            let elapsed = jobs.first().map_or(0.0, |j| j.elapsed_s);
            let start = now - std::time::Duration::from_secs_f64(elapsed.max(0.0));
            self.last.0 = start;
            start
        });
        // A counter reset (ramp end) starts a new window.
        if ios < self.last.1 {
            self.last = (now, ios, bytes, subs, reaps);
            return;
        }
        let boundary = start + std::time::Duration::from_secs(self.samples.len() as u64 + 1);
        if now >= boundary {
            self.window(now, ios, bytes, subs, reaps);
        }
    }
}

pub fn main(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<Args>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let job = job_args(&a);
    let set = crate::fio::jobs::from_argv(&job)?;
    let bs = set.jobs[0].opts.bs.read();
    let ro = RunOptions {
        nop: a.nop,
        nop_file: a.nop_file,
        combine_submit_wait: true,
        engine_loop: true,
        live_interval: a.live.runner_interval(),
        ..Default::default()
    };
    let runner = Runner::new(ro);
    let plan = runner.plan(&set)?;
    let mut live = Live::open(&a.live, true)?;
    signals::install();
    let mut obs = PerSecond::new(a.json);
    let mut feed = Feed {
        inner: &mut obs,
        live: &mut live,
    };
    let r = runner.run(&plan, &mut feed)?;
    let j = &r.jobs[0];
    let d = if a.write { &j.dirs[1] } else { &j.dirs[0] };
    let failed = j.error != 0 && !j.error_tolerated;
    if !failed {
        obs.close(
            d.runtime_ms,
            j.dirs.iter().map(|d| d.total_ios).sum(),
            j.dirs.iter().map(|d| d.io_bytes).sum(),
            j.submit.iter().sum(),
            j.complete.iter().sum(),
        );
    }
    let s = Summary::of(&r, a.write);
    if failed {
        // Figures of a failed run would be the failures' rate: none are printed.
        let why = j.error_text.clone().unwrap_or_default();
        eprintln!(
            "ioscope peak: the I/O failed (err={}: {why}) after {} I/Os: no figures",
            j.error, d.total_ios
        );
    }
    if a.json {
        let doc = json_doc(&a, &job, bs, &r, &s, &obs);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if !failed {
        print_text(&r, &s, &obs);
    }
    if let Some(sig) = signals::received() {
        eprintln!("ioscope peak: interrupted by {sig}");
    }
    let code = signals::exit_code(j.error != 0 && !j.error_tolerated);
    live.finish(Some(&r), r.meta.interrupted);
    Ok(code)
}

/// What peak reports of its one job.
struct Summary<'r> {
    job: &'r ioscope_stats::JobResult,
    dir: &'r ioscope_stats::DirStats,
    per_submit: f64,
    per_reap: f64,
    clat_pct: Vec<(f64, u64)>,
}

impl<'r> Summary<'r> {
    fn of(r: &'r ioscope_stats::RunResult, write: bool) -> Summary<'r> {
        let j = &r.jobs[0];
        let d = if write { &j.dirs[1] } else { &j.dirs[0] };
        let calls = |b: &[u64; 7]| b.iter().sum::<u64>().max(1);
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        let clat_pct = match &d.clat.hist {
            Some(h) => list
                .iter()
                .copied()
                .zip(h.percentiles(&list).into_iter().map(|v| v.unwrap_or(0)))
                .collect(),
            None => Vec::new(),
        };
        Summary {
            job: j,
            dir: d,
            per_submit: d.total_ios as f64 / calls(&j.submit) as f64,
            per_reap: d.total_ios as f64 / calls(&j.complete) as f64,
            clat_pct,
        }
    }
}

fn json_doc(
    a: &Args,
    job: &[String],
    bs: u64,
    r: &ioscope_stats::RunResult,
    s: &Summary,
    obs: &PerSecond,
) -> serde_json::Value {
    let (j, d) = (s.job, s.dir);
    if j.error != 0 && !j.error_tolerated {
        return serde_json::json!({
            "ioscope": crate::fio::report::version(), "job": job, "engine": a.engine,
            "error": j.error, "error_text": j.error_text, "ios": d.total_ios,
            "interrupted": signals::received().is_some(),
        });
    }
    let pmap: serde_json::Map<String, serde_json::Value> = s
        .clat_pct
        .iter()
        .map(|(p, x)| (format!("{p:.6}"), serde_json::json!(x)))
        .collect();
    serde_json::json!({
        "ioscope": crate::fio::report::version(), "job": job, "engine": a.engine, "nop": a.nop, "threads": a.threads,
        "depth": a.depth, "batch_submit": a.batch, "bs": bs, "runtime_ms": d.runtime_ms,
        "ios": d.total_ios, "iops": d.iops(), "bw_bytes": d.bw_bytes(),
        "ios_per_submit": s.per_submit, "ios_per_reap": s.per_reap,
        "iops_per_second": obs.samples,
        "usr_cpu_s": j.cpu.usr_s, "sys_cpu_s": j.cpu.sys_s,
        "clock": r.meta.clock, "tsc_hz": r.meta.tsc_hz,
        "interrupted": signals::received().is_some(),
        "clat_ns": {"mean": d.clat.stat.mean(), "N": d.clat.stat.n, "percentile": pmap},
    })
}

fn print_text(r: &ioscope_stats::RunResult, s: &Summary, obs: &PerSecond) {
    let (j, d) = (s.job, s.dir);
    println!(
        "peak: {:.0} IOPS, {:.1} MiB/s, IOS/call={:.1}/{:.1}, {} I/Os in {} ms, cpu usr={:.2}s sys={:.2}s",
        d.iops(),
        d.bw_bytes() as f64 / (1 << 20) as f64,
        s.per_submit,
        s.per_reap,
        d.total_ios,
        d.runtime_ms,
        j.cpu.usr_s,
        j.cpu.sys_s
    );
    if !s.clat_pct.is_empty() {
        println!(
            "Latency percentiles (submission to completion, {} clock):",
            r.meta.clock
        );
        print!(
            "{}",
            ioscope_report::num::percentile_block("clat", &s.clat_pct, 2)
        );
    }
    let n = obs.samples.len().max(1) as f64;
    let (min, max) = obs
        .samples
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    println!(
        "Minimum IOPS={:.0}, Average IOPS={:.0}, Maximum IOPS={:.0} (per second, {} s)",
        if obs.samples.is_empty() { 0.0 } else { min },
        obs.samples.iter().sum::<f64>() / n,
        max,
        obs.samples.len()
    );
}
