//! The panels of a plot as the inputs fill them: lines gather by title (one line per
//! file, job, direction and priority), heatmaps and histograms come one per input.

use super::buckets::Shares;
use anyhow::{bail, Result};
use ioscope_plot::{Bars, Figure, Heatmap, LineSeries, Lines, Panel, XScale};

/// How a panel of lines is laid out.
pub struct Axes<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: XScale,
    pub y_log: bool,
    pub x_names: &'a [(f64, String)],
}

impl<'a> Axes<'a> {
    /// Over time, linear.
    pub fn time(title: &'a str, y_label: &'a str) -> Axes<'a> {
        Axes {
            title,
            x_label: "time, s",
            y_label,
            x_scale: XScale::Linear,
            y_log: false,
            x_names: &[],
        }
    }
}

/// The panels in the order they first appear.
#[derive(Default)]
pub struct Panels {
    panels: Vec<Panel>,
}

impl Panels {
    /// A line on the panel titled `axes.title` (made on first use).
    pub fn line(&mut self, axes: &Axes, s: LineSeries) {
        let found = self.panels.iter_mut().find_map(|p| match p {
            Panel::Lines(l) if l.title == axes.title => Some(l),
            _ => None,
        });
        match found {
            Some(l) => l.series.push(s),
            None => self.panels.push(Panel::Lines(Lines {
                title: axes.title.into(),
                x_label: axes.x_label.into(),
                y_label: axes.y_label.into(),
                x_scale: axes.x_scale,
                y_log: axes.y_log,
                x_names: axes.x_names.to_vec(),
                series: vec![s],
                labels: Vec::new(),
                bands: Vec::new(),
            })),
        }
    }

    /// A latency-over-time heatmap: the share of each window's I/Os per latency bucket.
    pub fn heatmap(&mut self, title: String, x_label: &str, s: Shares) {
        self.panels.push(Panel::Heatmap(Heatmap {
            title,
            x_label: x_label.into(),
            y_label: "latency (from)".into(),
            xs: s.columns,
            ys: s.rows,
            values: s.shares,
            log_colour: true,
        }));
    }

    pub fn bars(&mut self, b: Bars) {
        self.panels.push(Panel::Bars(b));
    }

    pub fn figure(self) -> Result<Figure> {
        let panels: Vec<Panel> = self
            .panels
            .into_iter()
            .filter(|p| match p {
                Panel::Lines(l) => l.series.iter().any(|s| !s.points.is_empty()),
                _ => true,
            })
            .collect();
        if panels.is_empty() {
            bail!("plot: the inputs hold nothing to draw");
        }
        Ok(Figure {
            width: 1100,
            ..Figure::new(panels)
        })
    }
}

/// Names that tell inputs apart: the file name, or the path as given when two inputs
/// share a file name (runs in different directories).
pub fn input_names(operands: &[String]) -> Vec<String> {
    let base = |o: &String| {
        std::path::Path::new(o)
            .file_name()
            .map_or_else(|| o.clone(), |n| n.to_string_lossy().into_owned())
    };
    operands
        .iter()
        .map(|o| {
            let shared = operands.iter().filter(|p| base(p) == base(o)).count() > 1;
            if shared {
                o.clone()
            } else {
                base(o)
            }
        })
        .collect()
}

/// Job names that tell jobs apart: `name`, and `name#2` for the second of that name
/// (numjobs without group_reporting repeats it), as `compare` names them.
pub fn job_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = names.collect();
    names
        .iter()
        .enumerate()
        .map(
            |(i, n)| match names[..i].iter().filter(|m| *m == n).count() {
                0 => n.to_string(),
                k => format!("{n}#{}", k + 1),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let ops = ["a/x.log", "b/x.log", "y.log"].map(String::from);
        assert_eq!(input_names(&ops), ["a/x.log", "b/x.log", "y.log"]);
        assert_eq!(
            job_names(["j", "k", "j", "j"].into_iter()),
            ["j", "k", "j#2", "j#3"]
        );
    }
}
