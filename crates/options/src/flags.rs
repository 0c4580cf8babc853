//! ioscope's program flags and subcommands: one declarative table ([`COMMANDS`]) drives
//! parsing ([`parse_command`], and the flag half of [`crate::cli::parse_args`]), `--help`,
//! `docs/cli.md` and shell completions ([`crate::flagdoc`]).
//!
//! fio's *job options* (`--bs=4k`, `-rw=read`) are not here: they live in the option
//! table ([`crate::OPTIONS`]) and the fio face's argv layer ([`crate::cli`]) interleaves
//! them with the flags below.
//!
//! Project rule: no flag is silently ignored. Each flag is [`Support::Supported`], or
//! [`Support::NotYet`] (refused by the parser, so `--parse-only` refuses it too), or
//! [`Support::NoEffect`] (accepted with a warning that says why it changes nothing).

use crate::error::OptionsError;
use crate::suggest::closest;
use crate::table::OPTIONS;

/// One program flag of one subcommand.
#[derive(Debug)]
pub struct FlagDef {
    /// Long name, written `--name`.
    pub name: &'static str,
    /// Other spellings without dashes (`h` for `-h`).
    pub aliases: &'static [&'static str],
    pub value: FlagValue,
    /// Placeholder for the value in help and docs (`FILE`, `N`); empty when none.
    pub value_name: &'static str,
    pub help: &'static str,
    pub support: Support,
}

/// Whether a flag takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// `--flag`; `--flag=x` is an error.
    None,
    /// `--flag=x` or `--flag x`.
    Required,
    /// `--flag` or `--flag=x` (never the next argument).
    Optional,
}

/// What ioscope does with a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Supported,
    /// Refused with "--X is not supported yet: reason" (exit 1), also by `--parse-only`.
    NotYet(&'static str),
    /// Accepted; a warning says it has no effect and why.
    NoEffect(&'static str),
}

/// A subcommand: `ioscope NAME [flags] [operands]`.
#[derive(Debug)]
pub struct CommandDef {
    /// The word after `ioscope`; [`FIO`] is the fio face, which has no word.
    pub name: &'static str,
    /// One line for `ioscope --help`.
    pub about: &'static str,
    /// Usage line without `usage: `.
    pub usage: &'static str,
    /// What the operands (non-flag words) are.
    pub operands: &'static str,
    /// More text for `--help` and the docs.
    pub details: &'static str,
    pub flags: &'static [FlagDef],
}

/// Name of the fio face in [`COMMANDS`].
pub const FIO: &str = "fio";

impl CommandDef {
    /// The command's flag called `name` (or with that alias).
    pub fn find(&self, name: &str) -> Option<&'static FlagDef> {
        find_in(self.flags, name)
    }

    /// How the command is typed: `ioscope` for the fio face, `ioscope NAME` otherwise.
    pub fn invocation(&self) -> String {
        if self.name == FIO {
            "ioscope".to_string()
        } else {
            format!("ioscope {}", self.name)
        }
    }
}

