//! Never destroy data by surprise: before writing to a block device, refuse if it (or
//! a partition on it) is mounted, used as swap or by another device (dm, md, LVM), in
//! use anywhere (an exclusive open fails: mounted in another mount namespace, held by
//! another process), or carries a signature (see [`super::signatures`], then blkid's
//! own probe when blkid is installed). The exclusive open is kept for the run, so
//! nobody mounts or claims the device while ioscope writes to it.

use super::signatures::find_signature;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

/// (major, minor) of a block device.
pub fn dev_numbers(rdev: u64) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// Kernel name ("sda", "loop0", "nvme0n1p1") of a block device.
pub fn kernel_name(major: u32, minor: u32) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Names of the partitions of a whole-disk device.
fn partitions(name: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/sys/class/block/{name}")) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with(name) && Path::new(&format!("/sys/class/block/{n}/partition")).exists()
        })
        .collect()
}

fn dev_of(name: &str) -> Option<(u32, u32)> {
    let s = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Mount points of the given devices, from /proc/self/mountinfo.
fn mounts_of(devs: &[(u32, u32)]) -> Vec<String> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (a, b) = f.get(2)?.split_once(':')?;
            let d = (a.parse().ok()?, b.parse().ok()?);
            devs.contains(&d)
                .then(|| f.get(4).unwrap_or(&"?").to_string())
        })
        .collect()
}

/// Is the device listed as active swap?
fn is_active_swap(names: &[String]) -> bool {
    std::fs::read_to_string("/proc/swaps")
        .map(|s| {
            s.lines()
                .skip(1)
                .any(|l| names.iter().any(|n| l.starts_with(&format!("/dev/{n} "))))
        })
        .unwrap_or(false)
}

fn holders(name: &str) -> Vec<String> {
    std::fs::read_dir(format!("/sys/class/block/{name}/holders"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// An exclusive open of a block device, held while any job writes to it: the kernel
/// refuses mounts and other exclusive opens meanwhile.
pub type Claim = Arc<File>;

/// Claims of this process, by device number: jobs writing one device share its claim
/// (a second exclusive open by this process would fail as well).
static CLAIMS: Mutex<Vec<(u64, Weak<File>)>> = Mutex::new(Vec::new());

/// Why writing to this block device would destroy data, or None if it looks unused.
pub fn write_hazard(path: &Path, rdev: u64) -> Option<String> {
    claim(path, rdev).err()
}

/// The device's claim for writing, or why writing would destroy data.
pub fn claim(path: &Path, rdev: u64) -> Result<Claim, String> {
    let mut claims = CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
    claims.retain(|(_, w)| w.strong_count() > 0);
    let held = claims.iter().find(|(d, _)| *d == rdev);
    if let Some(c) = held.and_then(|(_, w)| w.upgrade()) {
        return Ok(c);
    }
    if let Some(why) = in_use(path, rdev) {
        return Err(why);
    }
    let file = open_exclusive(path)?;
    let size = super::disk::block_size(&file).unwrap_or(0);
    if let Some(what) = find_signature(&file, size) {
        return Err(format!("{} carries {what}", path.display()));
    }
    if let Some(what) = blkid_finds(path) {
        return Err(format!("{} carries {what} (blkid)", path.display()));
    }
    let c = Arc::new(file);
    claims.push((rdev, Arc::downgrade(&c)));
    Ok(c)
}

/// Open read-only with O_EXCL: for a block device the kernel refuses it (EBUSY) while
/// the device is mounted in any mount namespace or claimed by md, dm or another
/// exclusive opener.
fn open_exclusive(path: &Path) -> Result<File, String> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => format!(
                "{} is in use: mounted (perhaps in another mount namespace, such as a \
                 container's) or held by another process (its exclusive open failed: {e})",
                path.display()
            ),
            _ => format!("{}: cannot open: {e}", path.display()),
        })
}

/// What blkid's low-level probe names on the device (a signature the table in
/// signatures.rs lacks), when blkid is installed.
fn blkid_finds(path: &Path) -> Option<String> {
    let blkid = ["/usr/sbin/blkid", "/sbin/blkid", "/usr/bin/blkid"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let out = std::process::Command::new(blkid)
        .args(["-p", "-o", "export", "--"])
        .arg(path)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        matches!(k, "TYPE" | "PTTYPE").then(|| format!("a {v} signature"))
    })
}

/// Mounted (in this mount namespace), swap, held by another device or partitioned:
/// why the device is in use, or None.
fn in_use(path: &Path, rdev: u64) -> Option<String> {
    let (ma, mi) = dev_numbers(rdev);
    let name = kernel_name(ma, mi).unwrap_or_else(|| path.display().to_string());
    let mut names = vec![name.clone()];
    names.extend(partitions(&name));
    let devs: Vec<(u32, u32)> = names
        .iter()
        .filter_map(|n| dev_of(n))
        .chain([(ma, mi)])
        .collect();
    if let Some(m) = mounts_of(&devs).first() {
        return Some(format!(
            "{} (/dev/{name}) is mounted on {m}",
            path.display()
        ));
    }
    if is_active_swap(&names) {
        return Some(format!("{} is in use as swap", path.display()));
    }
    for n in &names {
        let h = holders(n);
        if !h.is_empty() {
            return Some(format!(
                "{} is in use by {} (device-mapper/MD/LVM)",
                path.display(),
                h.join(", ")
            ));
        }
    }
    if names.len() > 1 {
        return Some(format!(
            "{} has partitions ({})",
            path.display(),
            names[1..].join(", ")
        ));
    }
    None
}
