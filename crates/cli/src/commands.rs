//! THE command table: every subcommand of `ioscope` (the fio face first), what it is
//! called and says of itself, its flags, and the function that runs it. Dispatch,
//! `--help`, `ioscope help`, docs/cli.md and the completion scripts all read it.
//!
//! Adding a subcommand: a module with its `Args` (flags beside it) and `main`, and an
//! entry here.

use crate::args::parses;
use crate::command::{
    defs, verbs_of, Args, Command, Completes, Context, Flag, Hosts, Local, Ranks, EXITS_COMPARE,
    EXITS_FIO, EXITS_PLAIN, EXITS_RUN, EXITS_SWEEP, FIO,
};
use crate::fio::{self, jobs::invoked_as_fio, Front};
use crate::{cluster, compare, fairness, history, log, peak, plot, quick, report, sweep};
use anyhow::{bail, Result};
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;

/// Every subcommand, the fio face first.
pub static COMMANDS: &[Command] = &[
    Command {
        name: FIO,
        about: "Run fio job files and fio command lines (no subcommand word)",
        usage: "ioscope [FLAGS] [JOB OPTIONS] [JOB FILES]",
        operands: "job files",
        details: "Options before the first --name apply to all jobs; --name starts a job; any \
                  fio job option can be given as --opt=value, -opt=value or --opt value \
                  (ioscope --cmdhelp lists them). Program flags can also be written with one \
                  dash, as fio accepts them.",
        examples: &[
            "ioscope --name=randread --filename=/tmp/t --size=1g --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --direct=1 --runtime=10 --time_based",
            "ioscope job.fio --output-format=json+ --output=result.json",
            "ioscope --parse-only job.fio",
            "ioscope --cmdhelp=iodepth",
        ],
        exits: EXITS_FIO,
        flags: defs::<crate::fio::args::FioArgs>,
        flag_verbs: verbs_of::<crate::fio::args::FioArgs>,
        parse: fio::parse_only,
        completes: Completes::Files,
        ranks: Ranks::Fio,
        run: fio_face,
    },
    Command {
        name: "quick",
        about: "How fast is this disk? Sequential and random reads and writes on a temporary file",
        usage: "ioscope quick [FLAGS] [DIR]",
        operands: "the directory for the temporary test file (default .)",
        details: "Sequential 1 MiB I/O at QD8 and random 4 KiB I/O at QD32 and QD1, reads and \
                  writes (the CrystalDiskMark set), direct I/O where the filesystem supports it. \
                  Latency columns are fio's lat (submission to completion). The file is removed \
                  afterwards, also on Ctrl-C.",
        examples: &["ioscope quick", "ioscope quick /tmp --size=4g --json"],
        exits: EXITS_RUN,
        flags: defs::<quick::Args>,
        flag_verbs: verbs_of::<quick::Args>,
        parse: parses::<quick::Args>,
        completes: Completes::Dirs,
        ranks: Ranks::Alone,
        run: quick::main,
    },
    Command {
        name: "peak",
        about: "Peak IOPS with minimal overhead, like fio's t/io_uring",
        usage: "ioscope peak [FLAGS] FILE|DEVICE...",
        operands: "files or block devices (with --nop: none, or one file that its NOPs name, as t/io_uring's do; it is never read or written)",
        details: "Prints IOPS, bandwidth and I/Os per submit/reap call once a second, then the \
                  totals, min/avg/max of the per-second IOPS and latency percentiles (submission \
                  to completion, self-calibrated TSC clock).",
        examples: &[
            "ioscope peak --nop",
            "ioscope peak --depth=128 --batch=32 --polled --fixedbufs --registerfiles /dev/nvme0n1",
        ],
        exits: EXITS_RUN,
        flags: defs::<peak::Args>,
        flag_verbs: verbs_of::<peak::Args>,
        parse: parses::<peak::Args>,
        completes: Completes::Files,
        ranks: Ranks::Alone,
        run: peak::main,
    },
    Command {
        name: "fairness",
        about: "I/O-priority fairness: each job's transferred bytes against its weighted share",
        usage: "ioscope fairness [FLAGS] RESULT.json | JOB.fio | --scenario NAME [FLAGS] TARGET",
        operands: "a JSON result of ioscope or fio (--output-format=json or json+); a fio job file, which is run first (any file not starting with '{'); or with --scenario the file or device to read",
        details: "Prints total priority (sum of weights), total data transferred, and per job: \
                  class, prio, ideal = total * weight / total weight, xferred and %diff = \
                  xferred * 100 / ideal - 100 (integer arithmetic); then Jain's index over \
                  xferred/weight, the max/min ratio of xferred/weight, every pair where a \
                  lower-priority job transferred more than a higher-priority one, and each \
                  group's min/max bandwidth as fio computes it. A job's priority is its \
                  prioclass/prio job options; a job without them is be 4, the kernel's \
                  default for best effort at nice 0 (prio alone means be; prioclass alone \
                  means level 4). rt and idle jobs get the weight of their level; the class \
                  order rt, be, idle counts for violations. With --scenario, a warning says \
                  when the device's scheduler ignores best-effort levels (mq-deadline, kyber, \
                  none; bfq honours them). A second table gives each job's latency (clat, or \
                  lat when only that is reported): mean, p50, p99, p99.9 in usec, - where the \
                  result has no such figure. With --bw-log (and always with --scenario, \
                  which logs 500 ms averages), per --window: Jain's index, the jobs least \
                  and most served against their weight with their share of the window's \
                  bytes, and every job that got less than 10% of its ideal share \
                  (starved).",
        examples: &[
            "ioscope fairness result.json",
            "ioscope fairness prio.fio --html=fairness.html",
            "ioscope fairness --scenario=prio-ladder --ioscheduler=bfq /dev/sdb",
        ],
        exits: EXITS_RUN,
        flags: defs::<fairness::Args>,
        flag_verbs: verbs_of::<fairness::Args>,
        parse: parses::<fairness::Args>,
        completes: Completes::Files,
        ranks: Ranks::Alone,
        run: fairness::main,
    },
    Command {
        name: "compare",
        about: "A/B comparison of repeated runs: is the change outside run-to-run noise?",
        usage: "ioscope compare [FLAGS] A B | ioscope compare --run [--repeat N] [-o DIR] A.fio B.fio | ioscope compare --vary OPT=A,B [--repeat N] JOB.fio",
        operands: "A and B: a JSON result of ioscope or fio, or a directory whose *.json files are repetitions; with --run two job files; with --vary one job file",
        details: "Per job (matched by name and group), direction and metric (bw, iops, \
                  lat_mean, clat_mean, clat_p50 ... clat_p99.99, as reported): the means of \
                  A and B, delta % = (B - A) / A * 100, its 95% bootstrap interval (2000 \
                  resamples, fixed seed), the two-sided Mann-Whitney p (exact up to 10 \
                  repetitions per side) and a verdict: better or worse when p < 0.05 and \
                  the interval excludes 0, no significant change otherwise, not enough \
                  repetitions below 3 per side or when the test cannot reach 0.05 (3 vs 3), \
                  with the repetitions per side needed at the observed noise. Before the \
                  table: the job options, ioscope versions, kernels, hosts and CPUs that \
                  differ between A and B. Where both sides have json+ latency bins (--run \
                  and --vary keep json+): a two-sample Kolmogorov-Smirnov test per job and \
                  direction (shape differs when p < 0.01 and D >= 0.01, flagged when the \
                  means agree), and with one run per side the clat rows' intervals come \
                  from the bins (marked *: within-run, the run-to-run noise is unknown).",
        examples: &[
            "ioscope compare before/ after/",
            "ioscope compare --run --repeat=5 -o ab A.fio B.fio",
            "ioscope compare --vary=ioengine=libaio,io_uring --repeat=5 job.fio --html=ab.html",
        ],
        exits: EXITS_COMPARE,
        flags: defs::<compare::Args>,
        flag_verbs: verbs_of::<compare::Args>,
        parse: parses::<compare::Args>,
        completes: Completes::Files,
        ranks: Ranks::Workflow,
        run: compare::main,
    },
    Command {
        name: "sweep",
        about: "Parameter sweeps from a TOML file: plan, run (resumable, with preconditioning and steady state), status, import",
        usage: "ioscope sweep plan FILE [--emit DIR] [--check] | ioscope sweep run FILE -o DIR [--retry-failed] | ioscope sweep status DIR | ioscope sweep import FIO-TESTS-DIR -o DIR",
        operands: "a verb (plan, run, status, import), then the sweep file (plan, run), the run directory (status) or a fio-tests tree (import)",
        details: "A sweep file has [target] (filename or directory, size, optional expect_model/expect_serial, \
                  warmup: the first point's workload run unmeasured before a run's first point, 2s \
                  unless given, \"0\" for none), \
                  [defaults] (any fio option), [profiles.NAME] (option sets; built in: seqread, seqwrite, \
                  randread, randwrite, randrw-70-30, randrw-97-3 and snia-R-W mixes), and [[sweep]] tables \
                  with name, profiles, axes (iodepth = \"pow2:1..64\", numjobs = [1, 2], \"1..8\", \"8..64:8\"), \
                  fixed options and an optional guard (axis, metric, drop, patience, max_p99). \
                  [precondition] (purge, passes, bs, iodepth) and [steady_state] (rounds, window, \
                  range_pct, slope_pct, metric, workload, mode = snia|fio, ss) run before the points. \
                  At most 20000 points per file. One run per directory at a time (a lock names the \
                  running one's pid); the directory must be this user's. \
                  run writes DIR/points/<point>.json (json+ with the point's options, target identity, \
                  kernel and version), DIR/journal.jsonl, and at the end the report (results.csv, \
                  results.json, graphs/*.svg, report.html); Ctrl-C stops after saving what finished, \
                  and the same command resumes.",
        examples: &[
            "ioscope sweep plan qd.toml",
            "ioscope sweep run qd.toml -o runs/qd",
            "ioscope sweep status runs/qd",
            "ioscope sweep import fio-tests/ -o runs/imported",
        ],
        exits: EXITS_SWEEP,
        flags: defs::<sweep::Args>,
        flag_verbs: verbs_of::<sweep::Args>,
        parse: parses::<sweep::Args>,
        completes: Completes::Verbs(&["plan", "run", "status", "import"]),
        ranks: Ranks::Workflow,
        run: sweep::main,
    },
    Command {
        name: "report",
        about: "Tables and graphs of a sweep directory or of any directory of fio/ioscope JSON results",
        usage: "ioscope report DIR [-o OUT] [--ssv]",
        operands: "a sweep run directory, or a directory (searched recursively) of JSON results of ioscope or fio",
        details: "Writes results.csv and results.json (one row per point and direction, a column per \
                  axis, units in the headers), graphs/*.svg (bandwidth, IOPS, mean clat and p99/p99.9 \
                  clat against each axis, log2 x for power-of-two axes, one line per profile, \
                  direction and value of the other axes; labels at the best bandwidth, best IOPS and \
                  lowest latency of each line and at its knee, the smallest x reaching 95% of the \
                  best; failed points marked), a QD x numjobs heatmap when both axes vary, the \
                  steady-state convergence chart, and report.html with all of it (self-contained). \
                  For a plain directory the axes are the job options whose values differ.",
        examples: &["ioscope report runs/qd", "ioscope report results/ -o report --ssv"],
        exits: EXITS_PLAIN,
        flags: defs::<report::Args>,
        flag_verbs: verbs_of::<report::Args>,
        parse: parses::<report::Args>,
        completes: Completes::Dirs,
        ranks: Ranks::Any,
        run: report::main,
    },
    Command {
        name: "plot",
        about: "Graphs of one run: bandwidth, IOPS and latency over time, latency percentiles over time, latency CDFs",
        usage: "ioscope plot LOG|RESULT.json ... -o OUT.svg [--html OUT.html] [--window TIME]",
        operands: "fio/ioscope log files (NAME_bw.N.log, _iops, _lat, _clat, _slat, _clat_hist) and JSON results",
        details: "One panel per kind of input, stacked in one SVG: bandwidth (MiB/s) and IOPS over \
                  time from bw/iops logs; lat, clat and slat (us) over time from latency logs, \
                  per-I/O entries averaged per window; p50/p90/p99/p99.9 completion latency per \
                  row of clat_hist logs; the completion-latency CDF of each job and direction \
                  from json+ bins; bandwidth and IOPS per interval from a file of interim JSON \
                  reports (--status-interval). A line per file and direction.",
        examples: &[
            "ioscope plot job_bw.1.log job_clat.1.log -o run.svg --html=run.html",
            "ioscope plot result.json -o cdf.svg",
        ],
        exits: EXITS_PLAIN,
        flags: defs::<plot::Args>,
        flag_verbs: verbs_of::<plot::Args>,
        parse: parses::<plot::Args>,
        completes: Completes::Files,
        ranks: Ranks::Any,
        run: plot::main,
    },
    Command {
        name: "log",
        about: "Read I/O logs: convert binary logs to fio's text logs, summarise per-I/O logs, percentiles over time from histogram logs",
        usage: "ioscope log convert FILE.bin... [-o DIR] | ioscope log summary LOG... [--json] | ioscope log percentiles HIST_LOG... [-i MS] [--percentiles LIST]",
        operands: "a verb (convert, summary, percentiles), then log files: ioscope binary logs (PREFIX_io.N.bin) or fio/ioscope text logs",
        details: "convert writes the text logs a run would have written (lat, slat, clat, bw, iops; names from the binary log). \
                  summary reads per-I/O latency logs (fio's or ioscope's text logs, or binary logs) and prints per file, \
                  direction and priority the count, min, mean, max and percentiles (from a histogram with at most 0.1% \
                  error). percentiles reads clat_hist logs (write_hist_log) of any number of jobs and hosts and prints \
                  fio's fiologparser_hist.py columns with its options and its arithmetic: end-time, samples, min, avg, \
                  median, the percentiles, max (ns, or divided by --divisor).",
        examples: &[
            "ioscope log convert prio_io.1.bin -o text-logs",
            "ioscope log summary prio_clat.1.log --json",
            "ioscope log percentiles job_clat_hist.1.log -i 1000 --percentiles=50,99,99.9",
        ],
        exits: EXITS_PLAIN,
        flags: defs::<log::Args>,
        flag_verbs: verbs_of::<log::Args>,
        parse: parses::<log::Args>,
        completes: Completes::Verbs(&["convert", "summary", "percentiles"]),
        ranks: Ranks::Any,
        run: log::main,
    },
    Command {
        name: "history",
        about: "The runs recorded with --history: list, show, export, compare, and check for regressions",
        usage: "ioscope history list|export [RUNS] | show ID | compare RUNS RUNS | check --baseline RUNS [--candidate RUNS]",
        operands: "a verb (list, show, export, compare, check), then runs: a label, id:N[-M] or time:FROM..TO (UTC dates, YYYY-MM-DD[THH:MM[:SS]])",
        details: "Runs given --history[=DB] (and --label=NAME) are recorded in an SQLite database: when, host, kernel, \
                  devices (model, serial, firmware), ioscope's version, the resolved jobs, the command line and the \
                  json+ results. compare judges two sets of runs with compare's statistics (bootstrap interval, \
                  Mann-Whitney p, verdict); check does the same for chosen metrics and exits 2 when one is \
                  significantly worse by at least --threshold percent: the gate for kernel and firmware CI.",
        examples: &[
            "ioscope --history --label=6.12-rc1 job.fio",
            "ioscope history list",
            "ioscope history compare 6.11 6.12-rc1",
            "ioscope history check --baseline 6.11 --candidate 6.12-rc1 --metric iops,clat_p99",
        ],
        exits: EXITS_COMPARE,
        flags: defs::<history::Args>,
        flag_verbs: verbs_of::<history::Args>,
        parse: parses::<history::Args>,
        completes: Completes::Verbs(history::VERBS),
        ranks: Ranks::Alone,
        run: history::main,
    },
    Command {
        name: "completions",
        about: "Print a shell completion script",
        usage: "ioscope completions bash|zsh|fish",
        operands: "the shell: bash, zsh or fish",
        details: "Subcommands and their verbs, flags, fio's job options after --, and the values \
                  of flags and options with a fixed set (--rw=<TAB>, --ioengine=<TAB>); also for \
                  the name fio (the fio face alone). Load one now with: source <(ioscope \
                  completions bash), source <(ioscope completions zsh), ioscope completions fish \
                  | source. The Debian package installs all three.",
        examples: &[
            "ioscope completions bash",
            "ioscope completions zsh",
            "ioscope completions fish",
        ],
        exits: EXITS_PLAIN,
        flags: defs::<NoArgs>,
        flag_verbs: verbs_of::<NoArgs>,
        parse: parses::<NoArgs>,
        completes: Completes::Words(crate::doc::complete::SHELLS),
        ranks: Ranks::Any,
        run: completions,
    },
    Command {
        name: "help",
        about: "Print the help of a subcommand",
        usage: "ioscope help [SUBCOMMAND]",
        operands: "a subcommand (fio for the fio face)",
        details: "",
        examples: &["ioscope help sweep", "ioscope help fio"],
        exits: EXITS_PLAIN,
        flags: defs::<NoArgs>,
        flag_verbs: verbs_of::<NoArgs>,
        parse: parses::<NoArgs>,
        completes: Completes::Commands,
        ranks: Ranks::Any,
        run: help,
    },
];

