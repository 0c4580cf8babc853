//! Running a campaign: check every point before anything runs, precondition, then run
//! the points in order through the runner, journaling each step and writing each
//! point's JSON+ result atomically. A second run on the same directory resumes: points
//! whose key finished are skipped, failed ones are skipped unless retried, and the
//! early-stop guard sees the finished points' results again so it prunes the same way.

use crate::error::SweepError;
use crate::file::{SWEEP_COPY, TEMPLATE_COPY};
use crate::journal::{self, now_ms, Event, Journal, PointState, State};
use crate::matrix::Point;
use crate::precondition;
pub use crate::ready::{
    figures, own_dir, write_atomically, write_text, Campaign, Outcome, Position, Progress,
    Settings, Summary, POINTS_DIR,
};
use crate::warmup;
use ioscope_analysis::sweep::{GuardLine, GuardMetric};
use ioscope_options::JobSet;
use ioscope_runner::Execute;
use ioscope_stats::hosts::Ran;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

impl Campaign {
    /// Every point (and preconditioning job) through the checks a run makes: options,
    /// values not supported yet, limits, memory — on every host `exec` runs on.
    /// Nothing is touched.
    pub fn check(&self, exec: &dyn Execute) -> Result<Vec<JobSet>, SweepError> {
        for set in precondition::job_sets(&self.file)? {
            exec.check(&set)
                .map_err(|e| SweepError::Run(format!("preconditioning: {e}")))?;
        }
        self.points
            .iter()
            .map(|p| {
                let set = p.job_set()?;
                exec.check(&set).map_err(|e| SweepError::Point {
                    point: p.id.clone(),
                    msg: e.to_string(),
                })?;
                Ok(set)
            })
            .collect()
    }

    /// A campaign that writes to a block device in use (mounted, partitioned, carrying
    /// a file system or other signature) is refused as a whole before anything runs,
    /// unless allowed — not discovered point by point.
    pub fn check_writes(&self, sets: &[JobSet], settings: &Settings) -> Result<(), SweepError> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let writes = self
            .file
            .precondition
            .as_ref()
            .is_some_and(|p| p.passes > 0)
            || self.file.steady.is_some()
            || sets
                .iter()
                .flat_map(|s| &s.jobs)
                .any(|j| j.opts.rw.mode.writes() || j.opts.rw.mode.trims());
        if !writes || settings.allow_destructive || self.file.target.allow_destructive {
            return Ok(());
        }
        let path = Path::new(&self.identity.path);
        let Ok(md) = std::fs::metadata(path) else {
            return Ok(());
        };
        if !md.file_type().is_block_device() {
            return Ok(());
        }
        match ioscope_runner::device::write_hazard(path, md.rdev()) {
            Some(why) => Err(SweepError::Target(format!(
                "the sweep writes to {why}: refused (--allow-destructive or allow_destructive = \
                 true in [target] to destroy it)"
            ))),
            None => Ok(()),
        }
    }

    /// Run (or resume) the campaign into `dir`, each job set through `exec` (made with
    /// `settings.allow_destructive`).
    pub fn run(
        &self,
        dir: &Path,
        settings: &Settings,
        exec: &dyn Execute,
        progress: &mut dyn Progress,
    ) -> Result<Summary, SweepError> {
        let sets = self.check(exec)?;
        self.check_writes(&sets, settings)?;
        own_dir(dir)?;
        // One run per directory: a second would measure the same device at the same time
        // and interleave its journal with this one's.
        let _lock = ioscope_fs::lock_dir(dir).map_err(|e| {
            SweepError::Run(format!(
                "{}: {e}; wait for it or run elsewhere",
                dir.display()
            ))
        })?;
        own_dir(&dir.join(POINTS_DIR))?;
        write_text(&dir.join(SWEEP_COPY), &self.file.text)?;
        if let Some(t) = &self.file.template {
            write_text(&dir.join(TEMPLATE_COPY), &t.text)?;
        }
        let state = journal::load(dir)?;
        let mut journal = Journal::open(dir)?;
        journal.write(&Event::Campaign {
            t: now_ms(),
            points: self.points.len(),
            identity: self.identity.key(),
        })?;
        let conditions = self.file.precondition.is_some() || self.file.steady.is_some();
        let fresh = !state.conditioned.contains(&self.identity.key());
        let conditioned = if fresh {
            let pre = precondition::Preconditioner {
                campaign: self,
                dir,
                settings,
                exec,
            };
            pre.run(&mut journal, progress)?
        } else {
            if conditions {
                progress.stage("preconditioning: done in an earlier run (journal), skipped");
            }
            true
        };
        // Preconditioning that just ran leaves the target as warm as it gets; otherwise
        // the warm-up does.
        let ready = conditioned
            && ((fresh && conditions)
                || warmup::warm_up(
                    self,
                    &sets,
                    &state,
                    settings.retry_failed,
                    exec,
                    (&mut journal, progress),
                )?);
        if !ready {
            return Ok(Summary {
                total: self.points.len(),
                left: self.points.len(),
                interrupted: true,
                ..Summary::default()
            });
        }
        let mut run = PointRun {
            campaign: self,
            dir,
            settings,
            state,
            journal,
            exec,
            sets,
            guards: HashMap::new(),
            pruned: HashMap::new(),
            summary: Summary {
                total: self.points.len(),
                ..Summary::default()
            },
            timing: (0.0, 0.0),
        };
        run.all(progress)?;
        Ok(run.summary)
    }
}

