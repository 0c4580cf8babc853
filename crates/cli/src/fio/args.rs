//! The fio face's program flags (`--output`, `--parse-only`, …), typed: [`FioArgs`]
//! holds every one with its default, and [`FLAGS`] declares how each is written and
//! what it sets. The argv layer (`ioscope_options::cli`) tells them from fio's job
//! options, which interleave with them.

use crate::command::{Args, Flag};
use crate::live::{self, LiveArgs};
use crate::recording::flags::{self as history, HistoryArgs};
use crate::term::status::Eta;
use ioscope_iolog::LogFormat;
use ioscope_options::flags::{flag, not_yet, FlagDef, FlagValue, Support};
use ioscope_report::OutputFormat;
use std::path::PathBuf;
use std::time::Duration;
use FlagValue::{None as NoVal, Optional as OptVal, Required as ReqVal};
use Support::NoEffect;

/// A command line of the fio face: its jobs and its flags.
pub struct Invocation {
    /// Job options (global and per `--name`) and job files.
    pub cli: ioscope_options::cli::Cli,
    pub args: FioArgs,
}

/// The types of fio's `--debug=` that ioscope prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DebugSet {
    pub parse: bool,
    pub random: bool,
    pub io: bool,
}

impl DebugSet {
    fn add(&mut self, list: &str) -> Result<(), String> {
        for t in list.split(',') {
            match t {
                "parse" => self.parse = true,
                "random" => self.random = true,
                "io" => self.io = true,
                _ => {
                    return Err(format!(
                        "--debug={list}: ioscope prints fio's debug types parse, random and io; \
                         '{t}' is not one of them"
                    ))
                }
            }
        }
        Ok(())
    }

    /// A type the run itself traces (into the report's destination).
    pub fn traces_run(&self) -> bool {
        self.random || self.io
    }
}

/// The fio face's flags as given (defaults where not).
#[derive(Debug)]
pub struct FioArgs {
    pub output: Option<PathBuf>,
    pub output_format: Option<Vec<OutputFormat>>,
    pub minimal: bool,
    pub append_terse: bool,
    pub terse_version: u32,
    /// --bandwidth-log's name (agg when given without one).
    pub bandwidth_log: Option<String>,
    pub gather_logs: bool,
    /// --compat: read values as fio does (None: from IOSCOPE_COMPAT or the program's name).
    pub compat: Option<bool>,
    pub parse_only: bool,
    pub dump_jobs: bool,
    pub showcmd: bool,
    pub debug: DebugSet,
    /// --cmdhelp[=OPTION], --enghelp[=ENGINE].
    pub cmdhelp: Option<Option<String>>,
    pub enghelp: Option<Option<String>>,
    pub version: bool,
    /// `--version --json`.
    pub json: bool,
    pub help: bool,
    pub readonly: bool,
    pub max_jobs: Option<u32>,
    pub warnings_fatal: bool,
    /// --section, each time it is given.
    pub sections: Vec<String>,
    pub eta: Eta,
    pub log_format: LogFormat,
    pub eta_newline: Option<Duration>,
    pub eta_interval: Option<Duration>,
    pub status_interval: Option<Duration>,
    /// --live, --live-interval, --metrics, --metrics-linger.
    pub live: LiveArgs,
    /// --history[=DB], --label.
    pub history: HistoryArgs,
    pub allow_destructive: bool,
    pub inflate_log: Option<PathBuf>,
    /// --server[=ARGS]: serve fio clients.
    pub server: Option<Option<String>>,
    /// --client=HOST, each: drive fio servers.
    pub client: Vec<String>,
    /// --daemonize=PIDFILE: the server detaches and writes its pid here.
    pub daemonize: Option<String>,
    /// --server-token=FILE: the server's (or the client's) shared token.
    pub server_token: Option<String>,
    /// --remote-config=FILE, each: job files the servers load (with --client only).
    pub remote_config: Vec<String>,
    pub merge_blktrace_only: bool,
    /// --crctest[=TYPES].
    pub crctest: Option<Option<String>>,
    /// --aux-path: where state files go.
    pub aux_path: Option<PathBuf>,
    /// --trigger-file, --trigger-timeout, --trigger.
    pub trigger: Option<ioscope_runner::Trigger>,
    /// --trigger-remote (a client's).
    pub trigger_remote: Option<String>,
}