/// The subcommand called `name` (`fio` for the fio face).
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Run `ioscope ARGS`: the subcommand its first word names, else the fio face.
pub fn dispatch(args: &[OsString]) -> Result<ExitCode> {
    // Under the name `fio` there are no subcommands: `fio quick` runs a job file.
    let word = args
        .first()
        .and_then(|a| a.to_str())
        .filter(|_| !invoked_as_fio());
    let (cmd, rest) = match word.and_then(find).filter(|c| c.name != FIO) {
        Some(c) => (c, &args[1..]),
        None => (&COMMANDS[0], args),
    };
    let run = |hosts: &dyn Hosts| {
        let cx = Context {
            commands: COMMANDS,
            this: cmd,
            hosts,
        };
        (cmd.run)(&cx, rest)
    };
    match cmd.ranks {
        Ranks::Alone => {
            if let Some(e) = cluster::refuse_subcommand(cmd.name) {
                bail!(e);
            }
            run(&Local)
        }
        Ranks::Workflow => cluster::workflow(cmd.name, &run).unwrap_or_else(|| run(&Local)),
        Ranks::Any | Ranks::Fio => run(&Local),
    }
}

/// The fio face: answered at once, run here, or run on every rank of an MPI job.
fn fio_face(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let genesis = Instant::now();
    match fio::front(cx, args)? {
        Front::Done(code) => Ok(code),
        Front::Serve(how) => crate::server::main(cx, &how),
        Front::Client(argv) => crate::client::main(&argv),
        Front::Run(inv) => match cluster::launched()? {
            Some(l) => cluster::main(&inv, l),
            None => fio::run_here(*inv, genesis),
        },
    }
}

