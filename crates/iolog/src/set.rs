//! The log files of one job clone, settled from its options before the run: which
//! kinds it writes, under which names, and whether per-I/O records are captured.

use crate::kind::{binary_path, log_path, LogKind, KINDS, PER_IO};
use ioscope_options::JobOptions;
use std::path::PathBuf;

/// A job clone's logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSet {
    /// Per per-I/O kind (lat, slat, clat, bw, iops, in [`LogKind`] order): its file,
    /// when the job asks for it.
    pub files: [Option<PathBuf>; PER_IO],
    /// Bit k: kind k gets lines. A synchronous engine's slat log is made (as fio
    /// makes it) but stays empty.
    pub mask: u8,
    /// write_hist_log's file.
    pub hist: Option<PathBuf>,
    /// Every I/O is captured as a binary record (no log_avg_msec): into this file.
    pub binary: Option<PathBuf>,
    /// Window averages (log_avg_msec) instead of a line per I/O.
    pub windows: bool,
    /// per_job_logs=0: jobs append to shared files.
    pub append: bool,
}

impl LogSet {
    /// The logs of job clone `number` (1-based over the run); `sync`: its engine
    /// completes I/O in the issuing call (no slat).
    pub fn of(o: &JobOptions, number: u32, sync: bool) -> LogSet {
        let on = |k: LogKind| match k {
            LogKind::Lat => !o.disable_lat,
            // fio makes the slat log for sync engines too; it stays empty.
            LogKind::Slat => !o.disable_slat || sync,
            LogKind::Clat => !o.disable_clat,
            _ => true,
        };
        let mut set = LogSet {
            windows: o.log_avg_msec > 0,
            append: !o.per_job_logs,
            ..LogSet::default()
        };
        let path = |p: &str, k| log_path(p, &o.name, k, number, o.per_job_logs);
        for def in &KINDS[..PER_IO] {
            let Some(p) = def.kind.prefix(o).filter(|_| on(def.kind)) else {
                continue;
            };
            set.files[def.kind as usize] = Some(path(p, def.kind));
            if !(def.kind == LogKind::Slat && sync) {
                set.mask |= 1 << def.kind as usize;
            }
        }
        set.hist = LogKind::ClatHist
            .prefix(o)
            .map(|p| path(p, LogKind::ClatHist));
        if !set.windows && set.mask != 0 {
            let first = KINDS[..PER_IO]
                .iter()
                .find_map(|d| d.kind.prefix(o).filter(|_| on(d.kind)));
            set.binary = Some(binary_path(
                first.map_or("", |s| s.as_str()),
                &o.name,
                number,
            ));
        }
        set
    }

    /// The job writes no log.
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(Option::is_none) && self.hist.is_none()
    }

    /// Per-I/O records are captured (memory for their chunks is needed).
    pub fn captures(&self) -> bool {
        self.binary.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
        let mut o = ioscope_options::spec::defaults().clone();
        o.name = "j".into();
        f(&mut o);
        o
    }

    #[test]
    fn latency_logs_of_an_async_and_a_sync_engine() {
        let o = opts(|o| o.write_lat_log = Some("p".into()));
        let s = LogSet::of(&o, 3, false);
        assert_eq!(
            s.files[LogKind::Clat as usize],
            Some(PathBuf::from("p_clat.3.log"))
        );
        assert_eq!(s.mask, 0b111);
        assert_eq!(s.binary, Some(PathBuf::from("p_io.3.bin")));
        let s = LogSet::of(&o, 3, true);
        assert_eq!(
            s.files[LogKind::Slat as usize],
            Some(PathBuf::from("p_slat.3.log"))
        );
        assert_eq!(s.mask, 0b101, "the slat file is made, but gets no lines");
    }

    #[test]
    fn windows_hist_and_nothing() {
        let o = opts(|o| {
            o.write_bw_log = Some(String::new());
            o.write_hist_log = Some("h".into());
            o.log_avg_msec = 500;
            o.per_job_logs = false;
        });
        let s = LogSet::of(&o, 1, false);
        assert_eq!(
            s.files[LogKind::Bw as usize],
            Some(PathBuf::from("j_bw.log"))
        );
        assert_eq!(s.hist, Some(PathBuf::from("h_clat_hist.log")));
        assert!(s.windows && s.append && !s.captures());
        assert!(LogSet::of(&opts(|_| {}), 1, false).is_empty());
    }
}