impl Default for FioArgs {
    fn default() -> FioArgs {
        FioArgs {
            output: None,
            output_format: None,
            minimal: false,
            append_terse: false,
            terse_version: 3,
            bandwidth_log: None,
            gather_logs: false,
            compat: None,
            parse_only: false,
            dump_jobs: false,
            showcmd: false,
            debug: DebugSet::default(),
            cmdhelp: None,
            enghelp: None,
            version: false,
            json: false,
            help: false,
            readonly: false,
            max_jobs: None,
            warnings_fatal: false,
            sections: Vec::new(),
            eta: Eta::Auto,
            log_format: LogFormat::Text,
            eta_newline: None,
            eta_interval: None,
            status_interval: None,
            live: LiveArgs::default(),
            history: HistoryArgs::default(),
            allow_destructive: false,
            inflate_log: None,
            server: None,
            client: Vec::new(),
            daemonize: None,
            server_token: None,
            remote_config: Vec::new(),
            merge_blktrace_only: false,
            crctest: None,
            aux_path: None,
            trigger: None,
            trigger_remote: None,
        }
    }
}

impl FioArgs {
    fn trigger_mut(&mut self) -> &mut ioscope_runner::Trigger {
        self.trigger.get_or_insert_with(Default::default)
    }
}

impl live::HasLive for FioArgs {
    fn live_args(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl history::HasHistory for FioArgs {
    fn history_args(&mut self) -> &mut HistoryArgs {
        &mut self.history
    }
}

impl Args for FioArgs {
    fn flags() -> &'static [Flag<FioArgs>] {
        FLAGS
    }

    /// The fio face's operands (job files) are read by the argv layer.
    fn operand(&mut self, _word: String) -> Result<(), String> {
        Ok(())
    }
}

impl FioArgs {
    /// The flags the argv layer collected, in order, into their typed values.
    pub fn from_flags<'f>(
        flags: impl Iterator<Item = (&'f str, Option<&'f str>)>,
    ) -> Result<FioArgs, String> {
        let mut a = FioArgs::default();
        for (name, value) in flags {
            if ioscope_options::flags::HELP.matches(name) {
                a.help = true;
                continue;
            }
            if ioscope_options::flags::COLOR.matches(name) {
                crate::term::colour::set(crate::term::colour::parse(value)?);
                continue;
            }
            if let Some(f) = FLAGS.iter().find(|f| f.def.matches(name)) {
                (f.set)(&mut a, value)?;
            }
        }
        Ok(a)
    }
}

/// `--compat=MODE` or `IOSCOPE_COMPAT=MODE` (`from` names which).
pub fn compat(from: &str, v: &str) -> Result<bool, String> {
    match v {
        "fio" => Ok(true),
        "none" => Ok(false),
        o => Err(format!(
            "{from}={o}: the modes are 'fio' (read values as fio 3.33 does) and 'none'"
        )),
    }
}

/// A time in seconds unless a unit is given.
fn seconds(name: &str, v: Option<&str>) -> Result<Duration, String> {
    crate::live::time_flag(name, v)
}

