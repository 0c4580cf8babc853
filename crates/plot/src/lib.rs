//! ioscope's charts: one plotting crate for `compare`, `fairness`, `sweep`, `report` and
//! `plot`. A [`Figure`] is a column of panels (bar charts, line charts, heatmaps) drawn
//! as one SVG document with plotters' SVG backend; [`html::Page`] puts figures, tables
//! and metadata into one self-contained HTML file, interactive through ECharts inlined
//! in it (nothing is fetched); [`interactive`] makes each panel an ECharts option.
//!
//! The chart types know nothing of I/O: callers hand over numbers and labels.

mod bars;
mod error;
mod heatmap;
pub mod html;
pub mod interactive;
mod lines;
mod style;

pub use bars::{BarSeries, Bars};
pub use error::PlotError;
pub use heatmap::Heatmap;
pub use lines::{Band, LineSeries, Lines, PointLabel, XScale};
pub use style::{rgb, Rgb, PALETTE};

use plotters::prelude::*;

/// One chart of a figure.
pub enum Panel {
    Bars(Bars),
    Lines(Lines),
    Heatmap(Heatmap),
}

/// Panels stacked top to bottom in one SVG.
pub struct Figure {
    pub width: u32,
    /// Height of each panel.
    pub panel_height: u32,
    pub panels: Vec<Panel>,
}

impl Figure {
    /// A figure 900 pixels wide with panels 420 high.
    pub fn new(panels: Vec<Panel>) -> Figure {
        Figure {
            width: 900,
            panel_height: 420,
            panels,
        }
    }

    /// The SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        if self.panels.is_empty() {
            return Err(PlotError::Empty("a figure without panels".into()));
        }
        let rows = self.panels.len();
        let height = self.panel_height.saturating_mul(rows as u32);
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (self.width, height)).into_drawing_area();
            root.fill(&WHITE).map_err(PlotError::draw)?;
            for (panel, area) in self.panels.iter().zip(root.split_evenly((rows, 1))) {
                match panel {
                    Panel::Bars(b) => b.draw(&area)?,
                    Panel::Lines(l) => l.draw(&area)?,
                    Panel::Heatmap(h) => h.draw(&area)?,
                }
            }
            root.present().map_err(PlotError::draw)?;
        }
        Ok(out)
    }
}

/// The drawing area every panel draws on.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
