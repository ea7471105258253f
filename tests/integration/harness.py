"""Test harness: a private agentd/agent world per test, against the scripted model server.

Each Env has its own temp dir with a project, a socket (short path: Unix sockets allow 108
bytes), XDG dirs and a strict scripted model server. close() stops the daemon, the server
and any agentd still serving that socket, and removes the dir. Nothing here sleeps to wait:
it waits on process exit, on lines of output, or on files with a bounded number of polls of
the daemon's own answers.
"""
import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model_server"))
import scripted_model  # noqa: E402  (the rule checker, shared with the server)

def _protocol_version():
    """kProtocolVersion of common/protocol.h, so tests follow a bump."""
    with open(os.path.join(HERE, "..", "..", "common", "protocol.h")) as f:
        for line in f:
            if "kProtocolVersion =" in line:
                return int(line.split("=")[1].strip(" ;\n"))
    raise RuntimeError("kProtocolVersion not found in common/protocol.h")


PROTOCOL_VERSION = _protocol_version()
BIN = os.environ.get("AGENT_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin"))
SERVER = os.path.join(HERE, "..", "model_server", "scripted_model.py")


def project_key(project):
    """ProjectKey of daemon/store/sessions_dir.cc: the base name (shell-safe characters, at most 40)
    and 16 hex digits of the SHA-256 of the canonical path."""
    real = os.path.realpath(project)
    base = "".join(c for c in os.path.basename(real)
                   if (c.isascii() and c.isalnum()) or c in "._-")[:40]
    if not base or base.startswith("."):
        base = "p" + base
    return "%s-%s" % (base, hashlib.sha256(real.encode()).hexdigest()[:16])


def transcript_problems(messages):
    """None when `messages` keeps the one rule, else the strict server's complaint."""
    body = {"model": "check", "messages": messages}
    return scripted_model.validate_openai(body)


def processes():
    """(pid, command line with NUL separators) of every process we can read, from /proc."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                yield int(p), f.read()
        except OSError:
            continue


def parent_pid(pid):
    """The parent of pid, from /proc (None when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2:].split()[1])


def _task_states(pid):
    """The state letter of each thread of pid, from /proc (empty when it is gone)."""
    states = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return states
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        states.append(stat[stat.rfind(")") + 2:][:1])
    return states


def process_alive(pid):
    """Whether pid may still hold its files. A dying process loses its command line (its memory
    is freed) before its files are closed, and its main thread turns zombie while the others
    still run with the shared file table: only when every thread is gone or a zombie is no
    socket of it left open."""
    return any(s not in ("Z", "X") for s in _task_states(pid))


_WORLDS = []  # the dir of every Env made by this test process


def _check_no_survivors():
    """At exit: no process whose command line names one of this run's worlds may outlive the
    tests (a daemon left behind by one test kept running after the suite). Such a process is
    killed, named, and the run fails."""
    me = os.getpid()
    marks = [(d + "/").encode() for d in _WORLDS]

    def survivors():
        return [(pid, cmd) for pid, cmd in processes()
                if pid != me and any(m in cmd for m in marks) and process_alive(pid)]

    deadline = time.monotonic() + 5
    left = survivors()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)  # processes killed by close() may still be exiting
        left = survivors()
    if not left:
        return
    for pid, cmd in left:
        print("harness: a process of this test's worlds survived it: pid %d: %s"
              % (pid, cmd.replace(b"\0", b" ").decode(errors="replace")), file=sys.stderr)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    sys.stderr.flush()
    os._exit(1)


atexit.register(_check_no_survivors)


