//! Which disk the target is: the whole disk behind the file, directory or device, with
//! its model and serial from sysfs. The identity goes into every point's key (results
//! of another disk are never taken for this one's) and into each result file; a sweep
//! file may demand a model or serial so that the wrong disk is never written.

use crate::error::SweepError;
use crate::file::Target;
use serde::Serialize;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// The target as named (first filename, or the directory).
    pub path: String,
    /// file, directory or block device.
    pub kind: String,
    /// Kernel name of the whole disk behind it (vda, nvme0n1, loop0).
    pub disk: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
}

impl Identity {
    /// The identity of the sweep's target.
    pub fn of(t: &Target) -> Identity {
        let opt = |k: &str| {
            t.options
                .iter()
                .rev()
                .find(|o| o.key == k)
                .map(|o| o.value.clone())
        };
        let (path, dir) = match (opt("filename"), opt("directory")) {
            // fio's filename lists are ':'-separated ("\:" escapes a colon).
            (Some(f), _) => (f.split(':').next().unwrap_or_default().to_string(), false),
            (None, Some(d)) => (d, true),
            (None, None) => (String::new(), false),
        };
        Identity::of_path(Path::new(&path), dir)
    }

    /// The identity of a path (`dir`: a directory jobs create files in).
    pub fn of_path(path: &Path, dir: bool) -> Identity {
        let md = existing(path).and_then(|p| std::fs::metadata(p).ok());
        let block = md.as_ref().is_some_and(|m| m.file_type().is_block_device());
        let kind = match (block, dir) {
            (true, _) => "block device",
            (false, true) => "directory",
            (false, false) => "file",
        };
        let disk = md.and_then(|m| {
            let dev = if block { m.rdev() } else { m.dev() };
            ioscope_runner::device::whole_disk(ioscope_runner::device::dev_numbers(dev))
        });
        let (model, serial) = disk.as_deref().map(describe).unwrap_or_default();
        Identity {
            path: path.display().to_string(),
            kind: kind.into(),
            disk,
            model,
            serial,
        }
    }

    /// The text hashed into point keys.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.path,
            self.kind,
            self.disk.as_deref().unwrap_or("-"),
            self.model.as_deref().unwrap_or("-"),
            self.serial.as_deref().unwrap_or("-")
        )
    }

    /// One line: `/dev/sdb (block device, disk sdb, model X, serial Y)`.
    pub fn text(&self) -> String {
        let mut parts = vec![self.kind.clone()];
        parts.extend(self.disk.as_ref().map(|d| format!("disk {d}")));
        parts.extend(self.model.as_ref().map(|m| format!("model {m}")));
        parts.extend(self.serial.as_ref().map(|s| format!("serial {s}")));
        format!("{} ({})", self.path, parts.join(", "))
    }

    /// Refuse a target that is not the disk the sweep file names.
    pub fn check(&self, t: &Target) -> Result<(), SweepError> {
        for (what, want, have) in [
            ("model", &t.expect_model, &self.model),
            ("serial", &t.expect_serial, &self.serial),
        ] {
            let Some(want) = want else { continue };
            if have.as_deref().map(str::trim) != Some(want.trim()) {
                return Err(SweepError::Target(format!(
                    "{}: the sweep file expects {what} '{want}', the disk has {}: refusing to \
                     touch another disk",
                    self.text(),
                    have.as_deref()
                        .map_or("none".to_string(), |h| format!("'{h}'"))
                )));
            }
        }
        Ok(())
    }
}

/// The path itself, or its nearest existing ancestor (a file the sweep will create
/// lives on its directory's disk).
fn existing(path: &Path) -> Option<PathBuf> {
    let mut p = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    loop {
        if p.exists() {
            return Some(p.to_path_buf());
        }
        p = match p.parent() {
            Some(q) if !q.as_os_str().is_empty() => q,
            _ => Path::new("."),
        };
    }
}

/// The firmware revision of a whole disk from sysfs (NVMe, SCSI/SATA), when it says.
pub fn firmware(disk: &str) -> Option<String> {
    ["device/firmware_rev", "device/rev"]
        .iter()
        .find_map(|rel| {
            std::fs::read_to_string(format!("/sys/block/{disk}/{rel}"))
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
}

/// Model and serial of a whole disk from sysfs; a loop device is described by its
/// backing file.
fn describe(disk: &str) -> (Option<String>, Option<String>) {
    let read = |rel: &str| {
        std::fs::read_to_string(format!("/sys/block/{disk}/{rel}"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    if let Some(backing) = read("loop/backing_file") {
        return (Some(format!("loop device over {backing}")), None);
    }
    let model = read("device/model");
    let serial = read("device/serial")
        .or_else(|| read("serial"))
        .or_else(|| read("device/wwid"))
        .or_else(|| read("wwid"));
    (model, serial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Opt;

    fn target(file: &str) -> Target {
        Target {
            options: vec![Opt {
                key: "filename".into(),
                value: file.into(),
                line: 1,
            }],
            ..Target::default()
        }
    }

    #[test]
    fn a_new_file_takes_its_directory_disk() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("not/yet/there");
        let id = Identity::of(&target(&f.display().to_string()));
        assert_eq!(id.kind, "file");
        let dir = Identity::of(&target(&d.path().display().to_string()));
        assert_eq!(id.disk, dir.disk);
        // The key changes with the path, not with the file's existence.
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(
            Identity::of(&target(&f.display().to_string())).key(),
            id.key()
        );
    }

    #[test]
    fn expected_model_and_serial_are_enforced() {
        let mut t = target("/tmp/x");
        let id = Identity {
            path: "/dev/sdz".into(),
            kind: "block device".into(),
            disk: Some("sdz".into()),
            model: Some("Samsung SSD 980".into()),
            serial: None,
        };
        t.expect_model = Some("Samsung SSD 980 ".into());
        assert!(id.check(&t).is_ok());
        t.expect_serial = Some("S123".into());
        let e = id.check(&t).unwrap_err().to_string();
        assert!(
            e.contains("expects serial 'S123', the disk has none"),
            "{e}"
        );
    }
}