/// The state of a run over the points.
struct PointRun<'a> {
    campaign: &'a Campaign,
    dir: &'a Path,
    settings: &'a Settings,
    state: State,
    journal: Journal,
    exec: &'a dyn Execute,
    sets: Vec<JobSet>,
    /// Guard state per line, and the lines it pruned (with why).
    guards: HashMap<usize, GuardLine>,
    pruned: HashMap<usize, String>,
    summary: Summary,
    /// Seconds the time-bounded points of this run took, and their planned seconds.
    timing: (f64, f64),
}

impl PointRun<'_> {
    fn all(&mut self, progress: &mut dyn Progress) -> Result<(), SweepError> {
        let points = &self.campaign.points;
        for (i, p) in points.iter().enumerate() {
            if ioscope_runner::STOP.load(Relaxed) {
                self.summary.interrupted = true;
                self.summary.left = points.len() - i;
                return Ok(());
            }
            let outcome = self.point(p, progress)?;
            progress.point_end(p, &outcome);
            match outcome {
                Outcome::Done { .. } => self.summary.done += 1,
                Outcome::Skipped => self.summary.skipped += 1,
                Outcome::Failed(_) => self.summary.failed += 1,
                Outcome::Pruned(_) => self.summary.pruned += 1,
                Outcome::Interrupted => {
                    self.summary.interrupted = true;
                    self.summary.left = points.len() - i;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn point(&mut self, p: &Point, progress: &mut dyn Progress) -> Result<Outcome, SweepError> {
        if let Some(reason) = self.pruned.get(&p.line).cloned() {
            if self.state.points.get(&p.key) != Some(&PointState::Pruned(reason.clone())) {
                self.event(Event::Prune {
                    t: now_ms(),
                    key: p.key.clone(),
                    id: p.id.clone(),
                    reason: reason.clone(),
                })?;
            }
            return Ok(Outcome::Pruned(reason));
        }
        match self.state.points.get(&p.key).cloned() {
            Some(PointState::Finished { file, .. }) => match self.read_result(&file) {
                Ok(doc) if point_key(&doc) == Some(p.key.as_str()) => {
                    self.observe(p, Some(&doc));
                    return Ok(Outcome::Skipped);
                }
                Ok(_) => progress.stage(&format!(
                    "{}: {file} holds a point of another version of the sweep or another \
                     target (its key is not {}): running it again",
                    p.id, p.key
                )),
                Err(why) => progress.stage(&format!(
                    "{}: finished before, but {file} {why}: running it again",
                    p.id
                )),
            },
            Some(PointState::Failed(e)) if !self.settings.retry_failed => {
                self.observe(p, None);
                return Ok(Outcome::Failed(e));
            }
            _ => {}
        }
        let at = self.position(p.index);
        progress.point_start(p, &at);
        self.event(Event::Start {
            t: now_ms(),
            key: p.key.clone(),
            id: p.id.clone(),
        })?;
        let started = Instant::now();
        let result = self.exec.execute(&self.sets[p.index], progress.observer());
        let seconds = started.elapsed().as_secs_f64();
        let run = match result {
            Ok(r) => r,
            Err(e) => return self.failed(p, e.to_string()),
        };
        if run.interrupted() {
            self.event(Event::Interrupted {
                t: now_ms(),
                key: p.key.clone(),
                id: p.id.clone(),
            })?;
            return Ok(Outcome::Interrupted);
        }
        let doc = self.document(p, &run);
        let rel = format!("{POINTS_DIR}/{}.json", p.id);
        write_atomically(&self.dir.join(&rel), &doc)?;
        if let Some(why) = run.failure() {
            return self.failed(p, why);
        }
        self.event(Event::Finish {
            t: now_ms(),
            key: p.key.clone(),
            id: p.id.clone(),
            file: rel,
            seconds,
        })?;
        self.state.seconds.push(seconds);
        if let Some(n) = nominal_seconds(&self.sets[p.index]) {
            self.timing.0 += seconds;
            self.timing.1 += n;
        }
        let (iops, bw, _) = figures(&doc);
        self.observe(p, Some(&doc));
        Ok(Outcome::Done { seconds, iops, bw })
    }

    fn failed(&mut self, p: &Point, error: String) -> Result<Outcome, SweepError> {
        self.event(Event::Fail {
            t: now_ms(),
            key: p.key.clone(),
            id: p.id.clone(),
            error: error.clone(),
        })?;
        self.observe(p, None);
        Ok(Outcome::Failed(error))
    }

    fn event(&mut self, ev: Event) -> Result<(), SweepError> {
        self.journal.write(&ev)
    }

    /// Feed the guard of the point's sweep; prune the rest of its line when it says so.
    fn observe(&mut self, p: &Point, doc: Option<&Value>) {
        let sweep = self.campaign.file.sweeps.iter().find(|s| s.name == p.sweep);
        let Some(g) = sweep.and_then(|s| s.guard.as_ref()) else {
            return;
        };
        let (iops, bw, p99) = doc.map(figures).unwrap_or((f64::NAN, f64::NAN, None));
        let value = match g.guard.metric {
            GuardMetric::Iops => iops,
            GuardMetric::Bw => bw,
        };
        let value = doc.map(|_| value);
        let line = self.guards.entry(p.line).or_default();
        if let Some(why) = line.observe(&g.guard, value, p99) {
            let at = p.axis(&g.axis).unwrap_or("?");
            self.pruned
                .insert(p.line, format!("{why} (at {}={at})", g.axis));
        }
    }

    /// A point's result file, or why it cannot be read.
    fn read_result(&self, rel: &str) -> Result<Value, String> {
        let text = std::fs::read_to_string(self.dir.join(rel))
            .map_err(|e| format!("cannot be read ({e})"))?;
        serde_json::from_str(&text).map_err(|e| format!("is not JSON ({e})"))
    }

    /// The JSON+ document of a point (fio's client shape when it ran on many hosts),
    /// with what the sweep knows under `ioscope.sweep`: the point, its axes, its
    /// options as a job file, the target.
    fn document(&self, p: &Point, run: &Ran) -> Value {
        let mut doc = ioscope_report::ran_json_value(run, true);
        let axes: serde_json::Map<String, Value> = p
            .axes
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let sweep = serde_json::json!({
            "sweep": p.sweep,
            "profile": p.profile,
            "point": p.id,
            "index": p.index,
            "key": p.key,
            "axes": axes,
            "job_file": p.job_text(),
            "target": self.campaign.identity,
        });
        if let Some(meta) = doc.get_mut("ioscope").and_then(Value::as_object_mut) {
            meta.insert("sweep".into(), sweep);
        }
        doc
    }

    /// Settled points and the time left, from the points' nominal runtimes scaled by
    /// how long finished points took against theirs.
    fn position(&self, index: usize) -> Position {
        // Points run in order: every one before this is settled (run, skipped, failed
        // or pruned).
        let settled = index;
        let nominal: Vec<Option<f64>> = self.sets.iter().map(nominal_seconds).collect();
        let left: Vec<usize> = (index..self.campaign.points.len())
            .filter(|&i| {
                let q = &self.campaign.points[i];
                !matches!(
                    self.state.points.get(&q.key),
                    Some(PointState::Finished { .. })
                ) && !self.pruned.contains_key(&q.line)
            })
            .collect();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let measured = mean(&self.state.seconds);
        // How much longer than planned the points of this run took (layout, start-up,
        // size-bounded points that ran slower or faster than their runtime cap).
        let (took, planned) = self.timing;
        let scale = if planned > 0.0 { took / planned } else { 1.0 };
        let eta: Option<f64> = left
            .iter()
            .map(|&i| nominal[i].map(|n| n * scale).or(measured))
            .sum();
        Position {
            settled,
            total: self.campaign.points.len(),
            eta: eta.and_then(|e| Duration::try_from_secs_f64(e).ok()),
        }
    }
}

/// The key a result file says its point has (`ioscope.sweep.key`).
pub fn point_key(doc: &Value) -> Option<&str> {
    doc.pointer("/ioscope/sweep/key").and_then(Value::as_str)
}

/// A point's planned seconds: ramp + runtime of its longest job, if time-bounded.
pub fn nominal_seconds(set: &JobSet) -> Option<f64> {
    set.jobs
        .iter()
        .map(|j| (j.opts.runtime > 0).then(|| (j.opts.runtime + j.opts.ramp_time) as f64 / 1e6))
        .try_fold(0.0f64, |acc, s| s.map(|s| acc.max(s)))
}
