//! Test prerequisites. A test never passes without checking: when something it needs is
//! missing (fio 3.33, root, a loop device, a kernel feature, ../shared), the test
//!
//! - under `CI=true` fails, naming the missing prerequisite (CI provides everything, so a
//!   gap there is a broken CI setup, not a reason to pass);
//! - otherwise prints `SKIP <test>: <reason>` straight to the process's stderr (past the
//!   test harness's output capture, so plain `cargo test` shows it) and appends the same
//!   line to the skip log, `<target dir>/ioscope-skips.log`, which `.ci/run` counts.
//!
//! Use `require!(Prereq::Root, Prereq::LOSETUP)` at the top of a test (returns from it when
//! something is missing), `available!(Prereq::Fio333)` for an optional part of a test (a
//! comparison with fio), and `skip!("...")` when the test found out itself (a loop device
//! could not be set up). The macros need `#[macro_use] mod common;` and `use common::*;`.
//!
//! The options crate's tests include this file with `#[path]`: std and libc only.
#![allow(dead_code, unused_macros)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The fio the comparison tests are written against.
pub const FIO_VERSION: &str = "fio-3.33";

/// Something a test needs from the machine.
#[derive(Clone, Debug)]
pub enum Prereq {
    /// fio 3.33 on PATH: the comparisons are written against its output.
    Fio333,
    /// Running as root (loop devices, mounts, block-device settings).
    Root,
    /// A program on PATH, and the Debian package that has it.
    Program {
        name: &'static str,
        package: &'static str,
    },
    /// fio's example job files in `shared/fio-examples` next to the repository.
    SharedExamples,
    /// Permission to give I/O the real-time priority class (cmdprio_class=1, prioclass=1).
    IoprioRt,
    /// FUSE and Debian's python3-fusepy, for the fault-injecting file system.
    Fuse,
    /// The cgroup v1 blkio controller (fio's cgroup and cgroup_weight options).
    BlkioCgroup,
    /// Root and a memory controller (cgroup v1 or v2) a limited group can be made in.
    MemCgroup,
    /// fio's fiologparser_hist.py (Debian's fio package, gzipped) and the pandas it
    /// imports, for /usr/bin/python3.
    FioLogParserHist,
    /// Open MPI's mpirun, its development files and libclang: ioscope built with
    /// `--features mpi`, run under mpirun.
    Mpi,
    /// Network namespaces (`ip netns`) and `unshare`: hosts on one machine.
    NetNs,
    /// fio 3.42 (the newest release), from `../shared/tools/fio-3.42/fio` beside the
    /// checkout: what ioscope's behaviour and output follow where 3.42 differs from 3.33.
    Fio342,
    /// fio 3.42's own test harness (`t/` of `../shared/tools/fio-3.42/fio-3.42-src.tar.xz`,
    /// unpacked once into the target directory by [`fio342_t`]) and python3 to run it.
    Fio342Harness,
    /// fio-plot's `bench-fio` (PyPI), in the virtual environment `.ci/run` makes at
    /// `<target>/fio-plot` (or the one `IOSCOPE_BENCH_FIO` names).
    BenchFio,
    /// The Debian package built from this commit (`packaging/deb/build.sh`, which
    /// `.ci/run` runs): `<target>/debian/ioscope_*.deb`, or the file `IOSCOPE_DEB` names.
    DebPackage,
    /// The emulated-NVMe rig (`rig/rig.py`): QEMU 10 and a guest kernel prepared in its
    /// cache (`rig/rig.py prepare`; `.ci/run` prepares it).
    Rig,
}

impl Prereq {
    pub const LOSETUP: Prereq = Prereq::Program {
        name: "losetup",
        package: "mount",
    };
    pub const MKFS_EXT4: Prereq = Prereq::Program {
        name: "mkfs.ext4",
        package: "e2fsprogs",
    };
    pub const BLKID: Prereq = Prereq::Program {
        name: "blkid",
        package: "util-linux",
    };
    pub const MOUNT: Prereq = Prereq::Program {
        name: "mount",
        package: "mount",
    };
    /// Headless Chromium, which renders the SVG and HTML reports in the tests.
    pub const CHROMIUM: Prereq = Prereq::Program {
        name: "chromium",
        package: "chromium",
    };

