//! Opening a history database. A new file is created safely (`O_EXCL|O_NOFOLLOW`,
//! mode 0600, in a directory made 0700 when it is the default one) and given the
//! schema; an existing one is used only when it is ours (SQLite's `application_id`)
//! and not newer than this binary; older schemas are migrated in one transaction.
//! WAL mode and a busy timeout let runs write at the same time without corruption.

use crate::error::HistoryError;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema this binary writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: i64 = 1;
/// "iosc": SQLite's `application_id` of an ioscope history.
const APPLICATION_ID: i64 = 0x696f_7363;
/// How long a writer waits for another to finish.
const BUSY: Duration = Duration::from_secs(30);

/// The schema's migrations: entry `i` takes schema `i` to `i + 1`.
const MIGRATIONS: &[&str] = &["
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        unix_ms INTEGER NOT NULL,
        label TEXT,
        kind TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        ioscope TEXT NOT NULL,
        devices TEXT NOT NULL,
        job TEXT NOT NULL,
        command TEXT NOT NULL,
        results_file TEXT,
        interrupted INTEGER NOT NULL,
        read_iops REAL, read_bw_bytes REAL, read_clat_p99_ns REAL,
        write_iops REAL, write_bw_bytes REAL, write_clat_p99_ns REAL,
        document TEXT NOT NULL
    );
    CREATE INDEX runs_label ON runs(label, unix_ms);
    CREATE INDEX runs_time ON runs(unix_ms);
"];

/// An open history database.
pub struct History {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

/// `$IOSCOPE_HISTORY`, else `$XDG_DATA_HOME/ioscope/history.sqlite`, else
/// `~/.local/share/ioscope/history.sqlite`.
pub fn default_path() -> Result<PathBuf, HistoryError> {
    if let Some(p) = std::env::var_os("IOSCOPE_HISTORY").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME").filter(|p| !p.is_empty());
            PathBuf::from(home.ok_or(HistoryError::NoDefault)?).join(".local/share")
        }
    };
    Ok(data.join("ioscope").join("history.sqlite"))
}

