//! `--metrics=ADDR:PORT`: a Prometheus endpoint (`GET /metrics`, text exposition
//! format 0.0.4) while the run goes on, fed by the same intervals as the live stream,
//! so its counters at the end equal the report's totals. The HTTP server (tiny_http)
//! runs on its own thread and only reads a copy of the counters under a lock the
//! monitor takes once per interval: the I/O threads never see it.
//!
//! Series (docs/live-stream.md):
//! - `ioscope_ios_total`, `ioscope_bytes_total`: counters per job (`jobname`, not
//!   `job`, which Prometheus keeps for its scrape job), clone and direction;
//! - `ioscope_clat_seconds`: a histogram of completion latency with fixed `le` buckets;
//! - `ioscope_prio_ios_total`, `ioscope_prio_lat_seconds`: the same per I/O priority
//!   (separate names, so that summing the first two never counts an I/O twice);
//! - `ioscope_inflight`: I/Os in flight per job at its last interval; `ioscope_phase`
//!   and `ioscope_running`: where the run is.

use anyhow::{anyhow, Context, Result};
use ioscope_runner::LiveInterval;
use ioscope_stats::interval::LatInterval;
use ioscope_stats::DIR_NAMES;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::ToSocketAddrs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The histograms' upper bounds in seconds: 1 µs to 10 s, 1-2-5 per decade.
pub const LE: [f64; 22] = [
    1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,
    0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
];

/// A latency accumulated over the run: per-bucket counts (not cumulative), count, sum.
#[derive(Clone, Default)]
struct Lat {
    buckets: [u64; LE.len()],
    count: u64,
    sum_ns: u128,
}

impl Lat {
    fn add(&mut self, l: &LatInterval) {
        self.count += l.n;
        self.sum_ns += l.sum_ns;
        let Some(h) = &l.hist else {
            return;
        };
        for (i, c) in h.buckets() {
            // A bucket counts under `le` only when all of it is at or below `le`.
            let top = ioscope_stats::hist::lower_bound(i + 1).saturating_sub(1) as f64 / 1e9;
            if let Some(b) = LE.iter().position(|&le| top <= le) {
                self.buckets[b] += c;
            }
        }
    }
}

/// One job clone's direction (and priority).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// The sweep point ("" outside a sweep).
    point: String,
    /// Under MPI: the rank's host and rank ("" and 0: this process's).
    host: String,
    rank: Option<u32>,
    job: String,
    number: u32,
    dir: &'static str,
}

#[derive(Default)]
struct State {
    ios: BTreeMap<Key, (u64, u64)>,
    clat: BTreeMap<Key, Lat>,
    prio: BTreeMap<(Key, u16), Lat>,
    /// Per job (its key with the direction "-"): I/Os in flight, and its measurement
    /// epoch (a new one starts its counters from zero).
    inflight: BTreeMap<Key, u32>,
    epochs: BTreeMap<Key, u32>,
    phase: usize,
    running: bool,
    host: String,
}

impl State {
    /// Count one job's interval.
    fn add(&mut self, iv: &LiveInterval, point: &str) {
        let s = self;
        let job = Key {
            point: point.to_string(),
            host: iv.host.map_or(String::new(), |(h, _)| h.to_string()),
            rank: iv.host.map(|(_, r)| r),
            job: iv.job.to_string(),
            number: iv.number,
            dir: "-",
        };
        if s.epochs
            .insert(job.clone(), iv.epoch)
            .is_some_and(|e| e != iv.epoch)
        {
            let other = |k: &Key| {
                Key {
                    dir: "-",
                    ..k.clone()
                } != job
            };
            s.ios.retain(|k, _| other(k));
            s.clat.retain(|k, _| other(k));
            s.prio.retain(|(k, _), _| other(k));
        }
        for (d, dir) in DIR_NAMES.iter().enumerate() {
            let x = &iv.dirs[d];
            let key = Key { dir, ..job.clone() };
            let c = s.ios.entry(key.clone()).or_default();
            c.0 += x.ios;
            c.1 += x.bytes;
            s.clat.entry(key.clone()).or_default().add(&x.clat);
            for p in &x.prios {
                s.prio
                    .entry((key.clone(), p.ioprio))
                    .or_default()
                    .add(&p.lat);
            }
        }
        s.inflight.insert(job, iv.inflight.unwrap_or(0));
    }
}

/// The endpoint: its counters and its server thread.
pub struct Metrics {
    state: Arc<Mutex<State>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    linger: Duration,
    addr: String,
}

