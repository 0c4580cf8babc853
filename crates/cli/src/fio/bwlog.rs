//! fio's `--bandwidth-log`: aggregate bandwidth of all running jobs, one file per data
//! direction, `NAME-read_bw.log`, `NAME-write_bw.log`, `NAME-trim_bw.log` (NAME is `agg`
//! in fio). Lines are fio 3.33's log format `time, value, ddir, bs, prio`: milliseconds
//! since the program started, KiB/s over the window, 0/1/2, 0, 0. fio samples when at
//! least `bw_avg_time` (500 ms by default) has passed since the last sample; so do we,
//! from the runner's progress callbacks (about every 100 ms).

use anyhow::{Context, Result};
use ioscope_runner::JobProgress;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::{Duration, Instant};

pub const INTERVAL: Duration = Duration::from_millis(500);
const DIRS: [&str; 3] = ["read", "write", "trim"];

pub struct BwLog {
    files: Vec<(String, BufWriter<File>)>,
    genesis: Instant,
    /// Window start: time, bytes per direction, and the jobs they belong to.
    last: Option<(Instant, [u64; 3], Vec<String>)>,
    error: Option<std::io::Error>,
}

impl BwLog {
    /// Create the three files now, before the run starts.
    pub fn create(name: &str, genesis: Instant) -> Result<BwLog> {
        let files = DIRS
            .iter()
            .map(|d| {
                let path = format!("{name}-{d}_bw.log");
                ioscope_fs::create_output(std::path::Path::new(&path))
                    .with_context(|| format!("--bandwidth-log: {path}"))
                    .map(|f| (path, BufWriter::new(f)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BwLog {
            files,
            genesis,
            last: None,
            error: None,
        })
    }

    pub fn progress(&mut self, jobs: &[JobProgress]) {
        let now = Instant::now();
        let bytes: [u64; 3] = std::array::from_fn(|d| jobs.iter().map(|j| j.bytes[d]).sum());
        let names: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
        let Some((t, b, prev)) = &self.last else {
            self.last = Some((now, bytes, names));
            return;
        };
        // Other jobs (the next stonewall phase) or reset counters (ramp end): new window.
        if *prev != names || (0..3).any(|d| bytes[d] < b[d]) {
            self.last = Some((now, bytes, names));
            return;
        }
        let ms = now.duration_since(*t).as_millis() as u64;
        if ms < INTERVAL.as_millis() as u64 {
            return;
        }
        let time = now.duration_since(self.genesis).as_millis();
        for (d, (_, f)) in self.files.iter_mut().enumerate() {
            let kib_s = (bytes[d] - b[d]) * 1000 / ms / 1024;
            if let Err(e) = writeln!(f, "{time}, {kib_s}, {d}, 0, 0") {
                self.error.get_or_insert(e);
            }
        }
        self.last = Some((now, bytes, names));
    }

    /// Flush the files; the first write error, if any.
    pub fn finish(mut self) -> Result<()> {
        for (path, f) in &mut self.files {
            if let Err(e) = f.flush() {
                self.error.get_or_insert(e);
            }
            if let Some(e) = self.error.take() {
                return Err(e).with_context(|| format!("--bandwidth-log: {path}"));
            }
        }
        Ok(())
    }
}
