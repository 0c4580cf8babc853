//! ioscope report
