//! ioscope stats
