"""make bench: every figure of the performance goals, measured in one run, printed as one table.

    /usr/bin/python3 tests/bench/run_bench.py --bin BUILD/bin [--only spike] [--quick]

--only spike runs only the output-spike memory rows (needs just agent and agentd in BUILD/bin).
--quick runs every section with a few iterations on small inputs: its figures mean nothing, but
it proves that every section still runs to the table (`make test` runs it on the Debug tree).

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
import hashlib
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
import long_steps_bench  # noqa: E402  (tests/bench/long_steps_bench.py)
import subagent_bench  # noqa: E402  (tests/bench/subagent_bench.py)

STOCK_SERVER = os.path.join(HERE, "..", "model_server", "scripted_model.py")
SERVER = os.path.join(HERE, "model_nodelay.py")  # the same server with TCP_NODELAY
CLK_TCK = os.sysconf("SC_CLK_TCK")
QUICK = False  # --quick: every section, a few iterations on small inputs


def q(full, quick):
    """`full` in a real run, `quick` under --quick."""
    return quick if QUICK else full
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
            self.server.kill()
            self.server.wait()
            shutil.rmtree(self.dir, ignore_errors=True)
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


# ---- saved sessions, written the way daemon/store/store.cc writes them ---------------------------

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


def project_key(workdir):
    """ProjectKey of daemon/store/sessions_dir.cc (the same as tests/integration/harness.py's)."""
    real = os.path.realpath(workdir)
    base = "".join(c for c in os.path.basename(real)
                   if (c.isascii() and c.isalnum()) or c in "._-")[:40]
    if not base or base.startswith("."):
        base = "p" + base
    return "%s-%s" % (base, hashlib.sha256(real.encode()).hexdigest()[:16])


def write_sessions(state_home, workdir, count, messages):
    os.makedirs(workdir, exist_ok=True)
    d = os.path.join(state_home, "agent", "projects", project_key(workdir), "sessions")
    os.makedirs(d, mode=0o700, exist_ok=True)
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

SECTIONS = ["latency", "steps", "fanout", "sessions", "long", "attach", "memory", "request", "save",
            "stream", "checkpoints", "sandbox", "billing", "acp"]


class Table:
    def __init__(self):
        self.rows = {s: [] for s in SECTIONS}
        self.notes = []
        self.errors = 0

    def add(self, section, figure, ours, goal="—", ratio="", status=""):
        """A row; the 1-minute load average at the time is printed beside it. A section missing
        from SECTIONS is printed last rather than lost."""
        self.rows.setdefault(section, []).append((figure, ours, goal, ratio, status,
                                   "%.2f" % os.getloadavg()[0]))

    def goal_le(self, section, figure, value, goal, unit, fmt="%.2f"):
        """A figure whose goal is an absolute upper bound (memory: not a matter of load)."""
        self.add(section, figure, (fmt % value) + " " + unit, "≤ %g %s" % (goal, unit),
                 "%.2f× goal" % (value / goal), "met" if value <= goal else "MISSED")

    def goal_ratio(self, section, figure, value, unit, ref, ref_name, goal, fmt="%.2f"):
        """A figure whose goal is a ratio to a reference measured in the same run, interleaved
        with it: ours / ref ≤ goal."""
        ratio = value / ref if ref > 0 else float("inf")
        self.add(section, figure, (fmt % value) + " " + unit,
                 "≤ %g× %s (%s %s)" % (goal, ref_name, fmt % ref, unit),
                 "%.2f×" % ratio, "met" if ratio <= goal else "MISSED")

    def note(self, text):
        self.notes.append(text)

    def error(self, section, what, e):
        self.errors += 1
        self.add(section, what, "ERROR (note %d)" % (len(self.notes) + 1))
        msg = str(e).strip()
        self.notes.append("%s could not be measured: %s" % (what, msg.splitlines()[-1] if msg
                                                             else repr(e)))

    def print(self, title):
        head = ("figure", "ours", "goal", "ratio", "", "load")
        order = SECTIONS + [s for s in self.rows if s not in SECTIONS]
        rows = [r for s in order for r in self.rows[s]]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
        rule = "  ".join("-" * w for w in widths)
        print()
        print(title)
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        print(rule)
        for r in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        print(rule)
        for i, n in enumerate(self.notes, 1):
            print("[%d] %s" % (i, n))
        sys.stdout.flush()


def median(xs):
    return statistics.median(list(xs))


# ---- the figures ----------------------------------------------------------------------------

def bench_memory(w, t, mem_ids, mem_bytes):
    w.stop_daemon()
    w.checked("ls")  # starts a fresh daemon that has loaded nothing
    pid = w.daemon_pid()
    idle = rss_kb(pid) / 1024.0
    t.goal_le("memory", "agentd RSS, idle (fresh, after one `agent ls`)", idle, 15, "MB", "%.1f")
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
    t.add("memory", "agentd RSS, %d sessions × 200 msgs loaded" % st.sessions_loaded,
          "%.1f MB" % loaded, "—",
          "+%.0f KB/session" % ((loaded - idle) * 1024 / max(1, len(mem_ids))))
    t.note("memory: VmRSS of agentd (/proc/<pid>/status). %d session files of 200 messages "
           "(%.1f MB of JSON) written in store.cc's format, then loaded by a GetSession each "
           "(%.2f s for all)." % (len(mem_ids), mem_bytes / MB, load_s))


def status_of(pid):
    """(VmRSS, VmHWM) of `pid` in MB."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
    return out["VmRSS"], out["VmHWM"]


def sessions_loaded(w):
    pb, stub, channel = grpc_client.connect(w.socket)
    try:
        return stub.DaemonStatus(pb.DaemonStatusRequest(), timeout=10).sessions_loaded
    finally:
        channel.close()


def bench_output_spike(w, t, sessions=4, size=1000000000, idle_s=3):
    """agentd's RSS after `sessions` sessions each ran a bash tool printing `size` bytes, then
    after they idled out (AGENT_SESSION_IDLE_UNLOAD_S=idle_s)."""
    w.stop_daemon()
    env = {"AGENT_SESSION_IDLE_UNLOAD_S": str(idle_s), "AGENT_BASH_TIMEOUT": "900"}
    w.checked("ls", env=env)  # a fresh daemon with a short idle time
    pid = w.daemon_pid()
    before, _ = status_of(pid)
    command = "yes | head -c %d" % size
    w.load_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}],
                    "repeat": sessions}, {"text": "printed it", "repeat": sessions}])
    t0 = time.monotonic()
    running = []
    try:
        for _ in range(sessions):
            k = w.request_count()
            running.append(w.spawn("--yes", "print a lot", env=env))
            w.wait_request(k + 1)  # each session's first request takes the next tool call
        runs = [w.reap(p, t_spawn, timeout=900) for p, t_spawn in running]
    except BaseException:
        for p, t_spawn in running:
            try:
                os.kill(p, signal.SIGKILL)
                w.reap(p, t_spawn)
            except OSError:
                pass
        raise
    run_s = time.monotonic() - t0
    for r in runs:
        if r.code != 0:
            raise RuntimeError("a spike session exited %d: %s" % (r.code, r.err.strip()))
    after, peak = status_of(pid)
    t.add("memory", "agentd RSS after %d sessions × bash printing %.0f GB (peak)"
          % (sessions, size / 1e9), "%.1f MB (peak %.1f MB)" % (after, peak), "—",
          "%.1f MB before" % before)
    # Bounded wait for the unload (an older daemon never unloads: the row says so).
    deadline = time.monotonic() + idle_s + 30
    while sessions_loaded(w) > 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    loaded = sessions_loaded(w)
    idled, _ = status_of(pid)
    t.add("memory", "agentd RSS after those sessions idled out (%d s idle time)" % idle_s,
          "%.1f MB" % idled, "—", "%d sessions still loaded" % loaded)
    t.note("output spike: %d one-shot `agent --yes` sessions started together, each running "
           "`%s` through the bash tool (%.0f s for all); VmRSS and VmHWM of agentd from "
           "/proc/<pid>/status once every client exited, then again once DaemonStatus showed "
           "no session loaded (or %d s passed)." % (sessions, command, run_s, idle_s + 30))
    w.stop_daemon()  # later figures start without the short idle time


def bench_client_rss(w, t):
    ls = w.maxrss_kb("ls")
    turn = w.maxrss_kb("hi")
    version = w.maxrss_kb("--version")
    t.add("memory", "agent max RSS: `agent ls` / one-shot turn / `--version`",
          "%.1f / %.1f / %.1f MB" % (ls / 1024.0, turn / 1024.0, version / 1024.0))
    t.note("client RSS: ru_maxrss from tests/bench/maxrss.cc, a small forking parent; the "
           "rusage a Python parent gets is wrong for this (a vfork child is charged the "
           "parent's RSS).")


def bench_attach(w, t, big_ids, big_dir):
    out = w.path("attach.txt")

    def attach(sid):
        r = w.checked("attach", sid, stdout=out)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if "END-OF-HISTORY" not in text:
            raise RuntimeError("attach did not show the history: %r" % text[-200:])
        return r, len(text.encode())

    def parse(sid):
        """ms to read and parse the session's file alone (json.loads, C-accelerated)."""
        t0 = time.monotonic()
        with open(os.path.join(w.env["XDG_STATE_HOME"], "agent", "projects", project_key(big_dir),
                               "sessions", sid + ".json"), "rb") as f:
            json.loads(f.read())
        return (time.monotonic() - t0) * 1000

    cold, parse_cold = [], []
    for sid in big_ids[1:6]:  # each attached once: interleaved by hand
        cold.append(attach(sid))
        parse_cold.append(parse(sid))
    attach(big_ids[0])  # loads it
    warm, parse_warm = interleaved(lambda: attach(big_ids[0]), lambda: parse(big_ids[0]), runs=5)
    t.goal_ratio("attach", "attach 5,000-msg session → history shown, loaded (median of 5)",
                 median(r.wall_ms for r, _ in warm), "ms", median(parse_warm),
                 "parsing its file", ATTACH_GOAL)
    t.goal_ratio("attach", "attach 5,000-msg session → history shown, from disk (median of 5)",
                 median(r.wall_ms for r, _ in cold), "ms", median(parse_cold),
                 "parsing its file", ATTACH_GOAL)
    t.note("attach: wall time of `agent attach ID </dev/null >file`: it renders the snapshot's "
           "history (%d KB of text, checked), then detaches at EOF of stdin. 'From disk' "
           "attaches 5 sessions not loaded yet: the daemon reads and checks the file first."
           % (cold[0][1] // 1024))


# Goals as ratios to a reference measured in the same run, interleaved with the figure: the
# absolute goal of a quiet machine divided by the reference's quiet figure. `agent --version`
# took 2.0 ms on a quiet run (README, Linking): `agent ls` ≤ 5 ms → 2.5×, the first request
# ≤ 10 ms → 5×, after an auto-start ≤ 100 ms → 50×.
LS_GOAL, FIRST_GOAL, AUTOSTART_GOAL = 2.5, 5.0, 50.0
# `agent ls` while 100 sessions run, p99 against its p99 on the idle daemon just before.
SESSIONS_LS_GOAL = 3.0
# A step ≤ 3 ms wall and ≤ 2 ms CPU, against one atomic write plus the scripted server's own
# CPU per request (wall), and against that server CPU alone (CPU: both are CPU-bound work of
# the same machine at the same moment); attach ≤ 50 ms against parsing the same file alone.
STEP_WALL_GOAL, STEP_CPU_GOAL, ATTACH_GOAL = 2.0, 3.0, 4.0


def interleaved(*fns, runs=20):
    """Runs fns round robin `runs` times (2 under --quick); returns each one's list of results."""
    out = [[] for _ in fns]
    for _ in range(q(runs, 2)):
        for i, fn in enumerate(fns):
            out[i].append(fn())
    return out


def version_ms(w):
    return w.checked("--version").wall_ms


def bench_ls(w, t):
    w.checked("ls")
    ls, version = interleaved(lambda: w.checked("ls").wall_ms, lambda: version_ms(w))
    t.goal_ratio("latency", "`agent ls` round trip (median of 20)", median(ls), "ms",
                 median(version), "`agent --version`", LS_GOAL)


def replay_share(w, body):
    """Median ms from sending `body` to the scripted server until its log line arrives."""
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    req = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\nConnection: close\r\n"
           b"Content-Length: %d\r\n\r\n" % len(raw)) + raw
    share = []
    for _ in range(5):
        k = w.request_count()
        s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
        try:
            t0 = time.monotonic_ns()
            s.sendall(req)
            t1 = w.wait_request(k + 1)
            while s.recv(65536):
                pass
        finally:
            s.close()
        share.append((t1 - t0) / 1e6)
    return median(share)


def time_to_request(w, *args):
    k = w.request_count()
    pid, t0 = w.spawn(*args)
    try:
        t_req = w.wait_request(k + 1)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        w.reap(pid, t0)
        raise
    r = w.reap(pid, t0)
    if r.code != 0:
        raise RuntimeError("agent %s exited %d: %s" % (" ".join(args), r.code, r.err.strip()))
    return (t_req - t0) / 1e6, k + 1


def bench_first_request(w, t):
    w.checked("ls")  # the daemon is up
    up, version = interleaved(lambda: time_to_request(w, "hi"), lambda: version_ms(w), runs=7)
    t.goal_ratio("latency", "start of `agent \"hi\"` → first model request, daemon up (median "
                 "of 7)", median(ms for ms, _ in up), "ms", median(version), "`agent --version`",
                 FIRST_GOAL)

    def autostart():
        w.stop_daemon()
        return time_to_request(w, "hi")[0]
    auto, version = interleaved(autostart, lambda: version_ms(w), runs=5)
    t.goal_ratio("latency", "start of `agent \"hi\"` → first model request, auto-start (median "
                 "of 5)", median(auto), "ms", median(version), "`agent --version`",
                 AUTOSTART_GOAL)
    body = w.request_body(up[0][1])
    t.note("first request: from posix_spawn of `agent \"hi\"` to the arrival of the scripted "
           "server's --log line for its request (the log is a FIFO read by a thread here). "
           "The server's own part (request sent → line, measured by replaying the same body "
           "on a raw socket) is %.2f ms, included, not subtracted. The path includes two saves "
           "(the new session, then the prompt), 4 atomic writes. Auto-start: `agent daemon "
           "stop` before each run." % replay_share(w, body))
    return body


# Tools added to the first request by issue 18 (update_plan) and after it (task, subagents;
# bash_job, issue 24).
TOOLS_SINCE_ISSUE_18 = ("update_plan", "task", "bash_job")


def bench_request_size(t, body):
    def size(x):
        return len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode())
    system = "".join(m.get("content") or "" for m in body.get("messages", [])
                     if m.get("role") == "system")
    tools = body.get("tools", [])
    t.add("request", "first request body, today (system prompt + %d tool schemas)" % len(tools),
          "%d bytes" % size(body))
    t.add("request", "  of which system prompt, today", "%d bytes" % len(system.encode()))
    t.add("request", "  of which tool schemas, today (%d tools)" % len(tools),
          "%d bytes" % size(tools))
    # Before issue 18 the system prompt was three sentences (no environment facts, no
    # instruction files) and neither update_plan nor task existed: the same request, rebuilt.
    workdir = system.split("Working directory: ", 1)[-1].split("\n", 1)[0]
    old_system = ("You are a coding agent working in the project at " + workdir + ". Use the "
                  "tools to inspect and change files and to run commands; paths are relative to "
                  "the project. Read a file before editing it. Keep answers short and say what "
                  "you changed.")
    old_tools = [x for x in tools
                 if x.get("function", {}).get("name") not in TOOLS_SINCE_ISSUE_18]
    old = dict(body, tools=old_tools)
    old["messages"] = [dict(m, content=old_system) if m.get("role") == "system" else m
                       for m in body.get("messages", [])]
    t.add("request", "first request body, before issue 18 (3-sentence prompt, %d tools)"
          % len(old_tools), "%d bytes" % size(old))
    t.note("request size: the first request of a new session as the scripted server logged "
           "it, re-encoded as compact UTF-8 JSON (what the wire carries); \"before issue 18\" "
           "is the same request with the old three-sentence system prompt and without the "
           "tools added since (%s). A project's AGENTS.md adds its own size (capped at 32 KiB)."
           % ", ".join(TOOLS_SINCE_ISSUE_18))


def step_script(steps):
    return [{"tool_calls": [{"name": "read_file", "arguments": {"path": "small.txt"}}],
             "repeat": steps - 1}, {"text": "read it %d times" % (steps - 1)}]


def atomic_write_ms(directory, runs=10):
    """Median ms of one atomic 4 KB file write as common/atomic_file.cc does it for a new name:
    write a temp file, fsync, rename, fsync the directory (a replaced file skips the last)."""
    times = []
    for i in range(runs):
        path = os.path.join(directory, "probe-%d" % i)
        t0 = time.monotonic()
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, b"x" * 4096)
        os.fsync(fd)
        os.close(fd)
        os.rename(path + ".tmp", path)
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
        times.append((time.monotonic() - t0) * 1000)
        os.unlink(path)
    return median(times)


