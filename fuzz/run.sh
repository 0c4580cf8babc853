#!/usr/bin/env bash
# Fuzz the job-file parser and the argv layer for N seconds in all (default 60: half
# each). Installs cargo-fuzz if needed.
# cargo-fuzz normally wants nightly for sanitizers; we build without a sanitizer
# (-s none: Rust's own checks catch panics and overflows) on the stable toolchain.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --quiet
fi
mkdir -p corpus/parse_jobfile
# Seed the corpus with our own job files, and fio's examples when they are beside the checkout.
for f in ../crates/cli/tests/data/jobs/*.fio; do
  [ -e "corpus/parse_jobfile/${f##*/}" ] || cp "$f" corpus/parse_jobfile/
done
if [ -d ../../shared/fio-examples ]; then
  cp -n ../../shared/fio-examples/*.fio corpus/parse_jobfile/ 2>/dev/null || true
fi
printf '[global]\nbs=4k\n[j]\nrw=randread:8\nsize=($mb_memory/2)\n' > corpus/parse_jobfile/seed.fio
half=$(( (secs + 1) / 2 ))
RUSTC_BOOTSTRAP=1 cargo fuzz run parse_jobfile -s none --debug-assertions corpus/parse_jobfile -- \
  -max_total_time="$half" -max_len=4096 -print_final_stats=1
mkdir -p corpus/parse_argv
printf -- '--name=a\0--bs\0004k\0job.fio\0--output-format=json' > corpus/parse_argv/seed1
printf -- '--depth=32\0--nop\0--json\0/dev/null' > corpus/parse_argv/seed2
printf -- '--name=\377\0caf\351.fio' > corpus/parse_argv/seed3
RUSTC_BOOTSTRAP=1 cargo fuzz run parse_argv -s none --debug-assertions corpus/parse_argv -- \
  -max_total_time="$half" -max_len=1024 -print_final_stats=1
