//! The flags of results while running (`--live`, `--live-interval`, `--metrics`,
//! `--metrics-linger`): defined once here, listed in the flag table of every command
//! that runs jobs (the fio face, `quick`, `peak`, `sweep run`, `compare --run`), their
//! values kept in a [`LiveArgs`] in each command's arguments.

use ioscope_options::flags::{flag, FlagDef, FlagValue::Required as ReqVal};
use std::time::Duration;

pub const LIVE: FlagDef = flag("live", ReqVal, "FILE", "Stream each job's I/O per interval as JSON Lines to FILE ('-': standard output, when the report goes elsewhere) while it runs (ioscope; docs/live-stream.md)");
pub const LIVE_INTERVAL: FlagDef = flag("live-interval", ReqVal, "TIME", "The live stream's and the metrics' interval (default 1s; seconds unless a unit is given) (ioscope)");
pub const METRICS: FlagDef = flag(
    "metrics",
    ReqVal,
    "ADDR:PORT",
    "Serve Prometheus metrics at http://ADDR:PORT/metrics while the run goes on (ioscope)",
);
pub const METRICS_LINGER: FlagDef = flag(
    "metrics-linger",
    ReqVal,
    "TIME",
    "Keep serving the metrics this long after the run, for a last scrape (ioscope)",
);

/// The values of those flags.
#[derive(Clone, Debug, Default)]
pub struct LiveArgs {
    /// --live's file ("-": standard output).
    pub live: Option<String>,
    pub interval: Option<Duration>,
    /// --metrics's ADDR:PORT.
    pub metrics: Option<String>,
    pub linger: Option<Duration>,
}

impl LiveArgs {
    /// The runner's interval: set when a stream or an endpoint is asked for.
    pub fn runner_interval(&self) -> Option<Duration> {
        (self.live.is_some() || self.metrics.is_some())
            .then(|| self.interval.unwrap_or(Duration::from_secs(1)))
    }
}

/// A command's arguments that hold a [`LiveArgs`].
pub trait HasLive {
    fn live_args(&mut self) -> &mut LiveArgs;
}

pub fn set_live<A: HasLive>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    let f = v.unwrap_or("");
    if f.is_empty() {
        return Err("--live: give a file, or - for standard output".into());
    }
    a.live_args().live = Some(f.to_string());
    Ok(())
}

pub fn set_interval<A: HasLive>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    let i = time_flag("live-interval", v)?;
    if i < Duration::from_millis(10) {
        return Err(format!(
            "--live-interval: {i:?} is too short (at least 10ms)"
        ));
    }
    a.live_args().interval = Some(i);
    Ok(())
}

pub fn set_metrics<A: HasLive>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    a.live_args().metrics = Some(v.unwrap_or("").to_string());
    Ok(())
}

pub fn set_linger<A: HasLive>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    a.live_args().linger = Some(time_flag("metrics-linger", v)?);
    Ok(())
}

/// A TIME flag's value (seconds unless a unit is given).
pub fn time_flag(name: &str, v: Option<&str>) -> Result<Duration, String> {
    ioscope_options::units::parse_time_us(v.unwrap_or(""), 1_000_000)
        .map(Duration::from_micros)
        .map_err(|e| format!("--{name}: {e}"))
}
