#!/usr/bin/env python3
"""Per-I/O latency logging (write_lat_log) benchmark: ioscope vs fio, side by side.

Sections (see bench/README.md):
  A. null engine, 4k randread, QD1 and QD32: IOPS and clat p99.99 without and with
     --write_lat_log (every I/O), and the fraction of I/Os that reached the log files
  B. shm-backed loop device, io_uring QD32, --cmdprio_percentage=30 --log_prio=1:
     per-priority clat p99.9/p99.99 with and without logging (fio also with --log_entries=1048576)
  C. peak RSS of a logged null-engine run at --rate_iops=500000, 2 s and --rss-runtime long

Runs alternate the tools (fio, ioscope, ...); figures are medians of --reps repetitions.
Python 3 standard library only; installs and builds nothing.
"""

import os
import sys

# This file is called logging.py: keep it from shadowing the standard library's logging
# module, and load the shared helpers by path.
sys.dont_write_bytecode = True  # leave no __pycache__ in bench/
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import glob  # noqa: E402
import importlib.util  # noqa: E402
import shutil  # noqa: E402

_spec = importlib.util.spec_from_file_location("_benchlib", os.path.join(_HERE, "_benchlib.py"))
bl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bl)

GiB = 1 << 30
LOG_ENTRIES = 1048576


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bl.add_common_args(ap, default_runtime=10)
    ap.add_argument("--rss-runtime", type=int, default=None,
                    help="length of the long RSS run in seconds (default 60; --quick: 10); the short one is 2 s")
    ap.add_argument("--rate-iops", type=int, default=500000, help="--rate_iops of the RSS runs (default 500000)")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: null,prio,rss")
    args = ap.parse_args()
    reps = args.reps or (1 if args.quick else 3)
    rt = int(args.runtime or (2 if args.quick else 10))
    rss_rt = int(args.rss_runtime or (10 if args.quick else 60))
    skip = set(s for s in args.skip.split(",") if s)
    b = bl.Bench(args, "ioscope vs fio per-I/O logging benchmark (bench/logging.py)")
    body = ["Runs of %d s (RSS runs %d s and %d s), %d repetition(s) per case, tools alternating within each "
            "case (fio, ioscope, ...); figures are medians. Log files are written under %s."
            % (rt, rss_rt, rss_rt // 2, reps, b.tmp), ""]
    try:
        if "null" not in skip:
            body += section_null(b, reps, rt)
        if "prio" not in skip:
            body += section_prio(b, reps, rt)
        if "rss" not in skip:
            body += section_rss(b, reps, rss_rt)
    except KeyboardInterrupt:
        b.note("interrupted: the results are partial")
    finally:
        b.cleanup()
    print()
    print("\n".join(body))
    if b.notes:
        print("\nNotes:\n" + "\n".join("- " + n for n in b.notes))
    path = b.write_results("logging", body)
    print("\nwritten to %s" % path)


def logged_run(b, tool, job_args, rt, log, wrap=None, extra_timeout=600):
    """Run one job in a fresh directory (logs with --write_lat_log=L when log is true), count the
    lines of its log files, remove them, and return the metrics."""
    d = os.path.join(b.tmp, "run-%d" % len(b.commands))
    os.makedirs(d)
    a = list(job_args) + (["--write_lat_log=L"] if log else [])
    res = b.job(tool, a, rt, cwd=d, wrap=wrap, extra_timeout=extra_timeout)
    if log:
        files = sorted(glob.glob(os.path.join(d, "L_*.log")))
        counts = {os.path.basename(f): bl.count_lines(f) for f in files}
        res["log_files"] = len(files)
        for name, n in counts.items():
            res["lines " + name] = n
        # Every completed I/O has a clat (and lat) entry; synchronous engines such as null
        # have no submission latency, so both tools leave the slat log empty there.
        res["log_lines_clat"] = sum(n for name, n in counts.items() if name.startswith("L_clat"))
        res["log_bytes"] = sum(os.path.getsize(f) for f in files)
        ios = res.get("total_ios") or 0
        res["logged_frac_files"] = (res["log_lines_clat"] / float(ios)) if ios else None
        if tool == "ioscope":
            dropped = bl.parse_dropped(res.get("stderr"))
            res["dropped"] = dropped
            # ioscope counts one dropped entry per I/O (one compact entry per I/O fans out to the
            # lat, slat and clat logs): check that against the files before using it.
            res["logged_frac_stderr"] = (1.0 - dropped / ios) if ios else None
            res["logged_frac_3x_formula"] = (1.0 - dropped / (3.0 * ios)) if ios else None
    shutil.rmtree(d, ignore_errors=True)
    res["maxrss_kb"] = bl.parse_maxrss_kb(res.get("stderr"))
    return res


def null_args(qd, rt, extra=()):
    return ["--name=null", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--norandommap",
            "--iodepth=%d" % qd, "--thread", "--runtime=%d" % rt, "--time_based"] + list(extra)


def med(rs, field):
    return bl.median([r.get(field) for r in rs])


def pct_change(new, old):
    if new is None or old is None or old == 0:
        return None
    return 100.0 * (new - old) / old


# ------------------------------------------------------------------------------------ A
def section_null(b, reps, rt):
    tools = b.tools()
    rows = []
    for qd in (1, 32):
        res = {}
        for rep in range(reps):
            for log in (False, True):
                for t in tools:
                    key = (t, log)
                    b.progress("null QD%d %s %s rep %d/%d" % (qd, t, "logged" if log else "unlogged", rep + 1, reps))
                    r = logged_run(b, t, null_args(qd, rt), rt, log)
                    b.record("null QD%d %s" % (qd, "write_lat_log" if log else "no log"), t, rep + 1, r)
                    res.setdefault(key, []).append(r)
        for t in tools:
            un, lo = res[(t, False)], res[(t, True)]
            iu, il = med(un, "iops"), med(lo, "iops")
            pu, pl = med(un, "p9999"), med(lo, "p9999")
            frac_files = med(lo, "logged_frac_files")
            if t == "ioscope":
                frac = med(lo, "logged_frac_stderr")
                dropped = med(lo, "dropped")
                consistent = all(
                    r.get("total_ios") is not None and r.get("dropped") is not None
                    and r.get("log_lines_clat") is not None
                    and abs(r["total_ios"] - r["dropped"] - r["log_lines_clat"]) <= max(2, r["total_ios"] // 10000)
                    for r in lo if "error" not in r)
                logged = "%.1f%% (stderr: %s dropped%s; files: %s)" % (
                    100 * frac if frac is not None else float("nan"), bl.fmt_num(dropped),
                    "" if consistent else ", does NOT match the files",
                    "n/a" if frac_files is None else "%.1f%%" % (100 * frac_files))
            else:
                logged = "n/a" if frac_files is None else "%.1f%% (clat log lines / I/Os)" % (100 * frac_files)
            rows.append(["QD%d" % qd, t, bl.fmt_num(iu), bl.fmt_num(il), bl.fmt_ratio(bl.ratio(il, iu)),
                         bl.fmt_num(pu), bl.fmt_num(pl), bl.fmt_pct(pct_change(pl, pu)), logged])
    return ["## A. Null engine, 4k randread, every I/O logged (--write_lat_log=L)", "",
            "Goal: logged IOPS ≥ 95% of unlogged, p99.99 within 2%, every I/O logged.", ""] + bl.table(
        ["QD", "tool", "IOPS unlogged", "IOPS logged", "logged/unlogged", "clat p99.99 unlogged (ns)",
         "clat p99.99 logged (ns)", "p99.99 change", "I/Os that reached the logs"], rows) + [
        "", "ioscope's \"N log entries were dropped\" counts one entry per I/O (each entry fans out to the lat, "
        "slat and clat logs), so its logged fraction is 1 − dropped/total_ios; the script checks that "
        "dropped + clat log lines = total_ios against the files. (1 − dropped/(3×total_ios) would overstate it; "
        "it is kept in the raw results as logged_frac_3x_formula.) For fio, and as the cross-check for ioscope, "
        "the fraction is clat log lines / total_ios: with the null engine (synchronous) neither tool writes "
        "slat entries, so the slat log is empty for both.", ""]


# ------------------------------------------------------------------------------------ B
def section_prio(b, reps, rt):
    target = b.fast_target(GiB)
    b.notes.append("priority target: " + target["desc"])
    base = ["--name=prio", "--filename=%s" % target["path"], "--ioengine=io_uring", "--direct=%d" % target["direct"],
            "--rw=randread", "--bs=4k", "--iodepth=32", "--thread", "--runtime=%d" % rt, "--time_based",
            "--cmdprio_percentage=30", "--log_prio=1"]
    variants = []
    if b.have_fio():
        variants += [("fio, no log", "fio", False, []), ]
    variants += [("ioscope, no log", "ioscope", False, [])]
    if b.have_fio():
        variants += [("fio, write_lat_log", "fio", True, [])]
    variants += [("ioscope, write_lat_log", "ioscope", True, [])]
    if b.have_fio():
        variants += [("fio, write_lat_log, log_entries=%d" % LOG_ENTRIES, "fio", True,
                      ["--log_entries=%d" % LOG_ENTRIES])]
    res = {v[0]: [] for v in variants}
    for rep in range(reps):
        for name, tool, log, extra in variants:
            b.progress("prio %s rep %d/%d" % (name, rep + 1, reps))
            r = logged_run(b, tool, base + extra, rt, log)
            b.record("prio QD32 [%s]" % name, tool, rep + 1, r)
            for k, v in (r.get("prios") or {}).items():
                r["%s p99.9" % k] = v["p99.9"]
                r["%s p99.99" % k] = v["p99.99"]
                r["%s N" % k] = v["N"]
            res[name].append(r)
    rows = []
    for name, tool, log, extra in variants:
        rs = res[name]
        classes = sorted({k for r in rs for k in (r.get("prios") or {})})
        logged = ""
        if log:
            f = med(rs, "logged_frac_files")
            logged = "n/a" if f is None else "%.1f%%" % (100 * f)
        if not classes:
            rows.append([name, bl.fmt_num(med(rs, "iops")), "(no prios in JSON)", "", "", "", logged])
        for k in classes:
            rows.append([name, bl.fmt_num(med(rs, "iops")), k, bl.fmt_num(med(rs, "%s N" % k)),
                         bl.fmt_num(med(rs, "%s p99.9" % k)), bl.fmt_num(med(rs, "%s p99.99" % k)), logged])
    return ["", "## B. io_uring QD32 on %s, --cmdprio_percentage=30 --log_prio=1" % target["desc"], "",
            "Per-priority completion latency (read.prios[*].clat_ns.percentile), with and without per-I/O logging.",
            ""] + bl.table(["variant", "IOPS", "priority", "I/Os (median)", "clat p99.9 (ns)", "clat p99.99 (ns)",
                            "clat log lines / I/Os"], rows) + [""]


# ------------------------------------------------------------------------------------ C
def section_rss(b, reps, rss_rt):
    tv = "/usr/bin/time"
    if not (os.path.isfile(tv) and os.access(tv, os.X_OK)):
        b.note("/usr/bin/time is missing: the peak-RSS section is skipped (this script installs nothing; "
               "`apt-get install -y time` provides it)")
        return ["", "## C. Peak RSS", "", "Skipped: /usr/bin/time is missing.", ""]
    tools = b.tools()
    rate = b.args.rate_iops
    lengths = (2, rss_rt)
    res = {}
    for rep in range(reps):
        for length in lengths:
            for t in tools:
                b.progress("RSS %s %d s rep %d/%d" % (t, length, rep + 1, reps))
                a = null_args(1, length, ["--rate_iops=%d" % rate])
                r = logged_run(b, t, a, length, True, wrap=[tv, "-v"], extra_timeout=900)
                b.record("RSS null QD1 rate_iops=%d %d s logged" % (rate, length), t, rep + 1, r)
                res.setdefault((t, length), []).append(r)
    rows = []
    for t in tools:
        short, long_ = res[(t, lengths[0])], res[(t, lengths[1])]
        rs, rl = med(short, "maxrss_kb"), med(long_, "maxrss_kb")
        ios_s, ios_l = med(short, "total_ios"), med(long_, "total_ios")
        per_io = ((rl - rs) * 1024.0 / (ios_l - ios_s)) if None not in (rs, rl, ios_s, ios_l) and ios_l != ios_s \
            else None
        fs, fl = med(short, "logged_frac_files"), med(long_, "logged_frac_files")
        rows.append([t, "%s MiB" % bl.fmt_num(rs / 1024.0 if rs else None),
                     "%s MiB" % bl.fmt_num(rl / 1024.0 if rl else None),
                     bl.fmt_ratio(bl.ratio(rl, rs)),
                     "n/a" if per_io is None else "%.1f" % per_io,
                     "%s / %s" % (bl.fmt_num(med(short, "iops")), bl.fmt_num(med(long_, "iops"))),
                     "%s / %s" % ("n/a" if fs is None else "%.1f%%" % (100 * fs),
                                  "n/a" if fl is None else "%.1f%%" % (100 * fl))])
    return ["", "## C. Peak RSS of a per-I/O-logged null-engine run (QD1, --rate_iops=%d)" % rate, "",
            "`/usr/bin/time -v`, \"Maximum resident set size\". Goal: flat over run length (ratio ≈ 1.00×, "
            "≈ 0 bytes per extra logged I/O).", ""] + bl.table(
        ["tool", "max RSS, %d s" % lengths[0], "max RSS, %d s" % lengths[1], "long/short",
         "bytes per extra logged I/O", "IOPS short / long", "logged short / long"], rows) + [""]


if __name__ == "__main__":
    main()
