//! `--gather-logs`: after the results, ranks > 0 send their per-rank log files to rank 0,
//! which writes them under the same paths (relative paths are relative to its working
//! directory, as they were to the sender's). Each file is a start message naming it,
//! its bytes in chunks, and every sender ends with a done message — all on one tag, so
//! that MPI's per-sender ordering keeps each file whole while senders interleave.
//!
//! Rank 0 writes each file beside its final name and renames it into place: a file that
//! is already there (a shared file system) is replaced by the same bytes, never by half
//! of them.

use crate::transport::{Tag, Transport};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes per message: large enough to stream at network speed, small enough that rank 0
/// holds little of it at a time.
const CHUNK: usize = 4 << 20;

const START: u8 = 0;
const DATA: u8 = 1;
const DONE: u8 = 2;

/// What rank 0 received.
#[derive(Debug, Default)]
pub struct Gathered {
    pub files: usize,
    pub bytes: u64,
    /// Files or ranks that could not be gathered, each a sentence naming them.
    pub problems: Vec<String>,
}

/// Ranks > 0: send these files to rank 0, then the end. Problems reading a file are
/// sent with the end, for rank 0 to report.
pub fn send(t: &dyn Transport, files: &[PathBuf]) {
    let mut problems = Vec::new();
    for f in files {
        if let Err(e) = send_file(t, f) {
            problems.push(format!("{}: {e}", f.display()));
        }
    }
    let mut done = vec![DONE];
    done.extend(problems.join("; ").as_bytes());
    t.send_to_root(Tag::Log, &done);
}

fn send_file(t: &dyn Transport, path: &Path) -> std::io::Result<()> {
    let mut f = File::open(path)?;
    let mut start = vec![START];
    start.extend(path.to_string_lossy().as_bytes());
    t.send_to_root(Tag::Log, &start);
    let mut buf = vec![0u8; CHUNK + 1];
    loop {
        buf[0] = DATA;
        let n = f.read(&mut buf[1..])?;
        if n == 0 {
            return Ok(());
        }
        t.send_to_root(Tag::Log, &buf[..=n]);
    }
}

/// A file being received from one rank.
struct Incoming {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
}

impl Incoming {
    fn open(path: PathBuf) -> std::io::Result<Incoming> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".gather-tmp");
        let tmp = path.with_file_name(name);
        let file = File::create(&tmp)?;
        Ok(Incoming { path, tmp, file })
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        std::fs::rename(&self.tmp, &self.path)
    }
}

/// Rank 0: receive every file of the ranks `from` until each has sent its end, or until
/// none has sent anything for `quiet` (a rank that died), which is reported.
pub fn receive(t: &dyn Transport, from: &[u32], quiet: Duration) -> Gathered {
    let mut g = Gathered::default();
    let mut pending: BTreeMap<u32, Option<Incoming>> = from.iter().map(|&r| (r, None)).collect();
    let mut last = Instant::now();
    while !pending.is_empty() {
        let Some((rank, msg)) = t.try_receive(Tag::Log) else {
            if last.elapsed() > quiet {
                for r in pending.keys() {
                    g.problems.push(format!(
                        "rank {r}: nothing received for {} s; its logs were not gathered",
                        quiet.as_secs()
                    ));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
            continue;
        };
        last = Instant::now();
        let Some(slot) = pending.get_mut(&rank) else {
            continue;
        };
        match take(slot, rank, &msg, &mut g) {
            Step::More => {}
            Step::Done => {
                pending.remove(&rank);
            }
        }
    }
    g
}

enum Step {
    More,
    Done,
}

/// One message from `rank` into its slot.
fn take(slot: &mut Option<Incoming>, rank: u32, msg: &[u8], g: &mut Gathered) -> Step {
    let (kind, body) = msg.split_first().map_or((DONE, &[][..]), |(k, b)| (*k, b));
    if kind == START || kind == DONE {
        if let Some(inc) = slot.take() {
            let path = inc.path.clone();
            match inc.finish() {
                Ok(()) => g.files += 1,
                Err(e) => g.problems.push(format!("{}: {e}", path.display())),
            }
        }
    }
    match kind {
        START => {
            let path = PathBuf::from(String::from_utf8_lossy(body).into_owned());
            match Incoming::open(path.clone()) {
                Ok(inc) => *slot = Some(inc),
                Err(e) => g
                    .problems
                    .push(format!("{} (from rank {rank}): {e}", path.display())),
            }
            Step::More
        }
        DATA => {
            if let Some(inc) = slot.as_mut() {
                if let Err(e) = inc.file.write_all(body) {
                    g.problems.push(format!("{}: {e}", inc.path.display()));
                    *slot = None;
                } else {
                    g.bytes += body.len() as u64;
                }
            }
            Step::More
        }
        _ => {
            if !body.is_empty() {
                g.problems
                    .push(format!("rank {rank}: {}", String::from_utf8_lossy(body)));
            }
            Step::Done
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::local;
    use std::os::unix::fs::MetadataExt;

    /// Two ranks send a small and a multi-chunk file and one that is missing; rank 0
    /// writes each whole under its path (here the same file, replaced by a new one).
    #[test]
    fn files_arrive_whole_and_problems_are_named() {
        let d = tempfile::tempdir().unwrap();
        let mut ranks = local::ranks(3).into_iter();
        let root = ranks.next().unwrap();
        let mut files = Vec::new();
        for r in 1..3u32 {
            let small = d.path().join(format!("r{r}/l_clat.1.log"));
            std::fs::create_dir_all(small.parent().unwrap()).unwrap();
            std::fs::write(&small, format!("rank {r}\n")).unwrap();
            let big = d.path().join(format!("r{r}/l_io.1.bin"));
            let bytes: Vec<u8> = (0..CHUNK * 2 + 17)
                .map(|i| (i % 251) as u8 ^ r as u8)
                .collect();
            std::fs::write(&big, &bytes).unwrap();
            files.push((r, small, big, bytes));
        }
        let inodes: Vec<u64> = files
            .iter()
            .map(|f| std::fs::metadata(&f.2).unwrap().ino())
            .collect();
        let senders: Vec<_> = ranks
            .zip(
                files
                    .iter()
                    .map(|f| vec![f.1.clone(), f.2.clone(), f.1.with_file_name("missing.log")]),
            )
            .map(|(t, list)| std::thread::spawn(move || send(&t, &list)))
            .collect();
        let g = receive(&root, &[1, 2], Duration::from_secs(10));
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(g.files, 4, "{g:?}");
        assert_eq!(g.problems.len(), 2, "{g:?}");
        assert!(
            g.problems.iter().all(|p| p.contains("missing.log")),
            "{g:?}"
        );
        for (i, (r, small, big, bytes)) in files.iter().enumerate() {
            assert_eq!(
                std::fs::read_to_string(small).unwrap(),
                format!("rank {r}\n")
            );
            assert_eq!(&std::fs::read(big).unwrap(), bytes);
            assert_ne!(
                std::fs::metadata(big).unwrap().ino(),
                inodes[i],
                "rewritten"
            );
        }
        let leftovers = std::fs::read_dir(d.path().join("r1"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".gather-tmp"))
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    /// A rank that never sends its end is named after the quiet time, and the others'
    /// files are kept.
    #[test]
    fn a_silent_rank_is_named() {
        let ranks = local::ranks(3);
        send(&ranks[1], &[]);
        let g = receive(&ranks[0], &[1, 2], Duration::from_millis(50));
        assert_eq!(g.files, 0);
        assert_eq!(g.problems.len(), 1, "{g:?}");
        assert!(g.problems[0].starts_with("rank 2:"), "{g:?}");
    }
}
