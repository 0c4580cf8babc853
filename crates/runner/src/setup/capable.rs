//! What the job's devices and files must be able to do, checked before any I/O:
//! polled completions (hipri) and atomic writes (atomic). Each refusal says why.

use super::files::JobFile;
use crate::error::RunError;
use crate::plan::Resolved;
use crate::sys::atomic::{atomic_unit, AtomicUnit};
use ioscope_options::JobOptions;

/// Both checks, for a job with real files (`diskless`: none, or NOPs); a replayed
/// trace's writes are the trace's, which the kernel judges.
pub(super) fn check(
    job: &Resolved,
    files: &[JobFile],
    diskless: bool,
    replays: bool,
) -> Result<(), RunError> {
    let o = &job.opts;
    check_polling(o, files, job.polled && !diskless)?;
    check_atomic(o, files, job.access.writes && !diskless && !replays)
}

/// Polled I/O needs a disk with poll queues. Without them an IOPOLL ring fails every
/// I/O with EOPNOTSUPP, and RWF_HIPRI is quietly completed through interrupts (no
/// polling happens, nothing says so): either way the job is refused first, with the
/// reason. `polled`: the job polls for completions on devices (hipri).
fn check_polling(o: &JobOptions, files: &[JobFile], polled: bool) -> Result<(), RunError> {
    for f in files.iter().filter(|_| polled) {
        crate::sys::disk::polls(f.dev).map_err(|why| {
            RunError::Refused(format!(
                "job '{}': hipri (polled I/O) on {}: {why}",
                o.name,
                f.path.display()
            ))
        })?;
    }
    Ok(())
}

/// atomic=1: the kernel takes a write with RWF_ATOMIC only as direct I/O, of a power
/// of two within the file's atomic-write unit, at an offset that is a multiple of its
/// size; anything else fails every write (EOPNOTSUPP, EINVAL), as it does in fio. The
/// job is refused first instead, naming the limit. `writes`: the job writes from its
/// own workload (a replayed trace's sizes are the trace's: the kernel judges those).
fn check_atomic(o: &JobOptions, files: &[JobFile], writes: bool) -> Result<(), RunError> {
    if !o.atomic || !writes {
        return Ok(());
    }
    let refuse = |why: String| RunError::Refused(format!("job '{}': atomic=1: {why}", o.name));
    if !o.direct {
        return Err(refuse(
            "Linux takes atomic writes (RWF_ATOMIC) only as direct I/O: set direct=1".into(),
        ));
    }
    let sizes = write_sizes(o).map_err(refuse)?;
    for f in files {
        let unit = atomic_unit(&f.file)
            .map_err(|e| refuse(format!("statx({}): {e}", f.path.display())))?
            .ok_or_else(|| {
                refuse(format!(
                    "{} takes no atomic writes: statx reports no atomic-write unit for it \
                     (Linux {}; atomic writes need Linux 6.11 or later and a device or \
                     filesystem that offers them)",
                    f.path.display(),
                    crate::sys::meta::kernel_release()
                ))
            })?;
        fits(&sizes, unit, f.start)
            .map_err(|why| refuse(format!("{}: {why}", f.path.display())))?;
    }
    Ok(())
}

/// The write sizes the job can issue, and the alignment of its write offsets.
#[derive(Debug, PartialEq, Eq)]
struct WriteSizes {
    sizes: Vec<u64>,
    /// Every write offset is a multiple of this (relative to the region's start).
    align: u64,
}

fn write_sizes(o: &JobOptions) -> Result<WriteSizes, String> {
    // A bssplit without write sizes ("4k/100,") leaves writes at bs.
    let split = o.bssplit.as_ref().filter(|s| !s.0[1].is_empty());
    let mut sizes: Vec<u64> = match (split, &o.bsrange) {
        (Some(split), _) => split.0[1].iter().map(|e| e.bs).collect(),
        (None, Some(r)) => {
            let (lo, hi) = (r.0 .0[1].lo, r.0 .0[1].hi);
            // Sizes are drawn in steps of the smallest (any size with bs_unaligned):
            // between lo and hi only lo and 2*lo can both be powers of two.
            if lo != hi && (o.bs_unaligned || hi >= 3 * lo) {
                return Err(format!(
                    "bsrange {lo}-{hi} draws write sizes that are not powers of two"
                ));
            }
            vec![lo, hi]
        }
        (None, None) => vec![o.bs.0[1]],
    };
    sizes.sort_unstable();
    sizes.dedup();
    let largest = sizes.last().copied().unwrap_or(0);
    let align = if sizes.len() == 1 {
        largest
    } else if o.rw.mode.is_random() {
        o.blockalign.as_ref().map_or(sizes[0], |b| b.0[1])
    } else {
        // Sequential writes of several sizes start where the last one ended.
        sizes[0]
    };
    Ok(WriteSizes { sizes, align })
}

