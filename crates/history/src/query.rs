//! Reading the history back: which rows a selector names (a label, run ids, a time
//! range), their summaries, and whole records.

use crate::error::HistoryError;
use crate::record::{DirSummary, Record};
use crate::store::History;
use rusqlite::types::Value as Sql;
use rusqlite::Row;

/// Which runs: by label (the default), by id (`id:7`, `id:3-9`) or by time
/// (`time:FROM..TO`, each `YYYY-MM-DD[THH:MM[:SS]]` UTC, either may be empty).
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    All,
    Label(String),
    Ids(i64, i64),
    /// ms since the Unix epoch, [from, to).
    Time(i64, i64),
}

impl Selector {
    pub fn parse(s: &str) -> Result<Selector, HistoryError> {
        let bad = |why: &str| HistoryError::Selector(format!("'{s}': {why}"));
        if let Some(ids) = s.strip_prefix("id:") {
            let (a, b) = ids.split_once('-').unwrap_or((ids, ids));
            let n = |x: &str| {
                x.trim()
                    .parse::<i64>()
                    .map_err(|_| bad("give id:N or id:N-M"))
            };
            return Ok(Selector::Ids(n(a)?, n(b)?));
        }
        if let Some(range) = s.strip_prefix("time:") {
            let (a, b) = range
                .split_once("..")
                .ok_or_else(|| bad("give time:FROM..TO"))?;
            let t = |x: &str, none: i64| {
                if x.is_empty() {
                    Ok(none)
                } else {
                    parse_time(x).ok_or_else(|| bad("times are YYYY-MM-DD[THH:MM[:SS]] (UTC)"))
                }
            };
            return Ok(Selector::Time(t(a, i64::MIN)?, t(b, i64::MAX)?));
        }
        if s.is_empty() {
            return Err(bad("an empty label"));
        }
        Ok(Selector::Label(
            s.strip_prefix("label:").unwrap_or(s).to_string(),
        ))
    }

    fn clause(&self) -> (&'static str, Vec<Sql>) {
        match self {
            Selector::All => ("1", vec![]),
            Selector::Label(l) => ("label = ?1", vec![Sql::Text(l.clone())]),
            Selector::Ids(a, b) => (
                "id BETWEEN ?1 AND ?2",
                vec![Sql::Integer(*a), Sql::Integer(*b)],
            ),
            Selector::Time(a, b) => (
                "unix_ms >= ?1 AND unix_ms < ?2",
                vec![Sql::Integer(*a), Sql::Integer(*b)],
            ),
        }
    }
}

/// `YYYY-MM-DD[THH:MM[:SS]]` (UTC) in ms since the Unix epoch.
fn parse_time(s: &str) -> Option<i64> {
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, ""));
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [y, m, day] = d[..] else { return None };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1970..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || !(1..=month_days[m as usize - 1]).contains(&day)
    {
        return None;
    }
    let t: Vec<i64> = if time.is_empty() {
        vec![]
    } else {
        time.split(':')
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?
    };
    let (h, mi, sec) = (
        *t.first().unwrap_or(&0),
        *t.get(1).unwrap_or(&0),
        *t.get(2).unwrap_or(&0),
    );
    if t.len() > 3 || !(0..=23).contains(&h) || !(0..=59).contains(&mi) || !(0..=60).contains(&sec)
    {
        return None;
    }
    Some(((days_from_civil(y, m, day) * 24 + h) * 60 + mi) * 60_000 + sec * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A row without its large columns (job, document).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub id: i64,
    pub unix_ms: i64,
    pub label: Option<String>,
    pub kind: String,
    pub host: String,
    pub kernel: String,
    pub interrupted: bool,
    pub read: DirSummary,
    pub write: DirSummary,
}

const SUMMARY_COLS: &str = "id, unix_ms, label, kind, host, kernel, interrupted, read_iops, \
     read_bw_bytes, read_clat_p99_ns, write_iops, write_bw_bytes, write_clat_p99_ns";

