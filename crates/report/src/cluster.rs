//! Reports of a run on many hosts (MPI ranks), shaped like fio's client/server mode:
//! each host's jobs, then the "All clients" aggregate.
//!
//! - normal: every line of a host's report prefixed with `<host:rank> `, then the
//!   aggregate's jobs and its "Run status group" lines;
//! - JSON: `client_stats` holds every host's job entries, each with `hostname` and
//!   `port` (here: the rank), followed by the aggregate entries; `disk_util` entries
//!   carry their host too; `ioscope.hosts` lists the ranks with their errors;
//! - terse: every host's lines, then the aggregate's.
//!
//! As in fio, the aggregate is shown when there is more than one entry to add up.

use crate::formats::{interrupted_line, OutputFormat};
use crate::json::{json_value, print_value};
use crate::normal::write_normal;
use crate::terse::write_terse;
use ioscope_stats::hosts::{ClusterResult, HostRun, Ran, ALL_CLIENTS};
use serde_json::{Map, Value};

/// Whether the aggregate is reported: more than one entry over all hosts.
pub(crate) fn with_aggregate(c: &ClusterResult) -> bool {
    let entries: usize = c
        .hosts
        .iter()
        .filter_map(|h| h.result.as_ref())
        .map(|r| r.jobs.len())
        .sum();
    entries > 1
}

fn label(h: &HostRun) -> String {
    format!("<{}:{}>", h.host, h.rank)
}

/// Render in the given formats, in fio's order (terse, JSON, normal).
pub fn render_cluster(c: &ClusterResult, formats: &[OutputFormat], terse_version: u32) -> String {
    let mut out = String::new();
    if formats.contains(&OutputFormat::Terse) {
        write_cluster_terse(c, terse_version, &mut out);
    }
    if formats.contains(&OutputFormat::JsonPlus) {
        write_cluster_json(c, true, &mut out);
    } else if formats.contains(&OutputFormat::Json) {
        write_cluster_json(c, false, &mut out);
    }
    if formats.contains(&OutputFormat::Normal) {
        write_cluster_normal(c, &mut out);
    }
    out
}

/// A workflow's run as fio writes it: one host's document, or the client shape.
pub fn ran_json_value(r: &Ran, plus: bool) -> Value {
    match r {
        Ran::One(run) => json_value(run, plus),
        Ran::Hosts(c) => cluster_json_value(c, plus),
    }
}

/// [`crate::render`] or [`render_cluster`], as the run was made.
pub fn render_ran(r: &Ran, formats: &[OutputFormat], terse_version: u32) -> String {
    match r {
        Ran::One(run) => crate::run::render(run, formats, terse_version),
        Ran::Hosts(c) => render_cluster(c, formats, terse_version),
    }
}

/// Each host's report with its lines prefixed, then the aggregate.
pub fn write_cluster_normal(c: &ClusterResult, out: &mut String) {
    if c.all.meta.interrupted {
        out.push_str(&interrupted_line(&c.all));
    }
    for h in &c.hosts {
        let l = label(h);
        if let Some(e) = &h.error {
            out.push_str(&format!("{l} error: {e}\n"));
        }
        let Some(r) = &h.result else { continue };
        let mut text = String::new();
        write_normal(r, &mut text);
        for line in text.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                out.push_str(&format!("{l} {line}\n"));
            }
        }
    }
    if with_aggregate(c) {
        write_normal(&c.all, out);
    }
}

