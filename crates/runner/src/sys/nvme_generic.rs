//! NVMe generic character devices (`/dev/ngXnY`), which io_uring_cmd passes commands
//! to: recognising one, its namespace's size, and its block device twin
//! (`/dev/nvmeXnY`), through which the safety checks (signatures, an exclusive open)
//! and the poll-queue check see the same namespace.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A namespace's generic device, as a job's file.
#[derive(Clone, Debug)]
pub struct Generic {
    /// The namespace's size in bytes (Identify Namespace: NSZE × LBA size).
    pub bytes: u64,
    /// The block device of the same namespace and its device number, when the kernel
    /// made one (it does not for formats the block layer cannot use).
    pub twin: Option<(PathBuf, u64)>,
}

/// `Some` when the character device `rdev` is an NVMe generic device: its size (or
/// why it could not be read) and its twin.
pub fn probe(path: &Path, rdev: u64) -> Option<Result<Generic, String>> {
    let name = generic_name(rdev)?;
    Some(identify(path).map(|bytes| Generic {
        bytes,
        twin: twin(&name),
    }))
}

/// The kernel's name of an NVMe generic device (`ng0n1`), from sysfs.
fn generic_name(rdev: u64) -> Option<String> {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let link = std::fs::read_link(format!("/sys/dev/char/{maj}:{min}")).ok()?;
    let name = link.file_name()?.to_string_lossy().into_owned();
    Path::new("/sys/class/nvme-generic")
        .join(&name)
        .exists()
        .then_some(name)
}

/// `ngXnY` → `/dev/nvmeXnY`, when that block device exists.
fn twin(name: &str) -> Option<(PathBuf, u64)> {
    let block = format!("nvme{}", name.strip_prefix("ng")?);
    let dev = PathBuf::from(format!("/dev/{block}"));
    let md = std::fs::metadata(&dev).ok()?;
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_block_device().then(|| (dev, md.rdev()))
}

fn identify(path: &Path) -> Result<u64, String> {
    use std::os::fd::AsRawFd;
    let f =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    ioscope_engine::uring_cmd::nvme::ns_info(f.as_raw_fd())
        .map(|ns| ns.bytes())
        .map_err(|e| format!("{}: Identify Namespace: {e}", path.display()))
}