impl History {
    /// Open the database at `path`. `create` (a run records into it): made when
    /// missing (mode 0600, `O_EXCL|O_NOFOLLOW`; its directory too when it is the
    /// default place), migrated, in WAL mode. Otherwise (a query) it must exist, and
    /// is opened read-only and left as it is. Either way a file that is not ours, or
    /// is newer, is judged without a lock or a write, and refused untouched.
    pub fn open(path: &Path, create: bool) -> Result<History, HistoryError> {
        let io = |source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        };
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            inspect(path)?;
        } else if create {
            make_file(path).map_err(io)?;
        }
        let sql = |source| HistoryError::Sql {
            path: path.to_path_buf(),
            source,
        };
        let access = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } else {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        };
        let flags = access | OpenFlags::SQLITE_OPEN_NOFOLLOW | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(BUSY).map_err(sql)?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        if create {
            patiently(|| h.check_and_migrate())?;
        } else {
            h.check_readable()?;
        }
        Ok(h)
    }

    /// A query's database: ours, of this schema.
    fn check_readable(&self) -> Result<(), HistoryError> {
        let (app, version, _) = facts(&self.conn).map_err(|e| self.sql(e))?;
        // A migration in WAL mode may not be in the main file's header yet: the
        // version read here, through SQLite, is the one that counts.
        if app == APPLICATION_ID && version > SCHEMA_VERSION {
            return Err(HistoryError::Newer {
                path: self.path.clone(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        if app != APPLICATION_ID || version != SCHEMA_VERSION {
            return Err(HistoryError::Unusable {
                path: self.path.clone(),
                why: format!(
                    "no run recorded yet (schema {version}; a run with --history brings it \
                     to {SCHEMA_VERSION})"
                ),
            });
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn sql(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// Ours and not newer, or empty (then given the schema), judged and migrated in
    /// one transaction (a concurrent opener waits, then finds it done); then WAL mode.
    /// A file refused is left exactly as it was.
    fn check_and_migrate(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let foreign = |why: String| HistoryError::Foreign {
            path: path.clone(),
            why,
        };
        let sql = |source| HistoryError::Sql {
            path: path.clone(),
            source,
        };
        // A file that is no database at all says so on the first read; any other
        // failure (a full disk, an I/O error) is no verdict on the file.
        let judge = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => foreign(e.to_string()),
            _ => sql(e),
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(judge)?;
        let (app, version, tables) = facts(&tx).map_err(judge)?;
        if app != APPLICATION_ID && !(app == 0 && version == 0 && tables == 0) {
            return Err(foreign(format!(
                "an SQLite database of another program (application_id {app:#x})"
            )));
        }
        if version > SCHEMA_VERSION {
            return Err(HistoryError::Newer {
                path: path.clone(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        for step in MIGRATIONS.iter().skip(version.max(0) as usize) {
            tx.execute_batch(step).map_err(sql)?;
        }
        if version < SCHEMA_VERSION {
            tx.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
            ))
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(HistoryError::Unusable {
                path: path.clone(),
                why: format!("cannot use WAL mode here (journal_mode {mode})"),
            });
        }
        Ok(())
    }
}

/// Runs `step` again while another connection holds the lock, up to [`BUSY`] in all.
/// SQLite's busy timeout covers plain waits but not a lock upgrade that would
/// deadlock (a reader turning writer, or the switch to WAL mode, while another run
/// commits): there it answers "database is locked" at once, and the step — a whole
/// transaction, rolled back — is simply tried again.
pub(crate) fn patiently<T>(
    mut step: impl FnMut() -> Result<T, HistoryError>,
) -> Result<T, HistoryError> {
    let start = std::time::Instant::now();
    let mut round: u64 = 0;
    loop {
        match step() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY => {
                // Spread the retries of runs that collided (pid-salted, 5–50 ms).
                round += 1;
                let salt = u64::from(std::process::id()).wrapping_mul(round * 7919);
                std::thread::sleep(Duration::from_millis(5 + salt % 46));
            }
            r => return r,
        }
    }
}

fn is_busy(e: &HistoryError) -> bool {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    matches!(e, HistoryError::Sql { source, .. }
        if matches!(source.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked)))
}

/// application_id, user_version and the number of schema objects.
fn facts(c: &Connection) -> rusqlite::Result<(i64, i64, i64)> {
    let app = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    Ok((app, version, tables))
}

/// Judge an existing file without a lock or a write: a database of ours, not newer
/// than this binary. SQLite's own header says most of it (read as plain bytes, so a
/// run writing the file meanwhile changes nothing); only a database with no
/// application_id is opened, in SQLite's `immutable` mode (no journal or WAL files
/// made), to see whether it is empty.
fn inspect(path: &Path) -> Result<(), HistoryError> {
    let foreign = |why: String| HistoryError::Foreign {
        path: path.to_path_buf(),
        why,
    };
    let header = read_header(path).map_err(|source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let Some((app, version)) = header else {
        return Err(foreign("no SQLite header".into()));
    };
    if app == APPLICATION_ID && version > SCHEMA_VERSION {
        return Err(HistoryError::Newer {
            path: path.to_path_buf(),
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    if app == APPLICATION_ID {
        return Ok(());
    }
    if app != 0 {
        return Err(foreign(format!(
            "an SQLite database of another program (application_id {app:#x})"
        )));
    }
    inspect_schema(path)
}

/// The application_id and user_version of SQLite's 100-byte file header (both 4-byte
/// big-endian, at offsets 68 and 60); None when the file has no such header.
fn read_header(path: &Path) -> std::io::Result<Option<(i64, i64)>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut head = Vec::with_capacity(100);
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?
        .take(100)
        .read_to_end(&mut head)?;
    if head.len() < 100 || !head.starts_with(b"SQLite format 3\0") {
        return Ok(None);
    }
    let word = |at: usize| {
        i64::from(i32::from_be_bytes([
            head[at],
            head[at + 1],
            head[at + 2],
            head[at + 3],
        ]))
    };
    Ok(Some((word(68), word(60))))
}

/// A database with no application_id: ours only when it is empty (no schema, no
/// version), judged in SQLite's `immutable` mode.
fn inspect_schema(path: &Path) -> Result<(), HistoryError> {
    let foreign = |why: String| HistoryError::Foreign {
        path: path.to_path_buf(),
        why,
    };
    let text = path.to_string_lossy();
    let uri = format!(
        "file:{}?immutable=1",
        text.replace('%', "%25")
            .replace('?', "%3f")
            .replace('#', "%23")
    );
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let judge = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => foreign(e.to_string()),
        _ => HistoryError::Sql {
            path: path.to_path_buf(),
            source: e,
        },
    };
    let conn = Connection::open_with_flags(&uri, flags).map_err(judge)?;
    let (_, version, tables) = facts(&conn).map_err(judge)?;
    if version != 0 || tables != 0 {
        return Err(foreign(format!(
            "an SQLite database of another program (no application_id; schema version \
             {version}, {tables} schema objects)"
        )));
    }
    Ok(())
}

/// A new database file: mode 0600 (jobs and command lines are the user's), never
/// through a link; its directory made (0700) when it is the default place. Another
/// run that made it first is fine.
fn make_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let default = default_path().ok();
    if let (Some(dir), true) = (path.parent(), default.as_deref() == Some(path)) {
        make_dir(dir)?;
    }
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o600)
        .open(path);
    match made {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        r => r.map(|_| ()),
    }
}

/// The default place's directory: created 0700 when missing (a named database's
/// directory must exist).
fn make_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
