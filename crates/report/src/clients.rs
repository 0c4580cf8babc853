//! Reports of `--client` runs, in fio 3.42's client shape (what its harness
//! `t/client_server.py`, fio-plot and fleet scripts read):
//!
//! - normal: each server's report as the server would print it, after a `<HOST> `
//!   line naming it, then the "All clients" jobs with their run status;
//! - JSON: `global options` is the server's global section with one server, and
//!   with several a list of them, each with the `hostname` and `port` it came from;
//!   `client_stats` holds every server's jobs, each with `hostname` and `port` as the
//!   client named them, then the "All clients" entries; `disk_util` every server's
//!   disks; `ioscope.hosts` each server's errors;
//! - terse: every server's lines, then the aggregate's.
//!
//! Unlike fio, the aggregate's percentiles come from summed histograms (exact), and
//! every group has its own "All clients" entry.

use crate::cluster::{host_value, with_aggregate};
use crate::formats::{interrupted_line, OutputFormat};
use crate::json::{json_value, print_value};
use crate::normal::write_normal;
use ioscope_stats::hosts::{ClusterResult, ALL_CLIENTS};
use ioscope_stats::RunResult;
use serde_json::{Map, Value};

/// Where a server was reached, as its `--client` named it (`""` for `,PORT`).
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

/// Render in the given formats, in fio's order (terse, JSON, normal). `at[i]` is
/// where `c.hosts[i]` was reached.
pub fn render_clients(
    c: &ClusterResult,
    at: &[Endpoint],
    formats: &[OutputFormat],
    terse_version: u32,
) -> String {
    let mut out = String::new();
    if formats.contains(&OutputFormat::Terse) {
        crate::cluster::write_cluster_terse(c, terse_version, &mut out);
    }
    let plus = formats.contains(&OutputFormat::JsonPlus);
    if plus || formats.contains(&OutputFormat::Json) {
        print_value(&clients_json_value(c, at, plus), 0, &mut out);
        out.push('\n');
    }
    if formats.contains(&OutputFormat::Normal) {
        write_clients_normal(c, &mut out);
    }
    out
}

/// Each server's report after its name, then the aggregate.
pub fn write_clients_normal(c: &ClusterResult, out: &mut String) {
    if c.all.meta.interrupted {
        out.push_str(&interrupted_line(&c.all));
    }
    for h in &c.hosts {
        if let Some(e) = &h.error {
            out.push_str(&format!("<{}> error: {e}\n", h.host));
        }
        let Some(r) = &h.result else { continue };
        out.push_str(&client_host_normal(r));
    }
    if with_aggregate(c) {
        let mut text = String::new();
        write_normal(&c.all, &mut text);
        out.push_str(text.strip_prefix('\n').unwrap_or(&text));
    }
}

/// One server's report (final or interim) in the normal format, after its name.
pub fn client_host_normal(r: &RunResult) -> String {
    let mut text = String::new();
    write_normal(r, &mut text);
    // write_normal starts with the blank line that follows fio's header lines.
    format!(
        "<{}> \n{}",
        r.meta.hostname,
        text.strip_prefix('\n').unwrap_or(&text)
    )
}

/// Keys of a job entry that the "All clients" entries do not have, as in fio.
const AGGREGATE_LACKS: [&str; 10] = [
    "job options",
    "desc",
    "elapsed",
    "eta",
    "latency_depth",
    "latency_target",
    "latency_target_ns",
    "latency_percentile",
    "latency_window",
    "latency_window_us",
];

/// fio's client JSON document.
pub fn clients_json_value(c: &ClusterResult, at: &[Endpoint], plus: bool) -> Value {
    let mut m = Map::new();
    let top = json_value(&c.all, plus);
    for key in ["fio version", "timestamp", "time"] {
        if let Some(v) = top.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    let tag = |mut e: Value, w: &Endpoint| {
        if let Some(o) = e.as_object_mut() {
            // The client's entries carry no run clock (fio's client has none).
            o.remove("elapsed");
            o.remove("eta");
            o.insert("hostname".into(), w.host.clone().into());
            o.insert("port".into(), w.port.into());
        }
        e
    };
    let mut globals = Vec::new();
    let mut stats = Vec::new();
    let mut disks = Vec::new();
    for (h, w) in c.hosts.iter().zip(at) {
        let Some(r) = &h.result else { continue };
        // Interim reports first, each job an entry, as fio's client lists them.
        for i in &h.interim {
            if let Some(Value::Array(jobs)) = json_value(i, plus).get("jobs") {
                stats.extend(jobs.iter().map(|j| tag(j.clone(), w)));
            }
        }
        let v = json_value(r, plus);
        if let Some(g) = v.get("global options") {
            globals.push((w, g.clone()));
        }
        if let Some(Value::Array(jobs)) = v.get("jobs") {
            stats.extend(jobs.iter().map(|j| tag(j.clone(), w)));
        }
        if let Some(Value::Array(d)) = v.get("disk_util") {
            disks.extend(d.iter().map(|d| tag(d.clone(), w)));
        }
    }
    m.insert("global options".into(), global_options(globals, at.len()));
    if with_aggregate(c) {
        if let Some(Value::Array(jobs)) = top.get("jobs") {
            for j in jobs {
                let mut j = j.clone();
                if let Some(o) = j.as_object_mut() {
                    // A sum over servers has no options, description or latency
                    // target of its own (fio's aggregate has none either).
                    o.retain(|k, _| !AGGREGATE_LACKS.contains(&k.as_str()));
                    o.insert("hostname".into(), ALL_CLIENTS.into());
                    o.insert("port".into(), 0.into());
                }
                stats.push(j);
            }
        }
    }
    m.insert("client_stats".into(), Value::Array(stats));
    m.insert("disk_util".into(), Value::Array(disks));
    let mut meta = Map::new();
    let hosts: Vec<Value> = c.hosts.iter().map(host_value).collect();
    meta.insert("hosts".into(), Value::Array(hosts));
    if c.all.meta.interrupted {
        // Ctrl-C on the client: the servers stopped their jobs and sent what they did.
        meta.insert("interrupted".into(), true.into());
        if let Some(s) = &c.all.meta.signal {
            meta.insert("signal".into(), s.clone().into());
        }
    }
    m.insert("ioscope".into(), Value::Object(meta));
    Value::Object(m)
}

/// One server: its global section (an empty object without one). Several: a list
/// of the global sections there were, each naming its server first.
fn global_options(globals: Vec<(&Endpoint, Value)>, servers: usize) -> Value {
    if servers == 1 {
        return globals
            .into_iter()
            .next()
            .map_or_else(|| Value::Object(Map::new()), |(_, g)| g);
    }
    let list = globals
        .into_iter()
        .map(|(w, g)| {
            let mut o = Map::new();
            o.insert("hostname".into(), w.host.clone().into());
            o.insert("port".into(), w.port.into());
            if let Value::Object(g) = g {
                o.extend(g);
            }
            Value::Object(o)
        })
        .collect();
    Value::Array(list)
}
