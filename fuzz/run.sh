#!/usr/bin/env bash
# Fuzz the job-file parser for N seconds (default 60). Installs cargo-fuzz if needed.
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
RUSTC_BOOTSTRAP=1 cargo fuzz run parse_jobfile -s none --debug-assertions corpus/parse_jobfile -- \
  -max_total_time="$secs" -max_len=4096 -print_final_stats=1
