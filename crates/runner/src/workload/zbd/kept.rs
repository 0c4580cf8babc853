//! Zones emulated over a file (or a device without zones) keep their write pointers
//! from one job of a run to the next, as fio's do within one invocation: a job that
//! reads what an earlier one wrote finds its data, a writer coming to a zone an earlier
//! job filled resets it. A new run starts with every zone empty again, as fio does.

use super::ZoneInfo;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

/// One file's emulated zones: each zone's start → (length, write pointer).
pub type Slot = Arc<Mutex<BTreeMap<u64, (u64, u64)>>>;

/// The emulated zones of a run, per file (device and inode, or device number).
#[derive(Debug, Default)]
pub struct KeptZones(Mutex<HashMap<(u64, u64), Slot>>);

impl KeptZones {
    /// The zones kept for the file `id`, empty the first time.
    pub fn slot(&self, id: (u64, u64)) -> Slot {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(all.entry(id).or_default())
    }
}

/// Give `zones` the write pointers kept for them (a zone of another length, as with
/// another zonesize, starts empty).
pub fn restore(slot: &Slot, zones: &mut [ZoneInfo]) {
    let kept = slot.lock().unwrap_or_else(PoisonError::into_inner);
    for z in zones.iter_mut().filter(|z| z.seq) {
        if let Some(&(_, wp)) = kept.get(&z.start).filter(|(len, _)| *len == z.len) {
            z.wp = wp.clamp(z.start, z.start + z.capacity);
        }
    }
}

/// Keep the write pointers of `zones` for the jobs after this one.
pub(super) fn keep(slot: &Slot, zones: &[ZoneInfo]) {
    let mut kept = slot.lock().unwrap_or_else(PoisonError::into_inner);
    for z in zones.iter().filter(|z| z.seq) {
        kept.insert(z.start, (z.len, z.wp));
    }
}
