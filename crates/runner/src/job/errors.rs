//! The job's error policy: what an I/O error, a failed call or a verify failure does
//! to the job (continue_on_error, ignore_error, fill_device, exitall_on_error), and
//! the messages fio prints for them.

use super::state::State;
use ioscope_engine::Ddir;
use ioscope_options::ContinueOnError;
use std::sync::atomic::Ordering::Relaxed;

impl State<'_> {
    /// A completion with an error: counted, tolerated as the options say, or the end
    /// of the job.
    pub fn io_error(&mut self, unit: u32, ddir: Ddir, offset: u64, len: u32, errno: i32) {
        // A device's own answer (an NVMe status, a SCSI sense) is an EIO that says
        // which it was.
        let device = ioscope_engine::device_status::describe(-i64::from(errno));
        let errno = if device.is_some() { libc::EIO } else { errno };
        let o = &self.ctx.opts;
        // fill_device: a full device or filesystem is the end of the job, not an error.
        if o.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            self.stop_issuing = true;
            return;
        }
        self.rec.failed(&self.q.units[unit as usize]);
        self.rec.block_failed(ddir, offset);
        let ignored = o
            .ignore_error
            .0
            .get(ddir.index())
            .is_some_and(|l| l.contains(&errno));
        let tolerated = ignored
            || match o.continue_on_error {
                ContinueOnError::All | ContinueOnError::Io => true,
                ContinueOnError::Read => ddir == Ddir::Read,
                ContinueOnError::Write => ddir == Ddir::Write,
                _ => false,
            };
        let dir = match ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            _ => "sync",
        };
        let e = std::io::Error::from_raw_os_error(errno);
        let cause = match device {
            Some(d) => format!("{}, {d}", strerror(&e)),
            None => strerror(&e),
        };
        let text = format!("{cause}: {dir} offset={offset}, buflen={len}");
        if tolerated {
            // error_dump: every error the job goes on after is printed too.
            if o.error_dump {
                self.say_io_error(&text);
            }
            self.rec.tolerated_error(errno);
            if ddir == Ddir::Write && self.wl.zone_write_failed(offset, u64::from(len)) {
                self.recovering.push((unit, offset, len));
            }
            return;
        }
        self.fail(errno, &text);
    }

    fn say_io_error(&self, text: &str) {
        let file = self
            .ctx
            .files
            .first()
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        self.ctx
            .shared
            .say(format!("ioscope: io_u error on file {file}: {text}"));
    }

    /// The job fails with `errno` (the first failure is said and kept).
    pub fn fail(&mut self, errno: i32, text: &str) {
        if self.failure.errno == 0 {
            self.say_io_error(text);
        }
        self.fail_quiet(errno, text);
    }

    /// The job fails with `errno`; what went wrong was said already.
    pub fn fail_quiet(&mut self, errno: i32, text: &str) {
        if self.failure.errno == 0 {
            self.failure.errno = errno;
            self.failure.text = Some(text.to_string());
        }
        self.stop_issuing = true;
        if self.ctx.opts.exitall_on_error {
            self.ctx.shared.abort_run.store(true, Relaxed);
        }
    }
}

/// An error's text without Rust's " (os error N)".
pub(super) fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
