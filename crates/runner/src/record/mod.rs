//! Where latency is recorded: the [`Recorder`] turns each issued and completed I/O into
//! the job's statistics (slat/clat/lat histograms, per-priority stats, depth and batch
//! distributions, error counts), its I/O logs, and the counters the monitor samples.
//!
//! The job loop decides *when* things happen; the recorder decides *what is kept*.
//! Per I/O it does a few adds and stores: no allocation, lock or syscall.

pub(crate) mod log;
mod runs;
mod shared;
mod tally;
pub(crate) mod trace;

pub(crate) use shared::{
    LiveCopy, Shared, STATE_DONE, STATE_RAMP, STATE_RUNNING, WANT_INTERIM, WANT_LIVE, WANT_VSTATE,
};

use crate::clock::{Clock, Ticks};
use ioscope_engine::{Ddir, IoUnit};
use log::JobLogs;
pub use tally::BlockTrack;
use tally::Tally;

/// The last I/O over latency_target, for fio's failure message.
#[derive(Clone, Copy, Debug, Default)]
pub struct SlowIo {
    /// Total latency, ns.
    pub lat: u64,
    pub ddir: Ddir,
    pub offset: u64,
    pub len: u32,
    pub file: u32,
}
use ioscope_options::JobOptions;
use ioscope_stats::{DirStats, Histogram, JobResult, LatTrack, PrioStat, SyncStats};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// fio's io_depth buckets: 1, 2, 4, 8, 16, 32, >=64 (index 0 is "0 in flight").
fn depth_bucket(d: u32) -> usize {
    if d == 0 {
        0
    } else {
        (31 - d.leading_zeros() as usize).min(6)
    }
}

/// fio's submit/complete batch buckets: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
fn batch_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        _ => ((32 - (n - 1).leading_zeros()) as usize - 1).min(6),
    }
}

/// Whether the job syncs files as it goes (a sync latency histogram is kept).
fn syncs(o: &JobOptions) -> bool {
    o.fsync > 0 || o.fdatasync > 0
}

/// Whether the job is paced (rate, rate_iops): its I/Os have scheduled times, and
/// their latency from then (schedlat) is kept.
fn paced(o: &JobOptions) -> bool {
    o.rate.0.iter().chain(o.rate_iops.0.iter()).any(|&r| r > 0)
}

/// Per-direction live statistics.
#[derive(Clone)]
struct Live {
    dirs: [DirStats; 3],
    sync: SyncStats,
    io_depth: [u64; 7],
    submit: [u64; 7],
    complete: [u64; 7],
    total_err: u64,
    first_error: i32,
}

impl Live {
    fn new(o: &JobOptions, used: [bool; 3], prio_slots: &[u16], track_slat: bool) -> Live {
        // Histograms (224 KiB each, pre-faulted) only for the directions the job does.
        let dir = |d: usize| {
            if !used[d] {
                return DirStats::default();
            }
            let mut d = DirStats {
                slat: LatTrack::new(track_slat && o.slat_percentiles),
                clat: LatTrack::new(!o.disable_clat && o.clat_percentiles),
                lat: LatTrack::new(!o.disable_lat && o.lat_percentiles),
                schedlat: LatTrack::new(paced(o)),
                ..Default::default()
            };
            d.prios = prio_slots
                .iter()
                .map(|&p| PrioStat {
                    ioprio: p,
                    stat: Default::default(),
                    hist: Histogram::new(),
                })
                .collect();
            d
        };
        Live {
            dirs: std::array::from_fn(dir),
            sync: SyncStats {
                total_ios: 0,
                lat: LatTrack::new(syncs(o)),
            },
            io_depth: [0; 7],
            submit: [0; 7],
            complete: [0; 7],
            total_err: 0,
            first_error: 0,
        }
    }

    /// Forget what the ramp did (errors stay counted, as in fio).
    fn reset(&mut self) {
        for d in &mut self.dirs {
            d.io_bytes = 0;
            d.total_ios = 0;
            d.short_ios = 0;
            d.drop_ios = 0;
            d.slat.reset();
            d.clat.reset();
            d.lat.reset();
            d.schedlat.reset();
            for p in &mut d.prios {
                p.stat = Default::default();
                p.hist.clear();
            }
        }
        self.sync.total_ios = 0;
        self.sync.lat.reset();
        self.io_depth = [0; 7];
        self.submit = [0; 7];
        self.complete = [0; 7];
    }
}

