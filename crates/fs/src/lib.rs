//! Files ioscope writes where others may write (a shared directory, a directory named on
//! the command line, a run directory): made new with `O_EXCL|O_NOFOLLOW` under an
//! unpredictable name, so that a planted file or symbolic link is never written
//! through, then renamed over the final name once whole — a reader never sees half a
//! file, and a crash leaves the old one or the new one.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A new file beside `final_path` (`.NAME.RANDOM.tmp`), created exclusively and never
/// through a symbolic link; its path, to rename over `final_path` once written.
pub fn create_temp(final_path: &Path) -> std::io::Result<(PathBuf, File)> {
    let dir = parent(final_path);
    let name = final_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let p = dir.join(format!(".{name}.{:016x}.tmp", random()));
        match create_new(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Create `path`, which must not exist (nor be a symbolic link): `O_EXCL|O_NOFOLLOW`.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(path)
}

/// An output file named by the user (`--output`, a log, a chart), opened for writing:
/// created if missing, else truncated (or appended to with `append`), and never
/// through a symbolic link: a link planted at the name is refused, not followed.
pub fn open_output(path: &Path, append: bool) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => std::io::Error::other(
                "a symbolic link: refused (name the file it points to, if that is meant)",
            ),
            _ => e,
        })
}

/// [`open_output`], truncating.
pub fn create_output(path: &Path) -> std::io::Result<File> {
    open_output(path, false)
}

/// Write `bytes` as the whole of `path`: into a new temporary file beside it, synced,
/// then renamed over it (a symbolic link at `path` is replaced, never followed).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (tmp, mut f) = create_temp(path)?;
    let done = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// A new directory `PREFIX-RANDOM` under `base` (mode 0700), made by one `mkdir`: a
/// name nobody could have planted, and nothing followed if they had.
pub fn create_temp_dir(base: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    loop {
        let d = base.join(format!("{prefix}-{:016x}", random()));
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A directory ioscope keeps its own files in: made if missing (mode 0755), and
/// refused when it belongs to another user (who could plant links in it) or is a
/// symbolic link.
pub fn own_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(std::io::Error::other(format!(
                "{}: a symbolic link, not a directory of this user's",
                dir.display()
            )))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
        }
        Err(e) => return Err(e),
    }
    let m = std::fs::metadata(dir)?;
    if !m.is_dir() {
        return Err(std::io::Error::other(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(std::io::Error::other(format!(
            "{}: belongs to uid {}, not to this user (uid {me}); give a directory of your own",
            dir.display(),
            m.uid()
        )));
    }
    Ok(())
}

/// All of `r`, refused once it passes `limit` bytes: a job file named /dev/zero, or a
/// pipe that never ends, must not fill memory.
pub fn read_limited(r: impl Read, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "longer than {} MiB, the most read from one file",
                limit >> 20
            ),
        ));
    }
    Ok(buf)
}

/// The whole of the file at `path`, at most `limit` bytes (see [`read_limited`]).
pub fn read_file_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    read_limited(File::open(path)?, limit)
}

/// An exclusive lock on a directory, held until dropped: a second ioscope working in
/// the same directory fails at once, told the first one's process id.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// The lock file in a locked directory.
pub const LOCK_FILE: &str = ".ioscope.lock";

/// Why a directory could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it; its pid, as it wrote it.
    Held(Option<u32>),
    Io(std::io::Error),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held(Some(pid)) => write!(f, "in use by another ioscope (pid {pid})"),
            LockError::Held(None) => write!(f, "in use by another ioscope"),
            LockError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Lock `dir` (see [`DirLock`]): `flock` on [`LOCK_FILE`], which then names this
/// process. The kernel drops the lock when the process ends, however it ends.
pub fn lock_dir(dir: &Path) -> Result<DirLock, LockError> {
    use std::os::fd::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(&path)
        .map_err(LockError::Io)?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(LockError::Io(e));
        }
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(LockError::Held(text.trim().parse().ok()));
    }
    file.set_len(0).map_err(LockError::Io)?;
    writeln!(file, "{}", std::process::id()).map_err(LockError::Io)?;
    Ok(DirLock { _file: file })
}

fn parent(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// 64 unpredictable bits from the kernel.
pub fn random() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
    if n != 8 {
        // No entropy source: the time and the process id still make a name nobody
        // planted in advance, and O_EXCL refuses one that exists.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return t ^ u64::from(std::process::id()).rotate_left(32);
    }
    u64::from_ne_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = d.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_atomically(&out, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&out).unwrap(), b"{}");
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
        // create_new refuses a link and an existing file alike.
        std::os::unix::fs::symlink(&victim, d.path().join("l")).unwrap();
        assert!(create_new(&d.path().join("l")).is_err());
        assert!(create_new(&victim).is_err());
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn outputs_refuse_links() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = d.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        let e = create_output(&out).unwrap_err().to_string();
        assert!(e.contains("a symbolic link: refused"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::write(d.path().join("plain"), b"old").unwrap();
        create_output(&d.path().join("plain")).unwrap();
        assert_eq!(std::fs::read(d.path().join("plain")).unwrap(), b"");
    }

    #[test]
    fn reads_stop_at_the_limit() {
        let e = read_file_limited(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("longer than 1 MiB"), "{e}");
        assert_eq!(read_limited(&b"abc"[..], 3).unwrap(), b"abc");
    }

    #[test]
    fn a_locked_directory_names_its_holder() {
        let d = tempfile::tempdir().unwrap();
        let held = lock_dir(d.path()).unwrap();
        // flock locks belong to the open file: a second open conflicts, as another
        // process's would.
        match lock_dir(d.path()) {
            Err(LockError::Held(Some(pid))) => assert_eq!(pid, std::process::id()),
            other => panic!("{other:?}"),
        }
        drop(held);
        lock_dir(d.path()).unwrap();
    }

    #[test]
    fn own_dirs_only() {
        let d = tempfile::tempdir().unwrap();
        own_dir(&d.path().join("new/run")).unwrap();
        assert!(d.path().join("new/run").is_dir());
        std::os::unix::fs::symlink(d.path(), d.path().join("link")).unwrap();
        assert!(own_dir(&d.path().join("link")).is_err());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let other = d.path().join("other");
            std::fs::create_dir(&other).unwrap();
            std::os::unix::fs::chown(&other, Some(65534), None).unwrap();
            let e = own_dir(&other).unwrap_err().to_string();
            assert!(e.contains("belongs to uid 65534"), "{e}");
        }
    }
}
