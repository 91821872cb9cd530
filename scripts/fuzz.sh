#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in build-fuzz/ and runs
# each, one after the other, for SECONDS seconds (default 60) on seed corpora made from
# ../shared/testdata (fuzz/make_corpus.sh, in a scratch folder). Exits non-zero when a
# fuzzer finds a crash, a non-imgpipe exception, a sanitizer report, a hang (10 s) or
# memory use over 2 GB, and prints the path of the input that did it (kept in
# build-fuzz/fuzz-artifacts/, with the fuzzer's log).
#   scripts/fuzz.sh [SECONDS]
# Reproduce: build-fuzz/fuzz/<name>_fuzzer CRASH_FILE
set -euo pipefail
seconds="${1:-60}"
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
artifacts="$build/fuzz-artifacts"
cd "$root"

# 1. Build.
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DIMGPIPE_TORCH=OFF \
      -DIMGPIPE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" --target fuzzers -j "$(nproc)"

# 2. Seeds, in a scratch folder the fuzzers may add to.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
bash fuzz/make_corpus.sh "$scratch"

# 3. Run each fuzzer.
failed=0
for source in fuzz/*_fuzzer.cc; do
  name=$(basename "$source" .cc)
  mkdir -p "$artifacts/$name"
  log="$artifacts/$name.log"
  echo "fuzz: $name for ${seconds}s"
  if "$build/fuzz/$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$artifacts/$name/" "$scratch/$name" \
       > "$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 | sed "s/^/fuzz: $name: /" || true
  else
    failed=1
    tail -n 40 "$log"
    crash=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -n 1 | awk '{print $NF}' || true)
    echo "fuzz: $name FAILED; input: ${crash:-none written}; log: $log" >&2
  fi
done
exit "$failed"
