#!/usr/bin/env bash
# Runs every fuzz target for a fixed time from its seed corpus; a crash fails (and leaves the
# crashing input in the work dir, printed). New inputs go to a scratch dir, not the repo.
set -euo pipefail
bin=$1
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in stream tool_args tool_input transcript bash_rules journal; do
  corpus=$target
  [ "$target" = bash_rules ] && corpus=bash
  mkdir -p "$scratch/$target"
  echo "fuzz: $target for ${seconds}s"
  "$bin/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -artifact_prefix="$scratch/" \
    "$scratch/$target" "$here/corpus/$corpus" 2>&1 | grep -E '^(Done|INFO: seed corpus)|ERROR|SUMMARY' || true
  if ls "$scratch"/crash-* "$scratch"/timeout-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input:"
    for f in "$scratch"/crash-* "$scratch"/timeout-*; do [ -f "$f" ] && xxd "$f" | head -20; done
    exit 1
  fi
done
echo "fuzz: all targets ran clean"
