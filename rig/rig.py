#!/usr/bin/env python3
"""The emulated-NVMe test rig: a QEMU guest with NVMe, zoned, PI, FDP and SCSI devices
that runs a command against the host's own binaries and hands back its output and exit
status.

    rig/rig.py prepare [--kernel 6.1|6.12]     install QEMU, fetch a guest kernel, build an initramfs
    rig/rig.py status  [--kernel ...]          say whether the rig is ready (exit 0) or what is missing
    rig/rig.py run [--kernel ...] [--timeout S] [--share DIR]... [--env K=V]... [--multipath] -- CMD [ARG]...

`run` boots a guest whose root is the host's `/`, read-only over virtio-9p with a RAM
overlay on top, so every host program (ioscope, fio, nvme-cli, test binaries) runs there
unchanged. CMD runs in the current directory; its stdout and stderr come back on ours and
its exit status is ours. Each --share DIR is writable and seen at the same path in the
guest (results are written there). The devices' backing images (plain.img, zoned.img,
pi.img, fdp.img, zcap.img, scsi.img: raw, 1 GiB) are shared writable at $IOSCOPE_RIG_IMAGES, for
tests that change a device's bytes behind its controller. Devices in the guest, by stable name:

    /dev/rig/plain   /dev/rig/plain-ng   NVMe, 4 KiB LBAs, 2 poll queues        (1 GiB)
    /dev/rig/zoned   /dev/rig/zoned-ng   NVMe ZNS, 16 x 64 MiB zones, 8 open/active
    /dev/rig/pi      /dev/rig/pi-ng      NVMe, 512 B LBAs + 8 B metadata, PI type 1
    /dev/rig/fdp     /dev/rig/fdp-ng     NVMe FDP subsystem, 8 reclaim unit handles
    /dev/rig/zcap    /dev/rig/zcap-ng    NVMe ZNS, 16 x 64 MiB zones of 48 MiB capacity
    /dev/rig/pi64    /dev/rig/pi64-ng    NVMe, 512 B LBAs + 16 B metadata, PI type 1, 64-bit guard
                     /dev/rig/piext-ng   NVMe, 520 B extended LBAs (8 B of PI in each), PI type 1
    /dev/rig/scsi    /dev/rig/scsi-sg    virtio-scsi disk and its SCSI generic node

The guest runs under TCG (our machines' KVM is PVM, which stock kernels cannot use):
it proves what a path does, never how fast. Everything is fetched from the Debian
mirrors this machine's apt already uses (no host is named here) and cached in
$IOSCOPE_RIG_CACHE (default ~/.cache/ioscope-rig); /etc/apt is left untouched.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNELS = {"6.1": "bookworm", "6.12": "bookworm-backports"}
# What the guest loads (with their dependencies, from modules.dep), in this order.
MODULES = [
    "virtio_pci", "9pnet_virtio", "9p", "overlay", "t10-pi", "crc64-rocksoft",
    "nvme-core", "nvme", "virtio_scsi", "sd_mod", "sg",
]
# Module parameters: poll queues for polled I/O; no multipath head (it hides the
# zoned namespace's open/active limits: nvme-rig.md, pitfall 2).
PARAMS = {"nvme": "poll_queues=2", "nvme_core": "multipath=N"}
QEMU_MIN = (10, 0)


def cache_dir() -> Path:
    env = os.environ.get("IOSCOPE_RIG_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ioscope-rig"


def say(msg: str) -> None:
    print(f"rig: {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def as_root(cmd):
    return cmd if os.geteuid() == 0 else ["sudo"] + cmd


# --- apt, kept private: our own source list and package lists, /etc/apt untouched ---

def apt_dir() -> Path:
    """A private apt configuration: this machine's Debian sources plus backports."""
    d = cache_dir() / "apt"
    parts = d / "sources.list.d"
    lists = d / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    parts.mkdir(parents=True, exist_ok=True)
    main = Path("/etc/apt/sources.list.d/debian.sources")
    text = main.read_text()
    (parts / "debian.sources").write_text(text)
    # The backports suite, from the same mirror and key as the main suite.
    for stanza in text.split("\n\n"):
        uri = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
        suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
        key = re.search(r"^Signed-By:\s*(\S+)", stanza, re.M)
        if uri and suites and "bookworm" in suites.group(1).split():
            entry = f"Types: deb\nURIs: {uri.group(1)}\nSuites: bookworm-backports\nComponents: main\n"
            if key:
                entry += f"Signed-By: {key.group(1)}\n"
            (parts / "backports.sources").write_text(entry)
            break
    else:
        raise SystemExit(f"rig: no bookworm suite in {main}: cannot find the backports mirror")
    return d