    /// What is needed and how to get it.
    pub fn describe(&self) -> String {
        match self {
            Prereq::Fio333 => "fio 3.33 (apt-get install fio)".into(),
            Prereq::Root => "root (run the tests as root)".into(),
            Prereq::Program { name, package } => format!("{name} (apt-get install {package})"),
            Prereq::IoprioRt => {
                "permission for real-time I/O priority (root or CAP_SYS_ADMIN)".into()
            }
            Prereq::Fuse => {
                "FUSE: /dev/fuse and python3-fusepy (apt-get install python3-fusepy)".into()
            }
            Prereq::FioLogParserHist => format!(
                "fio's {FIOLOGPARSER_HIST} and pandas for /usr/bin/python3 (apt-get install fio python3-pandas)"
            ),
            Prereq::BlkioCgroup => {
                "the cgroup v1 blkio controller, mounted (a kernel with CONFIG_BLK_CGROUP)".into()
            }
            Prereq::MemCgroup => {
                "root and a cgroup memory controller (v1, or v2 with +memory in the root's \
                 cgroup.subtree_control)"
                    .into()
            }
            Prereq::Mpi => format!(
                "Open MPI (apt-get install openmpi-bin libopenmpi-dev libclang-dev pkg-config) and \
                 ioscope built with it at {} (cargo build --features mpi -p ioscope --target-dir \
                 target/mpi; .ci/run builds it)",
                mpi_build().display()
            ),
            Prereq::Fio342 => format!("fio 3.42 at {}", fio342_path().display()),
            Prereq::BenchFio => format!(
                "fio-plot's bench-fio at {} (python3 -m venv DIR && DIR/bin/pip install fio-plot==1.1.21; .ci/run makes it)",
                bench_fio().display()
            ),
            Prereq::Fio342Harness => format!(
                "fio 3.42's test harness: python3 and {} (its t/ is unpacked from it)",
                fio342_tarball().display()
            ),
            Prereq::Rig => format!(
                "the emulated-NVMe rig: QEMU 10 and guest kernels 6.12 and 6.1 (python3 {} prepare \
                 --kernel 6.12, and --kernel 6.1; .ci/run prepares them)",
                rig_script().display()
            ),
            Prereq::DebPackage => "the Debian package (packaging/deb/build.sh target/release/ioscope; .ci/run builds it)".into(),
            Prereq::NetNs => "network namespaces: root, `ip` (apt-get install iproute2) and `unshare` (util-linux)".into(),
            Prereq::SharedExamples => format!(
                "fio's example job files in {} (a copy of fio's examples/ directory)",
                shared_examples_path().display()
            ),
        }
    }

