//! The history database: round trips, refusals of files that are not ours or are
//! newer (left untouched), and concurrent writers.

use ioscope_history::{History, HistoryError, Record, Selector};
use std::path::Path;

fn rec(label: &str, ms: i64, iops: f64) -> Record {
    Record {
        unix_ms: ms,
        label: Some(label.into()),
        kind: "run".into(),
        host: "h".into(),
        kernel: "6.1".into(),
        ioscope_version: "0.1.0".into(),
        devices: serde_json::json!([{"path": "/dev/x", "model": "M", "serial": "S"}]),
        job: serde_json::json!({"jobs": [{"name": "j"}]}),
        command: vec!["ioscope".into(), "--name=j".into()],
        read: ioscope_history::record::DirSummary {
            iops: Some(iops),
            ..Default::default()
        },
        document: serde_json::json!({"jobs": [{"jobname": "j", "read": {"iops": iops}}]}),
        ..Default::default()
    }
}

#[test]
fn a_record_reads_back_as_written_and_selectors_pick_rows() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.sqlite");
    let mut h = History::open(&p, true).unwrap();
    let a = h.record(&rec("a", 1000, 10.0)).unwrap();
    let b = h.record(&rec("b", 2000, 20.0)).unwrap();
    h.record(&rec("a", 3000, 30.0)).unwrap();
    let got = h.records(&Selector::Ids(a, a)).unwrap();
    let mut want = rec("a", 1000, 10.0);
    want.id = a;
    assert_eq!(got, vec![want]);
    let ids = |s: &Selector| -> Vec<i64> { h.list(s).unwrap().iter().map(|r| r.id).collect() };
    assert_eq!(ids(&Selector::Label("a".into())), vec![a, b + 1]);
    assert_eq!(ids(&Selector::Time(1500, 3000)), vec![b]);
    assert_eq!(h.latest_label(None).unwrap().as_deref(), Some("a"));
    assert_eq!(h.latest_label(Some("a")).unwrap().as_deref(), Some("b"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

fn untouched(p: &Path, before: &[u8], e: HistoryError, needle: &str) {
    let msg = e.to_string();
    assert!(
        msg.contains(needle) && msg.contains(&p.display().to_string()),
        "{msg}"
    );
    assert_eq!(std::fs::read(p).unwrap(), before, "the file was changed");
}

#[test]
fn a_file_that_is_not_ours_is_refused_and_left_as_it_is() {
    let d = tempfile::tempdir().unwrap();
    let text = d.path().join("notes.txt");
    std::fs::write(&text, b"my notes, not a database\n".repeat(200)).unwrap();
    let before = std::fs::read(&text).unwrap();
    let e = History::open(&text, true).err().expect("refused");
    untouched(&text, &before, e, "not an ioscope history");
    // Another program's SQLite database.
    let other = d.path().join("other.sqlite");
    {
        let c = rusqlite::Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    let e = History::open(&other, true).err().expect("refused");
    untouched(&other, &before, e, "another program");
    // Another program's database in WAL mode: judged without making its -wal/-shm.
    let wal = d.path().join("wal.sqlite");
    {
        let c = rusqlite::Connection::open(&wal).unwrap();
        c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x);")
            .unwrap();
    }
    let before = std::fs::read(&wal).unwrap();
    for create in [true, false] {
        let e = History::open(&wal, create).err().expect("refused");
        untouched(&wal, &before, e, "another program");
    }
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["notes.txt", "other.sqlite", "wal.sqlite"]);
}

#[test]
fn a_query_opens_read_only() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.sqlite");
    History::open(&p, true)
        .unwrap()
        .record(&rec("a", 1, 1.0))
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
    let h = History::open(&p, false).unwrap();
    assert_eq!(h.list(&Selector::All).unwrap().len(), 1);
}

#[test]
fn a_newer_schema_is_refused_and_left_as_it_is() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.sqlite");
    drop(History::open(&p, true).unwrap());
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA user_version = 99;").unwrap();
    }
    let before = std::fs::read(&p).unwrap();
    let e = History::open(&p, true).err().expect("refused");
    untouched(&p, &before, e, "newer ioscope (history schema 99");
}

#[test]
fn a_missing_database_is_an_error_for_a_query() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("none.sqlite");
    assert!(History::open(&p, false).is_err());
    assert!(!p.exists());
}

#[test]
fn concurrent_writers_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.sqlite");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let p = p.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&p, true).unwrap();
                for i in 0..50 {
                    h.record(&rec(&format!("t{t}"), i, i as f64)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let h = History::open(&p, false).unwrap();
    assert_eq!(h.list(&Selector::All).unwrap().len(), 200);
    for t in 0..4 {
        assert_eq!(h.list(&Selector::Label(format!("t{t}"))).unwrap().len(), 50);
    }
    let c = rusqlite::Connection::open(&p).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

/// Runs that start together on a new database: one makes the schema and switches to
/// WAL mode while the others wait their turn (SQLite answers "locked" at once where a
/// lock upgrade would deadlock, which CI saw; such a step is retried).
#[test]
fn writers_starting_together_on_a_new_database_all_record() {
    let d = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let p = d.path().join(format!("h{round}.sqlite"));
        let gate = std::sync::Arc::new(std::sync::Barrier::new(6));
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let (p, gate) = (p.clone(), gate.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    let mut h = History::open(&p, true).map_err(|e| e.to_string())?;
                    h.record(&rec(&format!("t{t}"), t, 1.0))
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for t in threads {
            let r = t.join().unwrap();
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
        let h = History::open(&p, false).unwrap();
        assert_eq!(h.list(&Selector::All).unwrap().len(), 6, "round {round}");
    }
}
