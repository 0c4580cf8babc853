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
    /// Open (or create) the database at `path`. `create`: make it when missing (a
    /// run records into it); otherwise a missing file is an error (a query).
    pub fn open(path: &Path, create: bool) -> Result<History, HistoryError> {
        let io = |source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        };
        if create && !path.exists() {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                make_dir(dir).map_err(io)?;
            }
            match ioscope_fs::create_new(path) {
                // Jobs and command lines are the user's: readable by them alone.
                Ok(f) => f
                    .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
                    .map_err(io)?,
                // Another run created it in the meantime: use it.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
        }
        let sql = |source| HistoryError::Sql {
            path: path.to_path_buf(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(BUSY).map_err(sql)?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        h.check_and_migrate()?;
        Ok(h)
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
            return Err(foreign(format!(
                "cannot use WAL mode (journal_mode {mode})"
            )));
        }
        Ok(())
    }
}

/// application_id, user_version and the number of schema objects.
fn facts(c: &Connection) -> rusqlite::Result<(i64, i64, i64)> {
    let app = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    Ok((app, version, tables))
}

/// The database's directory: created 0700 when missing (the default place is the
/// user's own; a named one must exist or be creatable).
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
