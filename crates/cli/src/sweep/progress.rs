//! What a sweep shows while it runs: on a terminal a progress bar (points settled of
//! all, the point running, the time left); otherwise one line per point on stderr, so
//! logs of long campaigns say what ran when.

use indicatif::{ProgressBar, ProgressStyle};
use ioscope_runner::Observer;
use ioscope_sweep::{Outcome, Point, Position, Progress};
use std::io::IsTerminal;
use std::time::Duration;

pub struct SweepProgress {
    bar: Option<ProgressBar>,
    messages: Messages,
}

/// The runner's messages: printed above the bar (or as lines), each text once (every
/// point of a sweep would otherwise repeat the same layout notice).
struct Messages {
    bar: Option<ProgressBar>,
    seen: Vec<String>,
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
}

fn say(bar: &Option<ProgressBar>, line: &str) {
    match bar {
        Some(b) => b.println(line),
        None => eprintln!("{line}"),
    }
}

impl SweepProgress {
    pub fn new(total: usize) -> SweepProgress {
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
            },
            bar,
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
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