/// Commands with no flag but `--help`.
#[derive(Default)]
struct NoArgs {
    operands: Vec<String>,
}

impl Args for NoArgs {
    fn flags() -> &'static [Flag<NoArgs>] {
        &[]
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.operands.push(word);
        Ok(())
    }
}

/// `ioscope completions SHELL`.
fn completions(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<NoArgs>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let shells = crate::doc::complete::SHELLS.join(", ");
    match a.operands.as_slice() {
        [s] => match crate::doc::complete::script(s, cx.commands) {
            Some(script) => print!("{script}"),
            None => bail!("completions: no completions for '{s}' (there are: {shells})"),
        },
        _ => bail!("completions: name one shell ({shells}): ioscope completions bash"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `ioscope help [SUBCOMMAND]`.
fn help(cx: &Context, args: &[OsString]) -> Result<ExitCode> {
    let Some(a) = crate::args::parse::<NoArgs>(cx, args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    match a.operands.as_slice() {
        [] => print!("{}", crate::doc::main_help(cx.commands)),
        [name] => match cx.commands.iter().find(|c| c.name == *name) {
            Some(cmd) => print!("{}", crate::doc::command_help(cx.commands, cmd)),
            None => bail!("help: no subcommand '{name}' (see ioscope --help)"),
        },
        _ => bail!("help: name one subcommand"),
    }
    Ok(ExitCode::SUCCESS)
}