    /// Ok when present; otherwise what was found instead.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Prereq::Fio333 => {
                static FIO: OnceLock<Result<(), String>> = OnceLock::new();
                FIO.get_or_init(fio_version_ok).clone()
            }
            Prereq::Root => {
                // SAFETY: geteuid has no preconditions.
                let uid = unsafe { libc::geteuid() };
                if uid == 0 {
                    Ok(())
                } else {
                    Err(format!("running as uid {uid}"))
                }
            }
            Prereq::Program { name, .. } => {
                if on_path(name) {
                    Ok(())
                } else {
                    Err(format!("{name} is not on PATH"))
                }
            }
            Prereq::IoprioRt => ioprio_rt_ok(),
            Prereq::Fuse => fuse_ok(),
            Prereq::BlkioCgroup => blkio_mount().map(|_| ()),
            Prereq::MemCgroup => {
                Prereq::Root.check()?;
                MemCgroup::new(64 << 20).map(|_| ())
            }
            Prereq::FioLogParserHist => {
                if !Path::new(FIOLOGPARSER_HIST).is_file() {
                    return Err(format!("{FIOLOGPARSER_HIST} is missing"));
                }
                let ok = Command::new("/usr/bin/python3")
                    .args(["-c", "import pandas, numpy"])
                    .output()
                    .map(|o| o.status.success())
                    .unwrap_or(false);
                if ok {
                    Ok(())
                } else {
                    Err("/usr/bin/python3 cannot import pandas".into())
                }
            }
            Prereq::Mpi => {
                if !on_path("mpirun") {
                    return Err("mpirun is not on PATH".into());
                }
                let b = mpi_build();
                if !b.is_file() {
                    return Err(format!("{} is not built", b.display()));
                }
                Ok(())
            }
            Prereq::NetNs => netns_ok(),
            Prereq::SharedExamples => {
                if shared_examples_path().is_dir() {
                    Ok(())
                } else {
                    Err("not present".into())
                }
            }
            Prereq::DebPackage => deb_package().map(|_| ()),
            Prereq::Rig => {
                for kernel in ["6.12", "6.1"] {
                    let out = Command::new("python3")
                        .arg(rig_script())
                        .args(["status", "--kernel", kernel])
                        .output()
                        .map_err(|e| format!("python3 {}: {e}", rig_script().display()))?;
                    if !out.status.success() {
                        return Err(String::from_utf8_lossy(&out.stdout).trim().to_string());
                    }
                }
                Ok(())
            }
            Prereq::BenchFio => {
                if bench_fio().is_file() {
                    Ok(())
                } else {
                    Err("not installed".into())
                }
            }
            Prereq::Fio342Harness => {
                static T: OnceLock<Result<PathBuf, String>> = OnceLock::new();
                T.get_or_init(unpack_fio342_t).clone().map(|_| ())
            }
            Prereq::Fio342 => {
                let out = Command::new(fio342_path())
                    .arg("--version")
                    .output()
                    .map_err(|e| format!("{}: {e}", fio342_path().display()))?;
                let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if v == "fio-3.42" {
                    Ok(())
                } else {
                    Err(format!("{} says {v:?}", fio342_path().display()))
                }
            }
        }
    }
}

/// The Debian package the packaging test installs: `IOSCOPE_DEB`, else the one
/// `packaging/deb/build.sh` leaves in `<target>/debian`.
pub fn deb_package() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("IOSCOPE_DEB") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("IOSCOPE_DEB={} is no file", p.display()))
        };
    }
    // The test binary is <target>/<profile>/deps/NAME.
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe
        .ancestors()
        .nth(3)
        .map(|t| t.join("debian"))
        .ok_or("no target directory")?;
    let mut debs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    debs.sort();
    debs.pop()
        .ok_or_else(|| format!("no .deb in {}", dir.display()))
}

/// Can a network namespace be made here (and removed again)?
fn netns_ok() -> Result<(), String> {
    Prereq::Root.check()?;
    for p in ["ip", "unshare"] {
        if !on_path(p) {
            return Err(format!("{p} is not on PATH"));
        }
    }
    let name = format!("ioscope-probe-{}", std::process::id());
    let made = Command::new("ip").args(["netns", "add", &name]).output();
    let _ = Command::new("ip").args(["netns", "del", &name]).output();
    match made {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "ip netns add: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("ip: {e}")),
    }
}

/// Where Debian's fio package puts fio's histogram-log parser.
pub const FIOLOGPARSER_HIST: &str = "/usr/share/doc/fio/fiologparser_hist.py.gz";

/// Where the cgroup v1 blkio controller is mounted.
pub fn blkio_mount() -> Result<std::path::PathBuf, String> {
    let mounts = std::fs::read_to_string("/proc/mounts").map_err(|e| e.to_string())?;
    mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio"))
        .map(|f| std::path::PathBuf::from(f[1]))
        .ok_or_else(|| "no cgroup v1 mount with the blkio controller in /proc/mounts".into())
}

fn fio_version_ok() -> Result<(), String> {
    if !on_path("fio") {
        return Err("fio is not on PATH".into());
    }
    let v = Command::new("fio")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .map_err(|e| format!("fio --version: {e}"))?;
    if v == FIO_VERSION {
        Ok(())
    } else {
        Err(format!("fio on PATH is {v:?}"))
    }
}