fn summary(r: &Row) -> rusqlite::Result<Summary> {
    Ok(Summary {
        id: r.get(0)?,
        unix_ms: r.get(1)?,
        label: r.get(2)?,
        kind: r.get(3)?,
        host: r.get(4)?,
        kernel: r.get(5)?,
        interrupted: r.get(6)?,
        read: DirSummary {
            iops: r.get(7)?,
            bw_bytes: r.get(8)?,
            clat_p99_ns: r.get(9)?,
        },
        write: DirSummary {
            iops: r.get(10)?,
            bw_bytes: r.get(11)?,
            clat_p99_ns: r.get(12)?,
        },
    })
}

impl History {
    /// The selected rows' summaries, oldest first.
    pub fn list(&self, sel: &Selector) -> Result<Vec<Summary>, HistoryError> {
        let (w, args) = sel.clause();
        let q = format!("SELECT {SUMMARY_COLS} FROM runs WHERE {w} ORDER BY unix_ms, id");
        let mut st = self.conn.prepare(&q).map_err(|e| self.sql(e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args), summary)
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The selected rows in full, oldest first.
    pub fn records(&self, sel: &Selector) -> Result<Vec<Record>, HistoryError> {
        let (w, args) = sel.clause();
        let q = format!(
            "SELECT {SUMMARY_COLS}, ioscope, devices, job, command, results_file, document \
             FROM runs WHERE {w} ORDER BY unix_ms, id"
        );
        let mut st = self.conn.prepare(&q).map_err(|e| self.sql(e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args), full)
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The label of the latest run that has one (other than `not`).
    pub fn latest_label(&self, not: Option<&str>) -> Result<Option<String>, HistoryError> {
        let r = self.conn.query_row(
            "SELECT label FROM runs WHERE label IS NOT NULL AND label IS NOT ?1 \
             ORDER BY unix_ms DESC, id DESC LIMIT 1",
            [not],
            |r| r.get(0),
        );
        match r {
            Ok(l) => Ok(Some(l)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(self.sql(e)),
        }
    }
}

fn full(r: &Row) -> rusqlite::Result<Record> {
    let s = summary(r)?;
    let json = |i: usize| -> rusqlite::Result<serde_json::Value> {
        let t: String = r.get(i)?;
        Ok(serde_json::from_str(&t).unwrap_or(serde_json::Value::Null))
    };
    let command: String = r.get(16)?;
    Ok(Record {
        id: s.id,
        unix_ms: s.unix_ms,
        label: s.label,
        kind: s.kind,
        host: s.host,
        kernel: s.kernel,
        interrupted: s.interrupted,
        read: s.read,
        write: s.write,
        ioscope_version: r.get(13)?,
        devices: json(14)?,
        job: json(15)?,
        command: serde_json::from_str(&command).unwrap_or_default(),
        results_file: r.get(17)?,
        document: json(18)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_read_as_documented() {
        assert_eq!(
            Selector::parse("base").unwrap(),
            Selector::Label("base".into())
        );
        assert_eq!(
            Selector::parse("label:id:x").unwrap(),
            Selector::Label("id:x".into())
        );
        assert_eq!(Selector::parse("id:3-9").unwrap(), Selector::Ids(3, 9));
        assert_eq!(Selector::parse("id:7").unwrap(), Selector::Ids(7, 7));
        assert_eq!(
            Selector::parse("time:2026-11-27..").unwrap(),
            Selector::Time(1_795_737_600_000, i64::MAX)
        );
        assert_eq!(
            Selector::parse("time:..1970-01-01T00:01").unwrap(),
            Selector::Time(i64::MIN, 60_000)
        );
        let bad = [
            "",
            "id:x",
            "time:2026-13-01..",
            "time:yesterday",
            "time:2026-02-29..",
            "time:2026-01-01T-1:00..",
            "time:99999999999-01-01..",
        ];
        for bad in bad {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }
}
