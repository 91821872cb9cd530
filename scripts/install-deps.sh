#!/usr/bin/env bash
# Installs the Debian packages imgpipe builds and tests with. Idempotent: packages that
# are already installed are left alone, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config make bc
  zlib1g-dev libturbojpeg0-dev libpng-dev
  libprotobuf-dev protobuf-compiler python3-protobuf
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
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
