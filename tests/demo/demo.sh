#!/usr/bin/env bash
# make demo: a real agentd and agent, end to end, against the scripted model server (the
# model's replies are scripted; everything else is the real thing). The model reads
# notes.txt, writes summary.txt with a tool, and says what it did, streamed.
set -euo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; [ -x "$py" ] || py=python3

work=$(mktemp -d /tmp/agent-demo.XXXXXX)
server_pid=""
cleanup() {
  AGENT_SOCKET="$work/agentd.sock" "$bin/agent" daemon stop >/dev/null 2>&1 || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/project"
cat > "$work/project/notes.txt" <<'NOTES'
Meeting notes
- The daemon keeps sessions alive when terminals close.
- Every tool call gets exactly one result in the transcript.
NOTES

# The server prints "PORT <n>" once it listens; reading that line is the wait.
exec 3< <(exec "$py" "$here/../model_server/scripted_model.py" \
  --script "$here/../model_server/demo_script.json" --strict)
server_pid=$!
read -r _ port <&3

export AGENT_SOCKET="$work/agentd.sock" XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
export AGENT_BASE_URL="http://127.0.0.1:$port/v1" AGENT_MODEL=scripted AGENT_API_KEY=demo-key

echo "== scripted model on 127.0.0.1:$port; project $work/project"
echo "== \$ agent --yes \"Summarise notes.txt into summary.txt\""
cd "$work/project"
"$bin/agent" --yes "Summarise notes.txt into summary.txt" </dev/null
echo
echo "== summary.txt, written by the agent's write_file tool:"
cat summary.txt
echo "== the saved transcript: $(ls "$XDG_STATE_HOME"/agent/projects/*/sessions/*.json | grep -v meta)"
"$bin/agent" ls
