//! Surviving a file truncated under a mapping. Touching a shared file mapping past the
//! file's end raises SIGBUS, which would kill the process and every job's results with
//! it. While an mmap engine exists, a SIGBUS handler maps an anonymous page over the
//! faulting page (mmap(MAP_FIXED) is async-signal-safe) and records the fault; the
//! interrupted memcpy then completes on that page, and the engine, which compares the
//! fault count before and after its copy, fails the I/O with EIO instead. A SIGBUS
//! outside every mapping an engine registered is re-raised with the default action.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Mutex, Once};

/// Faults repaired so far, and the page of the last one.
static FAULTS: AtomicU64 = AtomicU64::new(0);
static LAST_PAGE: AtomicUsize = AtomicUsize::new(0);

/// Mapped ranges [start, end) the handler may repair; read in the handler without
/// locking, so a fixed table of atomics.
const SLOTS: usize = 256;
static RANGES: [(AtomicUsize, AtomicUsize); SLOTS] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; SLOTS];
static REGISTER: Mutex<()> = Mutex::new(());
static INSTALL: Once = Once::new();

const PAGE: usize = 4096;

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = addr & !(PAGE - 1);
    let ours = RANGES
        .iter()
        .any(|(s, e)| (s.load(SeqCst)..e.load(SeqCst)).contains(&addr));
    if ours {
        // SAFETY: replaces one page inside a mapping this process owns.
        let p = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            LAST_PAGE.store(page, SeqCst);
            FAULTS.fetch_add(1, SeqCst);
            return;
        }
    }
    // Not ours (or not repairable): die as the default action would.
    // SAFETY: signal and raise are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction with an SA_SIGINFO handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}

/// A mapping the handler may repair while this guard lives.
pub(crate) struct Guard {
    slot: Option<usize>,
}

impl Guard {
    pub(crate) fn new(addr: *mut u8, len: u64) -> Guard {
        install();
        let _l = REGISTER.lock();
        let slot = RANGES.iter().position(|(s, _)| s.load(SeqCst) == 0);
        if let Some(i) = slot {
            RANGES[i].1.store(addr as usize + len as usize, SeqCst);
            RANGES[i].0.store(addr as usize, SeqCst);
        }
        Guard { slot }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let _l = REGISTER.lock();
            RANGES[i].0.store(0, SeqCst);
            RANGES[i].1.store(0, SeqCst);
        }
    }
}

/// The fault count, to compare before and after a copy.
#[inline(always)]
pub(crate) fn faults() -> u64 {
    FAULTS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a fault since `before` hit [addr, addr+len).
pub(crate) fn hit(before: u64, addr: *const u8, len: usize) -> bool {
    if faults() == before {
        return false;
    }
    let page = LAST_PAGE.load(SeqCst);
    let (a, e) = (addr as usize & !(PAGE - 1), addr as usize + len);
    (a..e).contains(&page) || faults() > before + 1
}
