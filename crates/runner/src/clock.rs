//! The clock every latency comes from.
//!
//! On x86_64 with an invariant TSC we read the TSC (a few ns) and convert ticks to ns
//! with a multiply and shift, calibrated against CLOCK_MONOTONIC at start — no rate to
//! pass by hand. Elsewhere we fall back to clock_gettime(CLOCK_MONOTONIC). Differences
//! saturate at zero, so small cross-CPU TSC skew can never give a negative latency.
//!
//! `IOSCOPE_CLOCK=monotonic` forces clock_gettime. A *manual* clock (see
//! [`Clock::manual`]) is the test seam: its time moves only when code advances it, and
//! waiting on it (`sleep_until`) jumps to the deadline instead of sleeping, so runner
//! behaviour that depends on time is tested deterministically in microseconds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Duration;

/// Clock ticks (TSC cycles or ns, depending on the source).
pub type Ticks = u64;

/// Where ticks come from.
#[derive(Clone, Copy, Debug)]
enum Source {
    Tsc,
    Monotonic,
    /// Nanoseconds held in a counter that tests (and scripted engines) advance.
    Manual(&'static AtomicU64),
}

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    source: Source,
    /// `source` is the TSC: checked first on the hot path, where one predictable
    /// branch on a bool is all `now()` costs besides rdtsc.
    tsc: bool,
    /// ns = ticks * mult >> SHIFT
    mult: u64,
    /// Ticks per second.
    pub hz: u64,
}

const SHIFT: u32 = 24;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
fn tsc_is_invariant() -> bool {
    // CPUID 0x80000007 EDX bit 8: invariant TSC.
    // cpuid is always available on x86_64.
    let max = core::arch::x86_64::__cpuid(0x8000_0000).eax;
    max >= 0x8000_0007 && core::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
}

