//! Generic (passthrough) character devices: an NVMe namespace's `/dev/ngXnY`, which
//! io_uring_cmd passes commands to, and a SCSI device's `/dev/sgN`, which sg does.
//! Recognising one, its size, and its block device twin (`/dev/nvmeXnY`, `/dev/sdX`),
//! through which the safety checks (signatures, an exclusive open) and the poll-queue
//! check see the same device.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Which passthrough interface a generic device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Nvme,
    Scsi,
}

/// A generic device, as a job's file.
#[derive(Clone, Debug)]
pub struct Generic {
    pub kind: Kind,
    /// The device's size in bytes (Identify Namespace, or READ CAPACITY), as I/O to it
    /// counts them (in an NVMe extended-LBA format, each block with its metadata).
    pub bytes: u64,
    /// Its data alone: what its block device shows.
    pub data_bytes: u64,
    /// The block device of the same namespace or disk and its device number, when
    /// the kernel made one (not for NVMe formats the block layer cannot use, nor for
    /// SCSI devices that are no disks).
    pub twin: Option<(PathBuf, u64)>,
}

/// `Some` when the character device `rdev` is a generic NVMe or SCSI device: its size
/// (or why it could not be read) and its twin. `pi_act`: the job's, which decides
/// whether an extended-LBA namespace's metadata counts in its size.
pub fn probe(path: &Path, rdev: u64, pi_act: bool) -> Option<Result<Generic, String>> {
    let (kind, name) = generic_name(rdev)?;
    let twin = match kind {
        Kind::Nvme => nvme_twin(&name),
        Kind::Scsi => scsi_twin(&name),
    };
    Some(size(path, kind, pi_act).map(|(bytes, data_bytes)| Generic {
        kind,
        bytes,
        data_bytes,
        twin,
    }))
}

/// The kernel's class and name of a generic device (`ng0n1`, `sg0`), from sysfs.
fn generic_name(rdev: u64) -> Option<(Kind, String)> {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let link = std::fs::read_link(format!("/sys/dev/char/{maj}:{min}")).ok()?;
    let name = link.file_name()?.to_string_lossy().into_owned();
    let is = |class: &str| Path::new("/sys/class").join(class).join(&name).exists();
    match (is("nvme-generic"), is("scsi_generic")) {
        (true, _) => Some((Kind::Nvme, name)),
        (_, true) => Some((Kind::Scsi, name)),
        _ => None,
    }
}

/// `ngXnY` → `/dev/nvmeXnY`, when that block device exists.
fn nvme_twin(name: &str) -> Option<(PathBuf, u64)> {
    block_dev(&format!("nvme{}", name.strip_prefix("ng")?))
}

/// `sgN` → the disk sysfs lists under its device (`sdX`), when it is one.
fn scsi_twin(name: &str) -> Option<(PathBuf, u64)> {
    let dir = format!("/sys/class/scsi_generic/{name}/device/block");
    let disk = std::fs::read_dir(dir).ok()?.flatten().next()?;
    block_dev(&disk.file_name().to_string_lossy())
}

fn block_dev(name: &str) -> Option<(PathBuf, u64)> {
    let dev = PathBuf::from(format!("/dev/{name}"));
    let md = std::fs::metadata(&dev).ok()?;
    md.file_type().is_block_device().then(|| (dev, md.rdev()))
}

/// The device's size, asked of the device itself: for an NVMe namespace in the host's
/// bytes (in an extended-LBA format its blocks hold their metadata, as in fio), and
/// the size of its data alone.
fn size(path: &Path, kind: Kind, pi_act: bool) -> Result<(u64, u64), String> {
    use std::os::fd::AsRawFd;
    let f =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let fd = f.as_raw_fd();
    match kind {
        Kind::Nvme => ioscope_engine::uring_cmd::nvme::ns_info(fd)
            .map(|ns| (ns.host_bytes(pi_act), ns.nsze << ns.lba_shift))
            .map_err(|e| format!("{}: Identify Namespace: {e}", path.display())),
        Kind::Scsi => ioscope_engine::sg::scsi::capacity(fd)
            .map(|(bs, blocks)| (u64::from(bs) * blocks, u64::from(bs) * blocks))
            .map_err(|e| format!("{}: READ CAPACITY: {e}", path.display())),
    }
}