impl Metrics {
    /// Listen on `addr` (HOST:PORT; that address only). Fails when it cannot (the
    /// port is taken, the address is not this host's).
    pub fn serve(addr: &str, linger: Option<Duration>) -> Result<Metrics> {
        let sock = addr
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| anyhow!("--metrics={addr}: give ADDR:PORT, e.g. 127.0.0.1:9464"))?;
        let server = tiny_http::Server::http(sock)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("--metrics={addr}: cannot listen on {sock}"))?;
        let server = Arc::new(server);
        let state = Arc::new(Mutex::new(State {
            running: true,
            host: ioscope_options::jobfile::hostname(),
            ..Default::default()
        }));
        let (s, st) = (server.clone(), state.clone());
        let thread = std::thread::Builder::new()
            .name("ioscope-metrics".into())
            .spawn(move || answer(&s, &st))
            .context("--metrics: cannot start its thread")?;
        Ok(Metrics {
            state,
            server,
            thread: Some(thread),
            linger: linger.unwrap_or_default(),
            addr: addr.to_string(),
        })
    }

    pub fn phase(&mut self, n: usize) {
        if let Ok(mut s) = self.state.lock() {
            s.phase = n;
        }
    }

    /// Count one job's interval (of a sweep's `point`).
    pub fn interval(&mut self, iv: &LiveInterval, point: Option<&str>) {
        if let Ok(mut s) = self.state.lock() {
            s.add(iv, point.unwrap_or(""));
        }
    }

    /// The run's I/O is over (`ioscope_running` 0).
    pub fn ended(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.running = false;
        }
    }

    /// The run ended: say so, serve `--metrics-linger` longer (a Ctrl-C ends that
    /// early), then stop listening.
    pub fn finish(mut self) {
        self.ended();
        let until = std::time::Instant::now() + self.linger;
        while std::time::Instant::now() < until && crate::term::signals::received().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop();
    }

    fn stop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                eprintln!("ioscope: --metrics={}: its server thread failed", self.addr);
            }
        }
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server thread: `/metrics` gets the exposition, anything else 404.
fn answer(server: &tiny_http::Server, state: &Mutex<State>) {
    for req in server.incoming_requests() {
        let ok = matches!(
            req.method(),
            tiny_http::Method::Get | tiny_http::Method::Head
        ) && req.url().split('?').next() == Some("/metrics");
        let text = ok
            .then(|| state.lock().map(|s| exposition(&s)).ok())
            .flatten();
        let resp = if let Some(text) = text {
            let ct = "Content-Type: text/plain; version=0.0.4; charset=utf-8"
                .parse::<tiny_http::Header>()
                .ok();
            let r = tiny_http::Response::from_string(text);
            match ct {
                Some(h) => r.with_header(h),
                None => r,
            }
        } else if ok {
            // The monitor failed while holding the counters: say so, never a blank page.
            tiny_http::Response::from_string("ioscope: the counters are lost\n")
                .with_status_code(500)
        } else {
            tiny_http::Response::from_string("ioscope serves /metrics\n").with_status_code(404)
        };
        // A scraper that went away mid-answer is not the run's concern.
        let _ = req.respond(resp);
    }
}

/// A label value, escaped as the text format wants.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(k: &Key, host: &str) -> String {
    let point = if k.point.is_empty() {
        String::new()
    } else {
        format!("point=\"{}\",", esc(&k.point))
    };
    // Under MPI each series is the rank's, on its host.
    let (host, rank) = match k.rank {
        Some(r) => (k.host.as_str(), format!(",rank=\"{r}\"")),
        None => (host, String::new()),
    };
    format!(
        "{point}jobname=\"{}\",job_number=\"{}\",direction=\"{}\",host=\"{}\"{rank}",
        esc(&k.job),
        k.number,
        k.dir,
        esc(host)
    )
}

