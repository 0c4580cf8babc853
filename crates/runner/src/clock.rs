//! The clock every latency comes from.
//!
//! On x86_64 with an invariant TSC we read the TSC (a few ns) and convert ticks to ns
//! with a multiply and shift, calibrated against CLOCK_MONOTONIC at start — no rate to
//! pass by hand. Elsewhere we fall back to clock_gettime(CLOCK_MONOTONIC). Differences
//! saturate at zero, so small cross-CPU TSC skew can never give a negative latency.

use std::sync::OnceLock;
use std::time::Duration;

/// Clock ticks (TSC cycles or ns, depending on the source).
pub type Ticks = u64;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
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
            tsc: false,
            mult: 1 << SHIFT,
            hz: 1_000_000_000,
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
        if self.tsc {
            "tsc"
        } else {
            "clock_gettime"
        }
    }

    #[inline(always)]
    pub fn now(&self) -> Ticks {
        #[cfg(target_arch = "x86_64")]
        if self.tsc {
            return rdtsc();
        }
        monotonic_ns()
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

    /// Ticks in a duration.
    pub fn ticks(&self, d: Duration) -> Ticks {
        (d.as_nanos() * self.hz as u128 / 1_000_000_000) as u64
    }
}

/// Wall-clock ms since the Unix epoch.
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
}
