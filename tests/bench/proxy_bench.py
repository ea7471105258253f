"""The sandbox's network proxy (issue 36; goals: the proxy's CPU per MB moved ≤ 10 % of what the
transfer costs curl itself, and ≤ 2 ms added to a connection).

A world of the integration harness with `"sandbox_network": {"allow": ["bench.test"]}`, the
test resolver sending bench.test to 127.0.0.1 and the test switch opening the port of a local
HTTP server, which answers /big with SIZE_MB megabytes and /small with one byte.

CPU: `agent sandbox -- …` runs curl for /big through the proxy over HTTPS (CONNECT to a local
TLS server with its own CA: what a registry download is), timing curl with bash's
`time` and reading the bridge's CPU from /proc inside the sandbox before it ends; the daemon's
CPU is read from /proc before and after. The proxy's CPU is the bridge's plus the daemon's,
less the daemon's for the same command fetching /small (the sandbox's start and the call
itself, not the proxy's bytes). Figure: the proxy's CPU ÷ curl's, median of ROUNDS; the same
over plain HTTP is printed without a goal (there curl's own work is only a receive).

Connection: CONNS sequential curls of /small in one sandboxed command, once through the proxy
and once with `--network` straight to 127.0.0.1 (no proxy at all), interleaved; the figure is
the median over rounds of (through − straight) / CONNS.

    /usr/bin/python3 tests/bench/proxy_bench.py --bin BUILD/bin [--quick]
"""
import argparse
import http.server
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

CLK_TCK = os.sysconf("SC_CLK_TCK")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    size = 0

    def do_GET(self):
        n = self.size if self.path == "/big" else 1
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        chunk = b"\0" * (1 << 20)
        while n > 0:
            self.wfile.write(chunk[:min(n, len(chunk))])
            n -= min(n, len(chunk))

    def log_message(self, *args):
        pass


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def fetch(env, url, daemon):
    """(curl's CPU s, the bridge's CPU s, the daemon's CPU s) of one sandboxed fetch."""
    script = ("TIMEFORMAT='%%3U %%3S'; { time curl -s -o /dev/null %s; } 2>&1; "
              "for p in /proc/[0-9]*; do case \"$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\" in "
              "*net-bridge*) echo bridge $(cut -d' ' -f14,15 $p/stat);; esac; done" % url)
    before = cpu_s(daemon)
    r = env.agent("sandbox", "--", "bash", "-c", script, timeout=300)
    after = cpu_s(daemon)
    lines = [l for l in r.stdout.splitlines() if l.strip() and not l.startswith("[network]")]
    user, sys_ = (float(x) for x in lines[0].split())
    bridge = [l for l in lines if l.startswith("bridge ")]
    bridge_s = sum(int(x) for x in bridge[0].split()[1:]) / CLK_TCK if bridge else 0.0
    return user + sys_, bridge_s, after - before


def timed(env, script, *flags):
    start = time.monotonic()
    r = env.agent("sandbox", *flags, "--", "bash", "-c", script, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("sandboxed command failed: %s" % (r.stdout + r.stderr)[-300:])
    return time.monotonic() - start


def serve(port_holder, cert=None):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if cert is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*cert)
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port_holder.append(httpd)
    return httpd.server_address[1]


def world(harness, port):
    env = harness.Env([], extra_env={"AGENT_TEST_RESOLVE": "bench.test=127.0.0.1",
                                     "AGENT_TEST_PROXY_LOOPBACK_PORT": str(port)})
    os.makedirs(os.path.join(env.dir, "config", "agent"))
    with open(os.path.join(env.dir, "config", "agent", "config.json"), "w") as f:
        json.dump({"sandbox_network": {"allow": ["bench.test"]}}, f)
    env.agent("ls")
    return env


def cpu_ratio(env, scheme, port, curl_flags=""):
    daemon = env.daemon_pids()[0]
    url = "%s %s://bench.test:%d/" % (curl_flags, scheme, port)
    curl_s, bridge_s, daemon_s = fetch(env, url + "big", daemon)
    _, _, daemon_base = fetch(env, url + "small", daemon)
    return (bridge_s + max(0.0, daemon_s - daemon_base)) / max(curl_s, 1e-3)


def rows(bin_dir, quick=False):
    os.environ["AGENT_BIN_DIR"] = bin_dir
    import harness
    harness.BIN = bin_dir
    size_mb = 20 if quick else 200
    rounds = 2 if quick else 5
    conns = 5 if quick else 50
    Handler.size = size_mb << 20
    servers, envs = [], []
    certs = tempfile.mkdtemp(prefix="agt-bench-cert-")
    try:
        cert = (os.path.join(certs, "cert.pem"), os.path.join(certs, "key.pem"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=bench.test", "-addext", "subjectAltName=DNS:bench.test",
                        "-keyout", cert[1], "-out", cert[0]], check=True, capture_output=True)
        http_port, https_port = serve(servers), serve(servers, cert)
        plain, tls = world(harness, http_port), world(harness, https_port)
        envs += [plain, tls]
        shutil.copy(cert[0], os.path.join(tls.project, "ca.pem"))
        over_tls, over_http, added = [], [], []
        small = "http://bench.test:%d/small" % http_port
        loop = "for i in $(seq %d); do curl -s -o /dev/null %%s || exit 1; done" % conns
        for _ in range(rounds):
            over_tls.append(cpu_ratio(tls, "https", https_port, "--cacert ca.pem"))
            over_http.append(cpu_ratio(plain, "http", http_port))
            through = timed(plain, loop % small)
            straight = timed(plain, loop % ("--noproxy '*' http://127.0.0.1:%d/small" % http_port),
                             "--network")
            added.append((through - straight) / conns * 1000.0)
        return [("proxy CPU ÷ curl's CPU, HTTPS, %d MB (median of %d)" % (size_mb, rounds),
                 statistics.median(over_tls)),
                ("added per connection, ms (%d connections, median of %d)" % (conns, rounds),
                 statistics.median(added)),
                ("proxy CPU ÷ curl's CPU, plain HTTP, %d MB (no goal)" % size_mb,
                 statistics.median(over_http))]
    finally:
        for env in envs:
            env.close()
        for httpd in servers:
            httpd.shutdown()
            httpd.server_close()
        shutil.rmtree(certs, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for figure, value in rows(os.path.abspath(args.bin), args.quick):
        print("%-60s %.3f" % (figure, value))


if __name__ == "__main__":
    main()