def apt(args, *, root=False, cwd=None):
    d = apt_dir()
    opts = [
        "-o", f"Dir::Etc::SourceParts={d / 'sources.list.d'}",
        "-o", "Dir::Etc::SourceList=/dev/null",
        "-o", f"Dir::State::Lists={d / 'lists'}",
        "-o", "APT::Sandbox::User=root",
        "-qq",
    ]
    cmd = ["apt-get"] + opts + args
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return sh(as_root(cmd) if root else cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL)


def apt_update():
    stamp = cache_dir() / "apt" / "updated"
    if stamp.exists() and time.time() - stamp.stat().st_mtime < 86400:
        return
    say("apt-get update (private lists: this machine's Debian mirror and its backports)")
    apt(["update"], root=True)
    stamp.touch()


def apt_depends(pkg: str) -> str:
    """The package a metapackage (linux-image-amd64/SUITE) points at."""
    d = apt_dir()
    out = subprocess.run(
        ["apt-cache", "-o", f"Dir::Etc::SourceParts={d / 'sources.list.d'}",
         "-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::State::Lists={d / 'lists'}",
         "show", pkg], check=True, capture_output=True, text=True).stdout
    m = re.search(r"^Depends:\s*(linux-image-[^\s,(]+)", out, re.M)
    if not m:
        raise SystemExit(f"rig: cannot tell which kernel {pkg} is")
    return m.group(1)


# --- QEMU ---

def qemu_version():
    exe = shutil.which("qemu-system-x86_64")
    if not exe:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def install_qemu():
    v = qemu_version()
    if v and v >= QEMU_MIN:
        return
    apt_update()
    say("installing qemu-system-x86 from bookworm-backports (QEMU 10: NVMe FDP)")
    apt(["install", "-y", "--no-install-recommends", "-t", "bookworm-backports",
         "qemu-system-x86"], root=True)
    v = qemu_version()
    if not v or v < QEMU_MIN:
        raise SystemExit(f"rig: qemu-system-x86_64 {v} installed; the rig needs {QEMU_MIN}")


# --- the guest kernel and initramfs ---

def kernel_dir(kernel: str) -> Path:
    return cache_dir() / f"kernel-{kernel}"


def fetch_kernel(kernel: str) -> Path:
    d = kernel_dir(kernel)
    if (d / "ready").exists():
        return d
    apt_update()
    suite = KERNELS[kernel]
    pkg = apt_depends(f"linux-image-amd64/{suite}")
    say(f"fetching {pkg} ({suite}), unpacked in {d}, not installed")
    with tempfile.TemporaryDirectory() as tmp:
        apt(["download", f"{pkg}/{suite}"], cwd=tmp)
        deb = next(Path(tmp).glob("*.deb"))
        shutil.rmtree(d, ignore_errors=True)
        unpacked = Path(tmp) / "x"
        sh(["dpkg-deb", "-x", str(deb), str(unpacked)])
        d.mkdir(parents=True)
        vmlinuz = next((unpacked / "boot").glob("vmlinuz-*"))
        shutil.copy(vmlinuz, d / "vmlinuz")
        moddir = next((unpacked / "lib/modules").iterdir())
        # modules.dep is made at install time: make it here, inside the unpacked tree.
        sh(["depmod", "-b", str(unpacked), moddir.name])
        pick_modules(moddir, d / "modules")
    (d / "ready").write_text(pkg + "\n")
    return d


