//! Merging results the way fio's `group_reporting` does, and the "Run status group"
//! figures.
//!
//! Everything here is exact: latency moments merge as integer sums, histograms add
//! bucket by bucket (percentiles of a group come from the summed histogram, never from
//! averaged percentiles), counts add up.

use crate::lat::LatTrack;
use crate::result::{DirStats, GroupDir, GroupResult, JobResult, PrioStat, SyncStats, DATA_DIRS};

/// Add the latency of `src` into `dst`, priority by priority (matched by ioprio value).
fn merge_prios(dst: &mut Vec<PrioStat>, src: &[PrioStat]) {
    for p in src {
        match dst.iter_mut().find(|d| d.ioprio == p.ioprio) {
            Some(d) => {
                d.stat.merge(&p.stat);
                d.hist.merge(&p.hist);
            }
            None => dst.push(p.clone()),
        }
    }
}

/// The priority entry a job without per-priority tracking stands for: its whole
/// clat (or lat, with `lat_percentiles`) credited to the default priority 0.
fn single_prio(d: &DirStats, use_lat: bool) -> PrioStat {
    let t: &LatTrack = if use_lat { &d.lat } else { &d.clat };
    PrioStat {
        ioprio: 0,
        stat: t.stat,
        hist: t.hist.clone().unwrap_or_default(),
    }
}

/// Add one direction's statistics into another, as fio sums two jobs of a group:
/// counts add, latencies merge exactly, bandwidth/IOPS samples add up
/// ([`crate::SampleStat::sum_with`]), runtime is the longest.
pub fn merge_dir(dst: &mut DirStats, src: &DirStats) {
    dst.io_bytes += src.io_bytes;
    dst.total_ios += src.total_ios;
    dst.short_ios += src.short_ios;
    dst.drop_ios += src.drop_ios;
    dst.slat.merge(&src.slat);
    dst.clat.merge(&src.clat);
    dst.lat.merge(&src.lat);
    dst.schedlat.merge(&src.schedlat);
    merge_prios(&mut dst.prios, &src.prios);
    dst.bw.sum_with(&src.bw);
    dst.iops.sum_with(&src.iops);
    dst.runtime_ms = dst.runtime_ms.max(src.runtime_ms);
}

/// All data directions of one job as one (`unified_rw_reporting=mixed`).
pub fn mixed_dir(dirs: &[DirStats; DATA_DIRS], use_lat_prio: bool) -> DirStats {
    let with_prios = dirs.iter().any(|d| !d.prios.is_empty());
    let mut out = DirStats::default();
    let mut first = true;
    for d in dirs {
        if d.total_ios == 0 && d.io_bytes == 0 && d.clat.stat.n == 0 && d.lat.stat.n == 0 {
            continue;
        }
        let mut d = d.clone();
        if with_prios && d.prios.is_empty() {
            d.prios.push(single_prio(&d, use_lat_prio));
        }
        if first {
            out = d;
            first = false;
        } else {
            merge_dir(&mut out, &d);
        }
    }
    out
}

fn merge_sync(dst: &mut SyncStats, src: &SyncStats) {
    dst.total_ios += src.total_ios;
    dst.lat.merge(&src.lat);
}

