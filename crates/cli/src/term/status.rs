//! What the user sees while a run is going: fio's informational lines and the live
//! status line `Jobs: 1 (f=1): [r(1)][45.0%][r=358MiB/s][r=91.6k IOPS][eta 00m:03s]`.
//! The status line goes to stderr so that stdout holds only the report.

use ioscope_runner::{JobProgress, Observer};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eta {
    Auto,
    Always,
    Never,
}

/// fio's default status refresh interval, and the shortest --eta-interval it accepts.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
pub const MIN_INTERVAL: Duration = Duration::from_millis(250);

pub struct Status {
    /// Informational lines go to stdout (normal report on stdout) or stderr.
    messages_to_stdout: bool,
    show: bool,
    newline_every: Option<Duration>,
    last_newline: Instant,
    /// Redraw the line this often (--eta-interval).
    interval: Duration,
    last_draw: Instant,
    last: Option<(Instant, [u64; 3], [u64; 3])>,
    rates: ([f64; 3], [f64; 3]),
    drawn: bool,
    /// --status-interval: print interim reports in these formats, on stdout or into
    /// the --output file (where fio writes them too).
    interim: Option<Interim>,
}

/// Where and how --status-interval's reports are written.
struct Interim {
    formats: Vec<ioscope_report::OutputFormat>,
    terse_version: u32,
    /// The --output file (sharing its offset), or None for stdout.
    file: Option<std::fs::File>,
}

impl Status {
    pub fn new(messages_to_stdout: bool, eta: Eta, newline_every: Option<Duration>) -> Status {
        let show = match eta {
            Eta::Always => true,
            Eta::Never => false,
            Eta::Auto => std::io::stderr().is_terminal(),
        };
        Status {
            messages_to_stdout,
            show,
            newline_every,
            last_newline: Instant::now(),
            interval: DEFAULT_INTERVAL,
            last_draw: Instant::now(),
            last: None,
            rates: ([0.0; 3], [0.0; 3]),
            drawn: false,
            interim: None,
        }
    }

    /// Redraw the status line every `interval` (fio's --eta-interval); the rates shown
    /// are averages over the last interval.
    pub fn set_interval(&mut self, interval: Duration) {
        self.interval = interval;
    }

    /// Print full interim reports (fio's --status-interval) where the report goes: on
    /// stdout, or into `file` (the --output file).
    pub fn interim_reports(
        &mut self,
        formats: Vec<ioscope_report::OutputFormat>,
        terse_version: u32,
        file: Option<std::fs::File>,
    ) {
        self.interim = Some(Interim {
            formats,
            terse_version,
            file,
        });
    }

    /// Clear the status line before the report is printed.
    pub fn finish(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[K");
            let _ = std::io::stderr().flush();
            self.drawn = false;
        }
    }
}

fn human(v: f64, unit: &str, base: f64) -> String {
    let prefixes = ["", "k", "M", "G", "T", "P"];
    let mut v = v;
    let mut i = 0;
    while v >= 1000.0 && i < prefixes.len() - 1 {
        v /= base;
        i += 1;
    }
    let p = if base == 1024.0 && i > 0 {
        format!("{}i", prefixes[i].to_uppercase())
    } else {
        prefixes[i].to_string()
    };
    if v >= 100.0 || i == 0 {
        format!("{v:.0}{p}{unit}")
    } else {
        format!("{v:.1}{p}{unit}")
    }
}

fn eta_text(s: f64) -> String {
    let s = s.max(0.0) as u64;
    if s >= 3600 {
        format!("{}h:{:02}m:{:02}s", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}m:{:02}s", s / 60, s % 60)
    }
}

