"""make bench: every figure of the performance goals, measured in one run, printed as one table.

    /usr/bin/python3 tests/bench/run_bench.py --bin BUILD/bin

Benchmarks print; they do not assert: a missed goal shows as "MISSED" and the exit status stays
0. The exit status is 1 only when a figure could not be measured at all (a broken benchmark).

Everything runs in a private world: a temp dir with its own socket (AGENT_SOCKET), XDG dirs,
HOME and projects, and the scripted model server (tests/model_server/scripted_model.py) on
127.0.0.1 answering at once. Every process started here is stopped before exit.

Methods (the table's notes repeat the essentials):
- Processes are started with posix_spawn and reaped with wait4, which gives the wall time as
  seen by the parent (spawn to exit), and the child's own CPU time and max RSS (rusage).
- The scripted server's --log is a FIFO read by a thread here, which takes the monotonic time
  when each log line arrives. The server writes the line when the request has arrived and
  been parsed, before it answers, so "spawn of agent → line" is the time to the first model
  request. The server's own share of that (receipt → line) is measured by replaying the same
  request body on a raw socket, and shown, not subtracted.
- The daemon's CPU comes from /proc/<pid>/stat (utime + stime, dead threads included); its
  pid from `agent daemon status`.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import grpc_client  # noqa: E402  (stubs generated from proto/ on first use)

SERVER = os.path.join(HERE, "..", "model_server", "scripted_model.py")
CLK_TCK = os.sysconf("SC_CLK_TCK")
MB = 1024 * 1024


# ---- the world ------------------------------------------------------------------------------

class Run:
    def __init__(self, wall_ns, code, ru, err):
        self.wall_ms = wall_ns / 1e6
        self.code = code
        self.cpu_ms = (ru.ru_utime + ru.ru_stime) * 1000.0
        self.maxrss_kb = ru.ru_maxrss
        self.err = err


class World:
    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.dir = tempfile.mkdtemp(prefix="agb-", dir="/tmp")
        self.project = self.path("project")
        os.makedirs(self.project)
        self.socket = self.path("d.sock")
        self.fifo = self.path("model.log")
        os.mkfifo(self.fifo, 0o600)
        self.lines = []  # (monotonic ns of arrival, raw log line)
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()
        script = self.path("script.json")
        with open(script, "w") as f:
            json.dump({"replies": [{"text": "ok", "repeat": 100000}]}, f)
        self.server = subprocess.Popen([sys.executable, SERVER, "--script", script,
                                        "--log", self.fifo],
                                       stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                       text=True)
        line = self.server.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("scripted model server did not start: %r" % line)
        self.port = int(line.split()[1])
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("AGENT_", "OPENAI_", "ANTHROPIC_", "XDG_"))}
        self.env.update({
            "AGENT_SOCKET": self.socket,
            "XDG_STATE_HOME": self.path("state"),
            "XDG_CONFIG_HOME": self.path("config"),
            "XDG_RUNTIME_DIR": self.path("run"),
            "HOME": self.dir,
            "AGENT_BASE_URL": "http://127.0.0.1:%d/v1" % self.port,
            "AGENT_MODEL": "scripted",
            "AGENT_API_KEY": "bench-key-not-secret",
            "AGENT_MAX_STEPS": "60",
            "NO_COLOR": "1",
        })

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _read_log(self):
        with open(self.fifo, "rb") as f:  # blocks until the server opens its end
            for line in f:
                t = time.monotonic_ns()
                with self.cv:
                    self.lines.append((t, line))
                    self.cv.notify_all()

    def request_count(self):
        with self.cv:
            return len(self.lines)

    def wait_request(self, n, timeout=30.0):
        """Arrival time (ns) of the n-th model request (1-based)."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while len(self.lines) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("model request %d never came" % n)
                self.cv.wait(left)
            return self.lines[n - 1][0]

    def request_body(self, n):
        with self.cv:
            return json.loads(self.lines[n - 1][1])["body"]

    def load_script(self, replies):
        req = urllib.request.Request("http://127.0.0.1:%d/script" % self.port,
                                     data=json.dumps({"replies": replies}).encode(),
                                     method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    # -- processes --
    def spawn(self, *args, stdout="/dev/null", cwd=None):
        err = self.path("stderr.txt")
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                   (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
        exe = os.path.join(self.bin, "agent")
        old = os.getcwd()
        os.chdir(cwd or self.project)  # posix_spawn of Python 3.11 has no cwd
        try:
            t0 = time.monotonic_ns()
            pid = os.posix_spawn(exe, [exe, *args], self.env, file_actions=actions)
        finally:
            os.chdir(old)
        return pid, t0

    def reap(self, pid, t0, timeout=120.0):
        # A watchdog, so a hung client cannot hang the benchmark.
        timer = threading.Timer(timeout, lambda: os.kill(pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, ru = os.wait4(pid, 0)
        finally:
            timer.cancel()
        t1 = time.monotonic_ns()
        with open(self.path("stderr.txt")) as f:
            err = f.read()
        return Run(t1 - t0, os.waitstatus_to_exitcode(status), ru, err)

    def run(self, *args, stdout="/dev/null", cwd=None, timeout=120.0):
        pid, t0 = self.spawn(*args, stdout=stdout, cwd=cwd)
        return self.reap(pid, t0, timeout)

    def checked(self, *args, **kw):
        r = self.run(*args, **kw)
        if r.code != 0:
            raise RuntimeError("agent %s exited %d: %s" % (" ".join(args), r.code, r.err.strip()))
        return r

    def daemon_pid(self):
        out = self.path("status.txt")
        self.checked("daemon", "status", stdout=out)
        with open(out) as f:
            m = re.search(r"pid (\d+)", f.read())
        if not m:
            raise RuntimeError("no pid in `agent daemon status`")
        return int(m.group(1))

    def daemon_pids(self):
        """agentd processes serving this world's socket (to clean up after a failure)."""
        pids = []
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"agentd") and self.socket.encode() in cmd:
                pids.append(int(p))
        return pids

    def stop_daemon(self):
        self.run("daemon", "stop", timeout=30)
        for pid in self.daemon_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # Not our child, so no wait(): a bounded poll of /proc until it is gone.
        for _ in range(1000):
            if not self.daemon_pids():
                return
            time.sleep(0.005)
        raise RuntimeError("agentd did not go away")

    def close(self):
        try:
            self.stop_daemon()
        except Exception:
            pass
        self.server.send_signal(signal.SIGTERM)
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server.stdout.close()
        self.reader.join(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)


def proc_cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / CLK_TCK  # utime, stime


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for %d" % pid)


# ---- saved sessions, written the way daemon/store.cc writes them ---------------------------

FILE_TEXT = "".join("    if (count_%d > limit) { return \"too many\"; }  // ½ ok\n" % i
                    for i in range(8))


def transcript(n, workdir, tag):
    msgs = [{"role": "system", "content": "You are a coding agent working in the project at "
             + workdir + ". Use the tools to inspect and change files and to run commands."}]
    while len(msgs) < n:
        k = len(msgs)
        phase = (k - 1) % 4
        if phase == 0:
            msgs.append({"role": "user", "content": "Please look at src/module_%d.cc and tell me "
                         "why the \"limit\" check fails at the maximum; then fix it." % k})
        elif phase == 1:
            msgs.append({"role": "assistant", "content": "I will read the file first.",
                         "tool_calls": [{"id": "call_%s_%d" % (tag, k), "type": "function",
                                         "function": {"name": "read_file", "arguments":
                                                      json.dumps({"path": "src/module_%d.cc" % k})}}]})
        elif phase == 2:
            msgs.append({"role": "tool", "tool_call_id": "call_%s_%d" % (tag, k - 1),
                         "content": FILE_TEXT})
        else:
            msgs.append({"role": "assistant", "content": "The check compares with `>` where "
                         "the contract says `>=`; I changed it and the tests pass → done."})
    while msgs[-1]["role"] == "assistant" and "tool_calls" in msgs[-1]:
        msgs.pop()  # keep the one rule: no unanswered call at the end
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    msgs[last_user]["content"] += " END-OF-HISTORY"
    return msgs


def write_sessions(workdir, count, messages):
    d = os.path.join(workdir, ".agent", "sessions")
    os.makedirs(d, exist_ok=True)
    ids, total = [], 0
    now = int(time.time() * 1000)
    for i in range(count):
        sid = "%016x" % random.getrandbits(64)
        msgs = transcript(messages, workdir, sid[:6])
        text = "[\n" + ",\n".join("  " + json.dumps(m, ensure_ascii=False) for m in msgs) + "\n]\n"
        with open(os.path.join(d, sid + ".json"), "w") as f:
            f.write(text)
        total += len(text.encode())
        meta = {"id": sid, "workdir": workdir, "title": "bench session %d" % i,
                "model": "scripted", "parent_id": "", "created_unix_ms": now - i,
                "updated_unix_ms": now - i, "message_count": len(msgs), "turns": len(msgs) // 4,
                "tool_calls": len(msgs) // 4, "compactions": 0, "prompt_tokens": 0,
                "completion_tokens": 0}
        with open(os.path.join(d, sid + ".meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
        ids.append(sid)
    return ids, total


# ---- the table ------------------------------------------------------------------------------

class Table:
    def __init__(self):
        self.rows = []
        self.notes = []
        self.errors = 0

    def add(self, figure, ours, goal="—", ratio="", status=""):
        self.rows.append((figure, ours, goal, ratio, status))

    def goal_le(self, figure, value, goal, unit, fmt="%.2f"):
        """A figure whose goal is an upper bound; ratio = ours / goal."""
        self.add(figure, (fmt % value) + " " + unit, "≤ %g %s" % (goal, unit),
                 "%.2f× goal" % (value / goal), "met" if value <= goal else "MISSED")

    def error(self, what, e):
        self.errors += 1
        self.add(what, "ERROR", "", "", "")
        self.notes.append("%s failed: %s" % (what, str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)))

    def print(self):
        head = ("figure", "ours", "goal", "ratio", "")
        cols = list(zip(head, *self.rows))
        widths = [max(len(str(c)) for c in col) for col in cols]
        line = "  ".join("-" * w for w in widths)
        print()
        print("  ".join(str(h).ljust(w) for h, w in zip(head, widths)).rstrip())
        print(line)
        for r in self.rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        print(line)
        for i, n in enumerate(self.notes, 1):
            print("[%d] %s" % (i, n))


def median(xs):
    return statistics.median(xs)


# ---- the figures ----------------------------------------------------------------------------

def bench_memory(w, t, mem_ids, mem_bytes):
    w.stop_daemon()
    w.checked("ls")  # starts a fresh daemon that has loaded nothing
    pid = w.daemon_pid()
    idle = rss_kb(pid) / 1024.0
    t.goal_le("agentd RSS, idle (fresh, after one `agent ls`)", idle, 15, "MB", "%.1f")
    pb, stub, channel = grpc_client.connect(w.socket)
    try:
        t0 = time.monotonic()
        for sid in mem_ids:
            stub.GetSession(pb.GetSessionRequest(id=sid), timeout=60)
        load_s = time.monotonic() - t0
        st = stub.DaemonStatus(pb.DaemonStatusRequest(), timeout=10)
    finally:
        channel.close()
    loaded = rss_kb(pid) / 1024.0
    t.add("agentd RSS, %d sessions × 200 msgs loaded" % st.sessions_loaded, "%.1f MB" % loaded,
          "—", "+%.0f KB/session" % ((loaded - idle) * 1024 / max(1, len(mem_ids))))
    t.notes.append("memory: %d session files of 200 messages (%.1f MB of JSON on disk) written "
                   "in store.cc's format, loaded by GetSession for each (%.2f s for all); "
                   "RSS is VmRSS of /proc/<agentd>/status." % (len(mem_ids), mem_bytes / MB, load_s))


def bench_attach(w, t, big_ids):
    out = w.path("attach.txt")

    def attach(sid):
        r = w.checked("attach", sid, stdout=out)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if "END-OF-HISTORY" not in text:
            raise RuntimeError("attach did not show the history: %r" % text[-200:])
        return r, len(text.encode())

    cold = [attach(sid) for sid in big_ids[1:6]]
    warm = [attach(big_ids[0]) for _ in range(6)][1:]  # the first of these loads it
    t.goal_le("attach 5,000-msg session → history shown, loaded (median of 5)",
              median(r.wall_ms for r, _ in warm), 50, "ms")
    t.goal_le("attach 5,000-msg session → history shown, from disk (median of 5)",
              median(r.wall_ms for r, _ in cold), 50, "ms")
    t.notes.append("attach: wall time of `agent attach ID </dev/null >file` (renders the "
                   "snapshot's history, then detaches at EOF of stdin), %d KB rendered; 'from "
                   "disk' attaches 5 sessions not yet loaded (the daemon parses and checks the "
                   "file first)." % (cold[0][1] // 1024))


def bench_ls(w, t):
    w.checked("ls")
    runs = [w.checked("ls") for _ in range(20)]
    t.goal_le("`agent ls` round trip (median of 20)", median(r.wall_ms for r in runs), 5, "ms")
    return max(r.maxrss_kb for r in runs)


def bench_first_request(w, t):
    w.checked("ls")  # the daemon is up
    up, rss = [], []
    first_n = None
    for _ in range(7):
        k = w.request_count()
        pid, t0 = w.spawn("hi")
        t_req = w.wait_request(k + 1)
        r = w.reap(pid, t0)
        if r.code != 0:
            raise RuntimeError("agent hi exited %d: %s" % (r.code, r.err.strip()))
        up.append((t_req - t0) / 1e6)
        rss.append(r.maxrss_kb)
        first_n = first_n or k + 1
    t.goal_le("start of `agent \"hi\"` → first model request, daemon up (median of 7)",
              median(up), 10, "ms")
    auto = []
    for _ in range(5):
        w.stop_daemon()
        k = w.request_count()
        pid, t0 = w.spawn("hi")
        t_req = w.wait_request(k + 1)
        r = w.reap(pid, t0)
        if r.code != 0:
            raise RuntimeError("agent hi (auto-start) exited %d: %s" % (r.code, r.err.strip()))
        auto.append((t_req - t0) / 1e6)
    t.goal_le("start of `agent \"hi\"` → first model request, auto-start (median of 5)",
              median(auto), 100, "ms")

    # The scripted server's own share: the same body replayed on a raw socket.
    body = w.request_body(first_n)
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    share = []
    for _ in range(5):
        k = w.request_count()
        s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
        try:
            req = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   b"Content-Type: application/json\r\nConnection: close\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(raw)) + raw
            t0 = time.monotonic_ns()
            s.sendall(req)
            t1 = w.wait_request(k + 1)
            while s.recv(65536):
                pass
        finally:
            s.close()
        share.append((t1 - t0) / 1e6)
    t.notes.append("first request: from posix_spawn of `agent \"hi\"` to the arrival of the "
                   "scripted server's --log line for the request (a FIFO read here); the "
                   "server's own part of that (request sent → line, replaying the same body "
                   "on a raw socket) is %.2f ms (median of 5), included, not subtracted. "
                   "Auto-start: `agent daemon stop` before each run." % median(share))
    return body, max(rss)


def bench_request_size(t, body):
    def size(x):
        return len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode())
    system = "".join(m.get("content") or "" for m in body.get("messages", [])
                     if m.get("role") == "system")
    tools = body.get("tools", [])
    t.add("first request body (system prompt + tool schemas)", "%d bytes" % size(body))
    t.add("  of which system prompt", "%d bytes" % len(system.encode()))
    t.add("  of which tool schemas (%d tools)" % len(tools), "%d bytes" % size(tools))
    t.notes.append("request size: the first request of a new session as the scripted server "
                   "logged it, re-encoded compactly as UTF-8 JSON (what the wire carries).")


def bench_steps(w, t, runs=5, steps=50):
    with open(os.path.join(w.project, "small.txt"), "w") as f:
        f.write("a small file\nof three lines\nfor the benchmark\n")
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "small.txt"}}],
               "repeat": steps - 1}, {"text": "read it %d times" % (steps - 1)}]
    w.checked("ls")
    pid = w.daemon_pid()
    walls, d_cpu, c_cpu, s_cpu = [], 0.0, 0.0, 0.0
    for _ in range(runs):
        w.load_script(script)
        k = w.request_count()
        d0, s0 = proc_cpu_ms(pid), proc_cpu_ms(w.server.pid)
        r = w.checked("read small.txt again and again")
        d1, s1 = proc_cpu_ms(pid), proc_cpu_ms(w.server.pid)
        n = w.request_count() - k
        if n != steps:
            raise RuntimeError("the task made %d model requests, not %d" % (n, steps))
        walls.append(r.wall_ms / steps)
        d_cpu += d1 - d0
        c_cpu += r.cpu_ms
        s_cpu += s1 - s0
    total = runs * steps
    t.goal_le("%d-step task (read_file each step): wall per step (median of %d)" % (steps, runs),
              median(walls), 3, "ms")
    t.goal_le("  CPU per step, agentd + agent", (d_cpu + c_cpu) / total, 2, "ms")
    t.add("    agentd / agent / (scripted server, excluded)",
          "%.2f / %.2f / %.2f ms" % (d_cpu / total, c_cpu / total, s_cpu / total))
    w.load_script([{"text": "ok", "repeat": 100000}])
    t.notes.append("steps: `agent \"…\"` of %d model requests (%d read_file calls, then text), "
                   "%d runs; wall is the whole process, session creation included, and "
                   "includes the scripted server's answers; CPU of agentd from /proc/<pid>/stat "
                   "(10 ms ticks, summed over all runs), of agent from wait4's rusage; the "
                   "server's CPU is shown and not counted." % (steps, steps - 1, runs))


