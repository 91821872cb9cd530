#!/usr/bin/env bash
# `make bench`: every benchmark, each printing rates and ratios measured side by side.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
echo "== TFRecord read with CRC checks"
"$build/bench/record_read_bench"
echo
echo "== Convert against cp"
"$here/convert_bench.sh" "$build/src/cli/imgpipe"
