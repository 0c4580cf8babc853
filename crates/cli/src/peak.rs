//! `ioscope peak`: minimal-overhead peak IOPS, the t/io_uring of ioscope.
//!
//! It builds an ordinary job (so every engine option means what it means in a job
//! file) and runs it through the same runner, printing IOPS, bandwidth and I/Os per
//! submit/reap call once a second, and latency percentiles at the end (on by default;
//! the TSC clock is calibrated automatically). `--nop` issues IORING_OP_NOP: the
//! kernel's submission path alone.

use anyhow::{anyhow, bail, Result};
use ioscope_options::cli;
use ioscope_runner::{JobProgress, Observer, RunOptions};
use std::process::ExitCode;
use std::time::Instant;

const HELP: &str = "\
usage: ioscope peak [options] FILE|DEVICE...
  --engine=io_uring|libaio|pvsync2   I/O engine (default io_uring)
  --depth=N          I/Os in flight per thread (default 128)
  --batch=N          submit batch (default 32); --complete=N reap batch (default = batch)
  --bs=SIZE          block size (default 4k)
  --threads=N        threads, each on every file (default 1)
  --seq              sequential instead of random reads
  --write            writes instead of reads (refused on devices with data, as always)
  --polled           polled I/O (IOPOLL / RWF_HIPRI)
  --fixedbufs --registerfiles --sqpoll[=CPU]   io_uring features
  --buffered         buffered I/O (default O_DIRECT)
  --nop              IORING_OP_NOP: no file I/O, the kernel submission path alone
  --runtime=SECS     run time (default 10)
  --no-lat           no latency tracking (timestamps off)
  --json             JSON result on stdout";

struct Args {
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
    runtime: String,
    lat: bool,
    json: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
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
        runtime: "10".into(),
        lat: true,
        json: false,
    };
    let num = |k: &str, v: Option<&str>| -> Result<u32> {
        let v = v.ok_or_else(|| anyhow!("{k} needs a value ({k}=N)"))?;
        v.parse().map_err(|_| anyhow!("{k}={v}: not a number"))
    };
    for arg in args {
        let (k, v) = match arg.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (arg.as_str(), None),
        };
        match k {
            "--engine" => a.engine = v.ok_or_else(|| anyhow!("--engine=NAME"))?.to_string(),
            "--depth" => a.depth = num(k, v)?.max(1),
            "--batch" => a.batch = num(k, v)?.max(1),
            "--complete" => a.complete = Some(num(k, v)?.max(1)),
            "--bs" => a.bs = v.ok_or_else(|| anyhow!("--bs=SIZE"))?.to_string(),
            "--threads" => a.threads = num(k, v)?.max(1),
            "--runtime" => a.runtime = v.ok_or_else(|| anyhow!("--runtime=SECS"))?.to_string(),
            "--seq" => a.seq = true,
            "--write" => a.write = true,
            "--polled" => a.polled = true,
            "--fixedbufs" => a.fixedbufs = true,
            "--registerfiles" => a.registerfiles = true,
            "--sqpoll" => a.sqpoll = Some(v.map(|_| num(k, v)).transpose()?),
            "--buffered" => a.buffered = true,
            "--nop" => a.nop = true,
            "--no-lat" => a.lat = false,
            "--json" => a.json = true,
            "-h" | "--help" => {
                println!("{HELP}");
                std::process::exit(0);
            }
            s if s.starts_with('-') => {
                bail!("peak: unknown option '{s}' (see ioscope peak --help)")
            }
            f => a.files.push(f.to_string()),
        }
    }
    if a.nop {
        if a.engine != "io_uring" {
            bail!("peak: --nop needs --engine=io_uring");
        }
        if a.files.is_empty() {
            a.files.push("nop".into());
        }
    }
    if a.files.is_empty() {
        bail!("peak: name a file or device (or use --nop); see ioscope peak --help");
    }
    Ok(a)
}

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
    if a.nop {
        v.push("--size=1g".into());
    }
    if a.polled {
        v.push("--hipri".into());
    }
    if a.engine == "io_uring" {
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

/// Once-a-second lines like t/io_uring's.
struct PerSecond {
    json: bool,
    last: Option<(Instant, u64, u64, u64, u64)>,
    samples: Vec<f64>,
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
        let Some((t, i0, b0, s0, r0)) = self.last else {
            self.last = Some((now, ios, bytes, subs, reaps));
            return;
        };
        let dt = now.duration_since(t).as_secs_f64();
        if dt < 1.0 {
            return;
        }
        // A counter reset (ramp end) starts a new window.
        if ios < i0 {
            self.last = Some((now, ios, bytes, subs, reaps));
            return;
        }
        let iops = (ios - i0) as f64 / dt;
        let bw = (bytes - b0) as f64 / dt;
        let per =
            |calls: u64, last: u64| (ios - i0) as f64 / (calls.saturating_sub(last)).max(1) as f64;
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
        self.last = Some((now, ios, bytes, subs, reaps));
    }
}

