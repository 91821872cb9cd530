#!/usr/bin/env bash
# Installs the Debian packages imgpipe builds and tests with. Idempotent: packages that
# are already installed are left alone, and apt-get runs only when something is missing.
#   scripts/install-deps.sh          what `make test` needs: the build's packages (libtorch
#                                    for training, pybind11 for the Python package), and
#                                    the tests' (Python's torch and torchvision, which
#                                    tests compare against; pytest and venv for the Python
#                                    package; clang for the fuzzers; slurm-wlm and munge
#                                    for the one-node Slurm cluster of the Slurm template
#                                    tests, scripts/slurm_cluster.sh; nginx-light and, from
#                                    the npm registry, s3rver for the HTTP and S3 tests)
#   scripts/install-deps.sh --demo   the build's packages only: what `make demo` needs, so
#                                    a fresh machine's first run downloads less
#   scripts/install-deps.sh --bench  the same as no option (kept for compare_torch.py's docs)
set -euo pipefail

# What the build needs (make demo builds the imgpipe binary with these).
packages=(
  build-essential cmake ninja-build mold pkg-config make bc ccache
  zlib1g-dev libssl-dev libcurl4-openssl-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libgif-dev libstb-dev libheif-dev libtiff-dev libwebp-dev
  libprotobuf-dev protobuf-compiler python3-protobuf python3-pil python3-numpy
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev libgloo-dev libgoogle-perftools-dev
  pybind11-dev python3-pybind11
)
# What the tests need besides.
test_packages=(
  clang libclang-rt-14-dev libtiff-tools
  python3-torch python3-torchvision
  python3-pytest python3-venv python3-wheel python3-pip python3-setuptools
  slurm-wlm munge nginx-light nodejs
)
[ "${1:-}" = "--demo" ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Debian's nodejs comes without npm (NodeSource's has it): npm only when there is none.
if [ "${1:-}" != "--demo" ] && ! command -v npm >/dev/null; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The S3 server of the tests (src/testing/s3_test_server.h looks for it here), from the npm
# registry, pinned; in the user's cache, so no root is needed.
if [ "${1:-}" != "--demo" ]; then
  s3rver_dir="${IMGPIPE_S3RVER_DIR:-$HOME/.cache/imgpipe/s3rver}"
  if [ ! -f "$s3rver_dir/node_modules/s3rver/bin/s3rver.js" ]; then
    echo "install-deps: installing s3rver 3.7.1 into $s3rver_dir" >&2
    mkdir -p "$s3rver_dir"
    npm install --prefix "$s3rver_dir" --no-audit --no-fund --loglevel=error s3rver@3.7.1 >&2
  fi
fi
