//! Zones shared by the jobs of a phase that use one device: one state behind a lock,
//! and per zone the writes in flight, counted without it (a completion only takes one
//! off).

use super::place::{Zones, NOBODY};
use super::{Held, ZoneInfo, ZoneMap};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed, Ordering::Release};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The device's zones and what the jobs have in flight on them.
#[derive(Debug)]
pub(super) struct Shared {
    zones: Mutex<Zones>,
    /// Writes placed and not yet completed, per zone.
    pub inflight: Vec<AtomicU32>,
    /// Each zone's (start, length): where a completed write was, without the lock.
    bounds: Vec<(u64, u64)>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Zones> {
        // A job that panicked holding the lock left the zones consistent: each change
        // is made whole under it.
        self.zones.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn index_of(&self, offset: u64) -> Option<usize> {
        let i = self.bounds.partition_point(|&(s, l)| s + l <= offset);
        (i < self.bounds.len()).then_some(i)
    }

    /// A zone operation on the zone at `start` was issued.
    pub fn release(&self, start: u64) {
        if let Some(i) = self.index_of(start) {
            let mut z = self.lock();
            let b = &mut z.busy[i];
            b.1 = b.1.saturating_sub(1);
        }
    }

    pub fn write_done(&self, offset: u64) {
        if let Some(n) = self.index_of(offset).and_then(|i| self.inflight.get(i)) {
            // Never below 0: a write the zones did not place (a replayed iolog's) is
            // not counted, and must not leave its zone taken for ever.
            let _ = n.fetch_update(Release, Relaxed, |n| n.checked_sub(1));
        }
    }

    /// Job `id` has ended.
    pub fn leave(&self, id: u32) {
        if let Some(r) = self.lock().running.get_mut(id as usize) {
            *r = false;
        }
    }
}

/// The jobs of `maps` use one device: from now on they share its zones (those of all
/// their regions). Each map must be a job's own, as setup makes it.
pub(crate) fn share(maps: &mut [&mut ZoneMap]) {
    if maps.len() < 2 {
        return;
    }
    let mut all: BTreeMap<u64, ZoneInfo> = BTreeMap::new();
    let mut max_open = 0u32;
    for m in maps.iter() {
        if let Held::Own(z) = &m.held {
            for info in &z.zones {
                all.entry(info.start).or_insert(*info);
            }
        }
        let n = m.job.rules.max_open;
        if n != 0 && (max_open == 0 || n < max_open) {
            max_open = n;
        }
    }
    let zones: Vec<ZoneInfo> = all.into_values().collect();
    let bounds: Vec<(u64, u64)> = zones.iter().map(|z| (z.start, z.len)).collect();
    let n = zones.len();
    let mut z = Zones::new(zones, max_open);
    z.busy = vec![(NOBODY, 0); n];
    z.writer = vec![NOBODY; n];
    z.opener = vec![NOBODY; n];
    z.running = vec![true; maps.len()];
    for (id, m) in maps.iter_mut().enumerate() {
        let Held::Own(own) = &m.held else {
            continue;
        };
        let (first, last) = match (own.zones.first(), own.zones.last()) {
            (Some(f), Some(l)) => (f.start, l.start),
            _ => continue,
        };
        let lo = bounds.partition_point(|&(s, _)| s < first);
        let hi = bounds.partition_point(|&(s, _)| s <= last);
        m.job.range = lo..hi;
        m.job.id = id as u32;
        m.job.open.clear();
        for op in m.job.ops.iter().chain(&m.job.after) {
            if let Some(i) = bounds.iter().position(|&(s, _)| s == op.start()) {
                z.busy[i] = (id as u32, z.busy[i].1 + 1);
            }
        }
    }
    let shared = Arc::new(Shared {
        zones: Mutex::new(z),
        inflight: (0..n).map(|_| AtomicU32::new(0)).collect(),
        bounds,
    });
    for m in maps.iter_mut() {
        m.held = Held::Shared(Arc::clone(&shared));
    }
}
