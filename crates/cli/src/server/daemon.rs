//! `--daemonize=PIDFILE`: the server goes into the background once it listens, so
//! that the command returns only when clients can connect (fio's harness starts its
//! servers so and connects at once), and its process id is in PIDFILE to stop it.

use anyhow::{bail, Context as _, Result};
use std::io::Write;
use std::path::Path;

/// Fork; the parent writes the child's pid to `pidfile` and exits, the child returns
/// in a new session with its standard streams on /dev/null.
pub fn detach(pidfile: &Path) -> Result<()> {
    single_threaded()?;
    // The pid file is made new beside its name and renamed over it, so that a file
    // or link planted at the name is replaced, never written through.
    let (tmp, mut f) = ioscope_fs::create_temp(pidfile)
        .with_context(|| format!("--daemonize: cannot create {}", pidfile.display()))?;
    // SAFETY: the process has one thread (checked above), so the child is a whole
    // copy of it and may go on running Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        let _ = std::fs::remove_file(&tmp);
        bail!("--daemonize: fork: {e}");
    }
    if pid > 0 {
        let written = writeln!(f, "{pid}")
            .and_then(|()| f.sync_all())
            .and_then(|()| std::fs::rename(&tmp, pidfile));
        if let Err(e) = written {
            // SAFETY: pid is the child just forked; stopping it undoes the detach.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let _ = std::fs::remove_file(&tmp);
            bail!("--daemonize: cannot write {}: {e}", pidfile.display());
        }
        std::process::exit(0);
    }
    drop(f);
    // SAFETY: setsid has no memory effects; it fails only for a group leader, which a
    // freshly forked child is not.
    unsafe { libc::setsid() };
    quiet_streams()
}

/// fork copies one thread only: refuse when there are more (a lock held by another
/// thread would never be released in the child).
fn single_threaded() -> Result<()> {
    let n = std::fs::read_dir("/proc/self/task").map_or(1, Iterator::count);
    if n > 1 {
        bail!("--daemonize: the process already runs {n} threads and cannot detach safely");
    }
    Ok(())
}

/// Standard input, output and error on /dev/null: the terminal that started the
/// server may be gone.
fn quiet_streams() -> Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .context("--daemonize: /dev/null")?;
    use std::os::fd::AsRawFd;
    for fd in 0..3 {
        // SAFETY: dup2 onto the standard descriptors, from a descriptor we own.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } < 0 {
            bail!("--daemonize: dup2: {}", std::io::Error::last_os_error());
        }
    }
    Ok(())
}
