//! write_iolog: the I/O a job issues, recorded as fio's iolog version 3 (µs since the
//! job's I/O began).

use crate::workload::io::Io;
use ioscope_engine::Ddir;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// write_iolog: the job's issued I/O as a version 3 iolog.
pub struct Recorder {
    out: BufWriter<File>,
    names: Vec<String>,
    last_us: u64,
    failed: Option<std::io::Error>,
}

impl Recorder {
    /// Open (append, as fio) and write the header and the files' add and open lines.
    pub fn create(path: &str, files: &[&Path]) -> std::io::Result<Recorder> {
        let f = ioscope_fs::open_output(Path::new(path), true)?;
        let mut out = BufWriter::with_capacity(1 << 16, f);
        writeln!(out, "fio version 3 iolog")?;
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        for n in &names {
            writeln!(out, "0 {n} add")?;
        }
        for n in &names {
            writeln!(out, "0 {n} open")?;
        }
        Ok(Recorder {
            out,
            names,
            last_us: 0,
            failed: None,
        })
    }

    /// An I/O (or sync) issued `us` after the job started.
    pub fn issued(&mut self, us: u64, io: &Io) {
        let name = self.names.get(io.file as usize).map_or("?", String::as_str);
        let r = match io.ddir {
            Ddir::Read => writeln!(self.out, "{us} {name} read {} {}", io.offset, io.len),
            Ddir::Write => writeln!(self.out, "{us} {name} write {} {}", io.offset, io.len),
            Ddir::Trim => writeln!(self.out, "{us} {name} trim {} {}", io.offset, io.len),
            Ddir::Sync => writeln!(self.out, "{us} {name} sync 0 0"),
            Ddir::DataSync => writeln!(self.out, "{us} {name} datasync 0 0"),
        };
        self.last_us = us;
        if let Err(e) = r {
            self.failed.get_or_insert(e);
        }
    }

    /// The files' close lines; the first error writing the log, if any.
    pub fn finish(mut self) -> std::io::Result<()> {
        for n in &self.names {
            writeln!(self.out, "{} {n} close", self.last_us)?;
        }
        self.out.flush()?;
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
