#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and packaging agentd need; with
# --run, only those that building and running agent and agentd need (`make demo`).
# Idempotent: packages already present are skipped, and apt is not touched at all when
# nothing is missing. Runs as root, or through sudo when it is available.
set -euo pipefail

run_packages=(
  # build
  build-essential cmake pkg-config git
  # a compiler cache: a second build in a fresh clone takes its objects from the first
  ccache
  # libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libcurl4-openssl-dev nlohmann-json3-dev libre2-dev libedit-dev
  libcli11-dev libssl-dev zlib1g-dev libc-ares-dev rapidjson-dev
  # the sandbox of tool commands (daemon/sandbox/); the demo's scripted model server
  bubblewrap python3
)

packages=(
  "${run_packages[@]}"
  # tests and checks
  libgtest-dev libgmock-dev libbenchmark-dev python3-grpcio tmux zsh
  clang libclang-rt-14-dev clang-format
  # Node.js: the MCP reference servers, the example client and the ACP test client (npm ci)
  nodejs
  # test_remote.py runs its own sshd on 127.0.0.1 (agent --host); never the system's
  openssh-server openssh-client
  # real clients the sandbox's network proxy is tested with (curl, git, pip) and the TLS
  # server's certificate (openssl)
  curl openssl python3-pip
  # packaging
  dpkg-dev file
)

if [ "${1:-}" = "--run" ]; then
  packages=("${run_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Debian's nodejs has npm in a package of its own; other builds (NodeSource) ship it inside
# nodejs, where Debian's npm would conflict: asked for only when the command is missing.
if [ "${1:-}" != "--run" ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

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
# openssh-server's postinst would start the system's sshd on port 22: a policy-rc.d that
# refuses (exit 101) stops it for the install only, and only one we put there is removed.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
  "${sudo_cmd[@]}" chmod 755 "$policy"
  own_policy=1
fi
remove_policy() { if [ "$own_policy" -eq 1 ]; then "${sudo_cmd[@]}" rm -f "$policy"; fi; }
trap remove_policy EXIT
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Where no policy-rc.d was honoured (a system that starts services anyway), stop it again.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet ssh 2>/dev/null; then
  "${sudo_cmd[@]}" systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
fi
