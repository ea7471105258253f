#!/usr/bin/env bash
# make bench: runs every benchmark against the Release tree BUILD (default build-release) and
# prints one table. Goals are printed, never asserted: a missed goal does not fail the run.
# Needs Debian's /usr/bin/python3 (its python3-grpcio) for the orchestration in run_bench.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-build-release}"
exec /usr/bin/python3 "$here/run_bench.py" --bin "$build/bin"
