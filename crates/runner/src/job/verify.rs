//! Data verification in the job loop (fio's verify): writes carry a verify header and
//! checksum; every completed write enters the job's history; after the writes (after
//! each loop, with `loops`), or every `verify_backlog` writes, the history is read
//! back and checked. Read-only jobs check every block they read; `verify_only`
//! regenerates the writes without issuing them and verifies what they left.
//!
//! The history is exact: each entry knows the seed and write number it put on the
//! medium, so a stale block (an older write of the right place) is caught by its write
//! number and seed even where fio 3.33 checks neither. Order of reading back, as fio:
//! write order for random writes with the random map; otherwise ascending offset with
//! each block's latest write only.
//!
//! Nothing here allocates per I/O except the history push (capacity reserved up front
//! from the job's size and block size).

use super::trims::Trims;
use crate::plan::verify::mixed_sizes;
use crate::workload::io::Io;
use crate::workload::rng::splitmix;
use crate::workload::Workload;
use ioscope_engine::Ddir;
use ioscope_options::{ContinueOnError, JobOptions};
use ioscope_verify::{state, Expect, Failure, Method, Spec, Stamp};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

/// One write the job made (or, with verify_only, would have made).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub seed: u64,
    /// The job's write counter at this write (the header holds its low 16 bits).
    pub n: u64,
}

/// What a unit in flight is to the verifier.
#[derive(Clone, Copy)]
enum Unit {
    Plain,
    Write(Entry),
    Verify(Entry),
    /// trim_percentage: a written block being discarded.
    Trim(Entry),
}

/// What a completed unit's buffer needs: nothing, or a check (done in the job thread
/// or, with verify_async, on a checker thread).
#[derive(Clone, Copy, Debug)]
pub enum Check {
    None,
    Block(Job),
}

/// One block to check.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    pub exp: Expect,
    /// A read of the verify phase (fio's flags 0x88) rather than of a read job (0x8).
    pub phase: bool,
    /// A trimmed block: it must read back as zeros.
    pub zeros: bool,
}

/// Check a block as `job` says.
pub fn check_block(spec: &Spec, buf: &mut [u8], job: &Job) -> Result<(), Failure> {
    match job.zeros {
        true => ioscope_verify::check_zeros(spec.method, buf, job.exp.offset),
        false => spec.check(buf, &job.exp),
    }
}

/// What the loop should do next.
pub enum Next {
    Io(Io),
    /// Nothing until the I/O in flight completes (a verify phase waits for writes).
    Wait,
    Done,
}

/// Counts for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub blocks: u64,
    pub errors: u64,
}

pub struct Verifier {
    pub spec: Spec,
    name: String,
    /// 0-based job number (fio's thread_number - 1).
    index: u64,
    do_verify: bool,
    verify_only: bool,
    /// A read-only job: every block it reads is checked.
    read_only: bool,
    /// Read back in offset order, each block's latest write only.
    sorted: bool,
    /// Verify after each loop (not only at the end).
    per_pass: bool,
    history: Vec<Entry>,
    queue: VecDeque<Entry>,
    /// Verify reads and trims handed to the loop and not yet bound to a unit, in order.
    handed: VecDeque<Unit>,
    units: Vec<Unit>,
    verifying: bool,
    numberio: u64,
    seed_state: u64,
    backlog: u64,
    batch: u64,
    since_backlog: u64,
    pub fatal: bool,
    pub dump: bool,
    pub tolerate: bool,
    pub counts: Counts,
    state_save: bool,
    /// Where the verify state is saved.
    state_file: PathBuf,
    /// verify_state_load: the first write not to check (see [`state::State::stop_at`]).
    stop_at: Option<u64>,
    /// Reads a read-only job issued (checked against a loaded state).
    reads: u64,
    depth: usize,
    trim: Trims<Entry>,
    /// verify_header_seed, verify_write_sequence: which header fields are checked.
    check_seed: bool,
    check_sequence: bool,
    /// With verify_backlog or time_based writes, a block can be written again before
    /// its first write is read back: the latest write number of each (file, offset),
    /// so that only the write the block now holds is verified.
    latest: Option<std::collections::HashMap<(u32, u64), u64>>,
}

/// How big a verifier's tables are.
pub struct Sizing {
    /// The job's unit count.
    pub units: usize,
    /// Writes to expect (the history's size).
    pub capacity: usize,
}

