//! Results while the run goes on: the `--live` JSON Lines stream and the `--metrics`
//! Prometheus endpoint, both fed by the runner's per-interval deltas
//! ([`ioscope_runner::LiveInterval`]) on the monitor thread.

pub mod metrics;
pub mod stream;

use anyhow::{bail, Context, Result};
use ioscope_runner::LiveInterval;
use ioscope_stats::RunResult;
use metrics::Metrics;
use stream::LiveStream;

/// The flags that ask for them.
pub struct Flags<'a> {
    /// --live's file ("-": standard output).
    pub live: Option<&'a str>,
    pub interval: Option<std::time::Duration>,
    /// --metrics's ADDR:PORT.
    pub metrics: Option<&'a str>,
    pub linger: Option<std::time::Duration>,
}

/// What a run feeds while it goes on (either may be absent).
#[derive(Default)]
pub struct Live {
    pub stream: Option<LiveStream>,
    pub metrics: Option<Metrics>,
}

impl Live {
    /// The flags' stream and endpoint, opened before any I/O so that a bad path or a
    /// taken port fails at once. `report_on_stdout`: standard output is the report's.
    pub fn open(a: &Flags, report_on_stdout: bool) -> Result<Live> {
        let every = a.interval.unwrap_or(std::time::Duration::from_secs(1));
        let stream = match a.live {
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
        let metrics = match a.metrics {
            Some(addr) => Some(Metrics::serve(addr, a.linger)?),
            None if a.linger.is_some() => {
                bail!("--metrics-linger goes with --metrics=ADDR:PORT")
            }
            None => None,
        };
        Ok(Live { stream, metrics })
    }

    pub fn phase(&mut self, n: usize) {
        if let Some(s) = &mut self.stream {
            s.phase(n);
        }
        if let Some(m) = &mut self.metrics {
            m.phase(n);
        }
    }

    pub fn interval(&mut self, iv: &LiveInterval) {
        if let Some(s) = &mut self.stream {
            s.interval(iv);
        }
        if let Some(m) = &mut self.metrics {
            m.interval(iv);
        }
    }

    /// The run's results are in: the stream's end line, the endpoint's linger.
    pub fn finish(self, r: &RunResult) {
        if let Some(mut s) = self.stream {
            s.end(r);
        }
        if let Some(m) = self.metrics {
            m.finish();
        }
    }
}
