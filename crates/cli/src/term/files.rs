//! Files ioscope creates where others may write (a shared directory, a directory named
//! on the command line): made new with `O_EXCL|O_NOFOLLOW` under an unpredictable name,
//! so that a planted file or symbolic link is never written through, then renamed over
//! the final name once complete.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A new file beside `final_path` (`.NAME.RANDOM.tmp`), created exclusively and never
/// through a symbolic link.
pub fn create_temp(final_path: &Path) -> std::io::Result<(PathBuf, File)> {
    let dir = final_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = final_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let p = dir.join(format!(".{name}.{:016x}.tmp", random()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// 64 unpredictable bits from the kernel.
fn random() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
    if n != 8 {
        // No entropy source: the time and the process id still make a name nobody
        // planted in advance, and create_new refuses one that exists.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return t ^ u64::from(std::process::id()).rotate_left(32);
    }
    u64::from_ne_bytes(b)
}
