#!/usr/bin/python3
"""A misbehaving-on-request MCP server over stdio for the unit tests of daemon/mcp.

Usage: fake_mcp_server.py MODE [LOGFILE]. MODE changes the whole server: "ok", "no-init"
(never answers initialize), "bad-version", "garbage" (a non-JSON line after initialize),
"crash-once" (exits during its first life's initialize when LOGFILE has no "started" line),
"orphan" (daemonizes a helper as daemons do: a session of its own, forked twice, so that its
parent is gone at once; it holds the server's stdout, names LOGFILE in its argv and sleeps
300 s).
Tools (in "ok"): echo, add, slow (progress, then waits to be cancelled), huge (N bytes),
die (exits mid-call), flood (N notifications before the answer), fail (isError), change
(adds a tool and sends tools/list_changed), image; and, not listed, no-result, both,
string-id and error-not-object answer with a malformed reply. Every message received is appended to
LOGFILE as JSON, one per line, so tests can see what the client sent.
"""
import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
LOG = sys.argv[2] if len(sys.argv) > 2 else None
EXTRA_TOOLS = []


def log(obj):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(obj) + "\n")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def tools_page(cursor):
    tools = [
        {"name": "echo", "description": "Echoes its text.",
         "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"], "$schema": "http://json-schema.org/draft-07/schema#"},
         "annotations": {"readOnlyHint": True}},
        {"name": "add", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "number"}}}},
        {"name": "slow", "inputSchema": {"type": "object"}},
        {"name": "huge", "inputSchema": {"type": "object"}},
        {"name": "die", "inputSchema": {"type": "object"}},
        {"name": "flood", "inputSchema": {"type": "object"}},
        {"name": "fail", "inputSchema": {"type": "object"}},
        {"name": "change", "inputSchema": {"type": "object"}},
        {"name": "image", "inputSchema": {"type": "object"}},
    ] + EXTRA_TOOLS
    # Two pages, to exercise nextCursor.
    if cursor is None:
        return {"tools": tools[:3], "nextCursor": "page2"}
    return {"tools": tools[3:]}


def text(t, is_error=False):
    return {"content": [{"type": "text", "text": t}], "isError": is_error}


def call(msg):
    rid = msg["id"]
    params = msg.get("params", {})
    name = params.get("name")
    args = params.get("arguments", {})
    token = params.get("_meta", {}).get("progressToken")
    if name == "echo":
        return send({"jsonrpc": "2.0", "id": rid, "result": text("echo: " + args.get("text", ""))})
    if name == "add":
        return send({"jsonrpc": "2.0", "id": rid,
                     "result": text(str(args.get("a", 0) + args.get("b", 0)))})
    if name == "slow":
        for i in range(3):
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i + 1, "total": 10,
                                 "message": "step %d" % (i + 1)}})
            time.sleep(0.15)
        return  # never answers: the client must cancel or time out
    if name == "huge":
        n = int(args.get("bytes", 5 << 20))
        return send({"jsonrpc": "2.0", "id": rid, "result": text("x" * n)})
    if name == "die":
        sys.exit(3)
    if name == "flood":
        n = int(args.get("count", 20000))
        out = []
        for i in range(n):
            out.append(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": "info", "data": "noise %d" % i}}))
            if token is not None:
                out.append(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                       "params": {"progressToken": token, "progress": i}}))
        sys.stdout.write("\n".join(out) + "\n")
        return send({"jsonrpc": "2.0", "id": rid, "result": text("flooded")})
    if name == "fail":
        return send({"jsonrpc": "2.0", "id": rid, "result": text("it went wrong", True)})
    if name == "change":
        EXTRA_TOOLS.append({"name": "added", "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return send({"jsonrpc": "2.0", "id": rid, "result": text("changed")})
    # Malformed replies (not listed: callable by name).
    if name == "no-result":
        return send({"jsonrpc": "2.0", "id": rid})
    if name == "both":
        return send({"jsonrpc": "2.0", "id": rid, "result": text("r"),
                     "error": {"code": 1, "message": "e"}})
    if name == "string-id":
        return send({"jsonrpc": "2.0", "id": str(rid), "result": text("r")})
    if name == "error-not-object":
        return send({"jsonrpc": "2.0", "id": rid, "error": "boom"})
    if name == "image":
        return send({"jsonrpc": "2.0", "id": rid, "result": {"content": [
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "text", "text": "a picture"}], "structuredContent": {"ok": True}}})
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no tool " + str(name)}})


def main():
    lives = 0
    if LOG:
        try:
            with open(LOG) as f:
                lives = sum(1 for line in f if '"started"' in line)
        except OSError:
            pass
    log({"started": True, "pid": os.getpid()})
    if MODE == "orphan":
        subprocess.Popen([sys.executable, "-c",
                          "import os, time\nif os.fork(): os._exit(0)\ntime.sleep(300)", str(LOG)],
                         start_new_session=True)
    sys.stderr.write("fake server up in mode %s\n" % MODE)
    sys.stderr.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        log(msg)
        method = msg.get("method")
        if method == "initialize":
            if MODE == "no-init":
                continue
            if MODE == "crash-once" and lives == 0:
                sys.exit(7)
            version = "1999-01-01" if MODE == "bad-version" else msg["params"]["protocolVersion"]
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake", "version": "1"}}})
            if MODE == "garbage":
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "result": tools_page(msg.get("params", {}).get("cursor"))})
        elif method == "tools/call":
            call(msg)
        elif method == "ping" or ("id" in msg and method is not None):
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})


if __name__ == "__main__":
    main()
