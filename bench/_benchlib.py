"""Shared helpers for the ioscope-vs-fio benchmark scripts (Python 3 standard library only).

Nothing here installs or builds anything.  Every external command that is run is recorded
verbatim so that the results file can list exactly what was measured.
"""

import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")


def utc_stamp():
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def median(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return statistics.median(vals)


def spread(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return ""
    return "%s..%s" % (fmt_num(min(vals)), fmt_num(max(vals)))


def fmt_num(v, digits=3):
    """Compact human form: 6.52M, 305k, 2158, 2.61."""
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a >= 1e9:
        return "%.*gG" % (digits, v / 1e9)
    if a >= 1e6:
        return "%.*gM" % (digits, v / 1e6)
    if a >= 1e4:
        return "%.*gk" % (digits, v / 1e3)
    if a >= 100:
        return "%d" % round(v)
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_ratio(v):
    return "n/a" if v is None else "%.2f×" % v


def fmt_pct(v):
    return "n/a" if v is None else "%+.1f%%" % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


class Bench:
    """Holds the tools, the record of commands, temporary resources and the raw results."""

    def __init__(self, args, title):
        self.args = args
        self.title = title
        self.started = utc_stamp()
        self.load_start = read_text("/proc/loadavg").strip()
        self.commands = []  # (cwd or None, command string), in order
        self.notes = []
        self.raw = []  # (label, tool, rep, dict)
        self.loops = []
        self.paths = []  # files and directories to remove
        self.ioscope = os.path.abspath(args.ioscope)
        if not (os.path.isfile(self.ioscope) and os.access(self.ioscope, os.X_OK)):
            sys.exit(
                "ioscope binary not found at %s: build it first with "
                "`cargo build --release -p ioscope` (this script builds nothing), "
                "or pass --ioscope PATH" % self.ioscope
            )
        self.fio = None
        self.fio_version = None
        if not args.no_fio:
            self.fio = shutil.which("fio")
            if self.fio:
                try:
                    self.fio_version = subprocess.run(
                        [self.fio, "--version"], capture_output=True, text=True, timeout=30
                    ).stdout.strip()
                except (OSError, subprocess.SubprocessError):
                    self.fio = None
        if self.fio is None:
            self.note(
                "fio was not found on PATH (or --no-fio was given): fio columns and ratios are "
                "skipped. Install it yourself (e.g. `apt-get install -y fio`) to compare; this "
                "script installs nothing."
            )
        elif self.fio_version != "fio-3.33":
            self.note("fio is %s, not the fio-3.33 the baseline was measured with." % self.fio_version)
        self.tmp = tempfile.mkdtemp(prefix="ioscope-bench-", dir=args.tmpdir)
        self.paths.append(self.tmp)
        self._old_handlers = {}
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)

    # ----------------------------------------------------------------- housekeeping
    def _on_signal(self, signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)

    def note(self, text):
        self.notes.append(text)
        print("note: " + text, file=sys.stderr)

    def cleanup(self):
        for loop in reversed(self.loops):
            r = subprocess.run(["losetup", "-d", loop], capture_output=True, text=True)
            if r.returncode != 0:
                print("warning: could not detach %s: %s" % (loop, r.stderr.strip()), file=sys.stderr)
        self.loops = []
        for p in reversed(self.paths):
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                elif os.path.lexists(p):
                    os.unlink(p)
            except OSError as e:
                print("warning: could not remove %s: %s" % (p, e), file=sys.stderr)
        self.paths = []

    def have_fio(self):
        return self.fio is not None

    def tools(self):
        """Tools in the order they alternate: fio first, then ioscope."""
        return (["fio"] if self.fio else []) + ["ioscope"]

    def binary(self, tool):
        return self.fio if tool == "fio" else self.ioscope

    def progress(self, text):
        print("[%s] %s" % (time.strftime("%H:%M:%S"), text), file=sys.stderr, flush=True)

    # ----------------------------------------------------------------- running
    def run(self, cmd, timeout, cwd=None, env=None):
        """Run cmd, record it, return (rc, stdout, stderr, wall seconds)."""
        self.commands.append((cwd, shlex.join(cmd)))
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = -999
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")) + "\n[timed out]"
        return rc, out, err, time.monotonic() - t0

    def job(self, tool, job_args, runtime, cwd=None, wrap=None, extra_timeout=120):
        """Run one fio-style job with JSON output and return its metrics dict (or an error dict)."""
        cmd = [self.binary(tool)] + list(job_args) + ["--output-format=json"]
        if wrap:
            cmd = list(wrap) + cmd
        rc, out, err, wall = self.run(cmd, timeout=runtime + extra_timeout, cwd=cwd or self.tmp)
        res = {"rc": rc, "stderr": err, "wall_s": wall}
        data = parse_json(out)
        if rc != 0 or data is None:
            res["error"] = "exit %s: %s" % (rc, (err.strip() or out.strip())[-300:])
            print("  %s failed: %s" % (tool, res["error"]), file=sys.stderr)
            return res
        res.update(job_metrics(data))
        return res

    def peak(self, peak_args, runtime, extra_timeout=120):
        cmd = [self.ioscope, "peak"] + list(peak_args) + ["--runtime=%s" % fmt_secs(runtime), "--json"]
        rc, out, err, wall = self.run(cmd, timeout=runtime + extra_timeout, cwd=self.tmp)
        data = parse_json(out)
        res = {"rc": rc, "stderr": err, "wall_s": wall}
        if rc != 0 or data is None:
            res["error"] = "exit %s: %s" % (rc, (err.strip() or out.strip())[-300:])
            print("  peak failed: %s" % res["error"], file=sys.stderr)
            return res
        ios = data.get("ios") or 0
        cpu = (data.get("usr_cpu_s") or 0) + (data.get("sys_cpu_s") or 0)
        secs = sorted(data.get("iops_per_second") or [])
        res.update(
            iops=data.get("iops"),
            # The median of the once-a-second figures: t/io_uring's statistic.
            iops_sec_median=secs[len(secs) // 2] if secs else None,
            secs=secs,
            total_ios=ios,
            cpu_us_per_io=(cpu * 1e6 / ios) if ios else None,
            p9999=(data.get("clat_ns") or {}).get("percentile", {}).get("99.990000"),
        )
        return res

    def record(self, label, tool, rep, res):
        self.raw.append((label, tool, rep, {k: v for k, v in res.items() if k not in ("stderr", "prios")}))

    # ----------------------------------------------------------------- targets
    def fast_target(self, size_bytes):
        """A fast private block device: a loop device with direct I/O over a file in /dev/shm.

        Returns dict(path, direct, desc, peak_args).  Falls back to the /dev/shm file itself
        with buffered I/O when not root or losetup is unavailable."""
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else self.tmp
        backing = os.path.join(shm, "ioscope-bench-%d.img" % os.getpid())
        self.paths.append(backing)
        fill_file(backing, size_bytes)
        losetup = shutil.which("losetup")
        if os.geteuid() == 0 and losetup:
            cmd = [losetup, "--find", "--show", "--direct-io=on", backing]
            self.commands.append((None, shlex.join(cmd)))
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                loop = r.stdout.strip()
                self.loops.append(loop)
                dio = read_text("/sys/block/%s/loop/dio" % os.path.basename(loop)).strip()
                if dio != "1":
                    self.note("%s did not get direct I/O (loop/dio=%r): it goes through the page cache" % (loop, dio))
                return {
                    "path": loop,
                    "direct": 1,
                    "desc": "loop device %s over %s (losetup --direct-io=on)" % (loop, backing),
                    "peak_args": [],
                }
            self.note("losetup failed (%s); using the /dev/shm file with --direct=0 instead" % r.stderr.strip())
        else:
            self.note("not root or no losetup: using a /dev/shm file with --direct=0 instead of a loop device")
        return {
            "path": backing,
            "direct": 0,
            "desc": "file %s, buffered (--direct=0)" % backing,
            "peak_args": ["--buffered"],
        }

    def disk_file(self, directory, size_bytes):
        path = os.path.join(directory, "ioscope-bench-%d.dat" % os.getpid())
        self.paths.append(path)
        fill_file(path, size_bytes, sync=True)
        return path

    # ----------------------------------------------------------------- output
    def header_lines(self):
        git = ""
        try:
            head = subprocess.run(["git", "-C", REPO_DIR, "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True, timeout=10).stdout.strip()
            dirty = subprocess.run(["git", "-C", REPO_DIR, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            git = head + (" (work tree has uncommitted changes)" if dirty else "")
        except (OSError, subprocess.SubprocessError):
            pass
        ver = subprocess.run([self.ioscope, "--version"], capture_output=True, text=True).stdout.strip()
        cpu = ""
        for line in read_text("/proc/cpuinfo").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        return [
            "- started (UTC): %s" % self.started,
            "- invocation: `%s`" % shlex.join([sys.executable] + sys.argv),
            "- ioscope: %s (%s), binary built %s, sha256 %s; workspace HEAD at run time: %s"
            % (self.ioscope, ver or "?", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(self.ioscope))),
               sha256_file(self.ioscope)[:16], git or "?"),
            "- fio: %s" % ("%s (%s)" % (self.fio, self.fio_version) if self.fio else "absent"),
            "- machine: %s, %d CPUs (%s), kernel %s" % (platform.node(), os.cpu_count() or 0, cpu, platform.release()),
            "- /proc/loadavg at start: %s; at end: %s (the machine is shared: a high load means "
            "other work competed with the runs)" % (self.load_start, read_text("/proc/loadavg").strip()),
            "- finished (UTC): %s" % utc_stamp(),
        ]

    def write_results(self, prefix, body_lines):
        os.makedirs(RESULTS_DIR, exist_ok=True)
        path = os.path.join(RESULTS_DIR, "%s-%s.md" % (prefix, self.started))
        lines = ["# %s — %s" % (self.title, self.started), ""]
        lines += self.header_lines() + [""]
        lines += body_lines
        if self.notes:
            lines += ["", "## Notes", ""] + ["- " + n for n in self.notes]
        lines += ["", "## Raw results (every repetition)", "", "| case | tool | rep | values |", "|---|---|---|---|"]
        for label, tool, rep, d in self.raw:
            vals = ", ".join("%s=%s" % (k, fmt_raw(v)) for k, v in d.items() if k not in ("rc",))
            lines.append("| %s | %s | %s | %s |" % (label, tool, rep, vals.replace("|", "/")))
        lines += ["", "## Exact commands, in the order they ran", "", "```"]
        for cwd, c in self.commands:
            lines.append(("cd %s && %s" % (shlex.quote(cwd), c)) if cwd else c)
        lines += ["```", ""]
        with open(path, "w") as f:
            f.write("\n".join(lines))
        return path


def fmt_raw(v):
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


def fmt_secs(s):
    return ("%g" % s)


def sha256_file(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def fill_file(path, size_bytes, sync=False):
    """Write real (non-zero) data so that reads hit allocated blocks, not holes."""
    chunk = (os.urandom(64) * (1 << 14))  # 1 MiB pattern
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        left = size_bytes
        while left > 0:
            n = os.write(fd, chunk[: min(left, len(chunk))])
            left -= n
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def parse_json(text):
    """fio may print notes before the JSON object: parse from the first line that opens it."""
    if not text:
        return None
    idx = text.find("\n{")
    start = 0 if text.startswith("{") else (idx + 1 if idx >= 0 else -1)
    if start < 0:
        return None
    # With --status-interval fio prints an interim document each interval: the final
    # report is the last.
    dec, rest, last = json.JSONDecoder(), text[start:], None
    while rest.strip():
        try:
            last, end = dec.raw_decode(rest)
        except ValueError:
            break
        nxt = rest.find("\n{", end)
        if nxt < 0:
            break
        rest = rest[nxt + 1:]
    return last


def job_metrics(data):
    j = data["jobs"][0]
    rd = j["read"]
    total = rd.get("total_ios") or 0
    rt_ms = j.get("job_runtime") or rd.get("runtime") or 0
    usr = j.get("usr_cpu") or 0.0
    sys_ = j.get("sys_cpu") or 0.0
    cpu_us = (usr + sys_) / 100.0 * rt_ms * 1000.0
    pct = (rd.get("clat_ns") or {}).get("percentile") or {}
    prios = {}
    for p in rd.get("prios") or []:
        key = "class %s prio %s" % (p.get("prioclass"), p.get("prio"))
        pp = (p.get("clat_ns") or {}).get("percentile") or {}
        prios[key] = {
            "N": (p.get("clat_ns") or {}).get("N"),
            "p99.9": pp.get("99.900000"),
            "p99.99": pp.get("99.990000"),
        }
    wr = j.get("write") or {}
    moved = (rd.get("io_bytes") or 0) + (wr.get("io_bytes") or 0)
    written = wr.get("total_ios") or 0
    return {
        "iops": rd.get("iops"),
        # Write+verify jobs: bytes written and read back over the job's runtime, and CPU
        # per block written (its write and its verification).
        "verify_mb_s": (moved / (rt_ms / 1000.0) / 1e6) if rt_ms and written else None,
        "cpu_us_per_block": (cpu_us / written) if written else None,
        "total_ios": total,
        "p9999": pct.get("99.990000"),
        "p999": pct.get("99.900000"),
        "clat_N": (rd.get("clat_ns") or {}).get("N"),
        "usr_cpu": usr,
        "sys_cpu": sys_,
        "job_runtime_ms": rt_ms,
        "cpu_us_per_io": (cpu_us / total) if total else None,
        "prios": prios,
    }


def count_lines(path):
    n = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                break
            n += b.count(b"\n")
    return n


DROPPED_RE = re.compile(r"(\d+) log entries were dropped")


def parse_dropped(stderr):
    total = 0
    found = False
    for m in DROPPED_RE.finditer(stderr or ""):
        total += int(m.group(1))
        found = True
    return total if found else 0


MAXRSS_RE = re.compile(r"Maximum resident set size \(kbytes\):\s*(\d+)")


def parse_maxrss_kb(stderr):
    m = MAXRSS_RE.search(stderr or "")
    return int(m.group(1)) if m else None


def add_common_args(ap, default_runtime):
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: every run shortened (1 s), one repetition, small sizes")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per case (default 3; --quick: 1)")
    ap.add_argument("--runtime", type=float, default=None,
                    help="seconds per timed run (default %g; --quick: shorter)" % default_runtime)
    ap.add_argument("--ioscope", default=os.path.join(REPO_DIR, "target", "release", "ioscope"),
                    help="ioscope binary (default: target/release/ioscope of this workspace)")
    ap.add_argument("--no-fio", action="store_true", help="do not run fio even when installed")
    ap.add_argument("--tmpdir", default="/tmp",
                    help="directory for temporary files, logs and the real-disk test file (default /tmp)")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return out