def run_steps(w, steps, cwd=None, env=None):
    """One task of `steps` model requests; returns its Run."""
    r = w.run("read small.txt again and again", cwd=cwd, env=env)
    if r.code != 0:
        raise RuntimeError("the %d-step task exited %d: %s" % (steps, r.code, r.err.strip()))
    return r


def bench_steps(w, t, runs=5, steps=50):
    small = "a small file\nof three lines\nfor the benchmark\n"
    with open(os.path.join(w.project, "small.txt"), "w") as f:
        f.write(small)
    w.checked("ls")
    pid = w.daemon_pid()
    walls, probes, d_cpu, c_cpu, s_cpu = [], [], 0.0, 0.0, 0.0
    for _ in range(runs):
        probes.append(atomic_write_ms(w.project, 4))  # the disk as it is around each run
        w.load_script(step_script(steps))
        k = w.request_count()
        d0, s0 = proc_cpu_ms(pid), proc_cpu_ms(w.server.pid)
        r = run_steps(w, steps)
        d1, s1 = proc_cpu_ms(pid), proc_cpu_ms(w.server.pid)
        n = w.request_count() - k
        if n != steps:
            raise RuntimeError("the task made %d model requests, not %d" % (n, steps))
        walls.append(r.wall_ms / steps)
        d_cpu += d1 - d0
        c_cpu += r.cpu_ms
        s_cpu += s1 - s0
    total = runs * steps
    server = s_cpu / total
    t.goal_ratio("steps", "%d-step task (read_file each step): wall per step (median of %d)"
                 % (steps, runs), median(walls), "ms", median(probes) + server,
                 "one atomic write + server CPU/request", STEP_WALL_GOAL)
    t.goal_ratio("steps", "  CPU per step, agentd + agent", (d_cpu + c_cpu) / total, "ms",
                 server, "server CPU/request", STEP_CPU_GOAL)
    t.add("steps", "    agentd / agent / (scripted server, not counted)",
          "%.2f / %.2f / %.2f ms" % (d_cpu / total, c_cpu / total, server))
    t.add("steps", "  for scale: one atomic 4 KB file write in the project (median)",
          "%.2f ms" % median(probes))

    # The same task in a project on tmpfs, where fsync costs nothing: the agent's own share.
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        shm = tempfile.mkdtemp(prefix="agb-", dir="/dev/shm")
        try:
            with open(os.path.join(shm, "small.txt"), "w") as f:
                f.write(small)
            shm_walls = []
            for _ in range(3):
                w.load_script(step_script(steps))
                shm_walls.append(run_steps(w, steps, cwd=shm).wall_ms / steps)
            t.add("steps", "  for scale: wall per step, project on tmpfs (median of 3)",
                  "%.2f ms" % median(shm_walls))
        finally:
            shutil.rmtree(shm, ignore_errors=True)
    w.load_script([{"text": "ok", "repeat": 100000}])

    # Once against the stock scripted_model.py (Nagle on), to show why the bench does not.
    script = w.path("steps.json")
    with open(script, "w") as f:
        json.dump({"replies": step_script(steps)}, f)
    stock = subprocess.Popen([sys.executable, STOCK_SERVER, "--script", script],
                             stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        line = stock.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("stock scripted server did not start: %r" % line)
        r = run_steps(w, steps, env={"AGENT_BASE_URL": "http://127.0.0.1:%s/v1" % line.split()[1]})
        t.add("steps", "  for scale: wall per step, stock scripted_model.py (1 run)",
              "%.2f ms" % (r.wall_ms / steps))
    finally:
        stock.send_signal(signal.SIGTERM)
        try:
            stock.wait(timeout=10)
        except subprocess.TimeoutExpired:
            stock.kill()
            stock.wait()
        stock.stdout.close()
    t.note("steps: one `agent \"…\"` of %d model requests (%d read_file calls, then text), %d "
           "runs. Wall is the whole process (session creation included) and includes the "
           "scripted server's answers. CPU: agentd's from /proc/<pid>/stat (10 ms ticks, so "
           "summed over all runs), agent's from wait4; the server's is shown, not counted. "
           "Each step saves the transcript twice (the assistant message, the tool result; the "
           "meta file is written when the turn starts and ends): 2 atomic writes and 2 fsyncs "
           "per step, hence the disk rows. "
           "The server runs with TCP_NODELAY (tests/bench/model_nodelay.py): the stock one "
           "waits for delayed ACKs, ~40 ms per request." % (steps, steps - 1, runs))


fanout_bare_p99_ms = [None]  # the bare gRPC paced p99 of bench_fanout, for the sessions rows


def bench_fanout(w, t, bin_dir, repeat=3):
    fan = w.path("fan")
    os.makedirs(fan)
    w.checked("ls")
    runs = {}
    for _ in range(repeat):
        p = subprocess.run([os.path.join(bin_dir, "fanout_bench"), "--socket", w.socket,
                            "--workdir", fan, "--clients", "1,50", "--blast", "50000,10000",
                            "--paced", "2000", "--rate", "1000"],
                           capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise RuntimeError("fanout_bench exited %d: %s" % (p.returncode, p.stderr.strip()))
        for line in p.stdout.splitlines():
            r = json.loads(line)
            if r["error"]:
                raise RuntimeError("fanout_bench %s/%s/%d: %s" % (r["target"], r["mode"],
                                                                  r["clients"], r["error"]))
            runs.setdefault((r["target"], r["mode"], r["clients"]), []).append(r)
    # Each figure is the median of its runs.
    res = {key: {f: (median(r[f] for r in rs) if isinstance(rs[0][f], (int, float)) else rs[0][f])
                 for f in rs[0]} for key, rs in runs.items()}
    for n in (1, 50):
        d, b = res[("daemon", "blast", n)], res[("bare", "blast", n)]
        ratio = d["deltas_per_s"] / b["deltas_per_s"]
        resync = ", %d resyncs" % d["resyncs"] if d["resyncs"] else ""
        t.add("fanout", "deltas → %d client%s, throughput (%d deltas)" % (n, "s" * (n > 1),
                                                                          d["deltas"]),
              "%.0f deltas/s in %.0f msg/s%s" % (d["deltas_per_s"], d["messages_per_s"], resync),
              "≥ 50%% of bare: %.0f/s" % b["deltas_per_s"],
              "%.0f%% (msg/s: %.0f%%)" % (ratio * 100,
                                          100 * d["messages_per_s"] / b["messages_per_s"]),
              "met" if ratio >= 0.5 else "MISSED")
        d, b = res[("daemon", "paced", n)], res[("bare", "paced", n)]
        t.add("fanout", "deltas → %d client%s, latency p50 / p99 at 1000/s" % (n, "s" * (n > 1)),
              "%.0f / %.0f µs" % (d["p50_us"], d["p99_us"]),
              "bare: %.0f / %.0f µs" % (b["p50_us"], b["p99_us"]),
              "%.1f× / %.1f× bare" % (d["p50_us"] / max(b["p50_us"], 1e-9),
                                      d["p99_us"] / max(b["p99_us"], 1e-9)))
    fanout_bare_p99_ms[0] = res[("bare", "paced", 1)]["p99_us"] / 1000
    t.note("fan-out (fanout_bench.cc): the benchmark is the model (an SSE server that stamps "
           "each delta with its send time) and the N clients (a connection each), so latency = "
           "arrival - stamp on one clock, and throughput = N × deltas / (last arrival - first "
           "send). 'Bare' streams the same Event messages from a plain gRPC callback server in "
           "that process over a Unix socket. The daemon coalesces deltas for a client that "
           "lags (by design), hence msg/s below deltas/s; the ratio is of deltas/s, msg/s "
           "beside it. Each figure is the median of %d runs." % repeat)


SESSIONS_CPU_GOAL, SESSIONS_P99_GOAL_MS = 1.5, 10.0
SESSIONS_RSS_BASE_MB, SESSIONS_RSS_PER_SESSION_MB = 15.0, 0.5


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q / 100))]


