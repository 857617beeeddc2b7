#!/usr/bin/env bash
# Installs the Debian packages mimic needs, only those that are missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache clang-format clang
  libsystemc-dev libtbb-dev libxsimd-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  libopenblas0-pthread libopenblas-dev
  python3-pytest chromium
  libtorch-dev python3-torch pybind11-dev python3-torchvision python3-networkx
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "mimic: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "mimic: missing packages need root: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$(dirname "$0")/fetch_pytorch_tests.sh" || echo "mimic: going on without PyTorch's test files" >&2