/// Whether every write fits the unit: a power of two between its min and max, at an
/// offset that is a multiple of its size.
fn fits(w: &WriteSizes, unit: AtomicUnit, start: u64) -> Result<(), String> {
    let (min, max) = (u64::from(unit.min), u64::from(unit.max));
    for &s in &w.sizes {
        if !s.is_power_of_two() || s < min || s > max {
            return Err(format!(
                "a write of {s} bytes cannot be atomic: its atomic-write unit is {min} to \
                 {max} bytes, a power of two (statx STATX_WRITE_ATOMIC)"
            ));
        }
    }
    let largest = w.sizes.last().copied().unwrap_or(1);
    if w.align % largest != 0 || start % largest != 0 {
        return Err(format!(
            "writes of {largest} bytes would start at offsets that are not multiples of \
             {largest} (the kernel takes an atomic write only there): offsets step by {} \
             from {start}; a random workload with blockalign={largest} keeps them aligned",
            w.align
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(args: &[&str]) -> Result<WriteSizes, String> {
        let lines: Vec<&str> = args.iter().map(|a| a.trim_start_matches("--")).collect();
        let set = crate::tests::jobs(&format!("[a]\n{}\n", lines.join("\n")));
        write_sizes(&set.jobs[0].opts)
    }

    const UNIT: AtomicUnit = AtomicUnit {
        min: 4096,
        max: 65536,
    };

    #[test]
    fn one_size_within_the_unit_fits() {
        let w = sizes(&["--rw=write", "--bs=64k"]).unwrap();
        assert_eq!(
            w,
            WriteSizes {
                sizes: vec![65536],
                align: 65536
            }
        );
        assert_eq!(fits(&w, UNIT, 1 << 20), Ok(()));
        assert!(fits(&w, UNIT, 4096)
            .unwrap_err()
            .contains("not multiples of 65536"));
        let big = sizes(&["--rw=write", "--bs=128k"]).unwrap();
        let e = fits(&big, UNIT, 0).unwrap_err();
        assert!(
            e.contains("131072 bytes") && e.contains("4096 to 65536"),
            "{e}"
        );
        let odd = sizes(&["--rw=write", "--bs=12k"]).unwrap();
        assert!(fits(&odd, UNIT, 0).is_err());
    }

    #[test]
    fn several_sizes_need_aligned_random_offsets() {
        let seq = sizes(&["--rw=write", "--bssplit=4k/50:64k/50"]).unwrap();
        assert!(fits(&seq, UNIT, 0)
            .unwrap_err()
            .contains("blockalign=65536"));
        let rand = sizes(&["--rw=randwrite", "--bssplit=4k/50:64k/50"]).unwrap();
        assert!(fits(&rand, UNIT, 0).is_err());
        let ba = sizes(&["--rw=randwrite", "--bssplit=4k/50:64k/50", "--ba=64k"]).unwrap();
        assert_eq!(fits(&ba, UNIT, 0), Ok(()));
        let reads_only = sizes(&["--rw=randwrite", "--bssplit=4k/100,", "--bs=16k"]).unwrap();
        assert_eq!(
            reads_only,
            WriteSizes {
                sizes: vec![16384],
                align: 16384
            }
        );
        let pair = sizes(&["--rw=randwrite", "--bsrange=8k-16k", "--ba=16k"]).unwrap();
        assert_eq!(pair.sizes, vec![8192, 16384]);
        assert_eq!(fits(&pair, UNIT, 0), Ok(()));
        let wide = sizes(&["--rw=randwrite", "--bsrange=4k-16k"]).unwrap_err();
        assert!(wide.contains("not powers of two"), "{wide}");
    }
}