pub(crate) fn find_in(flags: &'static [FlagDef], name: &str) -> Option<&'static FlagDef> {
    flags
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
}

use FlagValue::{None as NoVal, Optional as OptVal, Required as ReqVal};
use Support::{NoEffect, NotYet, Supported};

const fn flag(
    name: &'static str,
    value: FlagValue,
    value_name: &'static str,
    help: &'static str,
) -> FlagDef {
    FlagDef {
        name,
        aliases: &[],
        value,
        value_name,
        help,
        support: Supported,
    }
}

const fn not_yet(
    name: &'static str,
    value: FlagValue,
    value_name: &'static str,
    help: &'static str,
    why: &'static str,
) -> FlagDef {
    FlagDef {
        name,
        aliases: &[],
        value,
        value_name,
        help,
        support: NotYet(why),
    }
}

const HELP: FlagDef = FlagDef {
    name: "help",
    aliases: &["h"],
    value: NoVal,
    value_name: "",
    help: "Print this help and exit",
    support: Supported,
};

/// fio's program flags (the fio face: `ioscope [flags] [job options] [job files]`).
pub const FIO_FLAGS: &[FlagDef] = &[
    flag("output", ReqVal, "FILE", "Write the report to this file"),
    flag(
        "output-format",
        ReqVal,
        "FORMAT",
        "normal, terse, json or json+ (comma-separated for several)",
    ),
    flag(
        "minimal",
        NoVal,
        "",
        "Terse output (same as --output-format=terse)",
    ),
    flag(
        "append-terse",
        NoVal,
        "",
        "Print terse output after the selected format",
    ),
    flag(
        "terse-version",
        ReqVal,
        "N",
        "Terse format version: 2, 3 (default), 4 or 5",
    ),
    flag(
        "bandwidth-log",
        OptVal,
        "NAME",
        "Write aggregate bandwidth logs of all jobs, NAME-read_bw.log, NAME-write_bw.log and \
         NAME-trim_bw.log (KiB/s every 500 ms, fio's format; NAME defaults to agg as in fio)",
    ),
    flag(
        "gather-logs",
        NoVal,
        "",
        "Under mpirun: after the report, copy every rank's per-I/O logs (PREFIX.<host>.<rank>_*) \
         to rank 0, under the same paths",
    ),
    flag(
        "compat",
        ReqVal,
        "MODE",
        "fio: read values as fio 3.33 does (4q = 4, a range splits at its first - or :); also IOSCOPE_COMPAT=fio, or run as `fio`",
    ),
    flag(
        "parse-only",
        NoVal,
        "",
        "Parse and validate the options, then exit",
    ),
    flag(
        "dump-jobs",
        NoVal,
        "",
        "Print the resolved job specifications as JSON and exit (ioscope)",
    ),
    flag(
        "showcmd",
        NoVal,
        "",
        "Print the job files as a command line and exit",
    ),
    flag(
        "debug",
        ReqVal,
        "TYPE",
        "Debug output; ioscope knows only 'parse' (print resolved options), other fio types are refused",
    ),
    flag(
        "cmdhelp",
        OptVal,
        "OPTION",
        "Help on a job option, or all options",
    ),
    flag(
        "enghelp",
        OptVal,
        "ENGINE",
        "List engines, or the options of one engine",
    ),
    FlagDef {
        name: "version",
        aliases: &["v", "V"],
        value: NoVal,
        value_name: "",
        help: "Print the version and exit",
        support: Supported,
    },
    HELP,
    flag(
        "readonly",
        NoVal,
        "",
        "Refuse any job that writes (checked before anything is opened)",
    ),
    flag(
        "max-jobs",
        ReqVal,
        "N",
        "Refuse to run more than N jobs (numjobs clones included)",
    ),
    flag(
        "warnings-fatal",
        NoVal,
        "",
        "Treat parser warnings (and flags without effect) as errors",
    ),
    flag(
        "section",
        ReqVal,
        "NAME",
        "Run only this job-file section (may be repeated)",
    ),
    flag("eta", ReqVal, "WHEN", "Live status line: auto, always or never"),
    flag(
        "log-format",
        ReqVal,
        "FORMAT",
        "Per-I/O logs as fio's text logs (text, the default), ioscope's binary log PREFIX_io.N.bin (binary; `ioscope log convert` makes the text later), or both",
    ),
    flag(
        "eta-newline",
        ReqVal,
        "TIME",
        "Start a new status line every TIME (seconds unless a unit is given)",
    ),
    flag(
        "eta-interval",
        ReqVal,
        "TIME",
        "Status line refresh interval (default 1s, at least 250ms; seconds unless a unit is given)",
    ),
    flag(
        "status-interval",
        ReqVal,
        "TIME",
        "Print a full interim report every TIME (seconds unless a unit is given)",
    ),
    flag(
        "allow-destructive",
        NoVal,
        "",
        "Allow writes to block devices that are mounted or carry data signatures (ioscope)",
    ),
    flag(
        "inflate-log",
        ReqVal,
        "FILE",
        "Write the text of a compressed log (NAME.log.fz, ioscope's or fio's) to stdout",
    ),
    not_yet(
        "cpuclock-test",
        NoVal,
        "",
        "Test the CPU clock",
        "ioscope calibrates and checks its TSC clock itself at the start of every run",
    ),
    not_yet(
        "crctest",
        OptVal,
        "TYPE",
        "Measure the speed of checksum functions",
        "ioscope has no verify checksums yet",
    ),
    flag(
        "merge-blktrace-only",
        NoVal,
        "",
        "Write the jobs' merge_blktrace_file and exit without I/O",
    ),
    not_yet(
        "server",
        OptVal,
        "ARGS",
        "Run as a fio backend server",
        "fio's client/server mode is not implemented",
    ),
    not_yet(
        "client",
        ReqVal,
        "HOST",
        "Send jobs to a fio backend server",
        "fio's client/server mode is not implemented",
    ),
    not_yet(
        "daemonize",
        ReqVal,
        "PIDFILE",
        "Run the fio server in the background",
        "fio's client/server mode is not implemented",
    ),
    not_yet(
        "remote-config",
        ReqVal,
        "FILE",
        "Have the fio server load this job file",
        "fio's client/server mode is not implemented",
    ),
    not_yet(
        "idle-prof",
        ReqVal,
        "MODE",
        "Report CPU idleness (system, percpu or calibrate)",
        "idleness profiling is not implemented",
    ),
    not_yet(
        "trigger-file",
        ReqVal,
        "FILE",
        "Run the trigger command when FILE exists",
        "triggers are not implemented",
    ),
    not_yet(
        "trigger-timeout",
        ReqVal,
        "TIME",
        "Run the trigger command at this time",
        "triggers are not implemented",
    ),
    not_yet(
        "trigger",
        ReqVal,
        "CMD",
        "Local trigger command",
        "triggers are not implemented",
    ),
    not_yet(
        "trigger-remote",
        ReqVal,
        "CMD",
        "Remote trigger command",
        "triggers are not implemented",
    ),
    not_yet(
        "aux-path",
        ReqVal,
        "DIR",
        "Directory for fio's state files (verify state, …)",
        "ioscope writes no auxiliary state files (no verify state yet)",
    ),
    FlagDef {
        name: "alloc-size",
        aliases: &[],
        value: ReqVal,
        value_name: "KB",
        help: "Size of fio's shared-memory pool",
        support: NoEffect(
            "ioscope runs jobs as threads of one process and allocates from the ordinary heap; \
             there is no shared pool to size",
        ),
    },
];

/// `ioscope quick`.
pub const QUICK_FLAGS: &[FlagDef] = &[
    flag(
        "size",
        ReqVal,
        "SIZE",
        "Size of the temporary test file (default 1g, at least 16m)",
    ),
    flag(
        "runtime",
        ReqVal,
        "TIME",
        "Run time of each of the six tests (default 5s, seconds unless a unit is given)",
    ),
    flag(
        "json",
        NoVal,
        "",
        "Print the results as one JSON document on stdout",
    ),
    HELP,
];

/// `ioscope peak`.
pub const PEAK_FLAGS: &[FlagDef] = &[
    flag(
        "engine",
        ReqVal,
        "NAME",
        "I/O engine: io_uring (default), libaio or pvsync2",
    ),
    flag(
        "depth",
        ReqVal,
        "N",
        "I/Os in flight per thread (default 128)",
    ),
    flag("batch", ReqVal, "N", "Submit batch (default 32)"),
    flag("complete", ReqVal, "N", "Reap batch (default = --batch)"),
    flag("bs", ReqVal, "SIZE", "Block size (default 4k)"),
    flag(
        "threads",
        ReqVal,
        "N",
        "Threads, each on every file (default 1)",
    ),
    flag("seq", NoVal, "", "Sequential instead of random I/O"),
    flag(
        "write",
        NoVal,
        "",
        "Writes instead of reads (refused on devices with data, as always)",
    ),
    flag("polled", NoVal, "", "Polled I/O (IOPOLL / RWF_HIPRI)"),
    flag("fixedbufs", NoVal, "", "io_uring: register the I/O buffers"),
    flag("registerfiles", NoVal, "", "io_uring: register the files"),
    flag(
        "sqpoll",
        OptVal,
        "CPU",
        "io_uring: kernel submission thread (pinned to CPU if given)",
    ),
    flag("buffered", NoVal, "", "Buffered I/O (default O_DIRECT)"),
    flag(
        "nop",
        NoVal,
        "",
        "IORING_OP_NOP: no file I/O, the kernel submission path alone",
    ),
    flag(
        "runtime",
        ReqVal,
        "TIME",
        "Run time (default 10s, seconds unless a unit is given)",
    ),
    flag(
        "no-lat",
        NoVal,
        "",
        "No latency tracking (no timestamps, no percentiles)",
    ),
    flag(
        "json",
        NoVal,
        "",
        "Print the result as one JSON document on stdout",
    ),
    HELP,
];

/// `ioscope fairness`.
pub const FAIRNESS_FLAGS: &[FlagDef] = &[
    flag(
        "model",
        ReqVal,
        "MODEL",
        "Weights: cfq (180-20*prio, default), bfq ((8-prio)*10), equal, io.weight or cgroup (each job's cgroup_weight, 100 when unset; the default of --scenario=cgroup-weights), or w1,w2,... one per job",
    ),
    flag(
        "dir",
        ReqVal,
        "DIR",
        "Bytes that count: read, write or all (default all: read+write+trim)",
    ),
    flag(
        "json",
        NoVal,
        "",
        "Print the table and figures as one JSON document on stdout",
    ),
    flag(
        "scenario",
        ReqVal,
        "NAME",
        "Run 8 random readers on TARGET instead of reading a result: prio-ladder (be 0..7), equal (all be 4) or cgroup-weights (a blkio cgroup each, weights 800..100; cgroup v1, root)",
    ),
    flag(
        "svg",
        ReqVal,
        "FILE",
        "Also write the charts (ideal and transferred per job; shares and Jain's index per window) as SVG to FILE",
    ),
    flag(
        "html",
        ReqVal,
        "FILE",
        "Also write a self-contained HTML report (tables and charts) to FILE",
    ),
    flag(
        "size",
        ReqVal,
        "SIZE",
        "--scenario: size of the region read (default: the file's size; 1g for a new file)",
    ),
    flag(
        "runtime",
        ReqVal,
        "TIME",
        "--scenario: run time (default 10s, seconds unless a unit is given)",
    ),
    flag(
        "ioscheduler",
        ReqVal,
        "NAME",
        "--scenario: switch the device to this I/O scheduler for the run (restored afterwards)",
    ),
    flag(
        "bw-log",
        ReqVal,
        "PREFIX",
        "Fairness over time from bandwidth logs PREFIX_bw.N.log (N = job number; write_bw_log's format); with --scenario: keep the run's logs under PREFIX",
    ),
    flag(
        "window",
        ReqVal,
        "TIME",
        "--bw-log, --scenario: window length for fairness over time (default 1s, seconds unless a unit is given)",
    ),
    HELP,
];

/// `ioscope compare`.
pub const COMPARE_FLAGS: &[FlagDef] = &[
    flag(
        "json",
        NoVal,
        "",
        "Print the rows as a JSON array (job, direction, metric, a, b, delta_pct, CI, p_value, verdict, n_a, n_b)",
    ),
    flag(
        "markdown",
        NoVal,
        "",
        "Print the table as GitHub markdown (for a patch mail)",
    ),
    flag(
        "svg",
        ReqVal,
        "FILE",
        "Also write the chart (change of B against A per metric, 95% whiskers) as SVG to FILE",
    ),
    flag(
        "html",
        ReqVal,
        "FILE",
        "Also write a self-contained HTML report (differences, table, chart) to FILE",
    ),
    flag(
        "run",
        NoVal,
        "",
        "Run the job files A.fio and B.fio interleaved (A B A B ...) and compare the results",
    ),
    flag(
        "vary",
        ReqVal,
        "OPT=A,B",
        "Run one job file twice, with job option OPT set to A and to B in every job (e.g. ioscheduler=none,mq-deadline); implies --run",
    ),
    flag(
        "repeat",
        ReqVal,
        "N",
        "--run: runs of each job file (default 5; at least 4 can show a significant change)",
    ),
    FlagDef {
        aliases: &["o"],
        ..flag(
            "output",
            ReqVal,
            "DIR",
            "--run: keep the results as DIR/a-1.json, DIR/b-1.json, ... (default: a new temporary directory)",
        )
    },
    HELP,
];

pub const SWEEP_FLAGS: &[FlagDef] = &[
    FlagDef {
        aliases: &["o"],
        ..flag(
            "output",
            ReqVal,
            "DIR",
            "run: the run directory (results, journal, report); running again on it resumes; import: where the imported results go",
        )
    },
    flag(
        "retry-failed",
        NoVal,
        "",
        "run: run points that failed in an earlier run again (they are skipped otherwise)",
    ),
    flag(
        "allow-destructive",
        NoVal,
        "",
        "run: allow writes to devices the safety checks refuse, and purge=discard",
    ),
    flag(
        "emit",
        ReqVal,
        "DIR",
        "plan: write each point as a fio job file DIR/<point>.fio",
    ),
    flag(
        "check",
        NoVal,
        "",
        "plan: check every point as a run would (options, unsupported values, limits); nothing runs, nothing is written",
    ),
    flag(
        "json",
        NoVal,
        "",
        "plan, status: print JSON instead of text",
    ),
    HELP,
];

pub const REPORT_FLAGS: &[FlagDef] = &[
    FlagDef {
        aliases: &["o"],
        ..flag(
            "output",
            ReqVal,
            "DIR",
            "Write the report files here (default: the results directory itself)",
        )
    },
    flag(
        "ssv",
        NoVal,
        "",
        "Also write fio-tests' space-separated columns (x rbw riops rclat wbw wiops wclat) per series",
    ),
    HELP,
];

pub const PLOT_FLAGS: &[FlagDef] = &[
    FlagDef {
        aliases: &["o"],
        ..flag("output", ReqVal, "FILE.svg", "Write the graphs to this SVG file (required)")
    },
    flag("html", ReqVal, "FILE", "Also write a self-contained HTML page with the graphs"),
    flag(
        "window",
        ReqVal,
        "TIME",
        "Average per-I/O log entries over windows this long (default: the run cut into 300 windows)",
    ),
    HELP,
];

pub const LOG_FLAGS: &[FlagDef] = &[
    FlagDef {
        aliases: &["o"],
        ..flag("output", ReqVal, "DIR", "convert: write the text logs into DIR (default: the names the binary log records)")
    },
    FlagDef {
        aliases: &["i"],
        ..flag("interval", ReqVal, "MS", "percentiles: width of each output interval in ms (default 1000)")
    },
    flag(
        "percentiles",
        ReqVal,
        "LIST",
        "percentiles: the percentiles after the median, separated by ':' or ',' (default 90:95:99); summary: which to print (default 50:90:99:99.9:99.99)",
    ),
    FlagDef {
        aliases: &["d"],
        ..flag("divisor", ReqVal, "N", "percentiles: divide the latencies by N (1000: us)")
    },
    flag("decimals", ReqVal, "N", "percentiles: decimal places (default 3)"),
    flag("directions", ReqVal, "LETTERS", "percentiles: also per direction: any of r, w, t, m (m = all merged)"),
    flag("noweight", NoVal, "", "percentiles: put each row whole into one interval instead of spreading it"),
    flag("json", NoVal, "", "summary: print JSON"),
    HELP,
];

const ONLY_HELP: &[FlagDef] = &[HELP];

/// Every subcommand, the fio face first.
pub const COMMANDS: &[CommandDef] = &[
    CommandDef {
        name: FIO,
        about: "Run fio job files and fio command lines (no subcommand word)",
        usage: "ioscope [FLAGS] [JOB OPTIONS] [JOB FILES]",
        operands: "job files",
        details: "Options before the first --name apply to all jobs; --name starts a job; any \
                  fio job option can be given as --opt=value, -opt=value or --opt value \
                  (ioscope --cmdhelp lists them). Program flags can also be written with one \
                  dash, as fio accepts them.",
        flags: FIO_FLAGS,
    },
    CommandDef {
        name: "quick",
        about: "How fast is this disk? Sequential and random reads and writes on a temporary file",
        usage: "ioscope quick [FLAGS] [DIR]",
        operands: "the directory for the temporary test file (default .)",
        details: "Sequential 1 MiB I/O at QD8 and random 4 KiB I/O at QD32 and QD1, reads and \
                  writes (the CrystalDiskMark set), direct I/O where the filesystem supports it. \
                  Latency columns are fio's lat (submission to completion). The file is removed \
                  afterwards, also on Ctrl-C.",
        flags: QUICK_FLAGS,
    },
    CommandDef {
        name: "peak",
        about: "Peak IOPS with minimal overhead, like fio's t/io_uring",
        usage: "ioscope peak [FLAGS] FILE|DEVICE...",
        operands: "files or block devices (none with --nop)",
        details: "Prints IOPS, bandwidth and I/Os per submit/reap call once a second, then the \
                  totals, min/avg/max of the per-second IOPS and latency percentiles (submission \
                  to completion, self-calibrated TSC clock).",
        flags: PEAK_FLAGS,
    },
    CommandDef {
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
        flags: FAIRNESS_FLAGS,
    },
    CommandDef {
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
        flags: COMPARE_FLAGS,
    },
    CommandDef {
        name: "sweep",
        about: "Parameter sweeps from a TOML file: plan, run (resumable, with preconditioning and steady state), status, import",
        usage: "ioscope sweep plan FILE [--emit DIR] [--check] | ioscope sweep run FILE -o DIR [--retry-failed] | ioscope sweep status DIR | ioscope sweep import FIO-TESTS-DIR -o DIR",
        operands: "a verb (plan, run, status, import), then the sweep file (plan, run), the run directory (status) or a fio-tests tree (import)",
        details: "A sweep file has [target] (filename or directory, size, optional expect_model/expect_serial), \
                  [defaults] (any fio option), [profiles.NAME] (option sets; built in: seqread, seqwrite, \
                  randread, randwrite, randrw-70-30, randrw-97-3 and snia-R-W mixes), and [[sweep]] tables \
                  with name, profiles, axes (iodepth = \"pow2:1..64\", numjobs = [1, 2], \"1..8\", \"8..64:8\"), \
                  fixed options and an optional guard (axis, metric, drop, patience, max_p99). \
                  [precondition] (purge, passes, bs, iodepth) and [steady_state] (rounds, window, \
                  range_pct, slope_pct, metric, workload, mode = snia|fio, ss) run before the points. \
                  run writes DIR/points/<point>.json (json+ with the point's options, target identity, \
                  kernel and version), DIR/journal.jsonl, and at the end the report (results.csv, \
                  results.json, graphs/*.svg, report.html); Ctrl-C stops after saving what finished, \
                  and the same command resumes.",
        flags: SWEEP_FLAGS,
    },
    CommandDef {
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
        flags: REPORT_FLAGS,
    },
    CommandDef {
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
        flags: PLOT_FLAGS,
    },
    CommandDef {
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
        flags: LOG_FLAGS,
    },
    CommandDef {
        name: "completions",
        about: "Print a shell completion script",
        usage: "ioscope completions bash",
        operands: "the shell (only bash so far)",
        details: "Load it with: source <(ioscope completions bash)",
        flags: ONLY_HELP,
    },
    CommandDef {
        name: "help",
        about: "Print the help of a subcommand",
        usage: "ioscope help [SUBCOMMAND]",
        operands: "a subcommand (fio for the fio face)",
        details: "",
        flags: ONLY_HELP,
    },
];

/// `"; did you mean 'X'?"` or "".
pub fn did_you_mean(name: &str) -> String {
    let names = OPTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .chain(FIO_FLAGS.iter().map(|f| f.name));
    match closest(name, names) {
        Some(n) => format!("; did you mean '{n}'?"),
        None => String::new(),
    }
}

/// The subcommand called `name` (`fio` for the fio face).
pub fn command(name: &str) -> Option<&'static CommandDef> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// A flag word split into its name and inline value: `--x=1` → ("x", Some("1")).
/// `None` for words that are not flags (no dash, or only dashes).
pub(crate) fn split_flag(arg: &str, single_dash: bool) -> Option<(&str, Option<&str>)> {
    let body = match arg.strip_prefix("--") {
        Some(b) => b,
        None if single_dash || arg.len() == 2 => arg.strip_prefix('-')?,
        None => return None,
    };
    if body.is_empty() {
        return None;
    }
    Some(match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    })
}