impl Verifier {
    /// The verifier of job clone `index` (0-based); `state_file`: where its verify state
    /// is saved and loaded (the plan's choice: --aux-path or here).
    pub fn new(
        o: &JobOptions,
        spec: Spec,
        index: u64,
        seed: u64,
        size: Sizing,
        state_file: PathBuf,
    ) -> Result<Verifier, String> {
        let Sizing { units, capacity } = size;
        let m = o.rw.mode;
        let stop_at = match o.verify_state_load {
            true => Some(load_state(&state_file)?.stop_at()),
            false => None,
        };
        Ok(Verifier {
            spec,
            name: o.name.clone(),
            index,
            do_verify: o.do_verify,
            verify_only: o.verify_only,
            read_only: m.reads() && !m.writes(),
            // Offset order with overlaps resolved wherever blocks can overlap or repeat:
            // sequential passes, no random map, mixed block sizes, one final read-back.
            sorted: !m.is_random() || o.norandommap || o.experimental_verify || mixed_sizes(o),
            // verify_only reads what the last loop left, once.
            per_pass: o.loops > 1 && !o.experimental_verify && !o.time_based && !o.verify_only,
            history: Vec::with_capacity(capacity.min(1 << 24)),
            queue: VecDeque::new(),
            handed: VecDeque::with_capacity(units),
            units: vec![Unit::Plain; units],
            verifying: false,
            numberio: 0,
            seed_state: seed ^ crate::workload::rng::SALT_VERIFY,
            backlog: o.verify_backlog,
            batch: if o.verify_backlog_batch > 0 {
                o.verify_backlog_batch
            } else {
                o.verify_backlog
            },
            since_backlog: 0,
            fatal: o.verify_fatal,
            dump: o.verify_dump,
            tolerate: matches!(
                o.continue_on_error,
                ContinueOnError::Verify | ContinueOnError::All
            ),
            counts: Counts::default(),
            // A job that writes nothing (verify_only) keeps the state it may have
            // loaded instead of overwriting it (fio 3.33 overwrites it).
            state_save: o.verify_state_save && m.writes() && !o.verify_only,
            state_file,
            stop_at,
            reads: 0,
            depth: units,
            trim: Trims::new(o, seed),
            check_seed: o.verify_header_seed,
            check_sequence: o.verify_write_sequence,
            latest: (o.verify_backlog > 0 || o.time_based).then(Default::default),
        })
    }

    /// The next I/O: a verify read, or the workload's next (writes of verify_only
    /// are recorded, not issued); `busy` is the I/O queued or in flight.
    pub fn next(&mut self, wl: &mut Workload, busy: u32) -> Next {
        loop {
            if let Some(e) = self.queue.pop_front() {
                // A block written again since it was queued holds the newer write.
                if !self.is_current(&e) {
                    continue;
                }
                self.handed.push_back(Unit::Verify(e));
                return Next::Io(Io {
                    ddir: Ddir::Read,
                    file: e.file,
                    offset: e.offset,
                    len: e.len,
                    verify: true,
                });
            }
            if let Some(e) = self.next_trim() {
                self.handed.push_back(Unit::Trim(e));
                return Next::Io(Io {
                    ddir: Ddir::Trim,
                    file: e.file,
                    offset: e.offset,
                    len: e.len,
                    verify: true,
                });
            }
            if self.verifying {
                if busy > 0 {
                    return Next::Wait;
                }
                self.verifying = false;
            }
            if self.backlog > 0 && self.since_backlog >= self.backlog && !self.history.is_empty() {
                self.since_backlog = 0;
                let n = (self.batch as usize).min(self.history.len());
                let mut batch: Vec<Entry> = self.history.drain(..n).collect();
                batch.retain(|e| self.is_current(e));
                self.queue.extend(batch);
                continue;
            }
            let boundary = wl.finished() || (self.per_pass && wl.pass_complete());
            if boundary && !self.trim.waiting.is_empty() {
                // The trims chosen so far go before the read-back.
                self.trim.since = self.trim.backlog;
                continue;
            }
            if self.do_verify && !self.history.is_empty() && boundary {
                if busy > 0 {
                    return Next::Wait;
                }
                self.begin_phase();
                continue;
            }
            if let Some(stop) = self.stop_at.filter(|_| self.read_only) {
                if self.reads >= stop {
                    return Next::Done;
                }
            }
            match wl.next_io() {
                None if wl.zone_blocked() => return Next::Wait,
                None => return Next::Done,
                Some(io) if self.verify_only && io.ddir == Ddir::Write => self.simulate(io),
                Some(io) => {
                    if io.ddir == Ddir::Read {
                        self.reads += 1;
                    }
                    return Next::Io(io);
                }
            }
        }
    }

    /// A chosen trim, when one is due (at once, or every trim_backlog writes).
    fn next_trim(&mut self) -> Option<Entry> {
        self.trim.take()
    }

    /// Whether the next verify phase should first drop the files' cached pages.
    pub fn verifying(&self) -> bool {
        self.verifying
    }

