//! ioscope runner