/// The value of `def`, written `arg` at `args[*i - 1]`: inline, or (Required) the next
/// argument, which `*i` then skips.
pub(crate) fn take_value(
    def: &FlagDef,
    arg: &str,
    inline: Option<&str>,
    args: &[String],
    i: &mut usize,
) -> Result<Option<String>, String> {
    match (def.value, inline) {
        (NoVal, Some(_)) => Err(format!("{arg}: --{} takes no value", def.name)),
        (ReqVal, None) => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            None => Err(format!(
                "{arg}: --{} requires a value (--{}={})",
                def.name, def.name, def.value_name
            )),
        },
        (_, v) => Ok(v.map(str::to_string)),
    }
}

/// Refuse a NotYet flag; the warning for a NoEffect flag.
pub(crate) fn check_support(def: &FlagDef) -> Result<Option<String>, String> {
    match def.support {
        Supported => Ok(None),
        NotYet(why) => Err(format!("--{} is not supported yet: {why}", def.name)),
        NoEffect(why) => Ok(Some(format!(
            "warning: --{} has no effect: {why}",
            def.name
        ))),
    }
}

/// A parsed subcommand line.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Flags seen, in order: (canonical name, value).
    pub flags: Vec<(&'static str, Option<String>)>,
    /// Non-flag words, in order.
    pub operands: Vec<String>,
    /// Warnings for flags without effect.
    pub warnings: Vec<String>,
}

