#!/usr/bin/env bash
# Installs the Debian packages imgpipe builds and tests with. Idempotent: packages that
# are already installed are left alone, and apt-get runs only when something is missing.
#   scripts/install-deps.sh          what `make test` and `make demo` need (libtorch for
#                                    training; Python's torch and torchvision, which tests
#                                    compare against; pybind11 and pytest for the Python
#                                    package in python/; slurm-wlm and munge for the
#                                    one-node Slurm cluster of the Slurm template tests,
#                                    scripts/slurm_cluster.sh)
#   scripts/install-deps.sh --bench  the same (kept for bench/compare_torch.py's docs)
set -euo pipefail

packages=(
  build-essential cmake pkg-config make bc ccache
  zlib1g-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libgif-dev libstb-dev libheif-dev
  libprotobuf-dev protobuf-compiler python3-protobuf python3-pil python3-numpy
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  libtorch-dev libgloo-dev libgoogle-perftools-dev python3-torch python3-torchvision
  pybind11-dev python3-pybind11 python3-pytest python3-venv python3-wheel python3-pip python3-setuptools
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