def ls_while_running(w, cwd, proc, most=2000, every_s=0.05):
    """Wall ms of `agent ls` in `cwd`, one every `every_s` at most (so its own work stays a
    small part of the daemon's CPU the run measures), until `proc` exits."""
    times = []
    while proc.poll() is None and len(times) < most:
        r = w.run("ls", cwd=cwd)
        if r.code == 0 and proc.poll() is None:  # a call that ended after the run is idle
            times.append(r.wall_ms)
        try:
            proc.wait(timeout=every_s)  # returns at once when the run ends
        except subprocess.TimeoutExpired:
            pass
    return times


def bench_sessions(w, t, bin_dir, counts=(1, 10, 100), repeat=2, steps=50, bare_p99_ms=None):
    """N sessions at once, each a `steps`-step task with one attached client (sessions_bench)."""
    # On the disk, as people's projects are: every message is fsync'd there (the state dir, the
    # world's, is on the disk too unless /tmp is a tmpfs, which the note then says).
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else w.dir
    work = tempfile.mkdtemp(prefix="agb-sessions-", dir=base)
    try:
        with open(os.path.join(work, "small.txt"), "w") as f:
            f.write("a small file\nof three lines\nfor the benchmark\n")
        runs = {}
        for _ in range(repeat):
            for n in counts:  # interleaved, each count in a fresh daemon (RSS of its own)
                w.stop_daemon()
                w.checked("ls")
                idle = [w.checked("ls", cwd=work).wall_ms for _ in range(20)]
                p = subprocess.Popen([os.path.join(bin_dir, "sessions_bench"), "--socket",
                                      w.socket, "--pid", str(w.daemon_pid()), "--workdir", work,
                                      "--sessions", str(n), "--steps", str(steps)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL)
                busy = ls_while_running(w, work, p)
                out, err = p.communicate(timeout=600)
                if p.returncode != 0:
                    raise RuntimeError("sessions_bench exited %d: %s" % (p.returncode, err.strip()))
                for line in out.splitlines():
                    r = json.loads(line)
                    if r["error"]:
                        raise RuntimeError("sessions_bench, %d sessions: %s"
                                           % (r["sessions"], r["error"]))
                    r["ls_idle_p99_ms"] = percentile(idle, 99)
                    r["ls_busy_p99_ms"] = percentile(busy, 99) if busy else 0.0
                    r["ls_busy_count"] = len(busy)
                    runs.setdefault(r["sessions"], []).append(r)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {n: {f: median(r[f] for r in rs) for f in rs[0] if f != "error"}
           for n, rs in runs.items()}
    one = res[counts[0]]["cpu_ms_per_step"]
    for n in counts:
        r = res[n]
        label = "%d session%s × %d steps at once" % (n, "s" * (n > 1), steps)
        t.goal_ratio("sessions", label + ": agentd CPU per step", r["cpu_ms_per_step"], "ms",
                     one, "1 session", SESSIONS_CPU_GOAL)
        p99 = r["p99_us"] / 1000
        bare = " (bare gRPC fan-out p99: %.2f ms)" % bare_p99_ms if bare_p99_ms else ""
        t.add("sessions", "  model byte → attached client, p50 / p99",
              "%.2f / %.2f ms" % (r["p50_us"] / 1000, p99),
              "p99 ≤ %g ms%s" % (SESSIONS_P99_GOAL_MS, bare),
              "%.2f× goal" % (p99 / SESSIONS_P99_GOAL_MS),
              "met" if p99 <= SESSIONS_P99_GOAL_MS else "MISSED")
        t.goal_ratio("sessions", "  `agent ls` in their project while they run, p99 (%d calls)"
                     % r["ls_busy_count"], r["ls_busy_p99_ms"], "ms", r["ls_idle_p99_ms"],
                     "p99 of `agent ls` before, idle", SESSIONS_LS_GOAL)
        t.add("sessions", "  agentd threads: before / %d attached / peak / after" % n,
              "%d / %d / %d / %d" % (r["threads_before"], r["threads_attached"],
                                     r["threads_peak"], r["threads_idle"]),
              "≤ 1 per running turn", "peak %+d, after %+d" % (
                  r["threads_peak"] - r["threads_attached"],
                  r["threads_idle"] - r["threads_before"]))
        goal = SESSIONS_RSS_BASE_MB + SESSIONS_RSS_PER_SESSION_MB * n
        t.goal_le("sessions", "  agentd RSS, %d sessions loaded after their task (peak %.1f MB)"
                  % (n, r["rss_peak_mb"]), r["rss_loaded_mb"], goal, "MB", "%.1f")
    t.note("sessions (sessions_bench.cc): in a fresh daemon for each run, N sessions created "
           "through the API, one read-only "
           "client attached to each (a connection each), then N prompts at once; each task is "
           "%d model requests (%d read_file calls, then text) against the bench's own C++ "
           "model server, which stamps every answer's first delta with its send time: latency "
           "= arrival at the client - stamp, one clock. CPU: agentd's utime+stime from "
           "/proc/PID/stat over the run / the model requests made. Threads (Threads of "
           "/proc/PID/status) before, with the clients attached, peak (sampled every 10 ms) "
           "and once the turns ended; RSS once they ended, the sessions still loaded. The "
           "projects are on the disk (%s, %s), the state dir in %s (%s): each message is "
           "fsync'd. Counts run interleaved, %d times; each figure is the median."
           % (steps, steps - 1, base, fs_type(base), w.dir, fs_type(w.dir), repeat))


def fs_type(path):
    """The filesystem type of `path` from /proc/mounts (the longest mount point above it)."""
    best, kind = "", "?"
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and (real == parts[1] or real.startswith(
                        parts[1].rstrip("/") + "/")) and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def bench_long(t, bin_dir):
    """One step's request for a transcript of 100 / 1,000 / 10,000 messages (request_bench)."""
    rows = gbench(os.path.join(bin_dir, "request_bench"), *gbench_repeated())
    cpu = {}
    for r in rows:
        if r.get("aggregate_name") != "median":
            continue
        args = dict(kv.split(":") for kv in r["run_name"].split("/")[1:])
        cpu[(int(args["cached"]), int(args["messages"]))] = (r["cpu_time"], r.get("bytes", 0))
    sizes = sorted({n for _, n in cpu})
    ref = cpu[(1, sizes[0])][0]
    for n in sizes:
        c, size = cpu[(1, n)]
        t.goal_ratio("long", "step request, %s-message transcript: CPU (body %.0f KB)"
                     % (format(n, ","), size / 1024), c, "ms", ref,
                     "%d messages" % sizes[0], 1.5, fmt="%.3f")
        t.add("long", "  the old way (deep copy, whole body serialised)",
              "%.3f ms" % cpu[(0, n)][0], "—", "%.1f× cached" % (cpu[(0, n)][0] / c))
    t.note("long sessions (request_bench, Google Benchmark, median of 3): per step, what the "
           "session does to its transcript (append the reply and the tool result, the "
           "compaction check, the pending-call check) and the wire body built from the "
           "per-message cache (daemon/llm/request_cache.h); 'old way' copies the messages "
           "and serialises the whole body. The save after each message is the 'save' rows: "
           "it rewrites the file (see the README for why that stays).")


def gbench_min_time():
    return "--benchmark_min_time=%s" % q("0.2", "0.01")


def gbench_repeated():
    return ("--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
            gbench_min_time())


def gbench(exe, *args, env=None):
    p = subprocess.run([exe, "--benchmark_format=json", *args], capture_output=True, text=True,
                       timeout=180, stdin=subprocess.DEVNULL, env=env)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (exe, p.returncode, p.stderr.strip()[-300:]))
    return json.loads(p.stdout)["benchmarks"]


