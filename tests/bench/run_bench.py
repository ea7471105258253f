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

STOCK_SERVER = os.path.join(HERE, "..", "model_server", "scripted_model.py")
SERVER = os.path.join(HERE, "model_nodelay.py")  # the same server with TCP_NODELAY
CLK_TCK = os.sysconf("SC_CLK_TCK")
MB = 1024 * 1024


# ---- the world ------------------------------------------------------------------------------

class Run:
    def __init__(self, wall_ns, code, ru, err):
        self.wall_ms = wall_ns / 1e6
        self.code = code
        self.cpu_ms = (ru.ru_utime + ru.ru_stime) * 1000.0
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
    def spawn(self, *args, stdout="/dev/null", cwd=None, env=None, exe=None):
        """Starts `agent ARGS` (or `exe ARGS`) in the project; returns (pid, start ns)."""
        err = self.path("stderr.txt")
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                   (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
        argv = [exe, *args] if exe else [os.path.join(self.bin, "agent"), *args]
        environ = dict(self.env, **(env or {}))
        old = os.getcwd()
        os.chdir(cwd or self.project)  # posix_spawn of Python 3.11 has no cwd
        try:
            t0 = time.monotonic_ns()
            pid = os.posix_spawn(argv[0], argv, environ, file_actions=actions)
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

    def run(self, *args, stdout="/dev/null", cwd=None, timeout=120.0, env=None, exe=None):
        pid, t0 = self.spawn(*args, stdout=stdout, cwd=cwd, env=env, exe=exe)
        return self.reap(pid, t0, timeout)

    def maxrss_kb(self, *args):
        """Max RSS of `agent ARGS`, measured by the maxrss helper (see maxrss.cc for why)."""
        out = self.path("maxrss.txt")
        r = self.run(out, os.path.join(self.bin, "agent"), *args,
                     exe=os.path.join(self.bin, "maxrss"))
        if r.code != 0:
            raise RuntimeError("agent %s exited %d: %s" % (" ".join(args), r.code, r.err.strip()))
        with open(out) as f:
            return int(f.read().split()[0])

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


