//! ioscope statistics: where latency is recorded and summarised.
//!
//! - [`hist::Histogram`]: log-linear latency histogram, 512 buckets per power of two
//!   (≤ 0.1% relative error), exact below 1024 ns, no upper clamp.
//! - [`lat::LatStat`]: exact min/max/mean/stddev from integer sums.
//! - [`sample::SampleStat`]: bandwidth and IOPS samples.
//! - [`result`]: per-job, per-group and per-run results, the data reports print.
//! - [`hosts`]: many hosts' runs (MPI ranks) and their exact aggregate.

pub mod act;
pub mod block;
pub mod hist;
pub mod hosts;
pub mod interval;
pub mod lat;
pub mod merge;
pub mod result;
pub mod sample;

pub use hist::Histogram;
pub use lat::{LatStat, LatTrack};
pub use result::*;
pub use sample::SampleStat;