/// fio's program flags.
pub const FLAGS: &[Flag<FioArgs>] = &[
    Flag {
        def: flag("output", ReqVal, "FILE", "Write the report to this file"),
        verbs: &[],
        set: |a, v| {
            a.output = v.map(PathBuf::from);
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            choices: &["normal", "terse", "json", "json+"],
            ..flag("output-format", ReqVal, "FORMAT", "normal, terse, json or json+ (comma-separated for several)")
        },
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let f = ioscope_report::parse_formats(v).map_err(|e| format!("--output-format: {e}"))?;
            a.output_format = Some(f);
            Ok(())
        },
    },
    Flag {
        def: flag("minimal", NoVal, "", "Terse output (same as --output-format=terse)"),
        verbs: &[],
        set: |a, _| {
            a.minimal = true;
            Ok(())
        },
    },
    Flag {
        def: flag("append-terse", NoVal, "", "Print terse output after the selected format"),
        verbs: &[],
        set: |a, _| {
            a.append_terse = true;
            Ok(())
        },
    },
    Flag {
        def: flag("terse-version", ReqVal, "N", "Terse format version: 2, 3 (default), 4 or 5"),
        verbs: &[],
        set: |a, v| match v.unwrap_or("").parse() {
            Ok(n @ 2..=5) => {
                a.terse_version = n;
                Ok(())
            }
            _ => Err(format!("--terse-version={}: must be 2, 3, 4 or 5", v.unwrap_or(""))),
        },
    },
    Flag {
        def: flag("bandwidth-log", OptVal, "NAME", "Write aggregate bandwidth logs of all jobs, NAME-read_bw.log, NAME-write_bw.log and \
         NAME-trim_bw.log (KiB/s every 500 ms, fio's format; NAME defaults to agg as in fio)"),
        verbs: &[],
        set: |a, v| {
            a.bandwidth_log = Some(v.filter(|n| !n.is_empty()).unwrap_or("agg").to_string());
            Ok(())
        },
    },
    Flag {
        def: flag("gather-logs", NoVal, "", "Under mpirun: after the report, copy every rank's per-I/O logs (PREFIX.<host>.<rank>_*) \
         to rank 0, under the same paths"),
        verbs: &[],
        set: |a, _| {
            a.gather_logs = true;
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            choices: &["fio", "none"],
            ..flag("compat", ReqVal, "MODE", "fio: read values as fio does (4q = 4, a range splits at its first - or :); also IOSCOPE_COMPAT=fio, or run as `fio`")
        },
        verbs: &[],
        set: |a, v| {
            a.compat = Some(compat("--compat", v.unwrap_or(""))?);
            Ok(())
        },
    },
    Flag {
        def: flag("parse-only", NoVal, "", "Parse and validate the options, then exit"),
        verbs: &[],
        set: |a, _| {
            a.parse_only = true;
            Ok(())
        },
    },
    Flag {
        def: flag("dump-jobs", NoVal, "", "Print the resolved job specifications as JSON and exit (ioscope)"),
        verbs: &[],
        set: |a, _| {
            a.dump_jobs = true;
            Ok(())
        },
    },
    Flag {
        def: flag("showcmd", NoVal, "", "Print the job files as a command line and exit"),
        verbs: &[],
        set: |a, _| {
            a.showcmd = true;
            Ok(())
        },
    },
    Flag {
        def: flag("debug", ReqVal, "TYPE", "fio's debug output, as fio prints it: parse (options as they are read), random (each job's seeds), io (a line per completed I/O); comma-separated"),
        verbs: &[],
        set: |a, v| a.debug.add(v.unwrap_or("")),
    },
    Flag {
        def: flag("cmdhelp", OptVal, "OPTION", "Help on a job option, or all options"),
        verbs: &[],
        set: |a, v| {
            a.cmdhelp = Some(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: flag("enghelp", OptVal, "ENGINE", "List engines, or the options of one engine"),
        verbs: &[],
        set: |a, v| {
            a.enghelp = Some(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            aliases: &["v", "V"],
            ..flag("version", NoVal, "", "Print the version and exit")
        },
        verbs: &[],
        set: |a, _| {
            a.version = true;
            Ok(())
        },
    },
    Flag {
        def: flag("json", NoVal, "", "With --version: print it as one JSON document (commit, build date, features, the fio it follows)"),
        verbs: &[],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: flag("readonly", NoVal, "", "Refuse any job that writes (checked before anything is opened)"),
        verbs: &[],
        set: |a, _| {
            a.readonly = true;
            Ok(())
        },
    },
    Flag {
        def: flag("max-jobs", ReqVal, "N", "Allow up to N jobs (numjobs clones included; default 4096): as in fio, a value below the default does not lower the limit"),
        verbs: &[],
        set: |a, v| {
            let v = v.unwrap_or("");
            let n = v.parse().map_err(|_| format!("--max-jobs={v} is not a number"))?;
            a.max_jobs = Some(n);
            Ok(())
        },
    },
    Flag {
        def: flag("warnings-fatal", NoVal, "", "Treat parser warnings (and flags without effect) as errors"),
        verbs: &[],
        set: |a, _| {
            a.warnings_fatal = true;
            Ok(())
        },
    },
    Flag {
        def: flag("section", ReqVal, "NAME", "Run only this job-file section (may be repeated)"),
        verbs: &[],
        set: |a, v| {
            a.sections.extend(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            choices: &["auto", "always", "never"],
            ..flag("eta", ReqVal, "WHEN", "Live status line: auto, always or never")
        },
        verbs: &[],
        set: |a, v| {
            a.eta = match v.unwrap_or("") {
                "auto" => Eta::Auto,
                "always" => Eta::Always,
                "never" => Eta::Never,
                v => return Err(format!("--eta={v}: use auto, always or never")),
            };
            Ok(())
        },
    },
    Flag {
        def: flag("log-format", ReqVal, "FORMAT", "Per-I/O logs as fio's text logs (text, the default), ioscope's binary log PREFIX_io.N.bin (binary; `ioscope log convert` makes the text later), or both"),
        verbs: &[],
        set: |a, v| {
            a.log_format = match v.unwrap_or("") {
                "text" => LogFormat::Text,
                "binary" => LogFormat::Binary,
                "both" => LogFormat::Both,
                v => return Err(format!("--log-format={v}: text, binary or both")),
            };
            Ok(())
        },
    },
    Flag {
        def: flag("eta-newline", ReqVal, "TIME", "Start a new status line every TIME (seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            a.eta_newline = Some(seconds("eta-newline", v)?);
            Ok(())
        },
    },
    Flag {
        def: flag("eta-interval", ReqVal, "TIME", "Status line refresh interval (default 1s, at least 250ms; seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            let i = seconds("eta-interval", v)?;
            if i < crate::term::status::MIN_INTERVAL {
                return Err(format!("--eta-interval: {i:?} is too short (at least 250ms)"));
            }
            a.eta_interval = Some(i);
            Ok(())
        },
    },
    Flag {
        def: flag("status-interval", ReqVal, "TIME", "Print a full interim report every TIME (seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            a.status_interval = Some(seconds("status-interval", v)?);
            Ok(())
        },
    },
    Flag {
        def: live::LIVE,
        verbs: &[],
        set: live::set_live::<FioArgs>,
    },
    Flag {
        def: live::LIVE_INTERVAL,
        verbs: &[],
        set: live::set_interval::<FioArgs>,
    },
    Flag {
        def: live::METRICS,
        verbs: &[],
        set: live::set_metrics::<FioArgs>,
    },
    Flag {
        def: live::METRICS_LINGER,
        verbs: &[],
        set: live::set_linger::<FioArgs>,
    },
    Flag {
        def: history::HISTORY,
        verbs: &[],
        set: history::set_history::<FioArgs>,
    },
    Flag {
        def: history::LABEL,
        verbs: &[],
        set: history::set_label::<FioArgs>,
    },
    Flag {
        def: flag("allow-destructive", NoVal, "", "Allow writes to block devices that are mounted or carry data signatures (ioscope)"),
        verbs: &[],
        set: |a, _| {
            a.allow_destructive = true;
            Ok(())
        },
    },
    Flag {
        def: flag("inflate-log", ReqVal, "FILE", "Write the text of a compressed log (NAME.log.fz, ioscope's or fio's) to stdout"),
        verbs: &[],
        set: |a, v| {
            a.inflate_log = v.map(PathBuf::from);
            Ok(())
        },
    },
    Flag {
        def: not_yet("cpuclock-test", NoVal, "", "Test the CPU clock", "ioscope calibrates and checks its TSC clock itself at the start of every run"),
        verbs: &[],
        set: |_, _| Ok(()),
    },
    Flag {
        def: flag("crctest", OptVal, "TYPE", "Measure the speed of the checksum functions (TYPE: one or more of md5, crc64, crc32, crc32c, crc16, crc7, sha1, sha256, sha512, xxhash, murmur3, jhash, fnv, sha3-224, sha3-256, sha3-384, sha3-512, comma-separated; list: name them)"),
        verbs: &[],
        set: |a, v| {
            a.crctest = Some(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: flag("merge-blktrace-only", NoVal, "", "Write the jobs' merge_blktrace_file and exit without I/O"),
        verbs: &[],
        set: |a, _| {
            a.merge_blktrace_only = true;
            Ok(())
        },
    },
    Flag {
        def: flag("server", OptVal, "ARGS", "Run as a fio backend server that fio 3.42 clients (fio --client=HOST job.fio) send jobs to; ARGS: [ip:|ip6:]HOST[,PORT] (default 127.0.0.1,8765: only this host's clients; ip:0.0.0.0 serves the network) or sock:PATH (a unix-domain socket only its owner may connect to)"),
        verbs: &[],
        set: |a, v| {
            a.server = Some(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: flag("client", ReqVal, "HOST", "Send the job files that follow to a fio 3.42 (or ioscope --server) server and report its results, per host and over all of them; HOST: [ip:|ip6:]HOST[,PORT], sock:PATH or a file listing hosts; repeat for more servers"),
        verbs: &[],
        set: |a, v| {
            a.client.extend(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: flag("server-token", ReqVal, "FILE", "ioscope: with --server, run jobs only for ioscope clients that give the token in FILE; with --client (before it), the token to give"),
        verbs: &[],
        set: |a, v| {
            a.server_token = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("daemonize", ReqVal, "PIDFILE", "With --server: detach into the background once listening and write the server's process id to PIDFILE"),
        verbs: &[],
        set: |a, v| {
            a.daemonize = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("remote-config", ReqVal, "FILE", "After --client: have that server load FILE, a job file on its own file system"),
        verbs: &[],
        set: |a, v| {
            a.remote_config.extend(v.map(str::to_string));
            Ok(())
        },
    },
    Flag {
        def: not_yet("idle-prof", ReqVal, "MODE", "Report CPU idleness (system, percpu or calibrate)", "idleness profiling is not implemented"),
        verbs: &[],
        set: |_, _| Ok(()),
    },
    Flag {
        def: flag("trigger-file", ReqVal, "FILE", "When FILE exists (it is removed), save every job's verify state, end the run and run the trigger command"),
        verbs: &[],
        set: |a, v| {
            a.trigger_mut().file = v.map(PathBuf::from);
            Ok(())
        },
    },
    Flag {
        def: flag("trigger-timeout", ReqVal, "TIME", "Fire the trigger TIME after the run started (seconds unless a unit is given)"),
        verbs: &[],
        set: |a, v| {
            a.trigger_mut().timeout = Some(seconds("trigger-timeout", v)?);
            Ok(())
        },
    },
    Flag {
        def: flag("trigger", ReqVal, "CMD", "The command (through sh -c) to run when the trigger fires, once the states are saved"),
        verbs: &[],
        set: |a, v| {
            a.trigger_mut().command = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("trigger-remote", ReqVal, "CMD", "With --client (given before it): the command each server runs when the trigger fires, once it has sent its jobs' verify states"),
        verbs: &[],
        set: |a, v| {
            a.trigger_remote = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("aux-path", ReqVal, "DIR", "Write and read state files (verify_state_save, verify_state_load) in DIR instead of the current directory"),
        verbs: &[],
        set: |a, v| {
            a.aux_path = v.map(PathBuf::from);
            Ok(())
        },
    },
    Flag {
        def: FlagDef {
            support: NoEffect("ioscope runs jobs as threads of one process and allocates from the ordinary heap; \
             there is no shared pool to size"),
            ..flag("alloc-size", ReqVal, "KB", "Size of fio's shared-memory pool")
        },
        verbs: &[],
        set: |_, _| Ok(()),
    },
];
