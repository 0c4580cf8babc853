//! Colours and fonts shared by every chart, so that A/B, priorities and profiles look
//! alike wherever they appear.

use plotters::style::RGBColor;

/// An RGB colour.
pub type Rgb = RGBColor;

/// Series colours in order (colour-blind-safe, after Okabe and Ito).
pub const PALETTE: [Rgb; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// The colour of series `i`.
pub fn series(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: u32 = 20;
pub const LABEL_SIZE: u32 = 14;
/// Marks of failed or pruned points.
pub const FAILED: Rgb = RGBColor(200, 0, 0);
pub const GRID: Rgb = RGBColor(225, 225, 225);

/// A colour from its components.
pub const fn rgb(r: u8, g: u8, b: u8) -> Rgb {
    RGBColor(r, g, b)
}
