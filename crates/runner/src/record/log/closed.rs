//! A job's logs after its I/O: the per-I/O text logs written from the binary log
//! (after every job of the phase has ended), compressed with log_store_compressed.

use super::stream::Writer;
use ioscope_iolog::binary::Meta;
use ioscope_iolog::fz;
use ioscope_iolog::text;
use ioscope_iolog::LogFormat;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Duration;

/// A job's logs after its I/O: the records still to turn into text.
pub struct Closed {
    pub(super) writer: std::io::Result<Writer>,
    pub(super) meta: Meta,
    pub(super) spill_path: Option<PathBuf>,
    pub(super) format: LogFormat,
    pub(super) texts: Vec<Option<File>>,
    /// Every file the job's logs write.
    pub paths: Vec<PathBuf>,
    /// log_store_compressed: the chunk size of the .fz files, the lines' columns, and
    /// the CPUs the compression runs on (log_compression_cpus; empty: any).
    pub(super) compress: Option<(usize, fz::Columns, Vec<usize>)>,
    /// Times the job waited for the writer, and for how long in all.
    pub stalls: u64,
    pub stall: Duration,
}

impl Closed {
    /// Records captured.
    pub fn records(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.records)
    }

    /// Write the per-I/O text logs from the binary log (and keep or remove it, as
    /// `--log-format` says); `progress` hears (records done, in all). With
    /// log_store_compressed, what is left to compress once every job sharing a log
    /// (per_job_logs=0) has written its lines.
    pub fn finish(
        mut self,
        progress: &mut dyn FnMut(u64, u64),
    ) -> std::io::Result<Option<Compress>> {
        let compress = self.compress.take();
        let texts: Vec<PathBuf> = self
            .paths
            .iter()
            .filter(|p| Some(*p) != self.spill_path.as_ref())
            .cloned()
            .collect();
        self.write_text(progress)?;
        Ok(compress.map(|(chunk, columns, cpus)| Compress {
            paths: texts,
            chunk,
            columns,
            cpus,
        }))
    }

    fn write_text(self, progress: &mut dyn FnMut(u64, u64)) -> std::io::Result<()> {
        let mut w = self.writer?;
        let (Some(path), Some(mut spill)) = (self.spill_path, w.spill.take()) else {
            return Ok(());
        };
        let mut meta = self.meta;
        meta.records = w.records;
        meta.write_header(&mut spill)?;
        if self.format == LogFormat::Binary {
            return spill.sync_all();
        }
        drop(spill);
        let outs: Vec<Option<BufWriter<File>>> = self
            .texts
            .into_iter()
            .map(|f| f.map(|f| BufWriter::with_capacity(1 << 20, f)))
            .collect();
        text::convert(&path, outs, progress)?;
        if self.format == LogFormat::Text {
            std::fs::remove_file(&path)?;
        }
        Ok(())
    }
}

/// log_store_compressed: text logs to turn into NAME.log.fz.
pub struct Compress {
    pub paths: Vec<PathBuf>,
    chunk: usize,
    columns: fz::Columns,
    cpus: Vec<usize>,
}

impl Compress {
    /// Compress each log (on log_compression_cpus); a path already done (a log that
    /// jobs share) is skipped.
    pub fn run(self, done: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let todo: Vec<PathBuf> = self
            .paths
            .into_iter()
            .filter(|p| !done.contains(p))
            .collect();
        let (chunk, columns) = (self.chunk, self.columns);
        on_cpus(&self.cpus, || {
            for p in &todo {
                compress_one(p, chunk, columns)?;
                done.push(p.clone());
            }
            Ok(())
        })
    }
}

/// The staged log `p` into NAME.log.fz: written under a new name beside it
/// (O_EXCL|O_NOFOLLOW), then renamed over it (a link planted there is replaced, not
/// followed).
fn compress_one(p: &std::path::Path, chunk: usize, columns: fz::Columns) -> std::io::Result<()> {
    let mut fin = super::staging::unstaged(p).into_os_string();
    fin.push(".fz");
    let fin = PathBuf::from(fin);
    let (tmp, out) = ioscope_fs::create_temp(&fin)?;
    let done = fz::compress_file(p, out, chunk, columns).and_then(|()| std::fs::rename(&tmp, &fin));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Run `work` on a thread allowed only `cpus` (log_compression_cpus); with none given,
/// on the calling thread.
fn on_cpus(
    cpus: &[usize],
    work: impl FnOnce() -> std::io::Result<()> + Send,
) -> std::io::Result<()> {
    if cpus.is_empty() {
        return work();
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: cpu_set_t is plain data; CPU_SET stays inside it (ids < 1024 are
            // checked by parse_cpu_list) and the call affects this thread only.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in cpus {
                    libc::CPU_SET(c, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                    let e = std::io::Error::last_os_error();
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("log_compression_cpus: sched_setaffinity: {e}"),
                    ));
                }
            }
            work()
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("log compression thread panicked")))
    })
}