pub fn main(args: &[String]) -> Result<ExitCode> {
    let a = parse(args)?;
    let c = cli::parse_args(&job_args(&a))?;
    let set = crate::fio::load_jobs(&c)?;
    let bs = set.jobs[0].opts.bs.read();
    let ro = RunOptions {
        nop: a.nop,
        combine_submit_wait: true,
        ..Default::default()
    };
    ioscope_runner::validate(&set, &ro)?;
    crate::signals::install();
    let mut obs = PerSecond {
        json: a.json,
        last: None,
        samples: Vec::new(),
    };
    let r = ioscope_runner::run(&set, &ro, &mut obs)?;
    let j = &r.jobs[0];
    let d = if a.write { &j.dirs[1] } else { &j.dirs[0] };
    let iops = d.iops();
    let calls = |b: &[u64; 7]| b.iter().sum::<u64>().max(1);
    let (per_submit, per_reap) = (
        d.total_ios as f64 / calls(&j.submit) as f64,
        d.total_ios as f64 / calls(&j.complete) as f64,
    );
    let list = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ];
    let clat_pct: Vec<(f64, u64)> = match &d.clat.hist {
        Some(h) => list
            .iter()
            .copied()
            .zip(h.percentiles(&list).into_iter().map(|v| v.unwrap_or(0)))
            .collect(),
        None => Vec::new(),
    };
    if a.json {
        let pmap = |v: &[(f64, u64)]| -> serde_json::Value {
            v.iter()
                .map(|(p, x)| (format!("{p:.6}"), serde_json::json!(x)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        let doc = serde_json::json!({
            "ioscope": crate::fio::version(), "engine": a.engine, "nop": a.nop, "threads": a.threads,
            "depth": a.depth, "batch_submit": a.batch, "bs": bs, "runtime_ms": d.runtime_ms,
            "ios": d.total_ios, "iops": iops, "bw_bytes": d.bw_bytes(),
            "ios_per_submit": per_submit, "ios_per_reap": per_reap,
            "iops_per_second": obs.samples,
            "usr_cpu_s": j.cpu.usr_s, "sys_cpu_s": j.cpu.sys_s,
            "clock": r.meta.clock, "tsc_hz": r.meta.tsc_hz,
            "clat_ns": {"mean": d.clat.stat.mean(), "N": d.clat.stat.n, "percentile": pmap(&clat_pct)},
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "peak: {:.0} IOPS, {:.1} MiB/s, IOS/call={:.1}/{:.1}, {} I/Os in {} ms, cpu usr={:.2}s sys={:.2}s",
            iops,
            d.bw_bytes() as f64 / (1 << 20) as f64,
            per_submit,
            per_reap,
            d.total_ios,
            d.runtime_ms,
            j.cpu.usr_s,
            j.cpu.sys_s
        );
        if !clat_pct.is_empty() {
            println!(
                "Latency percentiles (submission to completion, {} clock):",
                r.meta.clock
            );
            print!(
                "{}",
                ioscope_report::num::percentile_block("clat", &clat_pct, 2)
            );
        }
    }
    Ok(if j.error != 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
