//! `merge_blktrace_file`: the blktraces `read_iolog` lists (`a:b:…`) merged by time into
//! one, which the job then replays — several applications' traces played together
//! against one device. `merge_blktrace_scalars` scales each trace's times (percent:
//! 50 plays it twice as fast), `merge_blktrace_iters` repeats it (each repetition
//! starts where the previous one ended).
//!
//! The merged file keeps the queue events of reads, writes and discards (what replay
//! uses of a trace; notifies, issues, completions and bare flushes are dropped), each
//! unchanged but for its time, written in this machine's byte order with no payload.
//! This is the merge fio documents; fio 3.33's own merge writes an empty file
//! (fixed after 3.33), so fio 3.33 cannot produce a merged trace to compare with.

use super::blktrace::{self, Record, RECORD};
use ioscope_options::{JobOptions, NumList};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

/// One input: its kept events (times unscaled) and how to play it.
struct Input {
    events: Vec<Record>,
    /// Percent of the recorded times.
    scalar: u64,
    iters: u64,
    /// The trace's length in ns: each repetition starts this much later.
    length: u64,
}

/// The job's merge: read_iolog's traces into `out`. Returns the events written.
pub fn merge_job(o: &JobOptions, out: &Path) -> Result<u64, String> {
    let list = o.read_iolog.as_deref().unwrap_or("");
    let names: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    let what = |e: String| format!("merge_blktrace_file={}: {e}", out.display());
    let scalars = values(o.merge_blktrace_scalars.as_ref(), names.len(), 100)
        .map_err(|e| what(format!("merge_blktrace_scalars: {e}")))?;
    let iters = values(o.merge_blktrace_iters.as_ref(), names.len(), 1)
        .map_err(|e| what(format!("merge_blktrace_iters: {e}")))?;
    let mut inputs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let events = read(Path::new(name)).map_err(|e| what(format!("{name}: {e}")))?;
        inputs.push(Input {
            length: events.iter().map(|r| r.time).max().unwrap_or(0),
            events,
            scalar: scalars[i],
            iters: iters[i],
        });
    }
    write(&inputs, out).map_err(|e| what(e.to_string()))
}

/// A ':'-separated list of one number per trace (fio's float list, read as whole
/// numbers), or `default` for each when not given.
fn values(list: Option<&NumList>, n: usize, default: u64) -> Result<Vec<u64>, String> {
    let Some(NumList(v)) = list else {
        return Ok(vec![default; n]);
    };
    if v.len() != n {
        return Err(format!(
            "{} value(s) for {n} trace(s) in read_iolog: give one per trace",
            v.len()
        ));
    }
    Ok(v.clone())
}

/// A trace's queue events of reads, writes and discards.
fn read(path: &Path) -> Result<Vec<Record>, String> {
    let f = File::open(path).map_err(|e| e.to_string())?;
    let mut r = BufReader::new(f);
    let mut head = [0u8; RECORD];
    let n = r
        .by_ref()
        .take(RECORD as u64)
        .read(&mut head)
        .map_err(|e| e.to_string())?;
    let swapped = blktrace::detect(&head[..n]).ok_or("not a blktrace")?;
    let rest = std::io::Cursor::new(head[..n].to_vec()).chain(r);
    let mut out = Vec::new();
    for rec in blktrace::Events::new(rest, swapped) {
        let rec = rec?;
        if rec.queue() && rec.data_dir().is_some() {
            out.push(rec);
        }
    }
    Ok(out)
}

/// Merge by scaled time (ties: the earlier trace, then file order) and write.
fn write(inputs: &[Input], out: &Path) -> std::io::Result<u64> {
    let mut all: Vec<(u64, usize, u64, usize)> = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        for iter in 0..inp.iters {
            for (k, r) in inp.events.iter().enumerate() {
                let t = (r.time + iter * inp.length).saturating_mul(inp.scalar) / 100;
                all.push((t, i, iter, k));
            }
        }
    }
    all.sort_unstable();
    // Through a temporary file: a reader never sees half a merge.
    let tmp = out.with_extension("merge-tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    for &(t, i, _, k) in &all {
        let mut r = inputs[i].events[k];
        r.time = t;
        r.pdu_len = 0;
        w.write_all(&r.encode())?;
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, out)?;
    Ok(all.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time: u64, sector: u64, action: u32) -> Record {
        Record {
            magic: 0x6561_7407,
            time,
            sector,
            bytes: 4096,
            action,
            device: 7 << 20,
            ..Default::default()
        }
    }

    const QR: u32 = 0x0011_0001;
    const QW: u32 = 0x0012_0001;
    const CR: u32 = 0x0081_0008;
    const FLUSH: u32 = 0x0014_0001;

    fn trace(dir: &Path, name: &str, recs: &[Record]) -> String {
        let p = dir.join(name);
        let mut b = Vec::new();
        for r in recs {
            b.extend_from_slice(&r.encode());
        }
        std::fs::write(&p, b).unwrap();
        p.display().to_string()
    }

    fn merged(out: &Path) -> Vec<(u64, u64)> {
        let f = File::open(out).unwrap();
        blktrace::Events::new(f, false)
            .map(|r| r.unwrap())
            .map(|r| (r.time, r.sector))
            .collect()
    }

    #[test]
    fn merges_by_time_with_scalars_and_iterations() {
        let d = tempfile::tempdir().unwrap();
        let a = trace(
            d.path(),
            "a",
            &[rec(1_000, 1, QR), rec(1_010, 1, CR), rec(3_000, 3, QR)],
        );
        let b = trace(d.path(), "b", &[rec(2_000, 2, QW), rec(4_000, 4, FLUSH)]);
        let out = d.path().join("m");
        let mut o = ioscope_options::spec::defaults().clone();
        o.read_iolog = Some(format!("{a}:{b}"));
        assert_eq!(
            merge_job(&o, &out).unwrap(),
            3,
            "completions and bare flushes go"
        );
        assert_eq!(merged(&out), [(1_000, 1), (2_000, 2), (3_000, 3)]);
        // a at half its times, twice (the second time 3000 ns on: the length of its
        // kept events); b as recorded. A tie goes to the earlier trace.
        o.merge_blktrace_scalars = Some(NumList(vec![50, 100]));
        o.merge_blktrace_iters = Some(NumList(vec![2, 1]));
        merge_job(&o, &out).unwrap();
        assert_eq!(
            merged(&out),
            [(500, 1), (1_500, 3), (2_000, 1), (2_000, 2), (3_000, 3)]
        );
        o.merge_blktrace_iters = Some(NumList(vec![2]));
        let e = merge_job(&o, &out).unwrap_err();
        assert!(
            e.contains("merge_blktrace_iters: 1 value(s) for 2 trace(s)"),
            "{e}"
        );
        o.merge_blktrace_iters = None;
        o.read_iolog = Some(format!("{a}:{}", d.path().join("none").display()));
        let e = merge_job(&o, &out).unwrap_err();
        assert!(e.contains("none: No such file"), "{e}");
        std::fs::write(d.path().join("text"), "fio version 2 iolog\n").unwrap();
        o.read_iolog = Some(format!("{a}:{}", d.path().join("text").display()));
        let e = merge_job(&o, &out).unwrap_err();
        assert!(e.contains("not a blktrace"), "{e}");
    }
}
