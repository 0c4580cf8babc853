#!/usr/bin/env python3
"""ioscope vs fio, side by side: one table of ratios from one invocation.

Sections (see bench/README.md):
  1. null engine IOPS, 4k randread, QD1/QD32, 1/2 jobs, full latency stats and gtod_reduce=1
  2. instructions per I/O under callgrind (difference of a --size=S and a --size=2S run)
  3. io_uring CPU per I/O on a shm-backed loop device and on a real file in /tmp
  4. latency-tracking overhead at QD1 (null engine) for each tool
  5. `ioscope peak`: NOP ring with and without latency tracking, and on the loop device
  6. data verification: a verify=crc32c write+verify job on tmpfs, MB/s (written + read
     back) and CPU per block

Runs alternate the tools (fio, ioscope, fio, ...) within each case; each figure is the
median of --reps repetitions.  Python 3 standard library only; installs and builds nothing.
"""

import argparse
import os
import shutil
import signal
import subprocess
import tempfile
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _benchlib as bl  # noqa: E402

GiB = 1 << 30


def t_io_uring_path(b):
    """fio 3.42's t/io_uring: $T_IO_URING, else ../shared/tools/fio-3.42/t-io_uring. The shipped
    binary was built for the CPU it was built on (-march=native) and dies of SIGILL on an older
    one: then t/io_uring is built from the fio 3.42 source beside it (fio-3.42-src.tar.xz,
    ./configure --disable-native; about 2 s, in the bench's temporary directory) and a note says
    so. None: neither runs here."""
    if not hasattr(b, "t_io_uring"):
        b.t_io_uring = find_t_io_uring(b)
    return b.t_io_uring