/// Merge the jobs of one reporting group into one result, as fio's group_reporting:
/// name, settings, pid and start time from the first job; `jobs` = number of jobs;
/// error = the first non-zero one; histograms summed; latency moments merged exactly;
/// per-priority latency merged by ioprio value; bandwidth/IOPS samples summed; I/O and
/// depth counts summed; per-direction runtime = the longest; job runtime and CPU
/// times summed (fio's `job_runtime` of a group is the sum, so CPU% stays a share of
/// one CPU).
pub fn merge_group(jobs: &[JobResult]) -> JobResult {
    let Some(first) = jobs.first() else {
        return JobResult::default();
    };
    let mut out = first.clone();
    out.jobs = first.jobs.max(1);
    let use_lat_prio = first.info.lat_percentiles;
    let any_prios: [bool; DATA_DIRS] =
        std::array::from_fn(|d| jobs.iter().any(|j| !j.dirs[d].prios.is_empty()));
    for (d, dir) in out.dirs.iter_mut().enumerate() {
        if any_prios[d] && dir.prios.is_empty() && (dir.clat.stat.n > 0 || dir.lat.stat.n > 0) {
            dir.prios.push(single_prio(dir, use_lat_prio));
        }
    }
    for j in &jobs[1..] {
        out.jobs += j.jobs.max(1);
        // The first error, but a fatal one wins over a tolerated one.
        if j.error != 0 && (out.error == 0 || (out.error_tolerated && !j.error_tolerated)) {
            out.error = j.error;
            out.error_text = j.error_text.clone();
            out.error_tolerated = j.error_tolerated;
        }
        out.total_err += j.total_err;
        if out.first_error == 0 {
            out.first_error = j.first_error;
        }
        out.elapsed_s = out.elapsed_s.max(j.elapsed_s);
        out.runtime_ms += j.runtime_ms;
        for ((dst, src), &with_prios) in out.dirs.iter_mut().zip(&j.dirs).zip(&any_prios) {
            if with_prios && src.prios.is_empty() && (src.clat.stat.n > 0 || src.lat.stat.n > 0) {
                let mut s = src.clone();
                s.prios.push(single_prio(src, use_lat_prio));
                merge_dir(dst, &s);
            } else {
                merge_dir(dst, src);
            }
        }
        merge_sync(&mut out.sync, &j.sync);
        if let Some(a) = &j.act {
            out.act.get_or_insert_with(Default::default).merge(a);
        }
        // As fio: the blocks of the last job merged (files are not summed).
        if j.block.is_some() {
            out.block = j.block.clone();
        }
        if let Some(n) = j.zone_resets {
            *out.zone_resets.get_or_insert(0) += n;
        }
        for p in j.placement.iter().flatten() {
            crate::Placed::add(
                out.placement.get_or_insert_with(Vec::new),
                p.plid,
                p.ios,
                p.bytes,
            );
        }
        if let Some(v) = j.verify {
            let o = out.verify.get_or_insert_with(Default::default);
            o.blocks += v.blocks;
            o.errors += v.errors;
        }
        out.cpu.usr_s += j.cpu.usr_s;
        out.cpu.sys_s += j.cpu.sys_s;
        out.cpu.ctx += j.cpu.ctx;
        out.cpu.majf += j.cpu.majf;
        out.cpu.minf += j.cpu.minf;
        for i in 0..7 {
            out.io_depth[i] += j.io_depth[i];
            out.submit[i] += j.submit[i];
            out.complete[i] += j.complete[i];
        }
    }
    out
}

/// "Run status group" figures of one direction from (io bytes, runtime ms) of each
/// reported entry. Entries that did no I/O in this direction are left out of min/max.
pub fn group_dir<I: IntoIterator<Item = (u64, u64)>>(entries: I) -> GroupDir {
    let mut g = GroupDir::default();
    let mut any = false;
    for (bytes, run) in entries {
        if bytes == 0 {
            continue;
        }
        let bw = if run == 0 {
            0
        } else {
            (bytes as u128 * 1000 / run as u128) as u64
        };
        g.io_bytes += bytes;
        if !any {
            g.min_bw = bw;
            g.max_bw = bw;
            g.min_run_ms = run;
            g.max_run_ms = run;
            any = true;
        } else {
            g.min_bw = g.min_bw.min(bw);
            g.max_bw = g.max_bw.max(bw);
            g.min_run_ms = g.min_run_ms.min(run);
            g.max_run_ms = g.max_run_ms.max(run);
        }
    }
    if g.max_run_ms > 0 {
        g.agg_bw = (g.io_bytes as u128 * 1000 / g.max_run_ms as u128) as u64;
    }
    g
}

