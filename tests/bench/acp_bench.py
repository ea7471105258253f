"""Latency of `agent acp`: from a model byte leaving the model server to the editor's
session/update, against the same byte reaching `agent attach` (goal: within 2x). Both clients
are attached to one session; the model is a minimal SSE server in this process that stamps
each chunk (one line of text, "mNNN") as it sends it, spaced so that each travels alone. The
editor is read raw from `agent acp`'s stdout (no SDK in the way), `agent attach -r --plain`
from its stdout.

    AGENT_BIN_DIR=BUILD/bin /usr/bin/python3 tests/bench/acp_bench.py

run_bench.py prints rows() in its table.
"""
import argparse
import http.server
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

CHUNKS = 60
GAP_S = 0.03
MARK = re.compile(r"m(\d{3})")


class Model(http.server.BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    sent = {}

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for i in range(CHUNKS):
            time.sleep(GAP_S)  # the pace of a model, so that each chunk travels alone
            delta = {"choices": [{"index": 0, "delta": {"content": "m%03d\n" % i}}]}
            Model.sent[i] = time.monotonic()
            self.wfile.write(b"data: " + json.dumps(delta).encode() + b"\n\n")
            self.wfile.flush()
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
        self.wfile.flush()


def stamp_lines(stream, seen, text_of):
    """Records when each marker first arrives on `stream` (lines)."""
    for line in stream:
        for m in MARK.finditer(text_of(line)):
            seen.setdefault(int(m.group(1)), time.monotonic())


def acp_text(line):
    try:
        msg = json.loads(line)
        return msg["params"]["update"]["content"]["text"]
    except (ValueError, KeyError, TypeError):
        return ""


def measure(bin_dir):
    """Per-chunk latencies (ms) to the editor and to agent attach."""
    os.environ["AGENT_BIN_DIR"] = bin_dir
    import grpc_client
    from harness import Env
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = Env([])
    env.env["AGENT_BASE_URL"] = "http://127.0.0.1:%d/v1" % server.server_address[1]
    procs = []
    try:
        acp = subprocess.Popen([os.path.join(bin_dir, "agent"), "acp"], cwd=env.project,
                               env=env.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
        procs.append(acp)

        def call(id, method, params):
            acp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                        "params": params}) + "\n")
            acp.stdin.flush()
            for line in acp.stdout:
                if json.loads(line).get("id") == id:
                    return json.loads(line)
            raise RuntimeError("agent acp ended")

        call(1, "initialize", {"protocolVersion": 1})
        sid = call(2, "session/new", {"cwd": env.project, "mcpServers": []})["result"]["sessionId"]
        attach = subprocess.Popen([os.path.join(bin_dir, "agent"), "attach", "-r", "--plain",
                                   sid], cwd=env.project, env=env.env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        procs.append(attach)
        pb, stub, channel = grpc_client.connect(env.socket)
        deadline = time.monotonic() + 30
        while stub.GetSession(pb.GetSessionRequest(id=sid), timeout=10).session.attached_clients < 2:
            if time.monotonic() > deadline:
                raise RuntimeError("agent attach did not attach")
            time.sleep(0.02)  # polling the daemon's own count of clients
        channel.close()
        to_editor, to_attach = {}, {}
        threads = [threading.Thread(target=stamp_lines, args=(acp.stdout, to_editor, acp_text)),
                   threading.Thread(target=stamp_lines, args=(attach.stdout, to_attach,
                                                              lambda l: l))]
        for t in threads:
            t.daemon = True
            t.start()
        acp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                                    "params": {"sessionId": sid, "prompt": [
                                        {"type": "text", "text": "count"}]}}) + "\n")
        acp.stdin.flush()
        deadline = time.monotonic() + 60
        while (len(to_editor) < CHUNKS or len(to_attach) < CHUNKS) and \
                time.monotonic() < deadline:
            time.sleep(0.05)  # the readers stamp; this only waits for them to finish
        editor = [(to_editor[i] - Model.sent[i]) * 1000 for i in to_editor if i in Model.sent]
        attached = [(to_attach[i] - Model.sent[i]) * 1000 for i in to_attach if i in Model.sent]
        return editor, attached
    finally:
        for p in procs:
            p.kill()
            p.wait()
        server.shutdown()
        env.close()


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def rows(bin_dir):
    """(figure, value, ratio) rows."""
    editor, attached = measure(bin_dir)
    if not editor or not attached:
        return [("model byte -> editor / agent attach", "no data (%d / %d chunks)"
                 % (len(editor), len(attached)), "")]
    ratio = statistics.median(editor) / max(statistics.median(attached), 1e-3)
    return [
        ("model byte -> agent attach, median / p90 (%d chunks)" % len(attached),
         "%.2f / %.2f ms" % (statistics.median(attached), pct(attached, 0.9)), ""),
        ("model byte -> editor session/update, median / p90 (%d chunks)" % len(editor),
         "%.2f / %.2f ms" % (statistics.median(editor), pct(editor, 0.9)),
         "%.2fx (goal <= 2x)" % ratio),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get(
        "AGENT_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin")))
    args = ap.parse_args()
    for figure, value, ratio in rows(os.path.abspath(args.bin)):
        print("%-62s %-22s %s" % (figure, value, ratio))


if __name__ == "__main__":
    main()