/// fio's client JSON: `client_stats` instead of `jobs`.
pub fn cluster_json_value(c: &ClusterResult, plus: bool) -> Value {
    let mut m = Map::new();
    let top = json_value(&c.all, plus);
    for key in [
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "global options",
    ] {
        if let Some(v) = top.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    let mut stats = Vec::new();
    let mut disks = Vec::new();
    for h in &c.hosts {
        let Some(r) = &h.result else { continue };
        let v = json_value(r, plus);
        let tag = |mut e: Value| {
            if let Some(o) = e.as_object_mut() {
                o.insert("hostname".into(), h.host.clone().into());
                o.insert("port".into(), h.rank.into());
            }
            e
        };
        if let Some(Value::Array(jobs)) = v.get("jobs") {
            stats.extend(jobs.iter().cloned().map(tag));
        }
        if let Some(Value::Array(d)) = v.get("disk_util") {
            disks.extend(d.iter().cloned().map(tag));
        }
    }
    if with_aggregate(c) {
        if let Some(Value::Array(jobs)) = top.get("jobs") {
            for j in jobs {
                let mut j = j.clone();
                if let Some(o) = j.as_object_mut() {
                    o.insert("hostname".into(), ALL_CLIENTS.into());
                }
                stats.push(j);
            }
        }
    }
    m.insert("client_stats".into(), Value::Array(stats));
    if !disks.is_empty() {
        m.insert("disk_util".into(), Value::Array(disks));
    }
    let mut meta = top
        .get("ioscope")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if let Some(o) = meta.as_object_mut() {
        let hosts: Vec<Value> = c.hosts.iter().map(host_value).collect();
        o.insert("hosts".into(), Value::Array(hosts));
    }
    m.insert("ioscope".into(), meta);
    Value::Object(m)
}

/// A rank in `ioscope.hosts`: where it ran, when its jobs started, what went wrong.
pub(crate) fn host_value(h: &HostRun) -> Value {
    let mut o = Map::new();
    o.insert("rank".into(), h.rank.into());
    o.insert("hostname".into(), h.host.clone().into());
    if let Some(r) = &h.result {
        let start = r
            .jobs
            .iter()
            .map(|j| j.start_unix_ms)
            .filter(|&s| s > 0)
            .min();
        o.insert("job_start_ms".into(), start.unwrap_or(0).into());
        o.insert("interrupted".into(), r.meta.interrupted.into());
        o.insert("jobs".into(), r.jobs.len().into());
    }
    if let Some(e) = &h.error {
        o.insert("error".into(), e.clone().into());
    }
    Value::Object(o)
}

pub fn write_cluster_json(c: &ClusterResult, plus: bool, out: &mut String) {
    print_value(&cluster_json_value(c, plus), 0, out);
    out.push('\n');
}

pub fn write_cluster_terse(c: &ClusterResult, version: u32, out: &mut String) {
    for h in &c.hosts {
        let Some(r) = &h.result else { continue };
        // A server's interim reports (--status-interval) first, as they came.
        for i in &h.interim {
            write_terse(i, version, out);
        }
        write_terse(r, version, out);
    }
    if with_aggregate(c) {
        write_terse(&c.all, version, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::psync_run as sample_run;
    use ioscope_stats::hosts::merge_hosts;

    fn two_hosts() -> ClusterResult {
        let hosts = (0..2)
            .map(|rank| HostRun {
                rank,
                host: format!("h{rank}"),
                result: Some(sample_run()),
                error: None,
                live_sent: 0,
                interim: Vec::new(),
            })
            .chain(std::iter::once(HostRun {
                rank: 2,
                host: "h2".into(),
                result: None,
                error: Some("open: No such file or directory".into()),
                live_sent: 0,
                interim: Vec::new(),
            }))
            .collect();
        merge_hosts(hosts)
    }

    #[test]
    fn json_has_client_stats_with_hosts_and_the_aggregate() {
        let c = two_hosts();
        let mut s = String::new();
        write_cluster_json(&c, false, &mut s);
        let v: Value = serde_json::from_str(&s).unwrap();
        let stats = v["client_stats"].as_array().unwrap();
        let per_host = sample_run().jobs.len();
        assert_eq!(stats.len(), 2 * per_host + c.all.jobs.len());
        assert_eq!(stats[0]["hostname"], "h0");
        assert_eq!(stats[per_host]["port"], 1);
        let last = stats.last().unwrap();
        assert_eq!(last["jobname"], ALL_CLIENTS);
        let ios = |e: &Value| e["read"]["total_ios"].as_u64().unwrap_or(0);
        let host_ios: u64 = stats
            .iter()
            .filter(|e| e["jobname"] != ALL_CLIENTS && e["groupid"] == last["groupid"])
            .map(ios)
            .sum();
        assert_eq!(ios(last), host_ios);
        assert_eq!(
            v["ioscope"]["hosts"][2]["error"],
            "open: No such file or directory"
        );
        assert!(v.get("jobs").is_none());
    }

    #[test]
    fn normal_prefixes_each_hosts_lines() {
        let c = two_hosts();
        let mut s = String::new();
        write_cluster_normal(&c, &mut s);
        assert!(s.contains("<h2:2> error: open: No such file"), "{s}");
        assert!(s
            .lines()
            .any(|l| l.starts_with("<h1:1> ") && l.contains("groupid=")));
        assert!(s.contains(&format!("{ALL_CLIENTS}: (groupid=")), "{s}");
        assert!(s.contains("\nRun status group"), "{s}");
    }
}