/// Records one job's I/Os into statistics, logs and the monitor's counters.
pub struct Recorder {
    live: Live,
    logs: Option<JobLogs>,
    shared: Arc<Shared>,
    clock: &'static Clock,
    /// During ramp_time I/Os are counted (for the status line) but not recorded.
    in_ramp: bool,
    track_slat: bool,
    track_clat: bool,
    track_lat: bool,
    /// A sync engine's I/O has no submission latency, so its lat is its clat: kept
    /// once per I/O and copied when results are taken (exact, and one add less).
    lat_is_clat: bool,
    /// Per-priority stats follow lat (lat_percentiles) rather than clat.
    prio_uses_lat: bool,
    /// max_latency in ns (u64::MAX when unset).
    max_latency_ns: u64,
    /// latency_target in ns (u64::MAX when unset); the completions over it since the
    /// job loop last took the count, and the last of them (lat, ddir, offset, len,
    /// file) for fio's failure message.
    lat_target_ns: u64,
    /// Just above the smaller of the two: one compare on the common path.
    slow_from: u64,
    over_target: u64,
    over_io: Option<SlowIo>,
    /// act's slices and block_error_percentiles' blocks (for the jobs that have them:
    /// `slow_from` is 0 then, so that every completion, even one of 0 ns, reaches them).
    tally: Option<Box<Tally>>,
    /// A paced job: when each unit's I/O was due by the schedule (empty otherwise).
    sched: Vec<Ticks>,
}

impl Recorder {
    /// `dirs`: the directions the job does I/O in (read, write, trim), which get
    /// histograms.
    pub fn new(
        o: &JobOptions,
        dirs: [bool; 3],
        sync_engine: bool,
        prio_slots: &[u16],
        logs: Option<JobLogs>,
        shared: Arc<Shared>,
        clock: &'static Clock,
    ) -> Recorder {
        let track_slat = !o.disable_slat && !sync_engine;
        let mut r = Recorder {
            live: Live::new(o, dirs, prio_slots, track_slat),
            logs,
            shared,
            clock,
            in_ramp: o.ramp_time > 0 || o.ramp_size > 0,
            track_slat,
            track_clat: !o.disable_clat,
            track_lat: !o.disable_lat,
            // (The metadata engines record clat alone, as fio does: no lat to copy.)
            lat_is_clat: sync_engine
                && !ioscope_engine::is_path_engine(&o.ioengine)
                && !o.disable_clat
                && !o.disable_lat
                && (o.clat_percentiles || !o.lat_percentiles),
            prio_uses_lat: o.lat_percentiles,
            max_latency_ns: if o.max_latency > 0 {
                o.max_latency * 1000
            } else {
                u64::MAX
            },
            lat_target_ns: if o.latency_target > 0 {
                o.latency_target.saturating_mul(1000)
            } else {
                u64::MAX
            },
            slow_from: 0,
            over_target: 0,
            over_io: None,
            tally: None,
            sched: if paced(o) {
                vec![0; o.iodepth.max(1) as usize]
            } else {
                Vec::new()
            },
        };
        // Over a limit means above it: the first latency that is slow is one past it.
        r.slow_from = r.lat_target_ns.min(r.max_latency_ns).saturating_add(1);
        // A paced job's every completion has a schedlat, and a steady state of latency
        // needs every clat: both kept out of the common path.
        if o.steadystate_duration > 0 && o.steadystate.lat {
            r.tally.get_or_insert_with(Default::default).ss_lat = Some((0, 0));
        }
        if !r.sched.is_empty() || r.tally.is_some() {
            r.slow_from = 0;
        }
        r
    }

