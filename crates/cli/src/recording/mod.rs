//! Recording runs into the history (`--history`, `--label`): the flags every running
//! command shares and the row each run, sweep point or comparison repetition becomes.
//! Reading the history back is `ioscope history` (`crate::history`).

pub mod capture;
pub mod flags;