def pick_modules(moddir: Path, out: Path):
    """Copy MODULES and their dependencies (decompressed), and write load.list: the
    order to insmod them in, each with its parameters."""
    deps = {}
    for line in (moddir / "modules.dep").read_text().splitlines():
        mod, _, rest = line.partition(":")
        deps[mod] = rest.split()
    by_name = {}
    for path in deps:
        name = re.sub(r"\.ko(\.xz|\.zst|\.gz)?$", "", os.path.basename(path))
        by_name[name.replace("-", "_")] = path
    order = []

    def visit(path):
        for dep in deps.get(path, []):
            visit(dep)
        if path not in order:
            order.append(path)

    for name in MODULES:
        path = by_name.get(name.replace("-", "_"))
        if path:  # else built in (modules.builtin) or absent on this kernel
            visit(path)
    out.mkdir(parents=True)
    lines = []
    for path in order:
        src = moddir / path
        base = re.sub(r"\.ko(\.xz|\.zst|\.gz)?$", ".ko", os.path.basename(path))
        data = src.read_bytes()
        if path.endswith(".xz"):
            import lzma
            data = lzma.decompress(data)
        elif path.endswith(".zst"):
            data = subprocess.run(["zstd", "-dc", str(src)], check=True, capture_output=True).stdout
        elif path.endswith(".gz"):
            import gzip
            data = gzip.decompress(data)
        (out / base).write_bytes(data)
        name = base[:-3].replace("-", "_")
        lines.append(f"{base} {PARAMS.get(name, '')}".rstrip())
    (out / "load.list").write_text("\n".join(lines) + "\n")


def busybox() -> Path:
    """A static busybox, unpacked from Debian's busybox-static (never installed: it
    would replace the host's busybox)."""
    b = cache_dir() / "busybox"
    if b.exists():
        return b
    apt_update()
    with tempfile.TemporaryDirectory() as tmp:
        apt(["download", "busybox-static"], cwd=tmp)
        deb = next(Path(tmp).glob("*.deb"))
        sh(["dpkg-deb", "-x", str(deb), f"{tmp}/x"])
        shutil.copy(f"{tmp}/x/bin/busybox", b)
    return b


def initramfs(kernel: str) -> Path:
    d = kernel_dir(kernel)
    img = d / "initrd.cpio"
    init = Path(__file__).with_name("init.sh")
    if img.exists() and img.stat().st_mtime >= init.stat().st_mtime:
        return img
    bb = busybox()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub in ["bin", "dev", "proc", "sys", "host", "newroot", "upper", "share"]:
            (root / sub).mkdir()
        shutil.copy(bb, root / "bin/busybox")
        shutil.copy(init, root / "init")
        os.chmod(root / "init", 0o755)
        shutil.copytree(d / "modules", root / "modules")
        img.write_bytes(newc(root))
    return img


def newc(root: Path) -> bytes:
    """The tree under `root` as a "newc" cpio archive, the initramfs format (written
    here so the rig needs no cpio program)."""
    out = bytearray()

    def entry(name: str, mode: int, data: bytes, ino: int):
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        out.extend(b"070701" + b"".join(b"%08X" % f for f in fields))
        out.extend(name.encode() + b"\0")
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))

    ino = 1
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != ".":
            entry(rel, 0o040755, b"", ino)
            ino += 1
        for f in sorted(files):
            full = Path(dirpath) / f
            name = os.path.normpath(os.path.join(rel, f))
            entry(name, 0o100000 | (full.stat().st_mode & 0o7777), full.read_bytes(), ino)
            ino += 1
    entry("TRAILER!!!", 0, b"", 0)
    return bytes(out)


def prepare(kernel: str):
    install_qemu()
    fetch_kernel(kernel)
    initramfs(kernel)


def missing(kernel: str):
    out = []
    v = qemu_version()
    if not v or v < QEMU_MIN:
        out.append(f"QEMU >= {QEMU_MIN[0]} (have {v})")
    if not (kernel_dir(kernel) / "ready").exists():
        out.append(f"guest kernel {kernel}")
    if not (cache_dir() / "busybox").exists():
        out.append("busybox-static")
    return out


# --- a run ---

def images(tmp: Path):
    """The backing files: sparse, on the host's disk (not RAM)."""
    for name in ["plain", "zoned", "pi", "fdp", "zcap", "pi64", "piext", "scsi"]:
        with open(tmp / f"{name}.img", "wb") as f:
            f.truncate(1 << 30)


def drive(tmp: Path, name: str) -> list:
    return ["-drive", f"file={tmp / (name + '.img')},if=none,id=d{name},format=raw,"
            "aio=io_uring,cache.direct=on,discard=unmap"]