def bench_store(t, bin_dir):
    tmp = tempfile.gettempdir()
    rows = gbench(os.path.join(bin_dir, "store_bench"), *gbench_repeated(),
                  env=dict(os.environ, TMPDIR=tmp))
    per_message = {}
    for r in rows:
        if r.get("aggregate_name") != "median":
            continue
        name, n = r["run_name"].split("/")[:2]
        n = int(n)
        if name == "BM_SaveMessage":
            per_message[n] = r
            t.add("save", "save after a message (journal), %s-message transcript" % format(n, ","),
                  "%.2f ms (CPU %.3f ms), %.1f KB written" % (r["real_time"], r["cpu_time"],
                                                             r["bytes"] / 1024))
        else:
            t.add("save", "whole write (idle, compaction), %s-message transcript" % format(n, ","),
                  "%.2f ms (CPU %.2f ms), %.0f KB written" % (r["real_time"], r["cpu_time"],
                                                             r["bytes"] / 1024))
    if 100 in per_message and 10000 in per_message:
        big, small = per_message[10000], per_message[100]
        t.add("save", "save after a message at 10,000 messages ÷ at 100: time / CPU",
              "%.2f× / %.2f×" % (big["real_time"] / small["real_time"],
                                 big["cpu_time"] / small["cpu_time"]),
              "≤ 1.5×", status="met" if big["real_time"] <= 1.5 * small["real_time"]
              and big["cpu_time"] <= 1.5 * small["cpu_time"] else "MISSED")
    t.note("save: store_bench (Google Benchmark, median of 3 repetitions) in a temp dir under %s: "
           "after a message the session's saver appends it to the journal and fsyncs; the whole "
           "write (serialise, write, fsync, rename, new journal) happens at idle, compaction and "
           "shutdown. CPU is the thread's; the rest of the time waits for the disk." % tmp)