    /// Move the history into the read-back queue, in fio's order.
    fn begin_phase(&mut self) {
        let mut h = std::mem::take(&mut self.history);
        if self.sorted {
            h = latest_per_block(h);
        }
        if let Some(stop) = self.stop_at {
            h.retain(|e| e.n < stop);
        }
        h.retain(|e| self.is_current(e));
        self.queue.extend(h);
        self.verifying = true;
    }

    fn next_write(&mut self, io: &Io) -> Entry {
        let e = Entry {
            file: io.file,
            offset: io.offset,
            len: io.len,
            seed: splitmix(&mut self.seed_state),
            n: self.numberio,
        };
        self.numberio += 1;
        // Recorded as the write is issued: a read-back queued for an older write of
        // the block from now on would find this one.
        if let Some(m) = &mut self.latest {
            m.insert((e.file, e.offset), e.n);
        }
        e
    }

    /// verify_only: the write the workload would make, as if it had been made.
    fn simulate(&mut self, io: Io) {
        let e = self.next_write(&io);
        self.history.push(e);
    }

    /// A write is about to be issued in unit `idx`: fill its buffer.
    pub fn fill_write(&mut self, idx: usize, io: &Io, buf: &mut [u8], now_ns: u64) {
        let e = self.next_write(io);
        self.spec.fill(
            buf,
            &Stamp {
                offset: e.offset,
                seed: e.seed,
                numberio: e.n,
                time_sec: (now_ns / 1_000_000_000) as u32,
                time_nsec: (now_ns % 1_000_000_000) as u32,
            },
        );
        self.units[idx] = Unit::Write(e);
    }

    /// What the job writes and checks (`verify_mode=compare` fills reads with it).
    pub fn spec(&self) -> &ioscope_verify::Spec {
        &self.spec
    }

    /// A read or trim is about to be issued in unit `idx`.
    pub fn bind(&mut self, idx: usize, io: &Io) {
        self.units[idx] = match io.verify {
            true => self.handed.pop_front().unwrap_or(Unit::Plain),
            false => Unit::Plain,
        };
    }

    /// Unit `idx` completed (`ok`: all bytes transferred): record a write, or say
    /// what its buffer must be checked against (the header fields the job checks).
    pub fn completed(&mut self, idx: usize, ddir: Ddir, offset: u64, ok: bool) -> Check {
        let mut c = self.judge(idx, ddir, offset, ok);
        if let Check::Block(job) = &mut c {
            job.exp.seed = job.exp.seed.filter(|_| self.check_seed);
            job.exp.numberio = job.exp.numberio.filter(|_| self.check_sequence);
            // verify_only may read what another job wrote, whose seeds and write order
            // this one cannot know: as fio, such blocks are checked for what they say
            // of themselves; blocks this job wrote (an earlier run) fully.
            job.exp.own_only = self.verify_only;
        }
        c
    }

    fn judge(&mut self, idx: usize, ddir: Ddir, offset: u64, ok: bool) -> Check {
        match std::mem::replace(&mut self.units[idx], Unit::Plain) {
            Unit::Write(e) if ok => {
                self.written(e);
                Check::None
            }
            Unit::Write(_) => Check::None,
            Unit::Trim(e) => {
                if ok {
                    self.trim.done.insert(e.n);
                }
                self.history.push(e);
                Check::None
            }
            Unit::Verify(_) if self.spec.method == Method::Null => Check::None,
            Unit::Verify(e) => {
                let zeros = self.trim.done.contains(&e.n);
                if zeros && !self.trim.verify_zero {
                    return Check::None;
                }
                self.counts.blocks += 1;
                Check::Block(Job {
                    exp: Expect {
                        offset: e.offset,
                        numberio: Some(e.n),
                        seed: (self.spec.pattern.is_none()).then_some(e.seed),
                        own_only: false,
                    },
                    phase: true,
                    zeros,
                })
            }
            Unit::Plain
                if self.read_only && ddir == Ddir::Read && self.spec.method != Method::Null =>
            {
                self.counts.blocks += 1;
                Check::Block(Job {
                    exp: Expect {
                        offset,
                        ..Expect::default()
                    },
                    phase: false,
                    zeros: false,
                })
            }
            Unit::Plain => Check::None,
        }
    }

    /// Whether the block still holds write `e` (no later write to it was recorded).
    fn is_current(&self, e: &Entry) -> bool {
        match self
            .latest
            .as_ref()
            .and_then(|m| m.get(&(e.file, e.offset)))
        {
            Some(&n) => n == e.n,
            None => true,
        }
    }

