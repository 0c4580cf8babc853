//! Heatmaps: a value per (x, y) cell, coloured on the viridis scale and, when the cells
//! are few enough to hold text (the QD × numjobs map of a sweep), written in the cell;
//! latency over time has hundreds of cells and is colour alone.

use crate::lines::format_num;
use crate::style;
use crate::{Area, PlotError};
use plotters::prelude::*;

/// Rows or columns beyond this and the cells carry no text.
const MAX_LABELLED: usize = 16;
/// Axis labels at most; past these, every few cells get one.
const MAX_X_LABELS: usize = 12;
const MAX_Y_LABELS: usize = 24;

pub struct Heatmap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub xs: Vec<String>,
    pub ys: Vec<String>,
    /// `values[y][x]`; `None`: no point there (failed or not run), drawn grey.
    pub values: Vec<Vec<Option<f64>>>,
    /// Colours on a log scale over four decades below the largest value: the
    /// 0.1% of I/Os in the tail stand out beside the 90% at the median.
    pub log_colour: bool,
}

/// Decades a log colour scale spans; smaller values (and 0) take its lowest colour.
const LOG_DECADES: f64 = 4.0;

impl Heatmap {
    /// The value the colour scale sees: log10 on a log scale, floored at its bottom.
    pub(crate) fn colour_value(&self, v: f64, hi: f64) -> f64 {
        match self.log_colour {
            false => v,
            true => {
                let floor = hi.log10() - LOG_DECADES;
                if v > 0.0 {
                    v.log10().max(floor)
                } else {
                    floor
                }
            }
        }
    }

    /// The colour scale's ends, in [`Heatmap::colour_value`]'s terms.
    pub(crate) fn colour_range(&self, lo: f64, hi: f64) -> (f64, f64) {
        match self.log_colour && hi > 0.0 {
            false => (lo, hi),
            true => (hi.log10() - LOG_DECADES, hi.log10()),
        }
    }
}

impl Heatmap {
    pub(crate) fn draw(&self, area: &Area) -> Result<(), PlotError> {
        let vals: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let (Some(lo), Some(hi)) = (
            vals.iter().copied().reduce(f64::min),
            vals.iter().copied().reduce(f64::max),
        ) else {
            return Err(PlotError::Empty(format!("{}: no values", self.title)));
        };
        let (nx, ny) = (self.xs.len(), self.ys.len());
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (style::FONT, style::TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((0..nx).into_segmented(), (0..ny).into_segmented())
            .map_err(PlotError::draw)?;
        let name = |names: &[String], v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nx.min(MAX_X_LABELS))
            .y_labels(ny.min(MAX_Y_LABELS))
            .x_label_formatter(&|v| name(&self.xs, v))
            .y_label_formatter(&|v| name(&self.ys, v))
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .label_style((style::FONT, style::LABEL_SIZE))
            .draw()
            .map_err(PlotError::draw)?;
        let cells = (0..ny).flat_map(|y| (0..nx).map(move |x| (x, y)));
        let cell = |(x, y): (usize, usize)| {
            let v = self.values.get(y).and_then(|r| r.get(x)).copied().flatten();
            let (clo, chi) = self.colour_range(lo, hi);
            let fill = match v {
                Some(v) if chi > clo => {
                    ViridisRGB::get_color_normalized(self.colour_value(v, hi), clo, chi)
                }
                Some(_) => ViridisRGB::get_color(0.5),
                None => RGBColor(200, 200, 200),
            };
            let corners = [
                (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
            ];
            Rectangle::new(corners, fill.filled())
        };
        chart
            .draw_series(cells.clone().map(cell))
            .map_err(PlotError::draw)?;
        let text = |(x, y): (usize, usize)| {
            let v = self.values.get(y).and_then(|r| r.get(x)).copied().flatten();
            let s = v.map(format_num).unwrap_or_else(|| "-".into());
            // Light text on the dark half of the scale.
            let dark = v.is_some_and(|v| hi <= lo || (v - lo) / (hi - lo) < 0.55);
            let colour = if dark { WHITE } else { BLACK };
            let font = (style::FONT, style::LABEL_SIZE).into_font().color(&colour);
            let at = (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y));
            EmptyElement::at(at) + Text::new(s, (-14, -7), font)
        };
        if self.labelled() {
            chart
                .draw_series(cells.map(text))
                .map_err(PlotError::draw)?;
        }
        Ok(())
    }

    /// Values written in the cells: only where a cell is wide enough for them.
    pub(crate) fn labelled(&self) -> bool {
        self.xs.len() <= MAX_LABELLED && self.ys.len() <= MAX_LABELLED
    }
}
