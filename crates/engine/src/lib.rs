//! ioscope engine