/// Try the RT class on a short-lived thread of our own (ioprio_set with pid 0 sets the
/// calling thread's priority), so that no test thread keeps it.
fn fuse_ok() -> Result<(), String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("/dev/fuse does not exist".into());
    }
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import fusepy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err("/usr/bin/python3 cannot import fusepy".into())
    }
}

fn ioprio_rt_ok() -> Result<(), String> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    const RT_LEVEL_0: libc::c_long = 1 << 13;
    std::thread::spawn(|| {
        // SAFETY: ioprio_set only reads its integer arguments.
        let r = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, RT_LEVEL_0) };
        if r == 0 {
            Ok(())
        } else {
            Err(format!(
                "ioprio_set(RT): {}",
                std::io::Error::last_os_error()
            ))
        }
    })
    .join()
    .unwrap_or_else(|_| Err("ioprio_set probe panicked".into()))
}

/// `name` is an executable in a directory of PATH (or a path to one).
pub fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let exec = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        return exec(Path::new(name));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| exec(&d.join(name))))
}

/// `shared/fio-examples` next to the repository (the repository never needs it).
/// fio 3.42's binary in ../shared.
pub fn fio342_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/fio-3.42/fio")
}

/// fio-plot's bench-fio: `$IOSCOPE_BENCH_FIO`, or where `.ci/run` installs it.
pub fn bench_fio() -> PathBuf {
    if let Some(p) = std::env::var_os("IOSCOPE_BENCH_FIO") {
        return PathBuf::from(p);
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("fio-plot/bin/bench-fio")
}

/// fio 3.42's source, beside its binary.
pub fn fio342_tarball() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/fio-3.42/fio-3.42-src.tar.xz")
}

/// fio 3.42's `t/` directory (its test harness), unpacked from [`fio342_tarball`] into the
/// target directory; `require!(Prereq::Fio342Harness)` first.
pub fn fio342_t() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.join("fio-3.42-src/t")
}

/// Unpack `t/` once: into a fresh directory, renamed into place when whole, so that a
/// test binary running beside this one never sees half of it.
fn unpack_fio342_t() -> Result<PathBuf, String> {
    let t = fio342_t();
    if t.join("client_server.py").is_file() {
        return Ok(t);
    }
    if !on_path("python3") {
        return Err("python3 is not on PATH".into());
    }
    let tarball = fio342_tarball();
    if !tarball.is_file() {
        return Err(format!("{} is missing", tarball.display()));
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let staging = tmp.join(format!("fio-3.42-src.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| e.to_string())?;
    let out = Command::new("tar")
        .arg("-xJf")
        .arg(&tarball)
        .arg("-C")
        .arg(&staging)
        .args(["--strip-components=1", "fio-3.42/t"])
        .output()
        .map_err(|e| format!("tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let dest = tmp.join("fio-3.42-src");
    match std::fs::rename(&staging, &dest) {
        Ok(()) => {}
        // Another test binary unpacked it first.
        Err(_) if t.join("client_server.py").is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
        }
        Err(e) => return Err(format!("{}: {e}", dest.display())),
    }
    Ok(t)
}

/// The rig's script in this repository.
pub fn rig_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rig/rig.py")
}

pub fn shared_examples_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fio-examples")
}

/// Running under CI (`CI=true`): prerequisites must all be present.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The skip log: one line per skip, next to the build's `tmp` directory in the target dir.
pub fn skip_log_path() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("ioscope-skips.log")
}

/// Check one prerequisite for `test`; report it as described in the module docs when it is
/// missing. `part`: only part of the test depends on it (the rest still runs).
pub fn prereq_met(test: &str, p: &Prereq, part: bool) -> bool {
    match p.check() {
        Ok(()) => true,
        Err(found) => {
            prereq_missing(test, &p.describe(), &found, part);
            false
        }
    }
}

/// A prerequisite of `test` is missing: fail under CI, otherwise report a visible skip.
pub fn prereq_missing(test: &str, what: &str, found: &str, part: bool) {
    let found = if found.is_empty() {
        String::new()
    } else {
        format!(" ({found})")
    };
    if under_ci() {
        panic!("missing prerequisite: {what}{found}; under CI=true tests may not skip");
    }
    let line = format!(
        "SKIP {test}{}: missing {what}{found}\n",
        if part { " (in part)" } else { "" }
    );
    // Not eprint!: the harness captures that and shows it only for failing tests.
    let _ = std::io::stderr().write_all(line.as_bytes());
    // One write on an O_APPEND file: lines from parallel tests do not interleave.
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skip_log_path())
        .and_then(|mut f| f.write_all(line.as_bytes()));
}

