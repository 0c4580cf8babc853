//! Engine identity, in one place: every `ioengine=` name fio 3.33 knows, whether
//! ioscope implements it, and whether it completes each I/O inside the submitting
//! call (a synchronous engine: one I/O in flight, no slat, fio's "sync" depth
//! reporting). The engine crate implements the ones marked implemented; which
//! options each engine takes is the `engines:` field of those options in the table.

/// How an engine completes I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Every I/O completes inside the call that issues it.
    Sync,
    /// I/Os are submitted, then reaped later (iodepth applies).
    Async,
    /// Synchronous at iodepth=1, asynchronous above (fio's null engine).
    SyncAtDepthOne,
}

/// One `ioengine=` value.
#[derive(Debug)]
pub struct EngineDef {
    pub name: &'static str,
    pub help: &'static str,
    pub completion: Completion,
    /// ioscope runs jobs with this engine; other names parse (so job files can be
    /// checked) but a run refuses them.
    pub implemented: bool,
}

impl EngineDef {
    /// True when I/O at this depth completes inside the issuing call.
    pub fn is_sync(&self, iodepth: u32) -> bool {
        match self.completion {
            Completion::Sync => true,
            Completion::Async => false,
            Completion::SyncAtDepthOne => iodepth <= 1,
        }
    }
}

macro_rules! engines {
    ($($name:literal : $completion:ident, $implemented:literal, $help:literal;)+) => {
        /// Every engine, implemented ones first.
        pub const ENGINES: &[EngineDef] = &[$(EngineDef {
            name: $name,
            help: $help,
            completion: Completion::$completion,
            implemented: $implemented,
        }),+];

        /// (name, help) of every engine, for the option table's choice list.
        pub const ENGINE_CHOICES: &[(&str, &str)] = &[$(($name, $help)),+];
    };
}

engines! {
    "psync": Sync, true, "pread(2)/pwrite(2) (default)";
    "sync": Sync, true, "read(2)/write(2) with lseek(2)";
    "vsync": Sync, true, "readv(2)/writev(2) with lseek(2)";
    "pvsync": Sync, true, "preadv(2)/pwritev(2)";
    "pvsync2": Sync, true, "preadv2(2)/pwritev2(2) with RWF_HIPRI/RWF_NOWAIT";
    "libaio": Async, true, "Linux native asynchronous I/O (io_submit)";
    "io_uring": Async, true, "Linux io_uring";
    "null": SyncAtDepthOne, true, "Completes every I/O at once: measures the tool itself";
    "mmap": Sync, true, "mmap(2) the file and memcpy";
    "posixaio": Async, true, "POSIX aio_read(3)/aio_write(3) (glibc's helper threads)";
    "io_uring_cmd": Async, true, "io_uring passthrough commands (NVMe, on /dev/ngXnY)";
    "sg": Async, true, "SCSI commands through the sg driver (/dev/sgN; SG_IO on block devices)";
    "splice": Sync, true, "splice(2) and vmsplice(2) through a pipe";
    "net": Sync, false, "Network transfer";
    "netsplice": Sync, false, "Network transfer with splice";
    "cpuio": Sync, false, "CPU burner";
    "rdma": Async, false, "RDMA";
    "falloc": Sync, true, "fallocate(2) as I/O: reads keep the size, writes extend, trims punch holes";
    "e4defrag": Sync, false, "ext4 defragmentation";
    "rbd": Async, false, "Ceph RBD";
    "http": Sync, false, "HTTP/S3/Swift";
    "gfapi": Sync, false, "GlusterFS";
    "libhdfs": Sync, false, "HDFS";
    "mtd": Sync, false, "MTD devices";
    "dev-dax": Sync, false, "Device DAX";
    "libpmem": Sync, false, "libpmem";
    "pmemblk": Sync, false, "libpmemblk";
    "libiscsi": Async, false, "iSCSI";
    "nbd": Async, false, "Network block device";
    "nfs": Async, false, "libnfs";
    "filecreate": Sync, true, "open(2) with O_CREAT of each file, timed; its blocks move no data";
    "filestat": Sync, true, "stat(2)/lstat(2)/statx(2) of each file (stat_type), timed; its blocks move no data";
    "filedelete": Sync, true, "unlink(2) of each file, timed; its blocks move no data";
    "dircreate": Sync, true, "mkdir(2) of each name, timed (fio 3.34's engine)";
    "dirstat": Sync, true, "stat(2)/lstat(2)/statx(2) of each directory (stat_type), timed (fio 3.34's engine)";
    "dirdelete": Sync, true, "rmdir(2) of each directory, timed (fio 3.34's engine)";
    "exec": Sync, false, "Run a program";
    "ftruncate": Sync, true, "ftruncate(2) to each written block's offset";
    "xnvme": Async, false, "xNVMe";
    "libcufile": Sync, false, "NVIDIA cuFile";
    "dfs": Async, false, "DAOS";
    "ime": Async, false, "DDN IME";
    "librpma_apm_client": Async, false, "librpma";
    "librpma_apm_server": Async, false, "librpma";
    "librpma_gpspm_client": Async, false, "librpma";
    "librpma_gpspm_server": Async, false, "librpma";
    "rados": Async, false, "Ceph RADOS";
    "windowsaio": Async, false, "Windows";
    "solarisaio": Async, false, "Solaris";
    "guasi": Async, false, "GUASI";
    "external": Async, false, "External engine";
}

/// The engine called `name`.
pub fn find(name: &str) -> Option<&'static EngineDef> {
    ENGINES.iter().find(|e| e.name == name)
}

/// Names of the engines ioscope implements.
pub fn implemented() -> impl Iterator<Item = &'static str> {
    ENGINES.iter().filter(|e| e.implemented).map(|e| e.name)
}

/// Whether `name` at `iodepth` is synchronous (unknown names: false).
pub fn is_sync(name: &str, iodepth: u32) -> bool {
    find(name).is_some_and(|e| e.is_sync(iodepth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity() {
        assert!(is_sync("psync", 32) && is_sync("mmap", 1));
        assert!(!is_sync("io_uring", 1) && !is_sync("libaio", 1));
        assert!(is_sync("null", 1) && !is_sync("null", 2));
        assert_eq!(implemented().count(), 21);
        assert!(find("posixaio").unwrap().implemented);
        assert!(!find("e4defrag").unwrap().implemented);
        assert_eq!(ENGINES.len(), ENGINE_CHOICES.len());
    }
}
