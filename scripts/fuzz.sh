#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in build-fuzz/ and runs
# each for SECONDS seconds (default 60), as many at once as there are cores, on seed
# corpora made from ../shared/testdata (fuzz/make_corpus.sh, in a scratch folder) plus
# the corpus kept in fuzz/corpus/<target>/. Exits non-zero when a fuzzer finds a crash,
# a non-imgpipe exception, a failed check, a sanitizer report, a hang (10 s) or memory
# use over 2 GB, and prints the path of the input that did it (kept in
# build-fuzz/fuzz-artifacts/, with the fuzzer's log).
#   scripts/fuzz.sh [--keep-corpus] [SECONDS]
# --keep-corpus: afterwards, merge what the run found into fuzz/corpus/<target>/
# (minimised with -merge=1; seeds and inputs over 64 KB left out), so that the next run,
# CI's included, starts where this one ended. Commit the result.
# Reproduce: build-fuzz/fuzz/<name>_fuzzer CRASH_FILE
set -euo pipefail
keep=0
if [ "${1:-}" = "--keep-corpus" ]; then keep=1; shift; fi
seconds="${1:-60}"
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
artifacts="$build/fuzz-artifacts"
jobs=${FUZZ_JOBS:-$(nproc)}  # FUZZ_JOBS=1: one target at a time
cd "$root"

# 1. Build.
generator=()
[ -f "$build/CMakeCache.txt" ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DIMGPIPE_TORCH=OFF \
      -DIMGPIPE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" --target fuzzers -j "$jobs"

# 2. Seeds, in a scratch folder the fuzzers add to.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
bash fuzz/make_corpus.sh "$scratch/seeds"
cp -r "$scratch/seeds" "$scratch/run"

# run_fuzzer NAME: runs one target; prints its summary, or its log's end and the input.
run_fuzzer() {
  local name=$1 log="$artifacts/$1.log"
  mkdir -p "$artifacts/$name" "fuzz/corpus/$name"
  # Leaks inside Debian's libraries (each named there, with its upstream issue) are not
  # imgpipe's: fuzz/lsan-suppressions.txt leaves them out.
  if LSAN_OPTIONS="suppressions=$root/fuzz/lsan-suppressions.txt" \
     "$build/fuzz/$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$artifacts/$name/" \
       "$scratch/run/$name" "fuzz/corpus/$name" > "$log" 2>&1; then
    echo "fuzz: $name: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs" \
         "in ${seconds}s, $(grep -E '^#[0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+')"
  else
    tail -n 40 "$log"
    crash=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -n 1 | awk '{print $NF}' || true)
    echo "fuzz: $name FAILED; input: ${crash:-none written}; log: $log" >&2
    return 1
  fi
}

# 3. Run the targets, `jobs` at a time.
names=()
for source in fuzz/*_fuzzer.cc; do names+=("$(basename "$source" .cc)"); done
echo "fuzz: ${#names[@]} targets, ${seconds}s each, $jobs at a time"
failed=0
for name in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
  run_fuzzer "$name" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done

# 4. Keep what the runs found.
if [ "$keep" = 1 ]; then
  for name in "${names[@]}"; do
    merged="$scratch/merged/$name"
    mkdir -p "$merged"
    "$build/fuzz/$name" -merge=1 "$merged" "fuzz/corpus/$name" "$scratch/run/$name" \
      > "$artifacts/$name.merge.log" 2>&1
    for seed in "$scratch/seeds/$name"/*; do  # seeds are made anew each run
      rm -f "$merged/$(sha1sum "$seed" | cut -c1-40)"
    done
    find "$merged" -type f -size +64k -delete
    rm -rf "fuzz/corpus/$name" && mv "$merged" "fuzz/corpus/$name"
    echo "fuzz: kept $(ls "fuzz/corpus/$name" | wc -l) inputs" \
         "($(du -sh "fuzz/corpus/$name" | cut -f1)) in fuzz/corpus/$name"
  done
fi
exit "$failed"
