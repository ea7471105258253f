#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and packaging agentd need.
# Idempotent: packages already present are skipped, and apt is not touched at all when
# nothing is missing. Runs as root, or through sudo when it is available.
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config git
  # libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libcurl4-openssl-dev nlohmann-json3-dev libre2-dev libedit-dev
  libcli11-dev libssl-dev zlib1g-dev libc-ares-dev rapidjson-dev
  # tests and checks
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-grpcio tmux
  clang libclang-rt-14-dev clang-format
  # packaging
  dpkg-dev file
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