def devices(tmp: Path) -> list:
    """One namespace per controller, each with a serial the guest links by
    (nvme-rig.md, pitfall 1)."""
    a = []
    a += drive(tmp, "plain") + [
        "-device", "nvme,id=cplain,serial=plain,atomic.awun=15,atomic.awupf=15",
        "-device", "nvme-ns,drive=dplain,bus=cplain,nsid=1,logical_block_size=4096,"
        "physical_block_size=4096"]
    a += drive(tmp, "zoned") + [
        "-device", "nvme,id=czoned,serial=zoned,zoned.zasl=5",
        "-device", "nvme-ns,drive=dzoned,bus=czoned,nsid=1,logical_block_size=4096,"
        "physical_block_size=4096,zoned=true,zoned.zone_size=64M,zoned.zone_capacity=0,"
        "zoned.max_open=8,zoned.max_active=8"]
    a += drive(tmp, "pi") + [
        "-device", "nvme,id=cpi,serial=pi",
        "-device", "nvme-ns,drive=dpi,bus=cpi,nsid=1,ms=8,mset=0,pi=1,pil=0"]
    a += drive(tmp, "fdp") + [
        "-device", "nvme-subsys,id=sfdp,nqn=fdp,fdp=on,fdp.runs=32M,fdp.nrg=1,fdp.nruh=8",
        "-device", "nvme,id=cfdp,serial=fdp,subsys=sfdp",
        "-device", "nvme-ns,drive=dfdp,bus=cfdp,nsid=1,fdp.ruhs=0-7"]
    # Zones whose capacity is below their size (48 of 64 MiB), as ZNS drives have them;
    # last of the NVMe controllers so the others keep their numbers.
    a += drive(tmp, "zcap") + [
        "-device", "nvme,id=czcap,serial=zcap,zoned.zasl=5",
        "-device", "nvme-ns,drive=dzcap,bus=czcap,nsid=1,logical_block_size=4096,"
        "physical_block_size=4096,zoned=true,zoned.zone_size=64M,zoned.zone_capacity=48M,"
        "zoned.max_open=8,zoned.max_active=8"]
    # 64-bit guard protection information (16 bytes of PI in 16 bytes of metadata).
    a += drive(tmp, "pi64") + [
        "-device", "nvme,id=cpi64,serial=pi64",
        "-device", "nvme-ns,drive=dpi64,bus=cpi64,nsid=1,ms=16,mset=0,pi=1,pil=0,pif=2"]
    # An extended-LBA format: each 512-byte block travels with its 8 bytes of PI.
    a += drive(tmp, "piext") + [
        "-device", "nvme,id=cpiext,serial=piext",
        "-device", "nvme-ns,drive=dpiext,bus=cpiext,nsid=1,ms=8,mset=1,pi=1,pil=0"]
    a += drive(tmp, "scsi") + [
        "-device", "virtio-scsi-pci,id=vscsi",
        "-device", "scsi-hd,drive=dscsi,bus=vscsi.0,serial=scsi0"]
    return a


def run(kernel: str, timeout: float, shares: list, envs: list, cmd: list,
        multipath: bool = False) -> int:
    lack = missing(kernel)
    if lack:
        raise SystemExit(f"rig: not prepared ({', '.join(lack)}): run rig/rig.py prepare "
                         f"--kernel {kernel}")
    # QEMU's TCG has failed on its own while booting, twice in CI: an abort on its
    # iotlb_to_section assertion, and a guest stalled for good (RCU: "timer wakeup
    # didn't happen") that never reached the command. Such a boot ran nothing of the
    # command's, so it is booted once more, on fresh devices, and said so; once the
    # command has started, what happens is reported as it is.
    for attempt in (1, 2):
        rc, why, started = boot(kernel, timeout, shares, envs, cmd, multipath)
        if started or why is None or attempt == 2:
            return rc
        say(f"{why}: booting once more, on fresh devices")
    return rc