impl Observer for Status {
    fn message(&mut self, line: &str) {
        self.finish();
        if self.messages_to_stdout {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    }

    /// Errors and warnings go to stderr whatever the format, as fio's do.
    fn warning(&mut self, line: &str) {
        self.finish();
        eprintln!("{line}");
    }

    fn interim(&mut self, report: &ioscope_stats::RunResult) {
        self.finish();
        let Some(i) = &mut self.interim else {
            return;
        };
        let text = ioscope_report::render(report, &i.formats, i.terse_version);
        let written = match &mut i.file {
            Some(f) => f.write_all(text.as_bytes()),
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|()| out.flush())
            }
        };
        if let Err(e) = written {
            eprintln!("ioscope: interim report: {e}");
        }
    }

    fn progress(&mut self, jobs: &[JobProgress]) {
        if !self.show {
            return;
        }
        let now = Instant::now();
        let bytes: [u64; 3] = std::array::from_fn(|d| jobs.iter().map(|j| j.bytes[d]).sum());
        let ios: [u64; 3] = std::array::from_fn(|d| jobs.iter().map(|j| j.ios[d]).sum());
        let Some((t, b, n)) = self.last else {
            self.last = Some((now, bytes, ios));
            return;
        };
        if now.duration_since(self.last_draw) < self.interval {
            return;
        }
        self.last_draw = now;
        let secs = now.duration_since(t).as_secs_f64().max(1e-3);
        self.rates = (
            std::array::from_fn(|d| bytes[d].saturating_sub(b[d]) as f64 / secs),
            std::array::from_fn(|d| ios[d].saturating_sub(n[d]) as f64 / secs),
        );
        self.last = Some((now, bytes, ios));
        let running = jobs.iter().filter(|j| j.running).count();
        let states: String = jobs
            .iter()
            .map(|j| if j.done { '_' } else { j.rw })
            .collect();
        let pct = jobs
            .iter()
            .map(|j| {
                let by_size = j
                    .planned
                    .map(|p| (j.bytes.iter().sum::<u64>() as f64 / p.max(1) as f64).min(1.0));
                let by_time = j.runtime_s.map(|r| (j.elapsed_s / r).min(1.0));
                by_size.into_iter().chain(by_time).fold(0.0f64, f64::max)
            })
            .fold(1.0f64, f64::min);
        let elapsed = jobs.first().map_or(0.0, |j| j.elapsed_s);
        let eta_s = if pct > 0.0 {
            elapsed / pct - elapsed
        } else {
            0.0
        };
        let line = Line {
            running,
            files: running,
            states,
            pct: Some(pct),
            bw: self.rates.0,
            iops: self.rates.1,
            eta_s,
        };
        self.draw(&line);
    }
}

/// What the status line shows.
pub struct Line {
    pub running: usize,
    /// Files open.
    pub files: usize,
    /// A character per job: its direction while it runs, `_` once done.
    pub states: String,
    /// Done, 0 to 1 (None: not known yet).
    pub pct: Option<f64>,
    /// Bytes and I/Os per second, per direction.
    pub bw: [f64; 3],
    pub iops: [f64; 3],
    pub eta_s: f64,
}

impl Line {
    fn text(&self) -> String {
        let names = ["r", "w", "t"];
        let bw: Vec<String> = (0..3)
            .filter(|&d| self.bw[d] > 0.0)
            .map(|d| format!("{}={}", names[d], human(self.bw[d], "B/s", 1024.0)))
            .collect();
        let iops: Vec<String> = (0..3)
            .filter(|&d| self.iops[d] > 0.0)
            .map(|d| format!("{}={}", names[d], human(self.iops[d], " IOPS", 1000.0)))
            .collect();
        let pct = self
            .pct
            .map_or_else(|| "-.-".to_string(), |p| format!("{:.1}", p * 100.0));
        format!(
            "Jobs: {} (f={}): [{}][{pct}%][{}][{}][eta {}]",
            self.running,
            self.files,
            self.states,
            bw.join(","),
            iops.join(","),
            eta_text(self.eta_s)
        )
    }
}

impl Status {
    /// Whether the status line is shown (--eta, or stderr a terminal).
    pub fn shown(&self) -> bool {
        self.show
    }

    /// Draw `line` over the last one (on a new line every --eta-newline).
    pub fn draw(&mut self, line: &Line) {
        if !self.show {
            return;
        }
        let line = line.text();
        let newline = self
            .newline_every
            .is_some_and(|d| self.last_newline.elapsed() >= d);
        if newline {
            self.last_newline = Instant::now();
            eprintln!("\r{line}\x1b[K");
        } else {
            eprint!("\r{line}\x1b[K");
        }
        self.drawn = !newline;
        let _ = std::io::stderr().flush();
    }
}
