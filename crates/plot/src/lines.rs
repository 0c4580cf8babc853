//! Line charts: y against x (linear, or log2 for iodepth, numjobs and block sizes),
//! with labelled points (best, knee), failed-point markers and shaded bands (a steady
//! state window, a ±20% band).

use crate::style::{self, Rgb};
use crate::{Area, PlotError};
use plotters::prelude::*;

/// How x is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XScale {
    Linear,
    /// Powers of two evenly spaced (x must be > 0).
    Log2,
}

pub struct Lines {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: XScale,
    /// y on a log10 axis: latencies whose tail spans decades (points at or below 0
    /// are left out).
    pub y_log: bool,
    /// Names for x positions (categories laid out at 0, 1, 2 …: metrics, percentiles);
    /// empty: x is a number.
    pub x_names: Vec<(f64, String)>,
    pub series: Vec<LineSeries>,
    pub labels: Vec<PointLabel>,
    pub bands: Vec<Band>,
}

/// One line: its points in x order, and where x failed (marked, not joined).
pub struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub failed: Vec<f64>,
    /// A colour of its own; the palette's next otherwise.
    pub color: Option<Rgb>,
    /// Draw the points as dots too (few points: a sweep, not a time series).
    pub dots: bool,
    /// Join the points; `false`: dots only (repetitions of a measurement).
    pub line: bool,
    /// A dashed line: a reference (an ideal share), not a measurement.
    pub dashed: bool,
}

impl LineSeries {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> LineSeries {
        LineSeries {
            name: name.into(),
            points,
            failed: Vec::new(),
            color: None,
            dots: false,
            line: true,
            dashed: false,
        }
    }
}

/// Text next to a point (best IOPS, the knee).
pub struct PointLabel {
    pub x: f64,
    pub y: f64,
    pub text: String,
}

/// A shaded rectangle in data coordinates, named in the legend.
pub struct Band {
    pub name: String,
    pub x: (f64, f64),
    pub y: (f64, f64),
    pub color: Rgb,
}

impl Lines {
    fn tx(&self, x: f64) -> Option<f64> {
        let v = match self.x_scale {
            XScale::Linear => x,
            XScale::Log2 if x > 0.0 => x.log2(),
            XScale::Log2 => return None,
        };
        v.is_finite().then_some(v)
    }

    /// y as drawn: log10 on a log axis (only above 0).
    fn ty(&self, y: f64) -> Option<f64> {
        let v = match self.y_log {
            false => y,
            true if y > 0.0 => y.log10(),
            true => return None,
        };
        v.is_finite().then_some(v)
    }

    /// The label of an x tick.
    fn x_text(&self, v: f64) -> String {
        if !self.x_names.is_empty() {
            let near = self.x_names.iter().find(|(x, _)| (x - v).abs() < 1e-6);
            return near.map(|(_, n)| n.clone()).unwrap_or_default();
        }
        match self.x_scale {
            // Only whole powers of two get a label.
            XScale::Log2 if (v - v.round()).abs() < 1e-6 => format_num(2f64.powf(v.round())),
            XScale::Log2 => String::new(),
            XScale::Linear => format_num(v),
        }
    }

    /// The label of a y tick: on a log axis the value, to two significant digits.
    fn y_text(&self, v: f64) -> String {
        match self.y_log {
            false => format_num(v),
            true => {
                let y = 10f64.powf(v);
                let mag = 10f64.powf(y.log10().floor() - 1.0);
                format_num((y / mag).round() * mag)
            }
        }
    }

