#!/usr/bin/python3
"""A Streamable HTTP MCP server with faults on request, for the unit tests of daemon/mcp.

Listens on 127.0.0.1 (a free port, printed as "PORT n" on stdout) until killed. initialize is
answered with JSON and an Mcp-Session-Id; notifications get 202. tools/call by tool name:
  echo          JSON answer
  sse           an event stream: a priming event (id, empty data), progress, the answer
  html          200 with text/html (no answer)
  bad-sse       an event stream whose event is not JSON
  sse-ends      an event stream with progress only, then the end
  no-result     a JSON reply with neither result nor error
  version       answers with the MCP-Protocol-Version header it got, and a result that holds
                a "protocolVersion" of its own (which must never become the header)
"""
import http.server
import json
import sys


def text(t):
    return {"content": [{"type": "text", "text": t}], "isError": False}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, content_type, body):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Mcp-Session-Id", "sess-1")
        self.end_headers()
        self.wfile.write(data)

    def json(self, obj):
        self.reply(200, "application/json", json.dumps(obj))

    def sse(self, events):
        self.reply(200, "text/event-stream", "".join(events))

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        method = msg.get("method")
        rid = msg.get("id")
        if rid is None:
            return self.reply(202, None, "")
        if method == "initialize":
            return self.json({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "fake-http", "version": "1"}}})
        name = msg.get("params", {}).get("name")
        progress = "data: " + json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                          "params": {"progressToken": rid, "progress": 1}}) + "\n\n"
        answer = {"jsonrpc": "2.0", "id": rid, "result": text("ok " + str(name))}
        if name == "echo":
            return self.json(answer)
        if name == "sse":
            return self.sse(["id: 1\ndata:\n\n", progress, "data: " + json.dumps(answer) + "\n\n"])
        if name == "html":
            return self.reply(200, "text/html", "<html>hello</html>")
        if name == "bad-sse":
            return self.sse([progress, "data: {this is not json\n\n"])
        if name == "sse-ends":
            return self.sse([progress])
        if name == "no-result":
            return self.json({"jsonrpc": "2.0", "id": rid})
        if name == "version":
            got = self.headers.get("MCP-Protocol-Version", "")
            return self.json({"jsonrpc": "2.0", "id": rid, "result": dict(
                text(got), protocolVersion="1999-01-01")})
        return self.json({"jsonrpc": "2.0", "id": rid,
                          "error": {"code": -32602, "message": "no tool " + str(name)}})


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
