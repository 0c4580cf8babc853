use thiserror::Error;

#[derive(Debug, Error)]
pub enum PlotError {
    /// Nothing to draw (no points, no bars).
    #[error("nothing to plot: {0}")]
    Empty(String),
    /// plotters refused to draw (a layout that does not fit, for one).
    #[error("drawing failed: {0}")]
    Draw(String),
}

impl PlotError {
    pub(crate) fn draw<E: std::fmt::Debug>(e: E) -> PlotError {
        PlotError::Draw(format!("{e:?}"))
    }
}