    /// x and y ranges over points, bands and labels, padded.
    fn ranges(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = if self.y_log { vec![] } else { vec![0.0] };
        for s in &self.series {
            for &(x, y) in &s.points {
                if let (Some(x), Some(y)) = (self.tx(x), self.ty(y)) {
                    xs.push(x);
                    ys.push(y);
                }
            }
            xs.extend(s.failed.iter().filter_map(|&x| self.tx(x)));
        }
        for b in &self.bands {
            xs.extend([b.x.0, b.x.1].iter().filter_map(|&x| self.tx(x)));
            ys.extend([b.y.0, b.y.1].iter().filter_map(|&y| self.ty(y)));
        }
        let (x0, x1) = min_max(&xs)?;
        let (y0, y1) = min_max(&ys)?;
        let xp = if x1 > x0 { (x1 - x0) * 0.04 } else { 0.5 };
        // Label text runs to the right of its point: room for it at the right edge.
        let right = match self.labels.is_empty() {
            true => xp,
            false => (x1 - x0).max(1.0) * 0.24,
        };
        let yp = if y1 > y0 { (y1 - y0) * 0.1 } else { 1.0 };
        let bottom = if self.y_log { y0 - yp } else { y0.min(0.0) };
        Some(((x0 - xp, x1 + right), (bottom, y1 + yp)))
    }

    pub(crate) fn draw(&self, whole: &Area) -> Result<(), PlotError> {
        let Some(((x0, x1), (y0, y1))) = self.ranges() else {
            return Err(PlotError::Empty(format!("{}: no points", self.title)));
        };
        // With many lines the legend gets a column of its own, beside the plot, where it
        // hides no line and no label.
        let outside = self.series.len() + self.bands.len() > LEGEND_INSIDE_MAX;
        let (area, legend_area) = match outside {
            true => {
                let w = whole.dim_in_pixel().0;
                let (a, b) = whole.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
                (a, Some(b))
            }
            false => (whole.clone(), None),
        };
        let area = &area;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (style::FONT, style::TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(PlotError::draw)?;
        let log2 = self.x_scale == XScale::Log2;
        let x_labels = match (self.x_names.len(), log2) {
            (0, true) => ((x1 - x0).ceil() as usize + 1).max(2),
            (0, false) => 10,
            (n, _) => n,
        };
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_labels(x_labels)
            .x_label_formatter(&|v| self.x_text(*v))
            .y_label_formatter(&|v| self.y_text(*v))
            .bold_line_style(style::GRID)
            .light_line_style(WHITE)
            .label_style((style::FONT, style::LABEL_SIZE))
            .draw()
            .map_err(PlotError::draw)?;
        self.draw_bands(&mut chart)?;
        for (i, s) in self.series.iter().enumerate() {
            let colour = s.color.unwrap_or_else(|| style::series(i));
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|&(x, y)| Some((self.tx(x)?, self.ty(y)?)))
                .collect();
            if s.line {
                let drawn = if s.dashed {
                    chart.draw_series(plotters::series::DashedLineSeries::new(
                        pts.iter().copied(),
                        8,
                        5,
                        colour.stroke_width(2),
                    ))
                } else {
                    chart.draw_series(plotters::series::LineSeries::new(
                        pts.iter().copied(),
                        colour.stroke_width(2),
                    ))
                };
                drawn
                    .map_err(PlotError::draw)?
                    .label(&s.name)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                    });
            }
            if s.dots || !s.line {
                let dots = pts.iter().map(|&p| Circle::new(p, 3, colour.filled()));
                let drawn = chart.draw_series(dots).map_err(PlotError::draw)?;
                if !s.line {
                    drawn
                        .label(&s.name)
                        .legend(move |(x, y)| Circle::new((x + 8, y), 4, colour.filled()));
                }
            }
            let failed = s.failed.iter().filter_map(|&x| self.tx(x));
            let marks = failed.map(|x| Cross::new((x, y0), 6, style::FAILED.stroke_width(2)));
            chart.draw_series(marks).map_err(PlotError::draw)?;
        }
        let offsets = label_offsets(&self.labels, y1 - y0);
        let labels = self.labels.iter().zip(offsets).filter_map(|(l, dy)| {
            let p = (self.tx(l.x)?, self.ty(l.y)?);
            let text = Text::new(l.text.clone(), (7, dy), (style::FONT, style::LABEL_SIZE));
            Some(EmptyElement::at(p) + Circle::new((0, 0), 5, BLACK.stroke_width(2)) + text)
        });
        chart.draw_series(labels).map_err(PlotError::draw)?;
        match legend_area {
            Some(la) => self.draw_legend(&la)?,
            None => {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .label_font((style::FONT, style::LABEL_SIZE))
                    .draw()
                    .map_err(PlotError::draw)?;
            }
        }
        Ok(())
    }

    /// The legend in its own column: a swatch and the name of each line and band.
    fn draw_legend(&self, area: &Area) -> Result<(), PlotError> {
        let font = (style::FONT, style::LABEL_SIZE).into_font();
        let mut y = 40;
        for (i, s) in self.series.iter().enumerate() {
            let colour = s.color.unwrap_or_else(|| style::series(i));
            area.draw(&PathElement::new(
                vec![(6, y), (24, y)],
                colour.stroke_width(3),
            ))
            .map_err(PlotError::draw)?;
            area.draw(&Text::new(s.name.clone(), (30, y - 6), font.clone()))
                .map_err(PlotError::draw)?;
            y += 18;
        }
        for b in &self.bands {
            area.draw(&Rectangle::new(
                [(6, y - 5), (24, y + 5)],
                b.color.mix(0.3).filled(),
            ))
            .map_err(PlotError::draw)?;
            area.draw(&Text::new(b.name.clone(), (30, y - 6), font.clone()))
                .map_err(PlotError::draw)?;
            y += 18;
        }
        Ok(())
    }

    fn draw_bands<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<
            '_,
            DB,
            Cartesian2d<
                plotters::coord::types::RangedCoordf64,
                plotters::coord::types::RangedCoordf64,
            >,
        >,
    ) -> Result<(), PlotError> {
        for b in &self.bands {
            let (Some(xa), Some(xb)) = (self.tx(b.x.0), self.tx(b.x.1)) else {
                continue;
            };
            let (Some(ya), Some(yb)) = (self.ty(b.y.0), self.ty(b.y.1)) else {
                continue;
            };
            let colour = b.color;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(xa, ya), (xb, yb)],
                    colour.mix(0.18).filled(),
                )))
                .map_err(PlotError::draw)?
                .label(&b.name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 16, y + 5)], colour.mix(0.3).filled())
                });
        }
        Ok(())
    }
}