def boot(kernel: str, timeout: float, shares: list, envs: list, cmd: list,
         multipath: bool) -> tuple:
    """One boot running CMD: (its exit status or 124/125, QEMU's own exit status, whether
    the command started)."""
    d = kernel_dir(kernel)
    img = initramfs(kernel)
    with tempfile.TemporaryDirectory(prefix="ioscope-rig-") as t:
        tmp = Path(t)
        out = tmp / "out"
        out.mkdir()
        img_dir = tmp / "img"
        img_dir.mkdir()
        images(img_dir)
        script = ["#!/bin/sh", f"export IOSCOPE_RIG_IMAGES={shquote(str(img_dir))}"]
        for kv in envs:
            k, _, v = kv.partition("=")
            script.append(f"export {k}={shquote(v)}")
        script.append(f"cd {shquote(os.getcwd())} || exit 125")
        script.append("exec " + " ".join(shquote(c) for c in cmd))
        (out / "cmd.sh").write_text("\n".join(script) + "\n")
        # The backing images are shared too, so a test can change a device's bytes
        # behind the controller (corrupt data or protection information on purpose).
        mounts = [str(out), str(img_dir)] + [str(Path(s).resolve()) for s in shares]
        (out / "shares").write_text("\n".join(mounts) + "\n")
        qemu = [
            "qemu-system-x86_64", "-accel", "tcg,thread=multi,tb-size=256", "-cpu", "max",
            "-M", "q35", "-m", "2G", "-smp", "2", "-display", "none", "-monitor", "none",
            "-no-reboot", "-serial", f"file:{tmp / 'console.log'}",
            "-kernel", str(d / "vmlinuz"), "-initrd", str(img),
            "-append", "console=ttyS0 panic=-1 quiet loglevel=4 rig.out=" + str(out)
            + (" rig.multipath=Y" if multipath else ""),
            "-fsdev", "local,id=fsroot,path=/,readonly=on,security_model=none",
            "-device", "virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot",
        ]
        for i, m in enumerate(mounts):
            qemu += ["-fsdev", f"local,id=fs{i},path={m},security_model=none",
                     "-device", f"virtio-9p-pci,fsdev=fs{i},mount_tag=share{i}"]
        qemu += devices(img_dir)
        qemu_rc, started = watch(qemu, out / "stdout", timeout)
        if qemu_rc is None:
            tail(tmp / "console.log")
            copy_out(out)
            if not started:
                say(f"the guest did not start the command within {BOOT_LIMIT} s")
                return 124, f"the guest hung booting (no command within {BOOT_LIMIT} s)", False
            say(f"the guest did not finish within {timeout:.0f} s")
            return 124, None, True
        copy_out(out)
        rc = out / "rc"
        if not rc.exists():
            tail(tmp / "console.log")
            say("the guest stopped without the command's exit status")
            why = None
            if qemu_rc != 0 and not started:
                why = f"QEMU itself failed (exit {qemu_rc}) before the command started"
            return 125, why, started
        return int(rc.read_text().strip() or 125), None, started


# Seconds a boot may take to start the command: 10-40 s is usual under TCG, on a
# loaded machine too.
BOOT_LIMIT = 300


def watch(qemu: list, stdout: Path, timeout: float) -> tuple:
    """Runs QEMU until it exits, the guest has not started the command (its init
    creates the command's stdout as it starts it) within BOOT_LIMIT s, or `timeout` s
    pass: (QEMU's exit status, None when it was stopped; whether the command started)."""
    start = time.monotonic()
    started = False
    with subprocess.Popen(qemu, stdin=subprocess.DEVNULL) as p:
        while True:
            try:
                return p.wait(timeout=1), started or stdout.exists()
            except subprocess.TimeoutExpired:
                pass
            started = started or stdout.exists()
            waited = time.monotonic() - start
            if waited > timeout or (not started and waited > BOOT_LIMIT):
                p.kill()
                p.wait()
                return None, started


def copy_out(out: Path):
    for name, stream in [("stdout", sys.stdout), ("stderr", sys.stderr)]:
        p = out / name
        if p.exists():
            stream.buffer.write(p.read_bytes())
            stream.flush()


def tail(log: Path):
    if log.exists():
        lines = log.read_text(errors="replace").splitlines()[-40:]
        say("guest console (last lines):\n  " + "\n  ".join(lines))


def shquote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="verb", required=True)
    for verb in ["prepare", "status", "run"]:
        s = sub.add_parser(verb)
        s.add_argument("--kernel", choices=sorted(KERNELS), default="6.12")
        if verb == "run":
            s.add_argument("--timeout", type=float, default=900)
            s.add_argument("--share", action="append", default=[])
            s.add_argument("--env", action="append", default=[])
            s.add_argument("--multipath", action="store_true",
                           help="NVMe multipath heads on each namespace (nvme-rig.md, pitfall 2)")
            s.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.verb == "prepare":
        prepare(a.kernel)
        return 0
    if a.verb == "status":
        lack = missing(a.kernel)
        print("ready" if not lack else "missing: " + ", ".join(lack))
        return 0 if not lack else 1
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        p.error("run needs a command after --")
    return run(a.kernel, a.timeout, a.share, a.env, cmd, a.multipath)


if __name__ == "__main__":
    sys.exit(main())
