//! `lockfile=exclusive|readwrite`: jobs of one run that use the same file take turns,
//! as fio's in-process file locks make them. The lock covers the issue of one I/O (the
//! whole syscall for synchronous engines, the submission for asynchronous ones);
//! `exclusive` lets one I/O go at a time, `readwrite` lets reads go together and
//! writes alone. Jobs find the lock by the file's path when they open it.

use ioscope_options::LockMode;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// One file's lock: a fair (first come, first served) reader-writer lock. Each I/O
/// takes a ticket; at its turn a read joins the reads in progress and lets the next
/// ticket go, a write waits for them to end and holds the turn until it is done. Fair,
/// because a job that releases and asks again at once must not starve the others.
#[derive(Debug, Default)]
pub struct FileLock {
    next: AtomicU32,
    serving: AtomicU32,
    readers: AtomicU32,
}

impl FileLock {
    /// Take the lock: shared for a read under readwrite, else exclusive.
    pub fn acquire(&self, shared: bool) {
        let ticket = self.next.fetch_add(1, Ordering::SeqCst);
        wait(|| self.serving.load(Ordering::SeqCst) == ticket);
        if shared {
            self.readers.fetch_add(1, Ordering::SeqCst);
            self.serving.fetch_add(1, Ordering::SeqCst);
        } else {
            wait(|| self.readers.load(Ordering::SeqCst) == 0);
        }
    }

    pub fn release(&self, shared: bool) {
        if shared {
            self.readers.fetch_sub(1, Ordering::SeqCst);
        } else {
            self.serving.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Spin briefly, then give the CPU to the job holding the lock (2-CPU machines).
fn wait(ready: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<FileLock>>> {
    static R: std::sync::OnceLock<Mutex<HashMap<PathBuf, Weak<FileLock>>>> =
        std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

/// The lock of the file at `path` (shared by every job that has it open), or None
/// with lockfile=none.
pub fn for_path(mode: LockMode, path: &Path) -> Option<Arc<FileLock>> {
    if mode == LockMode::None {
        return None;
    }
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    r.retain(|_, w| w.strong_count() > 0);
    if let Some(l) = r.get(&key).and_then(Weak::upgrade) {
        return Some(l);
    }
    let l = Arc::new(FileLock::default());
    r.insert(key, Arc::downgrade(&l));
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_writers_exclude() {
        let l = FileLock::default();
        l.acquire(true);
        l.acquire(true);
        assert_eq!(l.readers.load(Ordering::Relaxed), 2);
        l.release(true);
        l.release(true);
        l.acquire(false);
        assert_eq!(
            l.serving.load(Ordering::Relaxed),
            2,
            "the write holds its turn"
        );
        l.release(false);
        assert_eq!(l.serving.load(Ordering::Relaxed), 3);
        let a = for_path(LockMode::Exclusive, Path::new("/tmp/x-lock")).unwrap();
        let b = for_path(LockMode::Exclusive, Path::new("/tmp/x-lock")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(for_path(LockMode::None, Path::new("/tmp/x-lock")).is_none());
    }
}
