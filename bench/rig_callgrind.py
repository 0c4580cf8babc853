#!/usr/bin/env python3
"""Instructions per I/O under callgrind on the rig's emulated NVMe (io_uring_cmd passthrough).

Runs in one guest boot (rig/rig.py, the 6.12 kernel): ioscope and fio 3.42, each under
`valgrind --tool=callgrind`, `--ioengine=io_uring_cmd --cmd_type=nvme --rw=randread --bs=4k` on
the plain namespace's generic node (/dev/rig/plain-ng), with --size=S and --size=2S; the figure is
(Ir(2S) - Ir(S)) / (I/Os(2S) - I/Os(S)), which cancels start-up and exit. Instruction counts do
not depend on the emulation's speed, so they compare as on a real drive (the kernel's work is not
counted: callgrind sees user space only).

    cargo build --release -p ioscope && python3 rig/rig.py prepare --kernel 6.12
    python3 bench/rig_callgrind.py [--fio PATH] [--size 8m]

Writes bench/results/rig-callgrind-<UTC stamp>.md.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = "/dev/rig/plain-ng"


def inner_script(tools, sizes, depths, out):
    """The guest's commands: every (depth, tool, size) under callgrind, outputs in `out`."""
    lines = ["#!/bin/sh", "set -u"]
    for qd in depths:
        for name, path in tools:
            for sz in sizes:
                tag = "%s.%d.%s" % (name, qd, sz)
                lines.append(
                    "valgrind --tool=callgrind --callgrind-out-file=%s/%s.cg %s --name=cg --filename=%s "
                    "--ioengine=io_uring_cmd --cmd_type=nvme --rw=randread --bs=4k --iodepth=%d --size=%s "
                    "--norandommap --thread --output-format=json > %s/%s.json 2> %s/%s.err"
                    % (out, tag, path, DEV, qd, sz, out, tag, out, tag))
    return "\n".join(lines) + "\n"


def total_ir(path):
    with open(path) as f:
        m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    return int(m.group(1)) if m else None


def ios(path):
    with open(path) as f:
        return json.load(f)["jobs"][0]["read"]["total_ios"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ioscope", default=os.path.join(ROOT, "target/release/ioscope"))
    ap.add_argument("--fio", default=os.path.join(ROOT, "..", "shared", "tools", "fio-3.42", "fio"))
    ap.add_argument("--size", default="8m", help="the smaller size S (the other is 2S)")
    a = ap.parse_args()
    n = int(a.size.rstrip("m"))
    sizes = ["%dm" % n, "%dm" % (2 * n)]
    tools = [("ioscope", os.path.abspath(a.ioscope))]
    if os.path.exists(a.fio):
        tools.append(("fio", os.path.abspath(a.fio)))
    depths = [1, 32]
    out = tempfile.mkdtemp(prefix="rig-callgrind-", dir="/var/tmp")
    script = os.path.join(out, "inner.sh")
    with open(script, "w") as f:
        f.write(inner_script(tools, sizes, depths, out))
    started = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    r = subprocess.run([sys.executable, os.path.join(ROOT, "rig/rig.py"), "run", "--kernel", "6.12",
                        "--timeout", "1500", "--share", out, "--", "sh", script])
    if r.returncode != 0:
        sys.exit("rig run failed (exit %d); outputs in %s" % (r.returncode, out))
    rows, per = [], {}
    for qd in depths:
        for name, _ in tools:
            tag = lambda sz: os.path.join(out, "%s.%d.%s" % (name, qd, sz))
            (ir1, ir2) = (total_ir(tag(sizes[0]) + ".cg"), total_ir(tag(sizes[1]) + ".cg"))
            (n1, n2) = (ios(tag(sizes[0]) + ".json"), ios(tag(sizes[1]) + ".json"))
            per[(name, qd)] = (ir2 - ir1) / (n2 - n1)
        fio = per.get(("fio", qd))
        io = per[("ioscope", qd)]
        rows.append("| io_uring_cmd nvme randread 4k QD%d | %s | %.0f | %s |"
                    % (qd, "%.0f" % fio if fio else "n/a", io, "%.2f× fio/io" % (fio / io) if fio else "n/a"))
    res = os.path.join(ROOT, "bench", "results", "rig-callgrind-%s.md" % started)
    with open(res, "w") as f:
        f.write("# Instructions per I/O under callgrind on the rig (bench/rig_callgrind.py) — %s\n\n" % started)
        f.write("- ioscope: %s\n- fio: %s\n- device: %s in the rig's 6.12 guest (QEMU NVMe, emulated)\n"
                % (tools[0][1], tools[1][1] if len(tools) > 1 else "absent", DEV))
        f.write("- figure: (Ir(%s) - Ir(%s)) / (I/Os(%s) - I/Os(%s)), user space only\n\n"
                % (sizes[1], sizes[0], sizes[1], sizes[0]))
        f.write("| case | fio 3.42 | ioscope | ratio |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")
    print("\n".join(rows))
    print("written to %s" % res)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
