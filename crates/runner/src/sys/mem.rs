//! Memory the machine has, and what this process may use of it: the host's
//! MemAvailable, and under a memory cgroup (a container, a Kubernetes pod, a systemd
//! slice) what the cgroup's limit leaves — v2's memory.max or v1's
//! memory.limit_in_bytes, on the process's cgroup and every ancestor.

use std::path::{Path, PathBuf};

/// MemAvailable from /proc/meminfo, bytes.
pub(crate) fn mem_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// MemTotal from /proc/meminfo, bytes.
pub(crate) fn mem_total() -> Option<u64> {
    meminfo("MemTotal:")
}

fn meminfo(key: &str) -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = m.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Memory this process may still use, and what limits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Available {
    pub bytes: u64,
    /// "MemAvailable", or the cgroup whose limit is tighter ("memory cgroup /pod/x:
    /// limit 2048 MiB, 300 MiB in use").
    pub by: String,
}

/// The tighter of MemAvailable and the memory cgroups' headroom; None when neither
/// can be read.
pub(crate) fn available() -> Option<Available> {
    let host = mem_available().map(|bytes| Available {
        bytes,
        by: "MemAvailable".into(),
    });
    let cgroup = cgroup_headroom(
        Path::new("/proc/self/cgroup"),
        Path::new("/proc/self/mountinfo"),
    );
    match (host, cgroup) {
        (Some(h), Some(c)) if c.bytes < h.bytes => Some(c),
        (Some(h), _) => Some(h),
        (None, c) => c,
    }
}

/// A cgroup's memory files: (limit, usage, the memory.stat key of reclaimable cache).
struct Files {
    limit: &'static str,
    usage: &'static str,
    cache: &'static str,
}

const V2: Files = Files {
    limit: "memory.max",
    usage: "memory.current",
    cache: "inactive_file",
};
const V1: Files = Files {
    limit: "memory.limit_in_bytes",
    usage: "memory.usage_in_bytes",
    cache: "total_inactive_file",
};

/// The smallest headroom (limit − working set, the working set being usage less
/// inactive page cache, as the kernel's OOM killer and kubelet see it) over the
/// process's memory cgroup and its ancestors.
fn cgroup_headroom(cgroup: &Path, mountinfo: &Path) -> Option<Available> {
    let cg = std::fs::read_to_string(cgroup).ok()?;
    let mounts = std::fs::read_to_string(mountinfo).ok()?;
    let (dir, files) = cgroup_dirs(&cg, &mounts)
        .into_iter()
        .find(|(d, f)| d.join(f.usage).exists())?;
    let mut best: Option<Available> = None;
    let mut at = Some(dir.as_path());
    while let Some(d) = at {
        if let Some(a) = headroom_of(d, &files) {
            if best.as_ref().map_or(true, |b| a.bytes < b.bytes) {
                best = Some(a);
            }
        }
        at = d.parent().filter(|p| p.join(files.usage).exists());
    }
    best
}

fn headroom_of(dir: &Path, f: &Files) -> Option<Available> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let limit: u64 = read(f.limit)?.trim().parse().ok()?; // "max": no limit
                                                          // v1 writes "no limit" as a huge page-aligned number.
    if limit >= 1 << 62 {
        return None;
    }
    let usage: u64 = read(f.usage)?.trim().parse().ok()?;
    let cache = read("memory.stat")
        .and_then(|s| {
            s.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == f.cache).then(|| v.trim().parse::<u64>().ok())?
            })
        })
        .unwrap_or(0);
    let working = usage.saturating_sub(cache);
    Some(Available {
        bytes: limit.saturating_sub(working),
        by: format!(
            "the memory cgroup {} (limit {} MiB, {} MiB in use)",
            dir.display(),
            limit >> 20,
            working >> 20
        ),
    })
}

/// Where this process's memory cgroup may be: v2's unified hierarchy ("0::/path") and
/// v1's memory controller ("N:memory:/path"), under where each is mounted.
fn cgroup_dirs(cgroup: &str, mountinfo: &str) -> Vec<(PathBuf, Files)> {
    let mut out = Vec::new();
    for line in cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let v1 = controllers.split(',').any(|c| c == "memory");
        if !(v1 || controllers.is_empty()) {
            continue;
        }
        let Some((mount, root)) = mount_of(mountinfo, v1) else {
            continue;
        };
        // Paths are relative to the mount's root (a container sees "/" as its own).
        let rel = path.strip_prefix(root.as_str()).unwrap_or(path);
        let dir = mount.join(rel.trim_start_matches('/'));
        out.push((dir, if v1 { V1 } else { V2 }));
    }
    out
}

/// (mount point, root within the hierarchy) of cgroup2, or of the v1 memory controller.
fn mount_of(mountinfo: &str, v1: bool) -> Option<(PathBuf, String)> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let fstype = *right.first()?;
        let opts = right.get(2).copied().unwrap_or("");
        let hit = match v1 {
            true => fstype == "cgroup" && opts.split(',').any(|o| o == "memory"),
            false => fstype == "cgroup2",
        };
        if !hit {
            return None;
        }
        Some((PathBuf::from(left.get(4)?), left.get(3)?.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake cgroup v2 tree: the pod's limit is tighter than the container's.
    #[test]
    fn the_tightest_ancestor_wins_and_cache_is_headroom() {
        let d = tempfile::tempdir().unwrap();
        let pod = d.path().join("kubepods/pod1");
        let ctr = pod.join("ctr");
        std::fs::create_dir_all(&ctr).unwrap();
        let put = |dir: &Path, max: &str, cur: u64, inactive: u64| {
            std::fs::write(dir.join("memory.max"), max).unwrap();
            std::fs::write(dir.join("memory.current"), cur.to_string()).unwrap();
            let stat = format!("anon 1\ninactive_file {inactive}\nactive_file 5\n");
            std::fs::write(dir.join("memory.stat"), stat).unwrap();
        };
        put(&d.path().join("kubepods"), "max\n", 9 << 30, 0);
        put(&pod, &(2u64 << 30).to_string(), 1 << 30, 512 << 20);
        put(&ctr, "max\n", 1 << 30, 0);
        let cg = d.path().join("cgroup");
        std::fs::write(&cg, "0::/kubepods/pod1/ctr\n").unwrap();
        let mi = d.path().join("mountinfo");
        let line = format!(
            "35 24 0:30 / {} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            d.path().display()
        );
        std::fs::write(&mi, line).unwrap();
        let a = cgroup_headroom(&cg, &mi).unwrap();
        // 2 GiB − (1 GiB − 512 MiB of inactive cache).
        assert_eq!(a.bytes, (2u64 << 30) - (512 << 20));
        assert!(
            a.by.contains("pod1 (limit 2048 MiB, 512 MiB in use)"),
            "{}",
            a.by
        );
    }

    #[test]
    fn v1_memory_controller_paths() {
        let mi = "30 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                  31 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let cg = "5:cpu:/a\n4:memory:/docker/abc\n";
        let dirs = cgroup_dirs(cg, mi);
        assert_eq!(dirs.len(), 1);
        assert_eq!(dirs[0].0, PathBuf::from("/sys/fs/cgroup/memory/docker/abc"));
        assert_eq!(dirs[0].1.limit, "memory.limit_in_bytes");
    }
}