impl Parsed {
    /// `Some(value)` when the flag was given (the last one wins).
    pub fn flag(&self, name: &str) -> Option<Option<&str>> {
        self.flags
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_deref())
    }
    pub fn has(&self, name: &str) -> bool {
        self.flag(name).is_some()
    }
    /// The flag's value when given with one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.flag(name).flatten()
    }
}

/// Parse a subcommand's arguments (after the subcommand word) against its flag table.
/// Flags are `--name`, `--name=value`, `--name value` (Required values) or an alias
/// (`-h`); `--` ends the flags; every other word is an operand.
pub fn parse_command(cmd: &CommandDef, args: &[String]) -> Result<Parsed, OptionsError> {
    let mut p = Parsed::default();
    let mut i = 0;
    let err = |msg: String| OptionsError::Other(format!("{}: {msg}", cmd.name));
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            p.operands.extend(args[i..].iter().cloned());
            break;
        }
        let Some((name, inline)) = split_flag(arg, false) else {
            p.operands.push(arg.clone());
            continue;
        };
        let Some(def) = cmd.find(name) else {
            let names = cmd.flags.iter().map(|f| f.name);
            let hint = match closest(name, names) {
                Some(n) => format!("; did you mean '--{n}'?"),
                None => String::new(),
            };
            return Err(err(format!(
                "unknown flag '{arg}'{hint} (see {} --help)",
                cmd.invocation()
            )));
        };
        if let Some(w) = check_support(def).map_err(err)? {
            p.warnings.push(w);
        }
        let value = take_value(def, arg, inline, args, &mut i).map_err(err)?;
        p.flags.push((def.name, value));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn names_are_unique_per_command() {
        for c in COMMANDS {
            let mut names: Vec<&str> = c
                .flags
                .iter()
                .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()))
                .collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(n, names.len(), "{}: a flag name is listed twice", c.name);
            for f in c.flags {
                assert_eq!(
                    f.value == NoVal,
                    f.value_name.is_empty(),
                    "{}: --{} value name",
                    c.name,
                    f.name
                );
            }
        }
    }

    #[test]
    fn suggests_close_names() {
        assert!(did_you_mean("iodpeth").contains("iodepth"));
        assert!(did_you_mean("ramp_tme").contains("ramp_time"));
        assert!(did_you_mean("parse-onyl").contains("parse-only"));
        assert_eq!(did_you_mean("completelydifferent"), "");
    }

    #[test]
    fn subcommand_syntax() {
        let peak = command("peak").unwrap();
        let p = parse_command(peak, &args("/dev/x --depth=128 --batch 32 --sqpoll -h")).unwrap();
        assert_eq!(p.operands, ["/dev/x"]);
        assert_eq!(p.value("depth"), Some("128"));
        assert_eq!(p.value("batch"), Some("32"));
        assert_eq!(p.flag("sqpoll"), Some(None));
        assert!(p.has("help"));
        let e = parse_command(peak, &args("--dpeth=1")).unwrap_err();
        assert!(e.to_string().contains("did you mean '--depth'"), "{e}");
        let e = parse_command(peak, &args("--json=1")).unwrap_err();
        assert!(e.to_string().contains("takes no value"), "{e}");
        let e = parse_command(peak, &args("--depth")).unwrap_err();
        assert!(e.to_string().contains("requires a value"), "{e}");
        let p = parse_command(peak, &args("-- --odd-name")).unwrap();
        assert_eq!(p.operands, ["--odd-name"]);
    }
}
