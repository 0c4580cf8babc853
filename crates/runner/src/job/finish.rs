//! The end of a job: write_iolog closed, end_fsync, the results (with the monitor's
//! failure, the verifier's counts, latency_target's depth), verify_state_save; and
//! the interim snapshots the monitor asks for while the job runs.

use super::errors::strerror;
use super::inputs::Outcome;
use super::state::{Failure, State};
use crate::clock::Ticks;
use crate::record::{LiveCopy, WANT_INTERIM, WANT_LIVE, WANT_VSTATE};
use crate::sys::usage::{thread_usage, Usage};
use ioscope_stats::JobResult;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;

impl State<'_> {
    /// The loop is over (everything drained): close what the job wrote and make its
    /// results; its logs go with them, to be closed by the phase.
    pub fn finish(mut self) -> Outcome {
        let end = self.clock.now();
        self.close_iolog();
        // end_fsync and fsync_on_close both sync every file when the job ends.
        if (self.ctx.opts.end_fsync || self.ctx.opts.fsync_on_close) && !self.ctx.diskless {
            for f in &self.ctx.files {
                // SAFETY: fsync on an fd the job owns.
                unsafe { libc::fsync(f.file.as_raw_fd()) };
            }
        }
        if self.ctx.opts.end_syncfs && !self.ctx.diskless {
            self.syncfs_all();
        }
        let usage = thread_usage().since(&self.times.usage_start);
        let logs = self.rec.take_logs();
        let result = self.results(end, usage);
        Outcome { result, logs }
    }

    /// end_syncfs: one syncfs(2) per filesystem the job's files are on.
    fn syncfs_all(&self) {
        let mut done: Vec<u64> = Vec::new();
        for f in &self.ctx.files {
            let Ok(md) = f.file.metadata() else { continue };
            let dev = std::os::unix::fs::MetadataExt::dev(&md);
            if done.contains(&dev) {
                continue;
            }
            done.push(dev);
            // SAFETY: syncfs on an fd the job owns.
            unsafe { libc::syncfs(f.file.as_raw_fd()) };
        }
    }

    /// write_iolog: the recorded I/O flushed to its file.
    fn close_iolog(&mut self) {
        let Some(r) = self.wl.recorder.take() else {
            return;
        };
        if let Err(e) = r.finish() {
            let name = &self.ctx.opts.name;
            let path = self.ctx.opts.write_iolog.as_deref().unwrap_or("");
            self.ctx
                .shared
                .say(format!("ioscope: job '{name}': write_iolog={path}: {e}"));
        }
    }

    fn results(mut self, end: Ticks, usage: Usage) -> JobResult {
        // Whole milliseconds, as fio reports; a job that did I/O ran at least 1 ms.
        let ns = self.clock.delta_ns(self.times.measure_start, end);
        let did_io = self
            .ctx
            .shared
            .ios
            .iter()
            .any(|n| n.load(std::sync::atomic::Ordering::Relaxed) > 0);
        let runtime_ms = (ns / 1_000_000).max(u64::from(ns > 0 && did_io));
        self.take_monitor_failure();
        self.save_verify_state();
        let verify = self.verify.as_ref().map(|v| ioscope_stats::VerifyCounts {
            blocks: v.counts.blocks,
            errors: v.counts.errors,
        });
        let mut r = self.result(runtime_ms, usage);
        r.verify = verify;
        r.zone_resets = self.ctx.zone_resets.map(|n| n + self.zone_resets);
        if let Some(q) = &self.x.qd {
            let o = &self.ctx.opts;
            r.info.latency_target = Some(ioscope_stats::LatencyTarget {
                target_ns: q.target_ns(),
                window_us: o.latency_window,
                percentile: o.latency_percentile,
                depth: q.depth(),
            });
        }
        r
    }

    /// A failure found by the monitor (rate_min not met) becomes the job's, unless the
    /// job failed first.
    fn take_monitor_failure(&mut self) {
        let failure = self
            .ctx
            .shared
            .failure
            .lock()
            .ok()
            .and_then(|mut f| f.take());
        let Some((errno, text)) = failure else {
            return;
        };
        if self.failure.errno == 0 {
            let name = &self.ctx.opts.name;
            self.ctx
                .shared
                .say(format!("ioscope: job '{name}': {text}"));
            self.failure = Failure {
                errno,
                text: Some(text),
            };
        }
    }

    /// verify_state_save: how far the writes got, for a later verify_state_load.
    fn save_verify_state(&mut self) {
        let Some((name, st)) = self.verify.as_ref().and_then(|v| v.state()) else {
            return;
        };
        // Written beside and renamed over: a crash while saving leaves the old state or
        // the new one, never half of one.
        if let Err(e) = ioscope_fs::write_atomically(&name, &st.encode()) {
            self.ctx.shared.say(format!(
                "ioscope: job '{}': verify state {}: {e}",
                self.ctx.opts.name,
                name.display()
            ));
        }
    }

    /// A trigger fired: the verify state as it is now (with the writes in flight), kept
    /// over the one the job's end would save.
    fn save_triggered_state(&mut self) {
        self.save_verify_state();
        if let Some(v) = self.verify.as_mut() {
            v.keep_saved_state();
        }
        self.ctx
            .shared
            .vstate_saved
            .store(true, std::sync::atomic::Ordering::Release);
    }

    fn result(&mut self, runtime_ms: u64, usage: Usage) -> JobResult {
        let f = std::mem::take(&mut self.failure);
        let tolerated = self.rec.first_error();
        if f.errno == 0 && tolerated != 0 {
            // As fio: errors the job went on after are its err, but not a failure.
            let text = strerror(&std::io::Error::from_raw_os_error(tolerated));
            let mut r = self.rec.result(runtime_ms, usage, tolerated, Some(text));
            r.error_tolerated = true;
            return r;
        }
        self.rec.result(runtime_ms, usage, f.errno, f.text)
    }

    /// A copy of the results so far, for an interim report or the live stream (as
    /// the monitor asked).
    #[cold]
    #[inline(never)]
    pub fn publish_snapshot(&mut self, now: Ticks) {
        let shared = &self.ctx.shared;
        let want = shared.snapshot_request.swap(0, Relaxed);
        if want & WANT_VSTATE != 0 {
            self.save_triggered_state();
        }
        let shared = &self.ctx.shared;
        if want & (WANT_LIVE | WANT_INTERIM) == 0 {
            return;
        }
        let runtime_ms = self.clock.delta_ns(self.times.measure_start, now) / 1_000_000;
        let usage = thread_usage().since(&self.times.usage_start);
        let f = &self.failure;
        let mut r = self.rec.result(runtime_ms, usage, f.errno, f.text.clone());
        if want & WANT_LIVE != 0 {
            if let Ok(mut slot) = shared.live.lock() {
                *slot = Some(LiveCopy {
                    // Cloned only when an interim report wants it too.
                    result: if want & WANT_INTERIM != 0 {
                        r.clone()
                    } else {
                        std::mem::take(&mut r)
                    },
                    inflight: self.q.busy(),
                    ramp: self.rec.in_ramp(),
                    epoch: shared.epoch.load(Relaxed),
                    last: false,
                });
            }
        }
        if want & WANT_INTERIM != 0 {
            if let Ok(mut slot) = shared.snapshot.lock() {
                *slot = Some(r);
            }
        }
    }
}
