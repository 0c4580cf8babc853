//! Analyses over results: pure functions on plain numbers, no I/O.
//!
//! [`prio`]: I/O priorities and the weight each scheduler model gives them;
//! [`fairness`]: the "ideal vs transferred" table, Jain's index, share ratios and
//! priority-order violations; [`compare`]: A/B comparison of repeated runs (bootstrap
//! interval, Mann-Whitney p-value, verdict); [`timeline`]: fairness per time window from
//! bandwidth logs; [`shape`]: latency histograms (quantile intervals, KS test);
//! [`steady`]: SNIA steady state by rounds (and fio's ss= criteria); [`sweep`]: best
//! points, the knee and the early-stop guard of parameter sweeps.

pub mod compare;
pub mod fairness;
pub mod histlog;
mod mannwhitney;
pub mod prio;
pub mod shape;
pub mod steady;
pub mod sweep;
pub mod timeline;

pub use compare::{compare, Comparison, Goal, Verdict};
pub use fairness::{fairness_table, jain_index, share_ratio, violations, Row, Table, Violation};
pub use prio::{Class, Model, Priority};

/// Why an analysis could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnalysisError {
    #[error("unknown priority class '{0}' (1/rt, 2/be, 3/idle, or 0/none)")]
    BadClass(String),
    #[error("bad priority level '{0}' (0 to 7)")]
    BadLevel(String),
    #[error(
        "unknown weight model '{0}': cfq, bfq, equal, io.weight, or a list of weights like 4,2,1"
    )]
    BadModel(String),
    #[error("the weight list has {given} weights for {jobs} jobs")]
    WeightCount { given: usize, jobs: usize },
}
