//! Grouped bar charts with optional whiskers (confidence intervals): one group per
//! category, one bar per series.

use crate::lines::format_num;
use crate::style::{self, Rgb};
use crate::{Area, PlotError};

/// More categories than this get their labels turned upright.
const ROTATE_ABOVE: usize = 10;
use plotters::prelude::*;

/// A bar chart: `categories` along x, a bar per series in each.
pub struct Bars {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// One series: a value per category (`None`: no bar).
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Per category, the interval drawn as a whisker over the bar.
    pub whiskers: Vec<Option<(f64, f64)>>,
    /// Per category, a colour for that bar alone (a verdict); the series colour otherwise.
    pub colors: Vec<Option<Rgb>>,
}

impl BarSeries {
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> BarSeries {
        BarSeries {
            name: name.into(),
            values,
            whiskers: Vec::new(),
            colors: Vec::new(),
        }
    }
}

impl Bars {
    /// The y range: every bar, every whisker and zero, with some headroom.
    fn y_range(&self) -> Option<(f64, f64)> {
        let vals = self.series.iter().flat_map(|s| {
            let w = s.whiskers.iter().flatten().flat_map(|&(a, b)| [a, b]);
            s.values.iter().flatten().copied().chain(w)
        });
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        let mut any = false;
        for v in vals.filter(|v| v.is_finite()) {
            (lo, hi, any) = (lo.min(v), hi.max(v), true);
        }
        if !any {
            return None;
        }
        let pad = ((hi - lo) * 0.08).max(1e-9);
        Some((if lo < 0.0 { lo - pad } else { 0.0 }, hi + pad))
    }

    pub(crate) fn draw(&self, area: &Area) -> Result<(), PlotError> {
        let Some((lo, hi)) = self.y_range() else {
            return Err(PlotError::Empty(format!("{}: no values", self.title)));
        };
        // Each category is `slots` segments wide: one per series and one gap, so that a
        // label can sit under the middle of its group.
        let n = self.categories.len();
        let k = self.series.len().max(1);
        let slots = k + 1;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (style::FONT, style::TITLE_SIZE))
            .margin(12)
            .x_label_area_size(if n > ROTATE_ABOVE { 90 } else { 40 })
            .y_label_area_size(70)
            .build_cartesian_2d((0..n * slots).into_segmented(), lo..hi)
            .map_err(PlotError::draw)?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) if i % slots == k / 2 => {
                self.categories.get(i / slots).cloned().unwrap_or_default()
            }
            _ => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .x_labels(n * slots)
            .x_label_formatter(&label)
            .y_desc(&self.y_label)
            .y_label_formatter(&|v| format_num(*v))
            .bold_line_style(style::GRID)
            .light_line_style(WHITE)
            .label_style((style::FONT, style::LABEL_SIZE));
        if n > ROTATE_ABOVE {
            mesh.x_label_style(
                (style::FONT, style::LABEL_SIZE)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            );
        }
        mesh.draw().map_err(PlotError::draw)?;
        for (s, series) in self.series.iter().enumerate() {
            let colour = style::series(s);
            let bars = series.values.iter().enumerate().filter_map(|(c, v)| {
                let v = v.filter(|v| v.is_finite())?;
                let fill = series.colors.get(c).copied().flatten().unwrap_or(colour);
                let x = c * slots + s;
                Some(Rectangle::new(
                    [
                        (SegmentValue::Exact(x), 0.0),
                        (SegmentValue::Exact(x + 1), v),
                    ],
                    fill.filled(),
                ))
            });
            let drawn = chart.draw_series(bars).map_err(PlotError::draw)?;
            if self.series.len() > 1 {
                drawn.label(&series.name).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled())
                });
            }
            let ends: Vec<(SegmentValue<usize>, f64, f64)> = series
                .whiskers
                .iter()
                .enumerate()
                .filter_map(|(c, w)| {
                    let (a, b) = w.filter(|(a, b)| a.is_finite() && b.is_finite())?;
                    Some((SegmentValue::CenterOf(c * slots + s), a, b))
                })
                .collect();
            let pen = BLACK.stroke_width(2);
            let lines = ends
                .iter()
                .map(|(x, a, b)| PathElement::new(vec![(x.clone(), *a), (x.clone(), *b)], pen));
            chart.draw_series(lines).map_err(PlotError::draw)?;
            // Caps 10 pixels wide at both ends.
            let caps = ends.iter().flat_map(|(x, a, b)| {
                [*a, *b].map(|y| {
                    EmptyElement::at((x.clone(), y)) + PathElement::new(vec![(-5, 0), (5, 0)], pen)
                })
            });
            chart.draw_series(caps).map_err(PlotError::draw)?;
        }
        if lo < 0.0 {
            let zero = [
                (SegmentValue::Exact(0), 0.0),
                (SegmentValue::Exact(n * slots), 0.0),
            ];
            chart
                .draw_series(std::iter::once(PathElement::new(zero, BLACK)))
                .map_err(PlotError::draw)?;
        }
        if self.series.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font((style::FONT, style::LABEL_SIZE))
                .draw()
                .map_err(PlotError::draw)?;
        }
        Ok(())
    }
}