/// More lines than this and the legend moves beside the plot.
const LEGEND_INSIDE_MAX: usize = 3;
/// Width of the legend column, pixels.
const LEGEND_WIDTH: u32 = 300;

/// Vertical text offsets (pixels) of the labels: labels at the same x whose values are
/// close (within 6% of the y range) are stacked instead of printed over each other.
fn label_offsets(labels: &[PointLabel], y_range: f64) -> Vec<i32> {
    let mut out = vec![-16; labels.len()];
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| {
        labels[a]
            .x
            .total_cmp(&labels[b].x)
            .then(labels[b].y.total_cmp(&labels[a].y))
    });
    let close = y_range.abs() * 0.06;
    let mut prev: Option<(f64, f64, i32)> = None;
    for i in order {
        let l = &labels[i];
        if let Some((px, py, pdy)) = prev {
            if px == l.x && (py - l.y).abs() <= close {
                out[i] = pdy + 13;
            }
        }
        prev = Some((l.x, l.y, out[i]));
    }
    out
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut it = v.iter().copied().filter(|v| v.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), v| (a.min(v), b.max(v))))
}

/// A number for an axis: integers plainly, large values with k/M/G, small with 3 digits.
pub(crate) fn format_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3}G", v / 1e9).replace(".000G", "G")
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6).replace(".00M", "M")
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3).replace(".0k", "k")
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}").trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::format_num;

    #[test]
    fn axis_numbers() {
        assert_eq!(format_num(64.0), "64");
        assert_eq!(format_num(12000.0), "12k");
        assert_eq!(format_num(3_500_000.0), "3.50M");
        assert_eq!(format_num(0.25), "0.25");
        assert_eq!(format_num(-7.5), "-7.5");
    }
}
