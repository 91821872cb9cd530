#!/usr/bin/env bash
# The figure of record for CI's time: runs each stage of .ci/run (its `make ...` lines, in
# order) from a fresh clone of HEAD with an empty ccache, as CI on a new machine would
# (the Debian packages already installed), and prints each stage's wall time and the
# total. The clone and the cache live in a scratch folder, removed afterwards; the
# clone's ../shared is a link to this checkout's.
#   scripts/ci_times.sh [--keep] [--cache-dir DIR]
# --keep: leave the scratch folder (clone, logs), and say where.
# --cache-dir DIR: fill DIR instead of a scratch cache (it must be empty, or just cleared
#   with `CCACHE_DIR=DIR ccache -C`), e.g. the machine's own, so that the next CI run
#   there starts warm.
set -euo pipefail
keep=0
cache_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --cache-dir) cache_dir="$2"; shift ;;
    *) echo "usage: scripts/ci_times.sh [--keep] [--cache-dir DIR]" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/imgpipe-ci-times.XXXXXX)
chmod 755 "$scratch"  # some tests run imgpipe as nobody, which must reach the clone
if [ "$keep" -eq 0 ]; then trap 'rm -rf "$scratch"' EXIT; fi

git clone -q "$root" "$scratch/imgpipe"
git -C "$scratch/imgpipe" checkout -q "$(git -C "$root" rev-parse HEAD)"
ln -s "$(cd "$root/../shared" && pwd)" "$scratch/shared"
export CCACHE_DIR="${cache_dir:-$scratch/ccache}"
mkdir -p "$CCACHE_DIR"
if [ -n "$(find "$CCACHE_DIR" -type f -size +0 ! -name ccache.conf ! -name stats ! -name CACHEDIR.TAG | head -1)" ]; then
  echo "ci_times: $CCACHE_DIR holds cached objects: clear it (CCACHE_DIR=$CCACHE_DIR ccache -C)" >&2
  exit 2
fi
unset CCACHE_BASEDIR CCACHE_NOHASHDIR  # the Makefile sets them for the clone

mapfile -t stages < <(grep -E '^make( |$)' "$root/.ci/run")
echo "ci_times: $(git -C "$root" log -1 --format='%h %s' | cut -c1-80)"
echo "ci_times: $(nproc) CPUs, empty ccache in $CCACHE_DIR, clone in $scratch/imgpipe"
total_start=$(date +%s)
for stage in "${stages[@]}"; do
  start=$(date +%s)
  if (cd "$scratch/imgpipe" && CI=true $stage) > "$scratch/stage.log" 2>&1; then
    status=ok
  else
    status="FAILED (log: $scratch/stage.log)"
    keep=1
    trap - EXIT
  fi
  end=$(date +%s)
  printf 'ci_times: %-28s %4d min %02d s  %s\n' "$stage" $(((end - start) / 60)) $(((end - start) % 60)) "$status"
  cp "$scratch/stage.log" "$scratch/$(echo "$stage" | tr ' =' '__').log"
  [ "$status" = ok ] || break
done
end=$(date +%s)
printf 'ci_times: %-28s %4d min %02d s\n' "total" $(((end - total_start) / 60)) $(((end - total_start) % 60))
if [ "$keep" -eq 1 ]; then echo "ci_times: kept $scratch"; fi
