//! What a sweep shows while it runs: on a terminal a progress bar (points settled of
//! all, the point running, the time left); otherwise one line per point on stderr, so
//! logs of long campaigns say what ran when.

use crate::live::Live;
use crate::recording::capture::Capture;
use indicatif::{ProgressBar, ProgressStyle};
use ioscope_runner::Observer;
use ioscope_sweep::{Outcome, Point, Position, Progress};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

pub struct SweepProgress {
    bar: Option<ProgressBar>,
    messages: Messages,
    /// --history: where each finished point is recorded, the run directory and the
    /// target's identity.
    history: Option<(Capture, PathBuf, serde_json::Value)>,
}

/// The runner's messages: printed above the bar (or as lines), each text once (every
/// point of a sweep would otherwise repeat the same layout notice); and the live
/// stream's intervals, with the point running.
struct Messages {
    bar: Option<ProgressBar>,
    seen: Vec<String>,
    live: Live,
}

impl Observer for Messages {
    fn message(&mut self, line: &str) {
        if self.seen.iter().any(|s| s == line) {
            return;
        }
        self.seen.push(line.to_string());
        say(&self.bar, line);
    }

    fn warning(&mut self, line: &str) {
        say(&self.bar, line);
    }

    fn phase_ready(&mut self, phase: usize) {
        self.live.phase(phase);
    }

    fn interval(&mut self, iv: &ioscope_runner::LiveInterval) {
        self.live.interval(iv);
    }
}

fn say(bar: &Option<ProgressBar>, line: &str) {
    match bar {
        Some(b) => b.println(line),
        None => eprintln!("{line}"),
    }
}

impl SweepProgress {
    pub fn new(
        total: usize,
        live: Live,
        history: Option<(Capture, PathBuf, serde_json::Value)>,
    ) -> SweepProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total as u64);
            let style = ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            b.set_style(style);
            b.enable_steady_tick(Duration::from_millis(500));
            b
        });
        SweepProgress {
            messages: Messages {
                bar: bar.clone(),
                seen: Vec::new(),
                live,
            },
            bar,
            history,
        }
    }

    /// The sweep ended: the bar goes; the live stream and metrics are handed back
    /// (to end after the report).
    pub fn finish(self) -> Live {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        self.messages.live
    }

    /// --history: a finished point's result file becomes a row.
    fn record(&mut self, p: &Point) {
        let Some((cap, dir, devices)) = &mut self.history else {
            return;
        };
        let file = dir
            .join(ioscope_sweep::ready::POINTS_DIR)
            .join(format!("{}.json", p.id));
        match std::fs::read_to_string(&file)
            .map_err(anyhow::Error::from)
            .and_then(|t| Ok(serde_json::from_str::<serde_json::Value>(&t)?))
        {
            Ok(doc) => {
                // The point's jobs as its result file states them.
                let job = doc["global options"].clone();
                cap.record_document(("point", &p.id), doc, &file, (job, devices.clone()))
            }
            Err(e) => eprintln!(
                "ioscope sweep: --history: point {} not recorded ({}: {e})",
                p.id,
                file.display()
            ),
        }
    }
}

/// 1h02m, 3m05s, 12s.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

impl Progress for SweepProgress {
    fn observer(&mut self) -> &mut dyn Observer {
        &mut self.messages
    }

    fn stage(&mut self, text: &str) {
        say(&self.bar, &format!("ioscope sweep: {text}"));
    }

    fn point_start(&mut self, p: &Point, at: &Position) {
        self.messages.live.point = Some(p.id.clone());
        let eta = at.eta.map_or("unknown".into(), duration_text);
        match &self.bar {
            Some(b) => {
                b.set_position(at.settled as u64);
                b.set_message(format!("{} | left ~{eta}", p.label()));
            }
            None => eprintln!(
                "ioscope sweep: [{}/{}] {} (left ~{eta})",
                at.settled + 1,
                at.total,
                p.label()
            ),
        }
    }

    fn point_end(&mut self, p: &Point, outcome: &Outcome) {
        if matches!(outcome, Outcome::Done { .. }) {
            self.record(p);
        }
        let line = match outcome {
            Outcome::Done { seconds, iops, bw } => format!(
                "  {}: {:.0} IOPS, {:.1} MiB/s in {seconds:.1} s",
                p.id,
                iops,
                bw / 1048576.0
            ),
            Outcome::Failed(e) => format!("  {}: FAILED: {e}", p.id),
            Outcome::Pruned(why) => format!("  {}: pruned: {why}", p.id),
            Outcome::Skipped | Outcome::Interrupted => {
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
                return;
            }
        };
        match &self.bar {
            Some(b) => {
                b.inc(1);
                if !matches!(outcome, Outcome::Done { .. }) {
                    b.println(line);
                }
            }
            None => eprintln!("{line}"),
        }
    }
}
