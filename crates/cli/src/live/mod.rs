//! Results while the run goes on: the `--live` JSON Lines stream and the `--metrics`
//! Prometheus endpoint, both fed by the runner's per-interval deltas
//! ([`ioscope_runner::LiveInterval`]) on the monitor thread.

mod args;
pub mod metrics;
pub mod stream;

pub use args::*;

use anyhow::{bail, Context, Result};
use ioscope_runner::{JobProgress, LiveInterval, Observer};
use ioscope_stats::RunResult;
use metrics::Metrics;
use stream::LiveStream;

/// What a run feeds while it goes on (either may be absent).
#[derive(Default)]
pub struct Live {
    pub stream: Option<LiveStream>,
    pub metrics: Option<Metrics>,
    /// The sweep point running (its id goes on each line and series).
    pub point: Option<String>,
}

impl Live {
    /// The flags' stream and endpoint, opened before any I/O so that a bad path or a
    /// taken port fails at once. `report_on_stdout`: standard output is the report's.
    pub fn open(a: &LiveArgs, report_on_stdout: bool) -> Result<Live> {
        let every = a.interval.unwrap_or(std::time::Duration::from_secs(1));
        let stream = match a.live.as_deref() {
            None => None,
            Some("-") if report_on_stdout => bail!(
                "--live=-: the report goes to standard output; send it elsewhere with \
                 --output=FILE, or give --live a file"
            ),
            Some("-") => Some(LiveStream::new(
                Box::new(std::io::stdout()),
                "-",
                every.as_millis() as u64,
            )),
            Some(p) => {
                let f = ioscope_fs::create_output(std::path::Path::new(p))
                    .with_context(|| format!("--live={p}"))?;
                Some(LiveStream::new(Box::new(f), p, every.as_millis() as u64))
            }
        };
        if a.interval.is_some() && a.live.is_none() && a.metrics.is_none() {
            bail!("--live-interval goes with --live=FILE or --metrics=ADDR:PORT");
        }
        let metrics = match a.metrics.as_deref() {
            Some(addr) => Some(Metrics::serve(addr, a.linger)?),
            None if a.linger.is_some() => {
                bail!("--metrics-linger goes with --metrics=ADDR:PORT")
            }
            None => None,
        };
        Ok(Live {
            stream,
            metrics,
            point: None,
        })
    }

    pub fn phase(&mut self, n: usize) {
        if let Some(s) = &mut self.stream {
            s.phase(n, self.point.as_deref());
        }
        if let Some(m) = &mut self.metrics {
            m.phase(n);
        }
    }

    pub fn interval(&mut self, iv: &LiveInterval) {
        if let Some(s) = &mut self.stream {
            s.interval(iv, self.point.as_deref());
        }
        if let Some(m) = &mut self.metrics {
            m.interval(iv, self.point.as_deref());
        }
    }

    /// The run's I/O is over: the endpoint says so (`ioscope_running` 0) while the
    /// report is written.
    pub fn run_ended(&mut self) {
        if let Some(m) = &mut self.metrics {
            m.ended();
        }
    }

    /// The run's results are in (a sweep's: None): the stream's end line, the
    /// endpoint's linger.
    pub fn finish(self, r: Option<&RunResult>, interrupted: bool) {
        if let Some(mut s) = self.stream {
            s.end(r, interrupted);
        }
        if let Some(m) = self.metrics {
            m.finish();
        }
    }
}

/// An observer that feeds a [`Live`] and passes everything on to another (a
/// command's own status line or messages).
pub struct Feed<'a> {
    pub inner: &'a mut dyn Observer,
    pub live: &'a mut Live,
}

impl Observer for Feed<'_> {
    fn message(&mut self, line: &str) {
        self.inner.message(line);
    }
    fn warning(&mut self, line: &str) {
        self.inner.warning(line);
    }
    fn progress(&mut self, jobs: &[JobProgress]) {
        self.inner.progress(jobs);
    }
    fn interim(&mut self, report: &RunResult) {
        self.inner.interim(report);
    }
    fn phase_ready(&mut self, phase: usize) {
        self.live.phase(phase);
        self.inner.phase_ready(phase);
    }
    fn interval(&mut self, iv: &LiveInterval) {
        self.live.interval(iv);
        self.inner.interval(iv);
    }
}