def bench_fanout(w, t, bin_dir):
    fan = w.path("fan")
    os.makedirs(fan)
    w.checked("ls")
    p = subprocess.run([os.path.join(bin_dir, "fanout_bench"), "--socket", w.socket,
                        "--workdir", fan, "--clients", "1,50", "--blast", "20000,4000",
                        "--paced", "1000", "--rate", "1000"],
                       capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError("fanout_bench exited %d: %s" % (p.returncode, p.stderr.strip()))
    res = {}
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r["error"]:
            raise RuntimeError("fanout_bench %s/%s/%d: %s" % (r["target"], r["mode"],
                                                              r["clients"], r["error"]))
        res[(r["target"], r["mode"], r["clients"])] = r
    for n in (1, 50):
        d, b = res[("daemon", "blast", n)], res[("bare", "blast", n)]
        ratio = d["deltas_per_s"] / b["deltas_per_s"]
        extra = ""
        if d["messages_per_s"] < d["deltas_per_s"] * 0.99:
            extra = " in %.0f msg/s" % d["messages_per_s"]
        if d["resyncs"]:
            extra += ", %d resyncs" % d["resyncs"]
        t.add("deltas → %d client%s, throughput (%d deltas each)" % (n, "s" * (n > 1), d["deltas"]),
              "%.0f deltas/s%s" % (d["deltas_per_s"], extra),
              "≥ 50%% of bare (%.0f/s)" % b["deltas_per_s"],
              "%.0f%% of bare" % (ratio * 100), "met" if ratio >= 0.5 else "MISSED")
        d, b = res[("daemon", "paced", n)], res[("bare", "paced", n)]
        t.add("deltas → %d client%s, latency p50 / p99 at 1000/s" % (n, "s" * (n > 1)),
              "%.0f / %.0f µs" % (d["p50_us"], d["p99_us"]),
              "bare: %.0f / %.0f µs" % (b["p50_us"], b["p99_us"]),
              "%.1f× / %.1f× bare" % (d["p50_us"] / max(b["p50_us"], 1e-9),
                                      d["p99_us"] / max(b["p99_us"], 1e-9)))
    t.notes.append("fan-out (tests/bench/fanout_bench.cc): the benchmark is the model (an SSE "
                   "server stamping each delta with its send time) and the N clients (a "
                   "connection each); latency = arrival - send stamp, one clock; throughput = "
                   "N × deltas / (last arrival - first send). 'bare' streams the same Event "
                   "messages from a plain gRPC callback server in that process over a Unix "
                   "socket. Coalescing of lagging clients' deltas (daemon only, by design) "
                   "shows as msg/s below deltas/s.")


def gbench(exe, *args):
    p = subprocess.run([exe, "--benchmark_format=json", *args], capture_output=True, text=True,
                       timeout=180, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (exe, p.returncode, p.stderr.strip()[-300:]))
    return json.loads(p.stdout)["benchmarks"]


def bench_store(t, bin_dir, tmp):
    env_tmp = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = tmp
    try:
        rows = gbench(os.path.join(bin_dir, "store_bench"), "--benchmark_repetitions=3",
                      "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.2")
    finally:
        if env_tmp is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = env_tmp
    for r in rows:
        if r.get("aggregate_name") != "median":
            continue
        n = int(r["run_name"].split("/")[1])
        t.add("save after a message, %s-message transcript" % format(n, ","),
              "%.2f ms (CPU %.2f ms), %.0f KB written" % (r["real_time"], r["cpu_time"],
                                                         r["bytes"] / 1024))
    t.notes.append("save: store_bench (Google Benchmark, median of 3 repetitions) calling "
                   "SaveTranscript in a temp dir on %s: serialise, write, fsync, rename, fsync "
                   "of the directory; the CPU figure is the thread's, the rest waits for the disk."
                   % tmp)


def bench_llm(t, bin_dir):
    rows = gbench(os.path.join(bin_dir, "llm_bench"), "--benchmark_min_time=0.2")
    for r in rows:
        name = r["name"].split("/")[0].replace("BM_", "")
        parts = ["%.0f MB/s" % (r["bytes_per_second"] / MB)] if "bytes_per_second" in r else []
        if "items_per_second" in r:
            parts.append("%.2f M deltas/s" % (r["items_per_second"] / 1e6))
        t.add("model stream pipeline: %s" % name, ", ".join(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="bin dir of a Release build")
    args = ap.parse_args()
    bin_dir = os.path.abspath(args.bin)
    for exe in ("agent", "agentd", "fanout_bench", "store_bench", "llm_bench"):
        if not os.access(os.path.join(bin_dir, exe), os.X_OK):
            print("run_bench: %s/%s is missing; build the Release tree first" % (bin_dir, exe),
                  file=sys.stderr)
            return 2
    started = time.monotonic()
    t = Table()
    w = World(bin_dir)
    try:
        mem = os.path.join(w.dir, "mem")
        big = os.path.join(w.dir, "big")
        mem_ids, mem_bytes = write_sessions(mem, 100, 200)
        big_ids, _ = write_sessions(big, 6, 5000)
        state = os.path.join(w.env["XDG_STATE_HOME"], "agent")
        os.makedirs(state, mode=0o700)
        with open(os.path.join(state, "projects.json"), "w") as f:
            json.dump({"projects": [w.project, mem, big]}, f)

        steps = [
            ("memory", lambda: bench_memory(w, t, mem_ids, mem_bytes)),
            ("attach", lambda: bench_attach(w, t, big_ids)),
        ]
        ls_rss = [None]
        first = [None, None]

        def ls():
            ls_rss[0] = bench_ls(w, t)

        def first_request():
            first[0], first[1] = bench_first_request(w, t)

        steps += [("agent ls", ls), ("first request", first_request)]
        for name, fn in steps:
            try:
                fn()
            except Exception as e:  # a broken figure must not hide the others
                traceback.print_exc(file=sys.stderr)
                t.error(name, e)
        if ls_rss[0] is not None:
            t.add("agent max RSS: `agent ls` / one-shot turn",
                  "%.1f / %s MB" % (ls_rss[0] / 1024.0,
                                    "%.1f" % (first[1] / 1024.0) if first[1] else "?"))
        for name, fn in [("request size", lambda: first[0] is not None and bench_request_size(t, first[0])),
                         ("50-step task", lambda: bench_steps(w, t)),
                         ("fan-out", lambda: bench_fanout(w, t, bin_dir))]:
            try:
                fn()
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                t.error(name, e)
    finally:
        w.close()
    for name, fn in [("store", lambda: bench_store(t, bin_dir, tempfile.gettempdir())),
                     ("llm stream", lambda: bench_llm(t, bin_dir))]:
        try:
            fn()
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            t.error(name, e)
    t.notes.append("machine: %d cores, load average %.2f at the end; total run %.0f s. Goals "
                   "are printed, never asserted." % (os.cpu_count(), os.getloadavg()[0],
                                                      time.monotonic() - started))
    t.print()
    return 1 if t.errors else 0


if __name__ == "__main__":
    sys.exit(main())