/// "Run status group N" figures, one per groupid (ascending). Pass the entries that
/// are reported: with group_reporting the merged results, so that min/max are taken
/// over them as fio does. agg = Σio·1000/max runtime; min/max bw = per entry
/// io·1000/runtime; min/max run over entries that did I/O in that direction.
pub fn group_results(jobs: &[JobResult]) -> Vec<GroupResult> {
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|gid| {
            let members: Vec<&JobResult> = jobs.iter().filter(|j| j.groupid == gid).collect();
            let (kb_base, unit_base) = members
                .first()
                .map(|j| (j.info.kb_base, j.info.unit_base))
                .unwrap_or((1024, 0));
            GroupResult {
                groupid: gid,
                kb_base,
                unit_base,
                dirs: std::array::from_fn(|d| {
                    group_dir(
                        members
                            .iter()
                            .map(|j| (j.dirs[d].io_bytes, j.dirs[d].runtime_ms)),
                    )
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::Histogram;
    use crate::lat::LatStat;

    fn job(gid: u32, seed: u64, n: u64, runtime: u64) -> JobResult {
        let mut j = JobResult {
            groupid: gid,
            jobs: 1,
            runtime_ms: runtime,
            ..Default::default()
        };
        j.name = format!("j{seed}");
        for d in 0..2 {
            let dir = &mut j.dirs[d];
            dir.clat = LatTrack::new(true);
            dir.lat = LatTrack::new(false);
            for i in 0..n {
                let v = 1000 + (i * 7919 + seed * 13) % 100_000;
                dir.clat.add(v);
                dir.lat.add(v + 500);
            }
            dir.total_ios = n;
            dir.io_bytes = n * 4096;
            dir.runtime_ms = runtime;
            dir.bw.add(1000.0 * (seed + 1) as f64);
            dir.bw.add(1100.0 * (seed + 1) as f64);
        }
        j.cpu.usr_s = 0.5;
        j.io_depth[0] = n * 2;
        j
    }

    #[test]
    fn merged_counts_are_sums() {
        let jobs = vec![
            job(0, 1, 100, 1000),
            job(0, 2, 250, 1500),
            job(0, 3, 10, 500),
        ];
        let m = merge_group(&jobs);
        assert_eq!(m.jobs, 3);
        assert_eq!(m.name, "j1");
        assert_eq!(m.runtime_ms, 3000);
        assert_eq!(m.io_depth[0], 720);
        assert!((m.cpu.usr_s - 1.5).abs() < 1e-12);
        for d in 0..2 {
            let dir = &m.dirs[d];
            assert_eq!(dir.total_ios, 360);
            assert_eq!(dir.clat.stat.n, 360);
            assert_eq!(dir.io_bytes, 360 * 4096);
            assert_eq!(dir.runtime_ms, 1500);
            let h = dir.clat.hist.as_ref().map(Histogram::count);
            assert_eq!(h, Some(360));
            // Exact moments equal those of all samples together.
            let mut all = LatStat::default();
            for j in &jobs {
                all.merge(&j.dirs[d].clat.stat);
            }
            assert_eq!(dir.clat.stat, all);
            // Bandwidth samples add up across jobs.
            assert!((dir.bw.mean - (1050.0 * 2.0 + 1050.0 * 3.0 + 1050.0 * 4.0)).abs() < 1e-9);
        }
        assert_eq!(m.dirs[2].total_ios, 0);
    }

    #[test]
    fn prios_merge_by_value() {
        let mut a = job(0, 1, 10, 1000);
        let mut b = job(0, 2, 20, 1000);
        let mk = |ioprio: u16, vals: &[u64]| {
            let mut p = PrioStat {
                ioprio,
                stat: LatStat::default(),
                hist: Histogram::new(),
            };
            for &v in vals {
                p.stat.add(v);
                p.hist.add(v);
            }
            p
        };
        a.dirs[0].prios = vec![mk(0, &[1, 2, 3]), mk(1 << 13, &[4])];
        b.dirs[0].prios = vec![mk(1 << 13, &[5, 6]), mk(0, &[7])];
        let m = merge_group(&[a, b]);
        let p = &m.dirs[0].prios;
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].ioprio, p[0].stat.n, p[0].hist.count()), (0, 4, 4));
        assert_eq!(
            (p[1].ioprio, p[1].stat.n, p[1].hist.count()),
            (1 << 13, 3, 3)
        );
    }

    #[test]
    fn first_error_wins() {
        let a = job(0, 1, 1, 10);
        let mut b = job(0, 2, 1, 10);
        b.error = 28;
        b.error_text = Some("No space left on device".into());
        let mut c = job(0, 3, 1, 10);
        c.error = 5;
        let m = merge_group(&[a, b, c]);
        assert_eq!(m.error, 28);
        assert_eq!(m.error_text.as_deref(), Some("No space left on device"));
        assert_eq!(merge_group(&[]).jobs, 0);
    }

    #[test]
    fn group_figures() {
        let mut a = job(0, 1, 0, 0);
        a.dirs[0].io_bytes = 1_000_000;
        a.dirs[0].runtime_ms = 1000;
        a.dirs[1].io_bytes = 0;
        let mut b = job(0, 2, 0, 0);
        b.dirs[0].io_bytes = 3_000_000;
        b.dirs[0].runtime_ms = 2000;
        b.dirs[1].io_bytes = 0;
        let mut c = job(1, 3, 0, 0);
        c.dirs[1].io_bytes = 4096;
        c.dirs[1].runtime_ms = 3;
        let g = group_results(&[c, a, b]);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].groupid, 0);
        let r = g[0].dirs[0];
        assert_eq!(r.io_bytes, 4_000_000);
        assert_eq!(r.agg_bw, 2_000_000);
        assert_eq!((r.min_bw, r.max_bw), (1_000_000, 1_500_000));
        assert_eq!((r.min_run_ms, r.max_run_ms), (1000, 2000));
        assert_eq!((g[0].dirs[1].io_bytes, g[0].dirs[1].max_run_ms), (0, 0));
        assert_eq!(g[1].dirs[1].agg_bw, 4096 * 1000 / 3);
        // Zero runtime: no division by zero.
        let z = group_dir([(100, 0)]);
        assert_eq!((z.agg_bw, z.min_bw, z.io_bytes), (0, 0, 100));
    }

    #[test]
    fn mixed_merges_directions() {
        let j = job(0, 1, 50, 800);
        let m = mixed_dir(&j.dirs, false);
        assert_eq!(m.total_ios, 100);
        assert_eq!(m.clat.stat.n, 100);
        assert_eq!(m.runtime_ms, 800);
        assert_eq!(m.clat.hist.as_ref().map(Histogram::count), Some(100));
    }
}