def bench_slow_disk(t, bin_dir):
    """A session's steps while another saves 10,000 messages to a slow disk (slow_disk_bench)."""
    p = subprocess.run([os.path.join(bin_dir, "slow_disk_bench"), "--steps", str(q(500, 5)),
                        "--rounds", str(q(3, 1)), "--messages", str(q(10000, 300))],
                       capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError("slow_disk_bench exited %d: %s" % (p.returncode, p.stderr[-300:]))
    r = json.loads(p.stdout)
    ratio = r["beside_ms_per_step"] / r["alone_ms_per_step"]
    t.add("save", "a session's step beside another saving %s messages to a slow disk ÷ alone"
          % format(r["a_messages"], ","),
          "%.3f ms vs %.3f ms a step (%d writes of 50 ms meanwhile)"
          % (r["beside_ms_per_step"], r["alone_ms_per_step"], r["slow_writes"]),
          "no slower (≤ 1.1×: the run's noise)", "%.2f×" % ratio,
          "met" if ratio <= 1.1 else "MISSED")
    t.note("slow disk: slow_disk_bench, in one process with the sessions' disk seam: session A "
           "(10,000 messages) runs a turn, waits for its writes, runs the next, while every "
           "write of its files sleeps 50 ms first; a new session B's turn of one-call steps on "
           "the real disk is timed beside it and alone, alternately (medians of the rounds).")


def bench_llm(t, bin_dir):
    for r in gbench(os.path.join(bin_dir, "llm_bench"), gbench_min_time()):
        name = r["name"].split("/")[0].replace("BM_", "")
        parts = ["%.0f MB/s" % (r["bytes_per_second"] / MB)] if "bytes_per_second" in r else []
        if "items_per_second" in r:
            parts.append("%.2f M deltas/s" % (r["items_per_second"] / 1e6))
        t.add("stream", "model stream pipeline (llm_bench): %s" % name, ", ".join(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="bin dir of a Release build")
    ap.add_argument("--only", choices=["spike"],
                    help="spike: only the output-spike memory rows (needs agent, agentd)")
    ap.add_argument("--quick", action="store_true",
                    help="every section with a few iterations on small inputs (a smoke test)")
    args = ap.parse_args()
    global QUICK
    QUICK = args.quick
    bin_dir = os.path.abspath(args.bin)
    if args.only == "spike":
        return main_spike(bin_dir)
    for exe in ("agent", "agentd", "fanout_bench", "sessions_bench", "store_bench",
                "request_bench", "llm_bench", "maxrss", "slow_disk_bench"):
        if not os.access(os.path.join(bin_dir, exe), os.X_OK):
            print("run_bench: %s/%s is missing; build the Release tree first" % (bin_dir, exe),
                  file=sys.stderr)
            return 2
    started = time.monotonic()
    load_at_start = os.getloadavg()[0]
    t = Table()

    def attempt(section, what, fn):
        try:
            return fn()
        except Exception as e:  # one broken figure must not hide the others
            traceback.print_exc(file=sys.stderr)
            t.error(section, what, e)
            return None

    w = World(bin_dir)
    try:
        # Saved sessions first: the daemon reads the project registry when it starts.
        mem, big = w.path("mem"), w.path("big")
        mem_ids, mem_bytes = write_sessions(w.env["XDG_STATE_HOME"], mem, q(100, 5), q(200, 20))
        big_ids, _ = write_sessions(w.env["XDG_STATE_HOME"], big, 6, q(5000, 100))
        state = os.path.join(w.env["XDG_STATE_HOME"], "agent")
        os.makedirs(state, mode=0o700, exist_ok=True)
        with open(os.path.join(state, "projects.json"), "w") as f:
            json.dump({"projects": [w.project, mem, big]}, f)

        attempt("memory", "agentd RSS", lambda: bench_memory(w, t, mem_ids, mem_bytes))
        attempt("attach", "attach", lambda: bench_attach(w, t, big_ids, big))
        attempt("latency", "agent ls", lambda: bench_ls(w, t))
        body = attempt("latency", "first model request", lambda: bench_first_request(w, t))
        if body is not None:
            attempt("request", "first request size", lambda: bench_request_size(t, body))
        attempt("memory", "agent RSS", lambda: bench_client_rss(w, t))
        # The scenarios against the running daemon, in order (add yours to the list).
        scenarios = [
            ("steps", "50-step task",
             lambda: bench_steps(w, t, runs=q(5, 1), steps=q(50, 5))),
            ("steps", "subagent step",
             lambda: subagent_bench.bench_subagent(w, t, proc_cpu_ms, median, runs=q(3, 1),
                                                   steps=q(20, 3))),
            ("fanout", "fan-out", lambda: bench_fanout(w, t, bin_dir, repeat=q(3, 1))),
            ("sessions", "many sessions",
             lambda: bench_sessions(w, t, bin_dir, counts=q((1, 10, 100), (1, 3)),
                                    repeat=q(2, 1), steps=q(50, 5),
                                    bare_p99_ms=fanout_bare_p99_ms[0])),
            ("memory", "output spike",
             lambda: bench_output_spike(w, t, sessions=q(4, 1), size=q(1000000000, 1000000))),
            # Last: it restarts the daemon with sessions of its own in the registry.
            ("long", "long sessions end to end",
             lambda: long_steps_bench.bench_long_steps(
                 w, t, write_sessions, proc_cpu_ms, median, sizes=q((20, 10000), (20, 200)),
                 runs=q(3, 1), steps=q(25, 5))),
        ]
        for section, what, fn in scenarios:
            attempt(section, what, fn)
    finally:
        w.close()
    import checkpoint_bench  # tests/bench/checkpoint_bench.py: a world of its own
    import sandbox_bench  # tests/bench/sandbox_bench.py: worlds of its own
    import billing_bench  # tests/bench/billing_bench.py: a world per task and provider
    import acp_bench  # tests/bench/acp_bench.py: the editor's latency, a world of its own
    import proxy_bench  # tests/bench/proxy_bench.py: the sandbox's network proxy
    # Those without a daemon.
    offline = [
        ("long", "long sessions", lambda: bench_long(t, bin_dir)),
        ("save", "save", lambda: bench_store(t, bin_dir)),
        ("save", "slow disk", lambda: bench_slow_disk(t, bin_dir)),
        ("stream", "model stream", lambda: bench_llm(t, bin_dir)),
        ("checkpoints", "checkpoints", lambda: [t.add("checkpoints", f, v, ratio=r)
                                                for f, v, r in checkpoint_bench.rows(bin_dir,
                                                                                   q(10000, 200))]),
        ("billing", "billing", lambda: [t.add("billing", *row)
                                        for row in billing_bench.rows(bin_dir, QUICK)]),
        ("acp", "editor latency", lambda: [t.add("acp", f, v, ratio=r)
                                           for f, v, r in acp_bench.rows(bin_dir)]),
    ]
    offline.append(("sandbox", "sandbox cost", lambda: [
        t.goal_le("sandbox", f, v, 15, "ms") for f, v in sandbox_bench.rows(bin_dir)]))
    def proxy_rows():
        (cpu_f, cpu), (conn_f, conn), (plain_f, plain) = proxy_bench.rows(bin_dir, QUICK)
        t.goal_le("proxy", cpu_f, cpu, 0.10, "×")
        t.goal_le("proxy", conn_f, conn, 2, "ms")
        t.add("proxy", plain_f, "%.2f×" % plain)
    offline.append(("proxy", "network proxy", proxy_rows))
    for section, what, fn in offline:
        attempt(section, what, fn)
    t.note("machine: %d cores shared with other work, load average %.2f at the start and "
           "%.2f at the end; whole run %.0f s. Goals are printed, never asserted."
           % (os.cpu_count(), load_at_start, os.getloadavg()[0], time.monotonic() - started))
    version = subprocess.run([os.path.join(bin_dir, "agent"), "--version"], capture_output=True,
                             text=True, stdin=subprocess.DEVNULL).stdout.strip()
    t.print("Benchmarks of %s, binaries in %s" % (version, bin_dir))
    return 1 if t.errors else 0


def main_spike(bin_dir):
    t = Table()
    w = World(bin_dir)
    try:
        bench_output_spike(w, t)
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        t.error("memory", "output spike", e)
    finally:
        w.close()
    t.print("Output-spike memory rows, binaries in %s" % bin_dir)
    return 1 if t.errors else 0


if __name__ == "__main__":
    sys.exit(main())
