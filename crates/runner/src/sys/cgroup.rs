//! fio's `cgroup`, `cgroup_weight` and `cgroup_nodelete`: put a job in a blkio cgroup
//! with a weight, and remove the groups the run made when it ends.
//!
//! Jobs are threads of one process, so a job joins its group by writing its thread id
//! to the group's `tasks` file, which cgroup v1 allows per thread. On cgroup v2 the io
//! controller is a domain controller: every thread of a process must share one group,
//! so per-job groups there need a process per job; ioscope refuses that case by name
//! instead of running every job in one group unannounced.
//!
//! As in fio: the group is `<blkio mount>/<cgroup>` (or the job's name when only
//! `cgroup_weight` is given); an existing group is used as it is and never removed.
//! The weight goes to `blkio.weight` where the kernel has it (CFQ, before 5.0) and to
//! `blkio.bfq.weight` otherwise (BFQ's own: the one that decides shares today).

use crate::error::RunError;
use ioscope_options::JobOptions;
use std::path::{Path, PathBuf};

/// A job's group, made ready before its thread starts.
#[derive(Clone, Debug)]
pub struct JobCgroup {
    pub dir: PathBuf,
    /// This run made the directory (so it removes it, unless `cgroup_nodelete`).
    pub created: bool,
    pub nodelete: bool,
}

/// Where the blkio controller is mounted.
#[derive(Debug, PartialEq)]
enum Mount {
    V1(PathBuf),
    /// cgroup v2 with the io controller: not usable per thread.
    V2(PathBuf),
    None,
}

/// Whether the job asks for a cgroup at all.
pub fn wanted(o: &JobOptions) -> bool {
    o.cgroup.is_some() || o.cgroup_weight.is_some()
}

/// Checked when planning (and by --parse-only): the controller is there, usable, and
/// the group name stays inside it.
pub fn check(o: &JobOptions) -> Result<(), String> {
    if !wanted(o) {
        return Ok(());
    }
    group_name(o)?;
    mount_point().map(|_| ())
}

/// Create (or reuse) the job's group and set its weight.
pub fn prepare(o: &JobOptions) -> Result<Option<JobCgroup>, RunError> {
    if !wanted(o) {
        return Ok(None);
    }
    let err = |m: String| RunError::Setup(format!("job '{}': {m}", o.name));
    let mnt = mount_point().map_err(err)?;
    let dir = mnt.join(group_name(o).map_err(err)?);
    let created = match std::fs::create_dir(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(err(format!("cgroup mkdir {}: {e}", dir.display()))),
    };
    let cg = JobCgroup {
        dir,
        created,
        nodelete: o.cgroup_nodelete,
    };
    if let Some(w) = o.cgroup_weight {
        if let Err(e) = set_weight(&cg.dir, w) {
            cg.remove();
            return Err(err(e));
        }
    }
    Ok(Some(cg))
}

impl JobCgroup {
    /// Move the calling thread into the group.
    pub fn join(&self, job: &str) -> Result<(), RunError> {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let tasks = self.dir.join("tasks");
        std::fs::write(&tasks, tid.to_string()).map_err(|e| {
            RunError::Setup(format!(
                "job '{job}': cgroup: cannot add thread {tid} to {}: {e}",
                tasks.display()
            ))
        })
    }

    /// Remove the group if this run made it and may remove it. Its threads have ended
    /// by then, which empties it.
    pub fn remove(&self) {
        if self.created && !self.nodelete {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// The group's path below the mount: a relative path with no `..`.
fn group_name(o: &JobOptions) -> Result<PathBuf, String> {
    relative(o.cgroup.as_deref().unwrap_or(&o.name))
}

fn relative(name: &str) -> Result<PathBuf, String> {
    let p = Path::new(name.trim_start_matches('/'));
    let ok = !name.is_empty()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !ok {
        return Err(format!(
            "cgroup={name}: name a group below the blkio controller (no '..')"
        ));
    }
    Ok(p.to_path_buf())
}

fn mount_point() -> Result<PathBuf, String> {
    let mounts = std::fs::read_to_string("/proc/mounts")
        .map_err(|e| format!("cgroup: cannot read /proc/mounts: {e}"))?;
    match find_mount(&mounts, |p| {
        std::fs::read_to_string(p.join("cgroup.controllers")).unwrap_or_default()
    }) {
        Mount::V1(p) => Ok(p),
        Mount::V2(p) => Err(format!(
            "cgroup: the io controller is on cgroup v2 ({}), where all threads of a process \
             share one group; per-job cgroups need a process per job, which ioscope does not \
             support yet",
            p.display()
        )),
        Mount::None => Err("cgroup: cgroup blkio does not appear to be mounted".into()),
    }
}

/// The blkio v1 mount, else a v2 mount whose controllers include io.
fn find_mount(mounts: &str, controllers: impl Fn(&Path) -> String) -> Mount {
    let entries: Vec<(&str, &str, &str)> = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4).then(|| (f[1], f[2], f[3]))
        })
        .collect();
    let v1 = entries
        .iter()
        .find(|(_, ty, opts)| *ty == "cgroup" && opts.split(',').any(|o| o == "blkio"));
    if let Some((dir, _, _)) = v1 {
        return Mount::V1(PathBuf::from(unescape(dir)));
    }
    let v2 = entries.iter().find(|(dir, ty, _)| {
        *ty == "cgroup2"
            && controllers(Path::new(&unescape(dir)))
                .split_whitespace()
                .any(|c| c == "io")
    });
    match v2 {
        Some((dir, _, _)) => Mount::V2(PathBuf::from(unescape(dir))),
        None => Mount::None,
    }
}

/// /proc/mounts writes spaces and tabs in paths as octal escapes.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t")
}

fn set_weight(dir: &Path, w: u32) -> Result<(), String> {
    let file = ["blkio.weight", "blkio.bfq.weight"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .ok_or_else(|| {
            format!(
                "cgroup_weight={w}: {} has neither blkio.weight nor blkio.bfq.weight (the \
                 kernel has no proportional blkio controller)",
                dir.display()
            )
        })?;
    std::fs::write(&file, w.to_string())
        .map_err(|e| format!("cgroup_weight={w}: {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";

    #[test]
    fn blkio_v1_wins_over_v2() {
        let m = find_mount(V1, |_| "io memory".into());
        assert_eq!(m, Mount::V1("/sys/fs/cgroup/blkio".into()));
    }

    #[test]
    fn v2_counts_only_with_the_io_controller() {
        let v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n";
        assert_eq!(find_mount(v2, |_| "hugetlb".into()), Mount::None);
        assert_eq!(
            find_mount(v2, |_| "cpu io memory".into()),
            Mount::V2("/sys/fs/cgroup".into())
        );
        // blkio must be an option of its own, not part of another word.
        let odd = "cgroup /x cgroup rw,noblkio 0 0\n";
        assert_eq!(find_mount(odd, |_| String::new()), Mount::None);
    }

    #[test]
    fn group_names_stay_below_the_mount() {
        assert_eq!(relative("job1").unwrap(), PathBuf::from("job1"));
        assert_eq!(relative("/a/b").unwrap(), PathBuf::from("a/b"));
        assert!(relative("../etc").unwrap_err().contains("no '..'"));
        assert!(relative("").is_err());
    }
}
