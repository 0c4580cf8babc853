//! Completions recorded a run at a time: units issued together and reaped together
//! have equal latencies, so the engine's own loop (`peak`) records them at once.

use super::Recorder;
use crate::clock::Ticks;
use ioscope_engine::Ddir;
use std::sync::atomic::Ordering::Relaxed;

impl Recorder {
    /// Whether completions may be recorded a run at a time ([`Self::completed_run`]):
    /// nothing looks at each one (no per-I/O log, no priority classes, nothing slow to
    /// catch).
    pub fn groups(&self) -> bool {
        self.logs.is_none()
            && self.slow_from == u64::MAX
            && self.live.dirs.iter().all(|d| d.prios.is_empty())
    }

    /// `n` units of `ddir` set up at `start`, issued at `issue` and completed at `t`,
    /// each moving all its bytes (`bytes` in all): exactly what `n` calls of
    /// [`Self::completed`] record, since their latencies are the same, when
    /// [`Self::groups`] allows it.
    #[inline]
    pub fn completed_run(
        &mut self,
        ddir: Ddir,
        start: Ticks,
        issue: Ticks,
        n: u32,
        bytes: u64,
        t: Ticks,
    ) {
        let d = ddir.index();
        let dir = &mut self.live.dirs[d];
        dir.io_bytes += bytes;
        dir.total_ios += u64::from(n);
        self.shared.bytes[d].store(dir.io_bytes, Relaxed);
        self.shared.ios[d].store(dir.total_ios, Relaxed);
        if self.in_ramp {
            return;
        }
        let clat = self.clock.delta_ns(issue, t);
        let dir = &mut self.live.dirs[d];
        if self.track_clat {
            dir.clat.add_n(clat, u64::from(n));
        }
        if self.track_lat && !self.lat_is_clat {
            let lat = self.clock.delta_ns(start, issue) + clat;
            dir.lat.add_n(lat, u64::from(n));
        }
    }
}