    /// A write completed: into the history, or (trim_percentage) chosen for a trim.
    fn written(&mut self, e: Entry) {
        self.since_backlog += 1;
        self.trim.since += 1;
        if self.trim.pct > 0 && splitmix(&mut self.trim.rng) % 100 < u64::from(self.trim.pct) {
            self.trim.waiting.push_back(e);
        } else {
            self.history.push(e);
        }
    }

    /// Unit `idx` failed with an I/O error: nothing to record or check.
    pub fn forget(&mut self, idx: usize) {
        if let Some(u) = self.units.get_mut(idx) {
            *u = Unit::Plain;
        }
    }

    /// A failure was tolerated (continue_on_error=verify): count it.
    pub fn tolerated(&mut self) {
        self.counts.errors += 1;
    }

    /// The state was saved when a trigger fired: keep that one (the writes after it
    /// are not claimed, as a power cut may follow).
    pub fn keep_saved_state(&mut self) {
        self.state_save = false;
    }

    /// The state file to write when the job ends (verify_state_save).
    pub fn state(&self) -> Option<(PathBuf, state::State)> {
        if !self.state_save {
            return None;
        }
        let s = state::State {
            numberio: self.numberio,
            index: self.index,
            name: self.name.clone(),
            depth: self.depth as u32,
            inflight: self.inflight(),
        };
        Some((self.state_file.clone(), s))
    }

    /// The writes issued and not completed, oldest first.
    fn inflight(&self) -> Vec<u64> {
        let mut n: Vec<u64> = self
            .units
            .iter()
            .filter_map(|u| match u {
                Unit::Write(e) => Some(e.n),
                _ => None,
            })
            .collect();
        n.sort_unstable();
        n
    }

    /// fio's io_u flags in messages: 0x88 for verify-phase reads, 0x8 otherwise.
    pub fn flags(phase: bool) -> u32 {
        if phase {
            0x88
        } else {
            0x8
        }
    }

    /// The expected bytes of a failed block (for verify_dump): regenerated from what
    /// the header on the medium says (seed, write number), as fio does.
    pub fn expected(&self, got: &[u8], f: &Failure) -> Vec<u8> {
        let h = ioscope_verify::header::Header::decode(got);
        let mut want = vec![0u8; got.len()];
        let st = Stamp {
            offset: f.block_offset,
            seed: h.rand_seed,
            numberio: h.numberio,
            time_sec: h.time_sec,
            time_nsec: h.time_nsec,
        };
        self.spec.fill(&mut want, &st);
        want
    }
}

/// verify_state_load's state file.
fn load_state(path: &std::path::Path) -> Result<state::State, String> {
    let bad = |e: String| format!("verify_state_load: {}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    state::State::decode(&bytes).map_err(bad)
}

/// Offset order, each block's latest write only: a later write removes the older
/// entries it overlaps (fio's history tree).
fn latest_per_block(h: Vec<Entry>) -> Vec<Entry> {
    let mut map: BTreeMap<(u32, u64), Entry> = BTreeMap::new();
    for e in h {
        let end = e.offset + e.len as u64;
        if let Some((&k, p)) = map.range(..(e.file, e.offset)).next_back() {
            if k.0 == e.file && p.offset + p.len as u64 > e.offset {
                map.remove(&k);
            }
        }
        let inside: Vec<(u32, u64)> = map
            .range((e.file, e.offset)..(e.file, end))
            .map(|(k, _)| *k)
            .collect();
        for k in inside {
            map.remove(&k);
        }
        map.insert((e.file, e.offset), e);
    }
    map.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(offset: u64, len: u32, n: u64) -> Entry {
        Entry {
            file: 0,
            offset,
            len,
            seed: n,
            n,
        }
    }

    #[test]
    fn latest_write_of_each_block_in_offset_order() {
        let h = vec![
            e(0, 4096, 0),
            e(20480, 4096, 1),
            e(24576, 4096, 2),
            e(12288, 4096, 3),
            e(12288, 4096, 4),
            e(24576, 4096, 5),
            e(12288, 4096, 6),
            e(8192, 4096, 7),
        ];
        let got: Vec<(u64, u64)> = latest_per_block(h)
            .iter()
            .map(|e| (e.offset, e.n))
            .collect();
        assert_eq!(got, [(0, 0), (8192, 7), (12288, 6), (20480, 1), (24576, 5)]);
        // An 8 KiB write over two 4 KiB blocks replaces both; a later 4 KiB write
        // inside it replaces it.
        let h = vec![
            e(0, 4096, 0),
            e(4096, 4096, 1),
            e(0, 8192, 2),
            e(4096, 4096, 3),
        ];
        let got: Vec<(u64, u32, u64)> = latest_per_block(h)
            .iter()
            .map(|e| (e.offset, e.len, e.n))
            .collect();
        assert_eq!(got, [(4096, 4096, 3)]);
    }
}