    /// `--profile=act`: count this job's latencies in act's table, per hour from `start`
    /// for a run of `seconds`.
    pub fn count_act(&mut self, seconds: u64, start: Ticks) {
        let slice = self.clock.ticks(std::time::Duration::from_secs(
            ioscope_stats::act::SLICE_SECONDS,
        ));
        let slices = ioscope_stats::act::ActSlices::for_seconds(seconds);
        self.tally.get_or_insert_with(Default::default).act = Some((slices, start, slice.max(1)));
        self.slow_from = 0;
    }

    /// block_error_percentiles: count the trims (and failures) of each block.
    pub fn count_blocks(&mut self, b: BlockTrack) {
        let states = ioscope_stats::block::BlockStates::new(b.blocks as usize);
        self.tally.get_or_insert_with(Default::default).blocks =
            Some((states, b.start, b.trim_bs.max(1)));
        self.slow_from = 0;
    }

    /// Data placement: count the writes of each placement identifier the engine gave
    /// them (room for 128 identifiers, fio's most, kept from the start).
    pub fn count_placement(&mut self) {
        self.tally.get_or_insert_with(Default::default).placed = Some(Vec::with_capacity(128));
        self.slow_from = 0;
    }

    /// `--debug=io`: every completion after the ramp goes to `t` (the ramp's I/O is
    /// not measured, and not traced).
    pub fn trace_io(&mut self, t: trace::IoTrace) {
        self.tally.get_or_insert_with(Default::default).io = Some(t);
        self.slow_from = 0;
    }

    /// A write or trim at `offset` failed: its block's lifetime ends.
    pub fn block_failed(&mut self, ddir: Ddir, offset: u64) {
        if let Some((b, start, bs)) = self.tally.as_mut().and_then(|t| t.blocks.as_mut()) {
            if matches!(ddir, Ddir::Write | Ddir::Trim) {
                let i = offset.saturating_sub(*start) / *bs;
                b.failed(i as usize, ddir == Ddir::Write);
            }
        }
    }

    /// latency_target: completions over the target since the last call (and the last
    /// of them).
    pub fn take_over_target(&mut self) -> (u64, Option<SlowIo>) {
        (std::mem::take(&mut self.over_target), self.over_io.take())
    }

    /// Whether any per-I/O time is needed (statistics or logs).
    pub fn needs_times(&self) -> bool {
        self.track_slat
            || self.track_clat
            || self.track_lat
            || self.logs.is_some()
            || self.lat_target_ns != u64::MAX
    }

    pub fn in_ramp(&self) -> bool {
        self.in_ramp
    }

    /// Bytes the job moved so far (the ramp's, while it ramps).
    pub fn bytes_done(&self) -> u64 {
        self.live.dirs.iter().map(|d| d.io_bytes).sum()
    }

    /// The job's I/O starts at `now`: the logs' time zero, as fio's (the logs were
    /// opened in setup, which may take milliseconds before the first I/O).
    pub fn start_logs(&mut self, now: Ticks) {
        if let Some(l) = &mut self.logs {
            l.restart(now);
        }
    }

    /// The ramp is over at `now`: start measuring afresh.
    pub fn end_ramp(&mut self, now: Ticks) {
        self.in_ramp = false;
        self.live.reset();
        for d in 0..3 {
            self.shared.bytes[d].store(0, Relaxed);
            self.shared.ios[d].store(0, Relaxed);
        }
        if let Some(l) = &mut self.logs {
            l.restart(now);
        }
        // act's hours start with the measurement (nothing was counted in the ramp).
        if let Some((_, start, _)) = self.tally.as_mut().and_then(|t| t.act.as_mut()) {
            *start = now;
        }
        self.shared.measure_start.store(now, Relaxed);
        self.shared.epoch.fetch_add(1, Relaxed);
        self.shared.state.store(STATE_RUNNING, Relaxed);
    }

    /// Unit `idx` carries an I/O that was due at `due`.
    #[inline(always)]
    pub fn schedule(&mut self, idx: u32, due: Ticks) {
        if let Some(s) = self.sched.get_mut(idx as usize) {
            *s = due;
        }
    }

    /// Whether [`Self::issued`] records anything (submission latencies).
    pub fn tracks_slat(&self) -> bool {
        self.track_slat
    }