class Env:
    def __init__(self, replies, strict=True, extra_env=None, summary=None, log_raw=False):
        self.dir = tempfile.mkdtemp(prefix="agt-", dir="/tmp")
        _WORLDS.append(self.dir)
        self.project = os.path.join(self.dir, "project")
        os.makedirs(self.project)
        self.socket = os.path.join(self.dir, "d.sock")
        self.log = os.path.join(self.dir, "model.log")
        script = os.path.join(self.dir, "script.json")
        if callable(replies):  # a script that needs to name this Env's dir
            replies = replies(self)
        with open(script, "w") as f:
            script_obj = {"replies": replies}
            if summary is not None:
                script_obj["summary"] = summary
            json.dump(script_obj, f)
        args = [sys.executable, SERVER, "--script", script, "--log", self.log]
        if strict:
            args.append("--strict")
        if log_raw:  # the log keeps each request body's exact text, for tests on bytes
            args.append("--log-raw")
        self.server = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self.server.stdout.readline()  # "PORT <n>" once it listens
        if not line.startswith("PORT "):
            raise RuntimeError("model server did not start: %r" % line)
        self.port = int(line.split()[1])
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("AGENT_", "OPENAI_", "ANTHROPIC_", "XDG_"))}
        self.env.update({
            "AGENT_SOCKET": self.socket,
            "XDG_STATE_HOME": os.path.join(self.dir, "state"),
            "XDG_CONFIG_HOME": os.path.join(self.dir, "config"),
            "HOME": self.dir,
            "AGENT_BASE_URL": "http://127.0.0.1:%d/v1" % self.port,
            "AGENT_MODEL": "scripted",
            "AGENT_API_KEY": "test-key-not-secret",
            "NO_COLOR": "1",
        })
        if extra_env:
            self.env.update(extra_env)

    # ---- running the client -----------------------------------------------------------
    def agent(self, *args, timeout=60, env=None, cwd=None):
        e = dict(self.env, **(env or {}))
        return subprocess.run([os.path.join(BIN, "agent"), *args], cwd=cwd or self.project,
                              env=e, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def popen_agent(self, *args, env=None, **kw):
        e = dict(self.env, **(env or {}))
        return subprocess.Popen([os.path.join(BIN, "agent"), *args], cwd=self.project, env=e,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def trust_rules(self):
        """A person trusts the project's allow rules (`agent trust --yes`): tests that ship
        project rules and expect them to apply say so, as a person would."""
        r = self.agent("trust", "--yes")
        if r.returncode != 0:
            raise RuntimeError("agent trust --yes failed: %s" % r.stderr)
        return r

    # ---- what happened ------------------------------------------------------------------
    def requests(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stats(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/stats" % self.port, timeout=10) as r:
            return json.load(r)

    def load_script(self, replies):
        """Replaces the model server's replies; the next request gets the first one."""
        req = urllib.request.Request("http://127.0.0.1:%d/script" % self.port,
                                     data=json.dumps({"replies": replies}).encode(),
                                     method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            json.load(r)

    def personal_rules(self, project=None):
        """The rules a person allowed "always" (or with /allow) for `project`: in the state
        directory (daemon/policy/personal_rules.h), never in the checkout."""
        path = os.path.join(self.env["XDG_STATE_HOME"], "agent", "personal-rules.json")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            projects = json.load(f).get("projects", {})
        return projects.get(os.path.realpath(project or self.project), {}).get("rules", [])

    def sessions_dir(self, project=None):
        """Where the daemon keeps `project`'s sessions (daemon/store/sessions_dir.h): the state
        directory, keyed by the project's base name and a hash of its real path."""
        return os.path.join(self.env["XDG_STATE_HOME"], "agent", "projects",
                            project_key(project or self.project), "sessions")

    def session_ids(self):
        d = self.sessions_dir()
        if not os.path.isdir(d):
            return []
        return sorted(n[:-5] for n in os.listdir(d)
                      if n.endswith(".json") and not n.endswith(".meta.json"))

    def session_ids_once_discarded(self):
        """session_ids() once the daemon had time to discard a session nobody answered: it
        does so when it sees the client gone, which the client does not wait for (bounded)."""
        deadline = time.monotonic() + 10
        while self.session_ids() and time.monotonic() < deadline:
            time.sleep(0.02)  # polling files the daemon removes on its own
        return self.session_ids()

    def transcript(self, session_id=None):
        """The session's messages as the daemon would load them: <id>.json and the messages its
        journal adds (daemon/store/transcript_journal.h)."""
        sid = session_id or self.session_ids()[-1]
        return saved_transcript(self.sessions_dir(), sid)

    def kill_marked_processes(self):
        """Kills the process groups of tool commands that carry this Env's dir in their
        command line (a tool still running when a test killed the daemon)."""
        for pid, cmd in processes():
            if (self.dir.encode() in cmd and b"agentd" not in cmd
                    and pid not in (os.getpid(), self.server.pid)):
                try:
                    pgid = os.getpgid(pid)
                    if pgid != os.getpgrp():  # tools run in groups of their own
                        os.killpg(pgid, signal.SIGKILL)
                except OSError:
                    pass

    def daemon_pids(self, any_socket=False):
        """Pids of agentd processes serving this Env's socket (any_socket: any socket under this
        Env's dir, such as one a test named with AGENT_SOCKET). A child the daemon is starting
        (git, a tool) shows the daemon's command line until it execs: left out."""
        pids = []
        mine = (self.dir + "/").encode()
        for pid, cmd in processes():
            argv = cmd.split(b"\0")
            if not argv[0].endswith(b"agentd"):
                continue
            if self.socket.encode() in argv or (any_socket and any(a.startswith(mine)
                                                                    for a in argv)):
                pids.append(pid)
        return [p for p in pids if parent_pid(p) not in pids]

    def kill_daemon(self, sig=signal.SIGKILL, any_socket=False):
        """Kills agentd and waits (bounded) until it is gone."""
        pids = self.daemon_pids(any_socket=any_socket)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass  # it ended between the listing and the kill
        deadline = time.monotonic() + 10
        while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.01)  # polling /proc for a process that is not our child
        return pids

    def close(self):
        try:
            self.agent("daemon", "stop", "--force", timeout=20)  # a test may leave a turn
        except Exception:
            pass
        self.kill_daemon(any_socket=True)
        self.kill_marked_processes()
        self.server.send_signal(signal.SIGTERM)
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def saved_transcript(sessions_dir, sid):
    """<id>.json plus the complete lines of a journal that extends exactly that file."""
    with open(os.path.join(sessions_dir, sid + ".json"), "rb") as f:
        text = f.read()
    messages = json.loads(text)
    try:
        with open(os.path.join(sessions_dir, sid + ".journal"), "rb") as f:
            journal = f.read()
    except FileNotFoundError:
        return messages
    header = ('{"journal":1,"extends_bytes":%d,"extends_fnv1a":"%016x"}\n'
              % (len(text), _fnv1a(text))).encode()
    if not journal.startswith(header):
        return messages  # stale: the file already holds them
    for line in journal[len(header):].split(b"\n")[:-1]:  # the last piece is torn or empty
        try:
            messages.append(json.loads(line))
        except ValueError:
            break
    return messages


def tool_call(name, **arguments):
    return {"name": name, "arguments": arguments}