impl Clock {
    /// The process-wide clock, calibrated once.
    pub fn get() -> &'static Clock {
        static CLOCK: OnceLock<Clock> = OnceLock::new();
        CLOCK.get_or_init(Clock::calibrate)
    }

    fn calibrate() -> Clock {
        if std::env::var_os("IOSCOPE_CLOCK").is_some_and(|v| v == "monotonic") {
            return Clock::monotonic();
        }
        #[cfg(target_arch = "x86_64")]
        if tsc_is_invariant() {
            if let Some(hz) = Self::measure_tsc_hz() {
                let mult = ((1_000_000_000u128 << SHIFT) / hz as u128) as u64;
                return Clock {
                    source: Source::Tsc,
                    tsc: true,
                    mult,
                    hz,
                };
            }
        }
        Clock::monotonic()
    }

    fn monotonic() -> Clock {
        Clock {
            source: Source::Monotonic,
            tsc: false,
            mult: 1 << SHIFT,
            hz: 1_000_000_000,
        }
    }

    /// A new manual clock at `start_ns` (ticks are ns). It lives for the rest of the
    /// process, as the real clock does; tests make one each.
    pub fn manual(start_ns: u64) -> &'static Clock {
        let t: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(start_ns)));
        Box::leak(Box::new(Clock {
            source: Source::Manual(t),
            tsc: false,
            mult: 1 << SHIFT,
            hz: 1_000_000_000,
        }))
    }

    /// True for a manual (test) clock.
    pub fn is_manual(&self) -> bool {
        matches!(self.source, Source::Manual(_))
    }

    /// Move a manual clock forward by `ns` (no effect on a real clock).
    pub fn advance(&self, ns: u64) {
        if let Source::Manual(t) = self.source {
            t.fetch_add(ns, Relaxed);
        }
    }

    /// Move a manual clock forward to `ticks` if it is earlier (no effect on a real clock).
    pub fn advance_to(&self, ticks: Ticks) {
        if let Source::Manual(t) = self.source {
            t.fetch_max(ticks, Relaxed);
        }
    }

    /// Wait until `until` unless `stop` is set: sleep, then spin the last stretch. A
    /// manual clock jumps to `until` at once.
    pub fn sleep_until(&self, until: Ticks, stop: &AtomicBool) {
        if self.is_manual() {
            if !stop.load(Relaxed) {
                self.advance_to(until);
            }
            return;
        }
        loop {
            let now = self.now();
            if now >= until || stop.load(Relaxed) {
                return;
            }
            let left_ns = self.delta_ns(now, until);
            if left_ns > 200_000 {
                std::thread::sleep(Duration::from_nanos((left_ns - 100_000).min(50_000_000)));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Busy-wait until `until` (thinktime_spin) unless `stop` is set; a manual clock jumps.
    pub fn spin_until(&self, until: Ticks, stop: &AtomicBool) {
        if self.is_manual() {
            return self.sleep_until(until, stop);
        }
        while self.now() < until && !stop.load(Relaxed) {
            std::hint::spin_loop();
        }
    }

    /// Ticks per second from three 10 ms windows; the median resists a preemption.
    #[cfg(target_arch = "x86_64")]
    fn measure_tsc_hz() -> Option<u64> {
        let mut rates = Vec::with_capacity(3);
        for _ in 0..3 {
            let (n0, t0) = (monotonic_ns(), rdtsc());
            std::thread::sleep(Duration::from_millis(10));
            let (n1, t1) = (monotonic_ns(), rdtsc());
            let dn = n1.checked_sub(n0)?;
            let dt = t1.checked_sub(t0)?;
            if dn == 0 {
                return None;
            }
            rates.push((dt as u128 * 1_000_000_000 / dn as u128) as u64);
        }
        rates.sort_unstable();
        let hz = rates[1];
        (hz > 1_000_000).then_some(hz)
    }

    pub fn source(&self) -> &'static str {
        match self.source {
            Source::Tsc => "tsc",
            Source::Monotonic => "clock_gettime",
            Source::Manual(_) => "manual",
        }
    }

    #[inline(always)]
    pub fn now(&self) -> Ticks {
        #[cfg(target_arch = "x86_64")]
        if self.tsc {
            return rdtsc();
        }
        self.slow_now()
    }

    #[inline(never)]
    fn slow_now(&self) -> Ticks {
        match self.source {
            Source::Manual(t) => t.load(Relaxed),
            _ => monotonic_ns(),
        }
    }

    /// Ticks to ns.
    #[inline(always)]
    pub fn ns(&self, ticks: Ticks) -> u64 {
        ((ticks as u128 * self.mult as u128) >> SHIFT) as u64
    }

    /// ns elapsed from `a` to `b` (0 if b is earlier: cross-CPU skew).
    #[inline(always)]
    pub fn delta_ns(&self, a: Ticks, b: Ticks) -> u64 {
        self.ns(b.saturating_sub(a))
    }

    /// Ticks in `n` CPU cycles: on the TSC a tick is a cycle (at its nominal rate);
    /// other clocks take a cycle as 1 ns (a 1 GHz CPU).
    pub fn cycles(&self, n: u64) -> Ticks {
        if self.tsc || n == 0 {
            return n;
        }
        match self.source {
            Source::Manual(_) => n,
            _ => self.ticks(Duration::from_nanos(n)),
        }
    }

    /// Ticks in a duration.
    pub fn ticks(&self, d: Duration) -> Ticks {
        (d.as_nanos() * self.hz as u128 / 1_000_000_000) as u64
    }
}

/// Wall-clock ms since the Unix epoch.
/// Milliseconds on the clock `clock_id` (clock_gettime(2); 0 is CLOCK_REALTIME, the
/// Unix epoch): the base of log timestamps with log_unix_epoch/log_alternate_epoch.
pub fn epoch_ms(clock_id: i32) -> std::io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(clock_id, &mut ts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_tracks_monotonic() {
        let c = Clock::get();
        let (n0, t0) = (monotonic_ns(), c.now());
        std::thread::sleep(Duration::from_millis(50));
        let (n1, t1) = (monotonic_ns(), c.now());
        let ours = c.delta_ns(t0, t1) as f64;
        let real = (n1 - n0) as f64;
        assert!(
            (ours - real).abs() / real < 0.02,
            "ours {ours} real {real} ({})",
            c.source()
        );
        assert_eq!(c.delta_ns(t1, t0), 0);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = Clock::manual(1_000);
        assert_eq!(c.now(), 1_000);
        c.advance(500);
        assert_eq!(c.now(), 1_500);
        c.advance_to(1_200);
        assert_eq!(c.now(), 1_500, "advance_to never goes back");
        let stop = AtomicBool::new(false);
        c.sleep_until(5_000_000_000, &stop);
        assert_eq!(c.now(), 5_000_000_000);
        stop.store(true, Relaxed);
        c.sleep_until(9_000_000_000, &stop);
        assert_eq!(c.now(), 5_000_000_000, "a stopped wait does not move time");
        assert_eq!(c.ticks(Duration::from_millis(2)), 2_000_000);
        assert_eq!(c.source(), "manual");
    }
}
