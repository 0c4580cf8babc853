//! fio's `--debug=io`: a line per completed I/O in fio's format
//! (`io       TID complete: io_u 0x…: off=0x…,len=0x…,ddir=N,file=NAME`), written
//! from the recorder's cold path. Lines gather in a buffer that is written whole
//! (64 KiB at a time and at the job's end), so threads never interleave inside a line.

use crate::env::DebugOut;
use ioscope_engine::IoUnit;
use std::io::Write;

const FLUSH_AT: usize = 64 << 10;

pub(crate) struct IoTrace {
    out: Option<DebugOut>,
    /// The job's files by unit file index, as fio names them.
    names: Vec<String>,
    buf: Vec<u8>,
    tid: i32,
}

impl IoTrace {
    pub fn new(out: Option<DebugOut>, names: Vec<String>) -> IoTrace {
        IoTrace {
            out,
            names,
            buf: Vec::with_capacity(FLUSH_AT + 512),
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::gettid() },
        }
    }

    /// Unit `u` completed.
    pub fn complete(&mut self, u: &IoUnit) {
        let file = self.names.get(u.file as usize).map_or("", String::as_str);
        let _ = writeln!(
            self.buf,
            "io       {:5} complete: io_u {:p}: off=0x{:x},len=0x{:x},ddir={},file={}",
            self.tid, u, u.offset, u.len, u.ddir as u8, file
        );
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            DebugOut::write_lines(self.out.as_ref(), &self.buf);
            self.buf.clear();
        }
    }
}

impl Drop for IoTrace {
    fn drop(&mut self) {
        self.flush();
    }
}