/// The text exposition of every series.
fn exposition(s: &State) -> String {
    let mut o = String::new();
    let host = esc(&s.host);
    let _ = writeln!(
        o,
        "# HELP ioscope_ios_total I/Os completed (after the ramp)."
    );
    let _ = writeln!(o, "# TYPE ioscope_ios_total counter");
    for (k, (ios, _)) in &s.ios {
        let _ = writeln!(o, "ioscope_ios_total{{{}}} {ios}", labels(k, &s.host));
    }
    let _ = writeln!(
        o,
        "# HELP ioscope_bytes_total Bytes moved (after the ramp)."
    );
    let _ = writeln!(o, "# TYPE ioscope_bytes_total counter");
    for (k, (_, bytes)) in &s.ios {
        let _ = writeln!(o, "ioscope_bytes_total{{{}}} {bytes}", labels(k, &s.host));
    }
    let _ = writeln!(o, "# HELP ioscope_clat_seconds Completion latency.");
    let _ = writeln!(o, "# TYPE ioscope_clat_seconds histogram");
    for (k, l) in &s.clat {
        histogram(&mut o, "ioscope_clat_seconds", &labels(k, &s.host), l);
    }
    let _ = writeln!(
        o,
        "# HELP ioscope_prio_ios_total I/Os completed per I/O priority."
    );
    let _ = writeln!(o, "# TYPE ioscope_prio_ios_total counter");
    for ((k, p), l) in &s.prio {
        let _ = writeln!(
            o,
            "ioscope_prio_ios_total{{{},prio=\"{}/{}\"}} {}",
            labels(k, &s.host),
            p >> 13,
            p & 7,
            l.count
        );
    }
    let _ = writeln!(o, "# HELP ioscope_prio_lat_seconds Latency per I/O priority (clat, or lat with lat_percentiles).");
    let _ = writeln!(o, "# TYPE ioscope_prio_lat_seconds histogram");
    for ((k, p), l) in &s.prio {
        let lb = format!("{},prio=\"{}/{}\"", labels(k, &s.host), p >> 13, p & 7);
        histogram(&mut o, "ioscope_prio_lat_seconds", &lb, l);
    }
    let _ = writeln!(
        o,
        "# HELP ioscope_inflight I/Os in flight at the job's last interval."
    );
    let _ = writeln!(o, "# TYPE ioscope_inflight gauge");
    for (k, v) in &s.inflight {
        // The job's labels without a direction.
        let l = labels(k, &s.host).replace(",direction=\"-\"", "");
        let _ = writeln!(o, "ioscope_inflight{{{l}}} {v}");
    }
    let _ = writeln!(
        o,
        "# HELP ioscope_phase The stonewall phase running (0-based)."
    );
    let _ = writeln!(o, "# TYPE ioscope_phase gauge");
    let _ = writeln!(o, "ioscope_phase{{host=\"{host}\"}} {}", s.phase);
    let _ = writeln!(
        o,
        "# HELP ioscope_running 1 while the run goes on, 0 after it."
    );
    let _ = writeln!(o, "# TYPE ioscope_running gauge");
    let _ = writeln!(
        o,
        "ioscope_running{{host=\"{host}\"}} {}",
        u8::from(s.running)
    );
    o
}

/// A histogram's cumulative buckets, +Inf (every count), sum and count.
fn histogram(o: &mut String, name: &str, labels: &str, l: &Lat) {
    let mut cum = 0;
    for (le, c) in LE.iter().zip(l.buckets) {
        cum += c;
        let _ = writeln!(o, "{name}_bucket{{{labels},le=\"{le}\"}} {cum}");
    }
    let _ = writeln!(o, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", l.count);
    let _ = writeln!(o, "{name}_sum{{{labels}}} {}", l.sum_ns as f64 / 1e9);
    let _ = writeln!(o, "{name}_count{{{labels}}} {}", l.count);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioscope_stats::interval::DirInterval;

    #[test]
    fn buckets_are_cumulative_and_end_at_the_count() {
        let mut h = ioscope_stats::Histogram::new();
        for v in [500, 1500, 150_000, 3_000_000_000, 20_000_000_000] {
            h.add(v);
        }
        let lat = LatInterval {
            n: 5,
            sum_ns: 23_000_152_000,
            hist: Some(h),
        };
        let d = DirInterval {
            ios: 5,
            bytes: 20480,
            clat: lat,
            ..Default::default()
        };
        let dirs = [d, DirInterval::default(), DirInterval::default()];
        let mut m = State::default();
        let iv = LiveInterval {
            job: "j\"1",
            number: 1,
            groupid: 0,
            phase: 0,
            ms: 1000,
            epoch: 0,
            ramp: false,
            last: false,
            inflight: Some(3),
            dirs: &dirs,
            host: None,
        };
        m.add(&iv, "");
        let text = exposition(&m);
        let line = |needle: &str| {
            text.lines()
                .find(|l| {
                    l.starts_with("ioscope_clat_seconds_bucket")
                        && l.contains(needle)
                        && l.contains("read")
                })
                .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
                .rsplit(' ')
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(line("le=\"0.000001\""), "1");
        assert_eq!(line("le=\"0.000002\""), "2");
        assert_eq!(line("le=\"0.0002\""), "3");
        assert_eq!(line("le=\"5\""), "4");
        assert_eq!(line("le=\"10\""), "4");
        assert_eq!(line("le=\"+Inf\""), "5");
        assert!(text
            .contains("ioscope_ios_total{jobname=\"j\\\"1\",job_number=\"1\",direction=\"read\""));
        assert!(text.contains("ioscope_inflight{jobname=\"j\\\"1\",job_number=\"1\""));
    }
}
