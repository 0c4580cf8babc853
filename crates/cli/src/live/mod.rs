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

/// `--live-interval=TIME` (seconds unless a unit is given; at least 10 ms).
pub fn parse_interval(v: Option<&str>) -> Result<std::time::Duration, String> {
    let i = time_flag("live-interval", v)?;
    if i < std::time::Duration::from_millis(10) {
        return Err(format!(
            "--live-interval: {i:?} is too short (at least 10ms)"
        ));
    }
    Ok(i)
}

/// A TIME flag's value (seconds unless a unit is given).
pub fn time_flag(name: &str, v: Option<&str>) -> Result<std::time::Duration, String> {
    ioscope_options::units::parse_time_us(v.unwrap_or(""), 1_000_000)
        .map(std::time::Duration::from_micros)
        .map_err(|e| format!("--{name}: {e}"))
}

/// `--live=FILE` ("-": standard output).
pub fn parse_live(v: Option<&str>) -> Result<String, String> {
    Some(v.unwrap_or("").to_string())
        .filter(|f| !f.is_empty())
        .ok_or_else(|| "--live: give a file, or - for standard output".to_string())
}

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
    /// The sweep point running (its id goes on each line and series).
    pub point: Option<String>,
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