    /// A unit entered the kernel (its `issue` time is set): its slat.
    #[inline(always)]
    pub fn issued(&mut self, u: &IoUnit) {
        if self.track_slat && !self.in_ramp {
            let slat = self.clock.delta_ns(u.start, u.issue);
            self.live.dirs[u.ddir.index()].slat.add(slat);
        }
    }

    /// One submission call issued `n` units, leaving `inflight` in flight.
    #[inline]
    pub fn submitted(&mut self, n: u32, inflight: u32) {
        self.live.submit[batch_bucket(n)] += 1;
        self.live.io_depth[depth_bucket(inflight)] += n as u64;
    }

    /// One I/O issued and completed inside one call (a synchronous engine), with
    /// `inflight` others in flight.
    #[inline]
    pub fn issued_sync(&mut self, inflight: u32) {
        self.live.submit[1] += 1;
        self.live.io_depth[depth_bucket(inflight)] += 1;
    }

    /// A reap call returned `n` completions.
    #[inline]
    pub fn reaped(&mut self, n: u32) {
        self.live.complete[batch_bucket(n)] += 1;
    }

    /// A unit completed at `t`, moving `bytes`. Returns the I/O's total latency when
    /// it exceeds max_latency (the job then fails; the I/O is counted, not timed).
    #[inline(always)]
    pub fn completed(&mut self, idx: u32, u: &IoUnit, bytes: u64, t: Ticks) -> Result<(), u64> {
        let d = u.ddir.index();
        let dir = &mut self.live.dirs[d];
        dir.io_bytes += bytes;
        dir.total_ios += 1;
        if bytes < u.len as u64 {
            dir.short_ios += 1;
        }
        self.shared.bytes[d].store(dir.io_bytes, Relaxed);
        self.shared.ios[d].store(dir.total_ios, Relaxed);
        if self.in_ramp {
            return Ok(());
        }
        let clat = self.clock.delta_ns(u.issue, t);
        // lat = slat + clat exactly (converting start..t on its own could round 1 ns
        // away from the sum, and the logs derive one from the other).
        let slat = self.clock.delta_ns(u.start, u.issue);
        let lat = slat + clat;
        if lat >= self.slow_from {
            self.slow(idx, u, (lat, bytes), t)?;
        }
        let dir = &mut self.live.dirs[d];
        if self.track_clat {
            dir.clat.add(clat);
        }
        if self.track_lat && !self.lat_is_clat {
            dir.lat.add(lat);
        }
        if let Some(p) = dir.prios.get_mut((u.flags >> 16) as usize) {
            let v = if self.prio_uses_lat { lat } else { clat };
            p.stat.add(v);
            p.hist.add(v);
        }
        if let Some(l) = &mut self.logs {
            l.completion(t, u, self.track_slat.then_some(slat), clat, lat, bytes);
        }
        Ok(())
    }

    /// A completion from `slow_from` on: over latency_target or max_latency, or of a job
    /// that tallies every completion (act, block_error_percentiles, a paced job's schedlat).
    #[cold]
    #[inline(never)]
    fn slow(
        &mut self,
        idx: u32,
        u: &IoUnit,
        (lat, bytes): (u64, u64),
        t: Ticks,
    ) -> Result<(), u64> {
        if let Some(&due) = self.sched.get(idx as usize) {
            let ns = self.clock.delta_ns(due.min(u.start), t);
            self.live.dirs[u.ddir.index()].schedlat.add(ns);
        }
        if let Some(x) = &mut self.tally {
            let clat = self.clock.delta_ns(u.issue, t);
            x.add(u, (lat, clat, bytes), t, &self.shared);
        }
        if lat > self.lat_target_ns {
            note_over(&mut self.over_target, &mut self.over_io, lat, u);
        }
        if lat > self.max_latency_ns {
            return Err(lat);
        }
        Ok(())
    }

    /// A metadata engine's unit: its bytes and its count, no latency (fio's fake I/O).
    pub fn counted(&mut self, u: &IoUnit, bytes: u64) {
        let d = u.ddir.index().min(2);
        let dir = &mut self.live.dirs[d];
        dir.io_bytes += bytes;
        dir.total_ios += 1;
        self.shared.bytes[d].store(dir.io_bytes, Relaxed);
        self.shared.ios[d].store(dir.total_ios, Relaxed);
    }