def find_t_io_uring(b):
    """[`t_io_uring_path`], found (and built) once per invocation."""
    here = os.path.dirname(os.path.abspath(__file__))
    tools = os.path.join(here, "..", "..", "shared", "tools", "fio-3.42")
    p = os.environ.get("T_IO_URING") or os.path.join(tools, "t-io_uring")
    if not os.access(p, os.X_OK):
        return None
    rc = subprocess.run([p, "-N1", "-r1", "/dev/null"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, timeout=60).returncode
    if rc != -signal.SIGILL:
        return p
    src = os.path.join(tools, "fio-3.42-src.tar.xz")
    if not os.path.exists(src):
        b.note("t/io_uring: %s dies of SIGILL on this CPU and the fio 3.42 source is not beside it" % p)
        return None
    work = tempfile.mkdtemp(prefix="t-io_uring-", dir=b.tmp)
    subprocess.run(["tar", "-xf", src, "-C", work], check=True)
    top = os.path.join(work, "fio-3.42")
    steps = [["./configure", "--disable-native"], ["make", "-j2", "t/io_uring"]]
    for cmd in steps:
        if subprocess.run(cmd, cwd=top, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            b.note("t/io_uring: %s dies of SIGILL on this CPU and building it from %s failed (%s)"
                   % (p, src, " ".join(cmd)))
            return None
    b.note("t/io_uring: the shipped binary dies of SIGILL on this CPU (built for a newer one); built from "
           "%s with ./configure --disable-native; make t/io_uring" % src)
    return os.path.join(top, "t", "io_uring")


def t_io_uring(b, path, args, runtime, f):
    """Run t/io_uring for `runtime` s on file `f` (it wants one even for NOPs, which name it;
    opened buffered, -O0, never read); its IOPS: the median of its once-a-second lines
    ("IOPS=14.53M, IOS/call=8/8")."""
    direct = [] if any(a.startswith("-O") for a in args) else ["-O0"]
    rc, out, err, wall = b.run([path] + args + direct + ["-r%d" % runtime, f], timeout=runtime + 60)
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    vals = []
    for line in (out + err).splitlines():
        if line.startswith("IOPS="):
            v = line.split("IOPS=")[1].split(",")[0].strip()
            num, unit = (v[:-1], v[-1]) if v[-1:] in "KMG" else (v, "")
            try:
                vals.append(float(num) * scale[unit])
            except ValueError:
                pass
    if rc != 0 or not vals:
        return {"rc": rc, "error": "exit %s: %s" % (rc, (err.strip() or out.strip())[-300:])}
    vals.sort()
    return {"rc": rc, "iops": vals[len(vals) // 2], "secs": vals, "wall_s": wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bl.add_common_args(ap, default_runtime=3)
    ap.add_argument("--skip", default="",
                    help="comma-separated sections to skip: null,callgrind,uring,disk,overhead,peak,verify,live; peak-callgrind: the peak section's instructions per NOP")
    args = ap.parse_args()
    reps = args.reps or (1 if args.quick else 3)
    rt = int(args.runtime or (1 if args.quick else 3))
    skip = set(s for s in args.skip.split(",") if s)
    b = bl.Bench(args, "ioscope vs fio benchmark (bench/run.py)")
    rows = []
    try:
        run_all(b, reps, rt, skip, rows)
    except KeyboardInterrupt:
        b.note("interrupted: the table is partial")
    finally:
        b.cleanup()
    rows = [[c.replace("n/a io/fio", "n/a").replace("n/a fio/io", "n/a") for c in r] for r in rows]
    body = [
        "Runs of %d s, %d repetition(s) per case, tools alternating within each case (fio, ioscope, ...); "
        "figures are medians." % (rt, reps),
        "",
    ] + bl.table(["case", "metric", "fio", "ioscope", "ratio", "goal"], rows)
    print()
    print("\n".join(body))
    if b.notes:
        print("\nNotes:\n" + "\n".join("- " + n for n in b.notes))
    path = b.write_results("run", body)
    print("\nwritten to %s" % path)


def null_args(qd, jobs, stats_off, rt, extra=()):
    a = ["--name=null", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--norandommap",
         "--iodepth=%d" % qd, "--thread", "--runtime=%d" % rt, "--time_based"]
    if jobs > 1:
        a += ["--numjobs=%d" % jobs, "--group_reporting"]
    if stats_off:
        a += ["--gtod_reduce=1"]
    return a + list(extra)


def alternate(b, label, variants, reps, rt, wrap=None, extra_timeout=120):
    """variants: list of (key, tool, args).  Runs every variant once per repetition, in order.
    Returns {key: [result, ...]}."""
    out = {k: [] for k, _, _ in variants}
    for rep in range(reps):
        for key, tool, a in variants:
            b.progress("%s: %s rep %d/%d" % (label, key, rep + 1, reps))
            res = b.job(tool, a, rt, wrap=wrap, extra_timeout=extra_timeout)
            b.record("%s [%s]" % (label, key), tool, rep + 1, res)
            out[key].append(res)
    return out


def med(results, field):
    return bl.median([r.get(field) for r in results])


def run_all(b, reps, rt, skip, rows):
    tools = b.tools()
    goal4 = "≥ 4× (IOPS/core, full stats)"

    # ---------------------------------------------------------------- 1. null engine IOPS
    if "null" not in skip:
        for qd in (1, 32):
            for jobs in (1, 2):
                for off in (False, True):
                    label = "null QD%d %d job%s %s" % (qd, jobs, "s" if jobs > 1 else "",
                                                       "gtod_reduce=1" if off else "full stats")
                    res = alternate(b, label, [(t, t, null_args(qd, jobs, off, rt)) for t in tools], reps, rt)
                    f = med(res.get("fio", []), "iops")
                    i = med(res["ioscope"], "iops")
                    fc = med(res.get("fio", []), "cpu_us_per_io")
                    ic = med(res["ioscope"], "cpu_us_per_io")
                    rows.append([label, "IOPS", bl.fmt_num(f), bl.fmt_num(i), bl.fmt_ratio(bl.ratio(i, f)) + " io/fio",
                                 "" if off else goal4])
                    rows.append([label, "IOPS per CPU-second", bl.fmt_num(1e6 / fc if fc else None),
                                 bl.fmt_num(1e6 / ic if ic else None),
                                 bl.fmt_ratio(bl.ratio(fc, ic)) + " io/fio", "" if off else goal4])

    # ---------------------------------------------------------------- 2. callgrind instructions per I/O
    if "callgrind" not in skip:
        if shutil.which("valgrind") is None:
            b.note("valgrind not found: the instructions-per-I/O rows are skipped")
        else:
            size = (128 << 20) if b.args.quick else GiB
            ios_diff = size // 4096
            for off in (False, True):
                for qd in (1, 32):
                    label = "null QD%d %s, callgrind" % (qd, "gtod_reduce=1" if off else "full stats")
                    per_io = {}
                    for tool in tools:
                        irs = []
                        for mult in (1, 2):
                            s = size * mult
                            outf = os.path.join(b.tmp, "callgrind.%s.%d.%d.%d" % (tool, qd, int(off), mult))
                            wrap = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % outf]
                            a = ["--name=cg", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=%dm" % (s >> 20),
                                 "--norandommap", "--iodepth=%d" % qd, "--thread"]
                            if off:
                                a.append("--gtod_reduce=1")
                            b.progress("%s: %s --size=%dm" % (label, tool, s >> 20))
                            res = b.job(tool, a, 0, wrap=wrap, extra_timeout=3600)
                            ir = callgrind_total(outf)
                            res["Ir"] = ir
                            if res.get("total_ios") not in (None, s // 4096):
                                b.note("%s %s --size=%dm did %s I/Os, expected %d" %
                                       (label, tool, s >> 20, res.get("total_ios"), s // 4096))
                            b.record(label + " [size %dm]" % (s >> 20), tool, 1, res)
                            irs.append(ir)
                        per_io[tool] = ((irs[1] - irs[0]) / ios_diff) if None not in irs else None
                    f, i = per_io.get("fio"), per_io.get("ioscope")
                    rows.append([label, "instructions per I/O", bl.fmt_num(f), bl.fmt_num(i),
                                 bl.fmt_ratio(bl.ratio(f, i)) + " fio/io", ""])

    # ---------------------------------------------------------------- 3. io_uring CPU per I/O
    uring_fio_best = None
    target = None
    if not ({"uring", "peak"} <= skip):
        target = b.fast_target(GiB)
    if "uring" not in skip:
        for qd in (1, 32):
            for reg in (False, True):
                label = "io_uring shm-loop QD%d%s" % (qd, " +fixedbufs+registerfiles" if reg else "")
                a = uring_args(target["path"], target["direct"], qd, reg, rt)
                res = alternate(b, label, [(t, t, a) for t in tools], reps, rt)
                add_uring_rows(rows, label, res)
                if qd == 32:
                    f = med(res.get("fio", []), "iops")
                    if f and (uring_fio_best is None or f > uring_fio_best):
                        uring_fio_best = f
    if "disk" not in skip:
        size = (256 << 20) if b.args.quick else GiB
        b.progress("writing the %d MiB real-disk test file in %s" % (size >> 20, b.args.tmpdir))
        path = b.disk_file(b.args.tmpdir, size)
        for reg in (False, True):
            label = "io_uring ext4 file in %s QD32%s" % (b.args.tmpdir, " +fixedbufs+registerfiles" if reg else "")
            a = uring_args(path, 1, 32, reg, rt)
            res = alternate(b, label, [(t, t, a) for t in tools], reps, rt)
            add_uring_rows(rows, label, res)

    # ---------------------------------------------------------------- 4. latency-tracking overhead
    if "overhead" not in skip:
        variants = []
        if b.have_fio():
            variants += [("fio on", "fio", null_args(1, 1, False, rt)),
                         ("fio off", "fio", null_args(1, 1, True, rt))]
        variants += [("ioscope on", "ioscope", null_args(1, 1, False, rt)),
                     ("ioscope off", "ioscope",
                      null_args(1, 1, False, rt, ["--disable_clat=1", "--disable_lat=1", "--disable_slat=1"]))]
        res = alternate(b, "null QD1 tracking on/off", variants, reps, rt)
        lost = {}
        for t in tools:
            on, off_ = med(res[t + " on"], "iops"), med(res[t + " off"], "iops")
            lost[t] = (100.0 * (off_ - on) / off_) if on and off_ else None
        rows.append(["null QD1, tracking on vs off (fio off = gtod_reduce=1; ioscope off = disable_clat/lat/slat)",
                     "% IOPS lost to latency tracking",
                     bl.fmt_pct(lost.get("fio")), bl.fmt_pct(lost.get("ioscope")), "", "ioscope ≤ 1%"])
        rows.append(["null QD1, tracking off (as above)", "IOPS",
                     bl.fmt_num(med(res.get("fio off", []), "iops")), bl.fmt_num(med(res["ioscope off"], "iops")),
                     bl.fmt_ratio(bl.ratio(med(res["ioscope off"], "iops"), med(res.get("fio off", []), "iops")))
                     + " io/fio", ""])

    # ---------------------------------------------------------------- 5. ioscope peak
    if "peak" not in skip:
        out = peak_nops(b, reps, rt, rows, skip)
        with_lat, without = med(out["lat"], "iops"), med(out["nolat"], "iops")
        rows.append(["ioscope peak --nop --depth=32 --batch=8", "IOPS with latency tracking", "", bl.fmt_num(with_lat),
                     "", ""])
        rows.append(["ioscope peak --nop --depth=32 --batch=8 --no-lat", "IOPS without latency tracking", "",
                     bl.fmt_num(without), "", ""])
        lost = (100.0 * (without - with_lat) / without) if with_lat and without else None
        rows.append(["ioscope peak NOP", "% IOPS lost to latency tracking at peak (two TSC reads and a "
                     "record per batch of 8 NOPs)", "", bl.fmt_pct(lost), "", "≤ 1%"])
        pargs = ["--depth=32", "--batch=8", "--fixedbufs", "--registerfiles"] + target["peak_args"] + [target["path"]]
        tio = t_io_uring_path(b)
        if tio:
            # Reads, where t/io_uring's -t1 does track (a clock index per batch): both
            # tools track latency, both read the TSC twice a batch.
            direct = "-O0" if "--buffered" in pargs else "-O1"
            targs = ["-d32", "-s8", "-c8", "-t1", "-p0", "-B1", "-F1", direct]
            got = run_pairs(b, tio, [("tracked", targs, pargs)], reps, rt, target["path"])
            pk = got["tracked"][1]
            pair_rows(b, rows, got, "peak --depth=32 --batch=8 --fixedbufs --registerfiles shm-loop",
                      "t/io_uring -d32 -s8 -c8 -p0 -B1 -F1 %s" % direct, "4 KiB random reads, t/io_uring tracking too")
        else:
            pk = []
            for rep in range(reps):
                b.progress("peak on %s rep %d/%d" % (target["path"], rep + 1, reps))
                res = b.peak(pargs, rt)
                b.record("peak shm-loop", "ioscope", rep + 1, res)
                pk.append(res)
        pi = med(pk, "iops")
        rows.append(["ioscope peak %s on shm-loop" % " ".join(pargs[:-1]), "IOPS (fio column: best fio io_uring QD32 "
                     "on the same device, section 3)", bl.fmt_num(uring_fio_best), bl.fmt_num(pi),
                     bl.fmt_ratio(bl.ratio(pi, uring_fio_best)) + " io/fio", ""])
        rows.append(["ioscope peak on shm-loop", "CPU µs per I/O", "", "%.2f" % med(pk, "cpu_us_per_io")
                     if med(pk, "cpu_us_per_io") else "n/a", "", ""])

    # ---------------------------------------------------------------- 6. data verification
    if "verify" not in skip:
        size = (256 << 20) if b.args.quick else GiB
        path = os.path.join("/dev/shm", "ioscope-bench-verify-%d" % os.getpid())
        for bs in ("4k", "128k"):
            label = "verify=crc32c write+verify, bs=%s, %d MiB on tmpfs" % (bs, size >> 20)
            a = ["--name=verify", "--filename=%s" % path, "--size=%d" % size, "--bs=%s" % bs, "--rw=write",
                 "--verify=crc32c", "--ioengine=psync", "--thread"]
            try:
                res = alternate(b, label, [(t, t, a) for t in tools], reps, rt, extra_timeout=600)
            finally:
                if os.path.exists(path):
                    os.remove(path)
            mbs = {t: med(res.get(t, []), "verify_mb_s") for t in tools}
            cpu = {t: med(res.get(t, []), "cpu_us_per_block") for t in tools}
            rows.append([label, "MB/s (written + read back, over the job's runtime)", bl.fmt_num(mbs.get("fio")),
                         bl.fmt_num(mbs.get("ioscope")), bl.fmt_ratio(bl.ratio(mbs.get("ioscope"), mbs.get("fio")))
                         + " io/fio", "≥ 1×"])
            rows.append([label, "CPU µs per block (write + verify)", "%.2f" % cpu["fio"] if cpu.get("fio") else "n/a",
                         "%.2f" % cpu["ioscope"] if cpu.get("ioscope") else "n/a",
                         bl.fmt_ratio(bl.ratio(cpu.get("ioscope"), cpu.get("fio"))) + " io/fio", ""])

    # ---------------------------------------------------------------- 7. results while running
    if "live" not in skip:
        live_monitor_rows(b, tools, reps, rt, rows)

    if target:
        b.notes.append("fast target: " + target["desc"])


def live_monitor_rows(b, tools, reps, rt, rows):
    """The cost of ioscope's live stream and metrics endpoint at 1 s intervals on the null engine, beside
    fio's nearest (--status-interval=1: a full interim report every second)."""
    live = ["--live=%s" % os.path.join(b.tmp, "live.jsonl"), "--live-interval=1s", "--metrics=127.0.0.1:0"]
    variants = []
    if b.have_fio():
        variants += [("fio plain", "fio", null_args(1, 1, False, rt)),
                     ("fio status-interval", "fio", null_args(1, 1, False, rt, ["--status-interval=1"]))]
    variants += [("ioscope plain", "ioscope", null_args(1, 1, False, rt)),
                 ("ioscope live", "ioscope", null_args(1, 1, False, rt, live))]
    res = alternate(b, "null QD1 results while running", variants, reps, rt)
    lost = {}
    for t in tools:
        key = "status-interval" if t == "fio" else "live"
        plain, on = med(res[t + " plain"], "iops"), med(res["%s %s" % (t, key)], "iops")
        lost[t] = (100.0 * (plain - on) / plain) if plain and on else None
    rows.append(["null QD1 full stats; fio: --status-interval=1, ioscope: --live + --metrics at 1 s",
                 "% IOPS lost to results while running", bl.fmt_pct(lost.get("fio")),
                 bl.fmt_pct(lost.get("ioscope")), "", "ioscope: within noise"])


def uring_args(path, direct, qd, reg, rt):
    a = ["--name=uring", "--filename=%s" % path, "--ioengine=io_uring", "--direct=%d" % direct, "--rw=randread",
         "--bs=4k", "--iodepth=%d" % qd, "--thread", "--runtime=%d" % rt, "--time_based"]
    if reg:
        a += ["--registerfiles=1", "--fixedbufs=1"]
    return a


def add_uring_rows(rows, label, res):
    f, i = med(res.get("fio", []), "iops"), med(res["ioscope"], "iops")
    fc, ic = med(res.get("fio", []), "cpu_us_per_io"), med(res["ioscope"], "cpu_us_per_io")
    rows.append([label, "IOPS", bl.fmt_num(f), bl.fmt_num(i), bl.fmt_ratio(bl.ratio(i, f)) + " io/fio", ""])
    rows.append([label, "CPU µs per I/O (at the IOPS above)", "%.2f" % fc if fc else "n/a",
                 "%.2f" % ic if ic else "n/a", bl.fmt_ratio(bl.ratio(ic, fc)) + " io/fio", "≤ 0.7×"])


def peak_nops(b, reps, rt, rows, skip):
    """`peak --nop` with and without latency tracking, and against fio 3.42's t/io_uring -N1
    on the same NOPs: the rows, and each case's results.

    t/io_uring's NOPs name a file and a buffer, both registered (-F1 -B1, its defaults), and
    the kernel looks both up; `peak --nop FILE --registerfiles --fixedbufs` issues the same
    NOPs, so the two do the same kernel work and the ratio is the programs' own. Its -t1
    asks for latency tracking, but its NOPs carry no clock index (init_io returns before
    setting user_data), so it records none: its percentiles print as 0, and it reads the
    TSC once per batch where tracking reads it twice. So two pairs: ioscope tracking vs
    t/io_uring -t1 (the issue's goal), and both without tracking (-t0, --no-lat: like for
    like)."""
    out = {"lat": [], "nolat": []}
    base = ["--nop", "--depth=32", "--batch=8"]
    tio = t_io_uring_path(b)
    nopfile = "/dev/shm/ioscope-bench-nop-%d" % os.getpid()
    with open(nopfile, "wb") as h:
        h.truncate(GiB)
    like = base + ["--registerfiles", "--fixedbufs", nopfile]
    t_args = ["-N1", "-d32", "-s8", "-c8"]
    pairs = [("tracked", t_args + ["-t1"], like), ("untracked", t_args + ["-t0"], like + ["--no-lat"])]
    try:
        for rep in range(reps):
            b.progress("peak nop lat rep %d/%d" % (rep + 1, reps))
            res = b.peak(base, rt)
            b.record("peak --nop --depth=32 --batch=8 [lat]", "ioscope", rep + 1, res)
            out["lat"].append(res)
            b.progress("peak nop nolat rep %d/%d" % (rep + 1, reps))
            res = b.peak(base + ["--no-lat"], rt)
            b.record("peak --nop --depth=32 --batch=8 [nolat]", "ioscope", rep + 1, res)
            out["nolat"].append(res)
        got = run_pairs(b, tio, pairs, reps, rt, nopfile) if tio else {}
        if tio and "peak-callgrind" not in skip and shutil.which("valgrind"):
            ir = peak_ir_per_nop(b, like)
            t_ir = t_io_uring_ir_per_nop(b, tio, t_args + ["-t1"], nopfile)
            rows.append(["ioscope " + " ".join(["peak"] + like[:-1]) + " FILE vs t/io_uring " + " ".join(t_args)
                         + " -t1", "user-space instructions per NOP under callgrind (difference of a 1 s and a "
                         "2-3 s run: start-up left out; fio column: t/io_uring, counting the NOPs its "
                         "io_uring_enter calls submitted)", "%.1f" % t_ir if t_ir else "n/a",
                         "%.1f" % ir if ir else "n/a", bl.fmt_ratio(bl.ratio(t_ir, ir)) + " t/io" if ir and t_ir
                         else "", ""])
    finally:
        os.unlink(nopfile)
    if not tio:
        b.note("t/io_uring: not found (../shared/tools/fio-3.42/t-io_uring or $T_IO_URING): its rows are left out")
        return out
    b.note("t/io_uring -N1 -t1 records no latency for NOPs (they carry no clock index; its percentiles print "
           "as 0) and reads the TSC once per batch; ioscope's tracking reads it twice (before and after each "
           "submission call) and records every NOP")
    pair_rows(b, rows, got, "peak --nop --depth=32 --batch=8 --registerfiles --fixedbufs FILE",
              "t/io_uring -N1 -d32 -s8 -c8", "the same NOPs")
    return out


def run_pairs(b, tio, pairs, reps, rt, target):
    """Runs each (name, t/io_uring args, peak args) pair `reps` times on `target`, back to back,
    in turn t/io_uring first and ioscope first, so that a drift of the machine's load falls on
    both alike: {name: (t/io_uring results, ioscope results)}."""
    got = {name: ([], []) for name, _, _ in pairs}
    for rep in range(reps):
        for name, targs, pargs in pairs:
            tu, io = got[name]
            for which in (("t", "i") if rep % 2 == 0 else ("i", "t")):
                b.progress("%s pair %s rep %d/%d" % (name, which, rep + 1, reps))
                if which == "t":
                    res = t_io_uring(b, tio, targs, rt, target)
                    b.record("t/io_uring " + " ".join(targs), "t/io_uring", rep + 1, res)
                    tu.append(res)
                else:
                    res = b.peak(pargs, rt)
                    b.record("peak " + " ".join(pargs[:-1]) + " " + name, "ioscope", rep + 1, res)
                    io.append(res)
    return got


def pair_rows(b, rows, got, peak_label, t_label, what):
    """One row per pair of [`run_pairs`]: each tool's median of every once-a-second IOPS figure
    of every repetition, and their ratio; the ratios repetition by repetition as a note."""
    for name, (tu, io) in got.items():
        t_iops, i_iops = pooled(tu), pooled(io)
        per = sorted(r for r in (bl.ratio(x.get("iops_sec_median"), y.get("iops")) for x, y in zip(io, tu))
                     if r is not None)
        b.note("%s, %s: ioscope / t/io_uring repetition by repetition (medians of each run's once-a-second "
               "figures): %s" % (peak_label, name, ", ".join("%.2f" % r for r in per)))
        flags = {"tracked": ("", " -t1", "ioscope's latency tracking on"),
                 "untracked": (" --no-lat", " -t0", "no latency tracking in either")}[name]
        rows.append(["%s%s vs %s%s" % (peak_label, flags[0], t_label, flags[1]),
                     "IOPS (median of every once-a-second figure of every repetition), %s, %s (fio column: "
                     "t/io_uring 3.42)" % (flags[2], what), bl.fmt_num(t_iops), bl.fmt_num(i_iops),
                     bl.fmt_ratio(bl.ratio(i_iops, t_iops)) + " io/t", "≥ 1.0"])


def pooled(results):
    """The median of every once-a-second IOPS figure of `results`."""
    vals = sorted(v for r in results for v in (r.get("secs") or []))
    return vals[len(vals) // 2] if vals else None


def peak_ir_per_nop(b, args):
    """Instructions per NOP of `ioscope peak ARGS` under callgrind: the difference of a 1 s
    and a 3 s run, so that start-up and the report cancel out."""
    got = []
    for secs in (1, 3):
        outf = os.path.join(b.tmp, "callgrind.peak.%d" % secs)
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % outf, b.ioscope, "peak"] + list(args) \
            + ["--runtime=%d" % secs, "--json"]
        b.progress("callgrind peak %s, %d s" % (" ".join(args[:-1]), secs))
        rc, out, err, wall = b.run(cmd, timeout=600, cwd=b.tmp)
        data = bl.parse_json(out)
        ir = callgrind_total(outf)
        if rc != 0 or not data or not ir:
            return None
        got.append((ir, data.get("ios") or 0))
    (ir1, n1), (ir3, n3) = got
    return (ir3 - ir1) / (n3 - n1) if n3 > n1 else None


def t_io_uring_ir_per_nop(b, tio, args, target):
    """Instructions per NOP of t/io_uring ARGS under callgrind: the difference of a 1 s and a
    2 s run. It prints no count of its I/Os, and its once-a-second figures mean little under
    valgrind, so its NOPs are counted from valgrind's trace of its system calls (read as it
    comes, millions of lines): the sum of what its io_uring_enter calls returned, the SQEs
    each submitted."""
    got = []
    for secs in (1, 2):
        outf = os.path.join(b.tmp, "callgrind.tio.%d" % secs)
        cmd = ["valgrind", "--tool=callgrind", "--trace-syscalls=yes", "--callgrind-out-file=%s" % outf,
               tio] + list(args) + ["-O0", "-r%d" % secs, target]
        b.progress("callgrind t/io_uring %s, %d s" % (" ".join(args), secs))
        nops = 0
        with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              errors="replace", cwd=b.tmp) as p:
            for line in p.stderr:
                if "sys_io_uring_enter" in line and "Success(0x" in line:
                    try:
                        nops += int(line.rsplit("Success(0x", 1)[1].split(")")[0], 16)
                    except ValueError:
                        pass
            rc = p.wait()
        ir = callgrind_total(outf)
        if rc != 0 or not ir:
            return None
        got.append((ir, nops))
    (ir1, n1), (ir2, n2) = got
    return (ir2 - ir1) / (n2 - n1) if n2 > n1 else None


def callgrind_total(path):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


if __name__ == "__main__":
    main()
