//! Warming the target before the first measured point of a run: a file just laid out
//! (its writeback still going) or a device left idle runs its first seconds several
//! times slower than the same point later (3.6–4.2k against ~20k IOPS at QD1, seen
//! twice), and a sweep would rank its points on that. So the first point's workload
//! runs for `[target] warmup` (2 s unless the file says; `warmup = "0"` turns it off)
//! with nothing kept, unless preconditioning has just run on the target.

use crate::error::SweepError;
use crate::journal::{now_ms, Event, Journal, PointState, State};
use crate::ready::{Campaign, Progress};
use ioscope_options::JobSet;
use ioscope_runner::Execute;

/// Run the warm-up before the first point this run will measure (neither finished nor,
/// unless `retry_failed`, failed before); false when a signal stopped it.
pub fn warm_up(
    c: &Campaign,
    sets: &[JobSet],
    state: &State,
    retry_failed: bool,
    exec: &dyn Execute,
    (journal, progress): (&mut Journal, &mut dyn Progress),
) -> Result<bool, SweepError> {
    let us = c.file.target.warmup_us;
    let first = c.points.iter().find(|p| match state.points.get(&p.key) {
        Some(PointState::Finished { .. }) => false,
        Some(PointState::Failed(_)) => retry_failed,
        _ => true,
    });
    let Some(p) = first.filter(|_| us > 0) else {
        return Ok(true);
    };
    progress.stage(&format!(
        "warm-up: {:.1} s of {}'s workload on {}, not measured (a target just laid out \
         or idle runs slow at first; [target] warmup = \"0\" skips it)",
        us as f64 / 1e6,
        p.id,
        c.identity.text()
    ));
    let set = warm_job(&sets[p.index], us);
    let run = exec
        .execute(&set, progress.observer())
        .map_err(|e| SweepError::Run(format!("warm-up: {e}")))?;
    if run.interrupted() {
        return Ok(false);
    }
    journal.write(&Event::Warmup {
        t: now_ms(),
        identity: c.identity.key(),
        point: p.id.clone(),
        seconds: us as f64 / 1e6,
    })?;
    Ok(true)
}

/// The point's jobs for `us`, time-based, without ramp or logs.
fn warm_job(set: &JobSet, us: u64) -> JobSet {
    let mut set = set.clone();
    for j in &mut set.jobs {
        let o = &mut j.opts;
        o.runtime = us;
        o.time_based = true;
        o.ramp_time = 0;
        ioscope_iolog::kind::clear_logs(o);
        o.write_iolog = None;
    }
    set
}