    /// A metadata engine's operation on a name (open, stat, unlink, mkdir, rmdir) took
    /// `ns`: a clat sample of the unit's direction, as fio records it (no slat, no
    /// lat), and one entry in the per-I/O logs.
    pub fn name_op(&mut self, u: &IoUnit, ns: u64, t: Ticks) {
        if self.in_ramp || !self.track_clat {
            return;
        }
        let dir = &mut self.live.dirs[u.ddir.index().min(2)];
        dir.clat.add(ns);
        if let Some(p) = dir.prios.get_mut((u.flags >> 16) as usize) {
            p.stat.add(ns);
            p.hist.add(ns);
        }
        if let Some(l) = &mut self.logs {
            l.completion(t, u, None, ns, ns, u64::from(u.len));
        }
    }

    /// An I/O that failed: fio counts it as issued and completed (total_ios, IOPS)
    /// but it moved no bytes and has no latency.
    pub fn failed(&mut self, u: &IoUnit) {
        let d = u.ddir.index().min(2);
        let dir = &mut self.live.dirs[d];
        dir.total_ios += 1;
        self.shared.ios[d].store(dir.total_ios, Relaxed);
    }

    /// The first error the job tolerated (0: none).
    pub fn first_error(&self) -> i32 {
        self.live.first_error
    }

    /// An error the job tolerates (continue_on_error, ignore_error).
    pub fn tolerated_error(&mut self, errno: i32) {
        self.live.total_err += 1;
        if self.live.first_error == 0 {
            self.live.first_error = errno;
        }
    }

    /// An fsync/fdatasync that took `ns`.
    pub fn synced(&mut self, ns: u64) {
        if !self.in_ramp {
            self.live.sync.total_ios += 1;
            self.live.sync.lat.add(ns);
        }
    }

    /// A sync_file_range call: in the sync latency but not in its total_ios, which
    /// counts fsync/fdatasync only (as fio 3.33 reports them).
    pub fn range_synced(&mut self, ns: u64) {
        if !self.in_ramp {
            self.live.sync.lat.add(ns);
        }
    }

    /// The job's results: `runtime_ms` of measurement, CPU `usage`, and its error.
    pub fn result(
        &self,
        runtime_ms: u64,
        usage: crate::sys::usage::Usage,
        error: i32,
        error_text: Option<String>,
    ) -> JobResult {
        let mut live = self.live.clone();
        if self.in_ramp {
            // Stopped before the ramp ended: nothing was measured yet.
            live.reset();
        }
        for d in &mut live.dirs {
            d.runtime_ms = runtime_ms;
            if self.lat_is_clat {
                d.lat.stat = d.clat.stat;
                if d.lat.hist.is_some() {
                    d.lat.hist = d.clat.hist.clone();
                }
            }
        }
        JobResult {
            error,
            error_text,
            total_err: live.total_err,
            first_error: live.first_error,
            runtime_ms,
            dirs: live.dirs,
            sync: live.sync,
            cpu: usage.into(),
            io_depth: live.io_depth,
            submit: live.submit,
            complete: live.complete,
            act: self
                .tally
                .as_ref()
                .and_then(|t| t.act.as_ref())
                .map(|a| a.0.clone()),
            block: self
                .tally
                .as_ref()
                .and_then(|t| t.blocks.as_ref())
                .map(|b| b.0.clone()),
            placement: self.tally.as_ref().and_then(|t| t.placed.clone()),
            ..Default::default()
        }
    }

    /// Hand the logs back for closing when the job ends.
    pub fn take_logs(&mut self) -> Option<JobLogs> {
        self.logs.take()
    }
}

/// latency_target: one more completion over the target (kept out of the hot path).
#[cold]
fn note_over(count: &mut u64, last: &mut Option<SlowIo>, lat: u64, u: &IoUnit) {
    *count += 1;
    *last = Some(SlowIo {
        lat,
        ddir: u.ddir,
        offset: u.offset,
        len: u.len,
        file: u.file,
    });
}

#[cfg(test)]
mod tests;