/// ioscope built with `--features mpi`: `$IOSCOPE_MPI_BIN`, or where `.ci/run` builds
/// it (`cargo build --features mpi -p ioscope --target-dir target/mpi`). Tests never
/// build it themselves.
pub fn mpi_build() -> PathBuf {
    if let Some(p) = std::env::var_os("IOSCOPE_MPI_BIN") {
        return PathBuf::from(p);
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("mpi/debug/ioscope")
}

/// The test running: `binary::test`, from the test harness's thread name, or (on another
/// thread) the path of the function `test_name!()` is expanded in.
macro_rules! test_name {
    () => {{
        fn f() {}
        test_label(std::any::type_name_of_val(&f))
    }};
}

/// See `test_name!`: `fn_path` is `binary::module::function::f`.
pub fn test_label(fn_path: &str) -> String {
    let fn_path = fn_path.strip_suffix("::f").unwrap_or(fn_path);
    let krate = fn_path.split("::").next().unwrap_or(fn_path);
    match std::thread::current().name() {
        Some(t) if t != "main" => format!("{krate}::{t}"),
        _ => fn_path.to_string(),
    }
}

/// Return from the test unless every prerequisite is met (see the module docs).
macro_rules! require {
    ($($p:expr),+ $(,)?) => {
        $(
            if !prereq_met(&test_name!(), &$p, false) {
                return;
            }
        )+
    };
}

/// Whether the prerequisite of an optional part of a test is met (reported when not).
macro_rules! available {
    ($p:expr) => {
        prereq_met(&test_name!(), &$p, true)
    };
}

/// The test found a prerequisite missing itself: report it and return from the test.
macro_rules! skip {
    ($($fmt:tt)+) => {{
        prereq_missing(&test_name!(), &format!($($fmt)+), "", false);
        return;
    }};
}

/// A memory cgroup with a limit (v1's memory.limit_in_bytes or v2's memory.max), made
/// at the root of the memory hierarchy and removed on drop.
pub struct MemCgroup {
    pub dir: PathBuf,
}

impl MemCgroup {
    pub fn new(limit: u64) -> Result<MemCgroup, String> {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("ioscope-test-{}-{n}", std::process::id());
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let mount = |v1: bool| {
            mounts.lines().find_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let r: Vec<&str> = right.split(' ').collect();
                let hit = match v1 {
                    true => r[0] == "cgroup" && r.get(2)?.split(',').any(|o| o == "memory"),
                    false => r[0] == "cgroup2",
                };
                hit.then(|| PathBuf::from(left.split(' ').nth(4).unwrap_or("/")))
            })
        };
        let (root, file) = match (mount(true), mount(false)) {
            (Some(v1), _) => (v1, "memory.limit_in_bytes"),
            (None, Some(v2)) => {
                let ctl =
                    std::fs::read_to_string(v2.join("cgroup.subtree_control")).unwrap_or_default();
                if !ctl.split_whitespace().any(|c| c == "memory") {
                    return Err(format!(
                        "{}: memory is not in cgroup.subtree_control",
                        v2.display()
                    ));
                }
                (v2, "memory.max")
            }
            (None, None) => return Err("no memory cgroup hierarchy is mounted".into()),
        };
        let dir = root.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cg = MemCgroup { dir };
        std::fs::write(cg.dir.join(file), limit.to_string())
            .map_err(|e| format!("{}: {e}", cg.dir.join(file).display()))?;
        Ok(cg)
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // The group's processes have exited; a moment for the kernel to let it go.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
