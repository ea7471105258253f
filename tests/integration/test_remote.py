"""`agent --host` (issue 19): every command against the daemon of another host, through ssh.

The "remote" host is this machine: the daemon the remote side starts serves the Env's socket
and state (so Env.close() stops it), while the local client is given a socket of its own that
must never appear. Two transports run the same cases:
  - SshdRemote: Debian's /usr/sbin/sshd in the foreground on 127.0.0.1, a free port, its own
    host key, a fresh user key in its own authorized_keys, root login by key only, nothing of
    the system's configuration read or changed but /run/sshd (the privilege separation dir,
    created when missing). The client's ssh gets its own ssh_config through AGENT_SSH
    ("ssh -F FILE"): known_hosts in the temp dir, BatchMode, and SetEnv for the remote
    AGENT_SOCKET / XDG dirs (which the test sshd's AcceptEnv lets through). Skipped when sshd
    is not installed, except under CI, where it fails.
  - FakeSshRemote: AGENT_SSH names a stand-in for ssh that runs the remote command here with
    the remote environment, records its argv and environment, and exits 255 for a host called
    "unreachable". It runs everywhere, and checks what ssh is given.
Waits are bounded polls of the screen, of files or of process exits; nothing sleeps to wait.
"""
import getpass
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest

from harness import BIN, Env, process_alive, processes, tool_call
from test_terminal import TMUX, Terminal, wait_until

AGENT = os.path.join(BIN, "agent")
SSHD = "/usr/sbin/sshd"
KEY = "test-key-not-secret"  # Env's AGENT_API_KEY

FAKE_SSH = r'''
import json, os, shlex, sys
args = sys.argv[1:]
cfg = json.load(open(args.pop(0)))
with open(cfg["log"], "a") as f:
    f.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\n")
i = args.index("--")
host, line = args[i + 1], args[i + 2]
if host == "unreachable" or os.path.exists(cfg["home"] + "/.no-ssh"):
    sys.stderr.write("ssh: connect to host unreachable port 22: Connection refused\n")
    sys.exit(255)
env = dict(os.environ, HOME=cfg["home"], **cfg["env"])  # as sshd: HOME, and started there
os.chdir(cfg["home"])
words = shlex.split(line)
if words[:2] == ["cd", "--"] and words[3] == "&&":
    os.chdir(words[2])
    words = words[4:]
try:
    os.execvpe(words[0], words, env)  # the "ssh" process is the proxy: killing it drops the link
except OSError as e:
    sys.stderr.write("sh: %s: %s\n" % (words[0], e.strerror))
    sys.exit(127)  # as a shell says "not found"
'''


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ppid_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return -1
    return int(stat[stat.rfind(")") + 2:].split()[1])


def children_of(pid):
    return [p for p, _ in processes() if ppid_of(p) == pid]


def wait_for_file_text(path, text, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                if text in f.read():
                    return True
        time.sleep(0.05)
    return False


class RemoteCases:
    """The cases; a subclass sets up self.env, self.host and self.client_env."""

    def start_env(self, replies):
        self.env = Env(replies)
        self.addCleanup(self.env.close)
        # The local client's own socket: a command that went to a local daemon would make it.
        self.local_socket = os.path.join(self.env.dir, "local.sock")
        self.remote_env = {
            "AGENT_SOCKET": self.env.socket,
            "XDG_STATE_HOME": self.env.env["XDG_STATE_HOME"],
            "XDG_CONFIG_HOME": self.env.env["XDG_CONFIG_HOME"],
        }

    def client_env(self, **extra):
        e = dict(self.env.env, AGENT_SOCKET=self.local_socket, AGENT_SSH=self.ssh_prefix)
        e.update(extra)
        return e

    def remote_args(self, *args, cd=True):
        out = ["--host", self.host, "--remote-bin", AGENT]
        if cd:
            out += ["--cd", self.env.project]
        return out + list(args)

    def run_agent(self, *args, cd=True, timeout=60, **extra):
        return subprocess.run([AGENT, *self.remote_args(*args, cd=cd)], env=self.client_env(**extra),
                              cwd="/", capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def assert_no_local_daemon(self):
        self.assertFalse(os.path.exists(self.local_socket), "a local daemon was started")

    # ---- the cases -----------------------------------------------------------------------
    def test_one_shot_and_ls_run_against_the_remote_daemon(self):
        self.start_env([{"text": "Hello from the remote daemon."}])
        r = self.run_agent("say hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Hello from the remote daemon.", r.stdout)
        sid = self.env.session_ids()
        self.assertEqual(len(sid), 1)  # the session is the remote project's
        self.assertEqual(self.env.requests()[0]["body"]["messages"][-1]["content"], "say hello")
        r = self.run_agent("ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(sid[0], r.stdout)
        self.assertIn("say hello", r.stdout)
        r = self.run_agent("status", sid[0][:8])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(sid[0][:8], r.stdout)
        # Commands on HOST's own files run there: the daemon's status, the project's MCP list.
        r = self.run_agent("daemon", "status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("socket %s" % self.env.socket, r.stdout)
        r = self.run_agent("mcp", "ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no MCP servers", r.stdout)
        self.assert_no_local_daemon()

    def test_agent_trust_trusts_the_remote_projects_rules(self):
        self.start_env([])
        os.makedirs(os.path.join(self.env.project, ".agent"))
        with open(os.path.join(self.env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"allow": ["bash(make *)"]}, f)
        r = self.run_agent("trust", "--yes")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bash(make *)", r.stdout)
        with open(os.path.join(self.env.dir, "state", "agent", "trusted-rules.json")) as f:
            entry = json.load(f)["projects"][os.path.realpath(self.env.project)]
            self.assertEqual(entry["rules"], ["bash(make *)"])
        self.assert_no_local_daemon()

    def test_attach_and_approve_from_the_remote_client(self):
        if TMUX is None:
            self.skipTest("tmux is not installed")
        target = os.path.join("notes.txt")
        self.start_env([
            {"text": "Ready."},
            {"tool_calls": [tool_call("write_file", path=target, content="written remotely\n")]},
            {"expect": {"last_role": "tool"}, "text": "The file is written."},
        ])
        term = Terminal(self, self.env)
        first = term.start("first", *self.remote_args(), extra_env=self.terminal_env())
        term.wait_for(first, "›")
        term.type_line(first, "start")
        term.wait_for(first, "Ready.")
        term.keys(first, "C-d")
        term.wait_for(first, "[agent exited with status 0]")
        sid = self.env.session_ids()[0]
        w = term.start("main", *self.remote_args("attach", sid[:8], cd=False),
                       extra_env=self.terminal_env())
        term.wait_for(w, "›")
        term.type_line(w, "write the notes")
        screen = term.wait_for(w, "[y]es / [n]o")
        self.assertIn("notes.txt", screen)
        term.keys(w, "y")
        term.wait_for(w, "The file is written.")
        with open(os.path.join(self.env.project, target)) as f:
            self.assertEqual(f.read(), "written remotely\n")
        term.keys(w, "C-d")
        screen = term.wait_for(w, "[agent exited with status 0]")
        self.assertIn("agent --host %s attach %s" % (self.host, sid[:8]), screen)
        self.assert_no_local_daemon()

    def test_killing_ssh_mid_turn_reconnects_and_shows_exactly_the_rest(self):
        if TMUX is None:
            self.skipTest("tmux is not installed")
        words = ["w%02d" % i for i in range(24)]
        self.start_env([
            {"text": " ".join(words), "chunk_size": 8, "delay_ms": 250},
        ])
        term = Terminal(self, self.env)
        w = term.start("main", *self.remote_args(), extra_env=self.terminal_env())
        term.wait_for(w, "›")
        client = self.interactive_client_pid()
        term.type_line(w, "count slowly")
        term.wait_for(w, words[1])
        links = self.links_of(client)
        self.assertEqual(len(links), 1, links)
        os.kill(links[0], signal.SIGKILL)
        term.wait_for(w, "connection lost, reconnecting")
        term.wait_for(w, "reconnected to %s" % self.host)
        screen = term.wait_for(w, words[-1])
        # Every word once, in order: nothing missed, nothing shown twice.
        shown = [t for t in screen.split() if t in words]
        self.assertEqual(shown, words, screen)
        # The turn went on and ended on the remote daemon.
        self.assertTrue(wait_until(lambda: self.last_reply() == " ".join(words)))
        self.assertTrue(process_alive(client))
        # One new ssh; the killed one is gone.
        new_links = [p for p in self.links_of(client) if process_alive(p)]
        self.assertEqual(len(new_links), 1, new_links)
        self.assertNotEqual(new_links, links)
        term.keys(w, "C-d")
        term.wait_for(w, "[agent exited with status 0]")
        self.assert_no_local_daemon()

    def test_tools_run_with_the_remote_logins_environment(self):
        # This machine's HOME (the Env's dir) must not reach a tool on HOST.
        self.start_env(lambda env: [
            {"tool_calls": [tool_call("bash", command="echo home=$HOME")]},
            {"expect": {"last_role": "tool",
                        "last_message_contains": "home=%s\n" % self.remote_home(env)},
             "text": "done"},
        ])
        r = self.run_agent("--yes", "where is home")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.env.stats()["expect_failed"], 0, r.stdout)

    def test_a_bad_host_is_a_usage_error_and_runs_no_ssh(self):
        self.start_env([])
        for host in ("-oProxyCommand=touch /tmp/x", "box;id", "a b"):
            r = subprocess.run([AGENT, "--host", host, "ls"], env=self.client_env(), cwd="/",
                               capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
            self.assertEqual(r.returncode, 2, (host, r.stderr))
            self.assertIn("--host takes [user@]HOST", r.stderr)
        self.assert_no_local_daemon()

    # ---- helpers -------------------------------------------------------------------------
    def terminal_env(self):
        return {"AGENT_SOCKET": self.local_socket, "AGENT_SSH": self.ssh_prefix}

    def interactive_client_pid(self):
        pids = []
        for pid, cmd in processes():
            argv = cmd.split(b"\0")
            if argv[0] == AGENT.encode() and b"--host" in argv and b"--remote-bin" in argv:
                pids.append(pid)
        self.assertEqual(len(pids), 1, pids)
        return pids[0]

    def last_reply(self):
        msgs = [m for m in self.env.transcript() if m.get("role") == "assistant"]
        return msgs[-1].get("content") if msgs else None


class FakeSshRemote(RemoteCases, unittest.TestCase):
    host = "testbox"

    def start_env(self, replies):
        super().start_env(replies)
        self.ssh_log = os.path.join(self.env.dir, "ssh.log")
        script = os.path.join(self.env.dir, "fake_ssh.py")
        with open(script, "w") as f:
            f.write(FAKE_SSH)
        cfg = os.path.join(self.env.dir, "fake_ssh.json")
        with open(cfg, "w") as f:
            json.dump({"env": self.remote_env, "home": self.env.project, "log": self.ssh_log}, f)
        self.ssh_prefix = "%s %s %s" % (sys.executable, script, cfg)

    def links_of(self, client):
        return children_of(client)

    def remote_home(self, env):
        return env.project

    def ssh_runs(self):
        with open(self.ssh_log) as f:
            return [json.loads(l) for l in f if l.strip()]

    def test_ssh_gets_no_key_and_no_agent_setting(self):
        self.start_env([{"text": "ok"}])
        r = self.run_agent("hello", AGENT_MODEL="scripted", OPENAI_API_KEY="sk-other-secret")
        self.assertEqual(r.returncode, 0, r.stderr)
        for run in self.ssh_runs():
            text = json.dumps(run)
            self.assertNotIn(KEY, text)
            self.assertNotIn("sk-other-secret", text)
            self.assertFalse([k for k in run["env"] if k.startswith("AGENT_")], run["env"].keys())
            argv = run["argv"]
            self.assertEqual(argv[-3:-1], ["--", self.host])
            self.assertEqual(argv[-1], "'%s' proxy --protocol 1" % AGENT)
        # The model was asked with a key all the same: it travels in the gRPC request.
        self.assertTrue(self.env.requests()[0]["has_auth"])

    def test_default_directory_is_agent_remote_dir_else_the_remote_home(self):
        self.start_env([{"text": "one"}, {"text": "two"}])
        other = os.path.join(self.env.dir, "other")
        os.makedirs(other)
        r = self.run_agent("in home", cd=False)  # the fake's home is the project
        self.assertEqual(r.returncode, 0, r.stderr)
        # The wide-workdir warning compares HOST's home (this machine's HOME is the Env's dir).
        self.assertIn("everything under %s (your home directory)" % self.env.project, r.stderr)
        # Relative to the remote home (where ssh starts the command).
        r = self.run_agent("in other", cd=False, AGENT_REMOTE_DIR="../other")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.env.session_ids()), 1)
        sessions = os.listdir(self.env.sessions_dir(other))
        self.assertEqual(len([n for n in sessions if n.endswith(".meta.json")]), 1)
        r = self.run_agent("ls", cd=False, AGENT_REMOTE_DIR="does-not-exist")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("no directory does-not-exist"), 1, r.stderr)

    def test_ctrl_c_stops_reconnecting_and_says_how_to_come_back(self):
        if TMUX is None:
            self.skipTest("tmux is not installed")
        self.start_env([{"text": "first"}])
        term = Terminal(self, self.env)
        w = term.start("main", *self.remote_args(), extra_env=self.terminal_env())
        term.wait_for(w, "›")
        term.type_line(w, "hello")
        term.wait_for(w, "first")
        client = self.interactive_client_pid()
        open(os.path.join(self.env.project, ".no-ssh"), "w").close()  # HOST is unreachable now
        os.kill(self.links_of(client)[0], signal.SIGKILL)
        term.wait_for(w, "connection lost, reconnecting")
        self.assertTrue(wait_until(lambda: len(self.ssh_runs()) >= 3))  # it keeps trying
        term.keys(w, "C-c")
        screen = term.wait_for(w, "[agent exited with status 0]")
        self.assertIn("stopped reconnecting; the session goes on. Come back with: agent --host "
                      "testbox attach " + self.env.session_ids()[0][:8], screen)
        self.assertNotIn("Connection refused", screen)  # a retry's ssh says nothing on screen
        self.assertFalse([r for r in self.ssh_runs()[1:] if "BatchMode=yes" not in r["argv"]])

    def test_a_failed_ssh_says_so_and_exits_1(self):
        self.start_env([])
        r = subprocess.run([AGENT, "--host", "unreachable", "ls"], env=self.client_env(),
                           cwd="/", capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Connection refused", r.stderr)  # ssh's own words are shown
        self.assertIn("ssh to unreachable failed (exit 255", r.stderr)
        r = subprocess.run([AGENT, "--host", self.host, "--remote-bin", "/nonexistent/agent",
                            "ls"], env=self.client_env(), cwd="/", capture_output=True,
                           text=True, timeout=30, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot run /nonexistent/agent", r.stderr)
        r = self.run_agent("ls", AGENT_SSH="/nonexistent/ssh")
        self.assertEqual(r.returncode, 1)
        self.assertIn("agent: cannot run /nonexistent/ssh (AGENT_SSH, or ssh on PATH)", r.stderr)
        self.assert_no_local_daemon()


class SshdRemote(RemoteCases, unittest.TestCase):
    host = "remote-test"

    def start_env(self, replies):
        super().start_env(replies)
        if not os.path.exists(SSHD):
            if os.environ.get("CI"):
                self.fail("CI: %s is missing (packaging/install-deps.sh installs it)" % SSHD)
            self.skipTest("%s is not installed (Debian's openssh-server)" % SSHD)
        d = os.path.join(self.env.dir, "ssh")
        os.makedirs(d, mode=0o700)
        for key in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            os.path.join(d, key)], check=True, timeout=30)
        shutil.copy(os.path.join(d, "user_key.pub"), os.path.join(d, "authorized_keys"))
        port = free_port()
        with open(os.path.join(d, "host_key.pub")) as f:
            host_pub = " ".join(f.read().split()[:2])
        with open(os.path.join(d, "known_hosts"), "w") as f:
            f.write("[127.0.0.1]:%d %s\n" % (port, host_pub))
        with open(os.path.join(d, "sshd_config"), "w") as f:
            f.write("\n".join([
                "Port %d" % port, "ListenAddress 127.0.0.1",
                "HostKey %s/host_key" % d, "PidFile %s/sshd.pid" % d,
                "AuthorizedKeysFile %s/authorized_keys" % d, "StrictModes no", "UsePAM no",
                "PermitRootLogin prohibit-password", "PasswordAuthentication no",
                "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
                "AcceptEnv AGENT_SOCKET XDG_STATE_HOME XDG_CONFIG_HOME",
                "AllowUsers %s" % getpass.getuser(), "LogLevel INFO", ""]))
        setenv = " ".join("%s=%s" % kv for kv in self.remote_env.items())
        self.ssh_config = os.path.join(d, "ssh_config")
        with open(self.ssh_config, "w") as f:
            f.write("\n".join([
                "Host %s" % self.host, "  HostName 127.0.0.1", "  Port %d" % port,
                "  User %s" % getpass.getuser(), "  IdentityFile %s/user_key" % d,
                "  IdentitiesOnly yes", "  UserKnownHostsFile %s/known_hosts" % d,
                "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking yes",
                "  BatchMode yes", "  SetEnv %s" % setenv, "  LogLevel ERROR", ""]))
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privsep dir
        log = os.path.join(d, "sshd.log")
        with open(log, "w") as log_file:  # sshd keeps its own copy of the descriptor
            self.sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", os.path.join(d, "sshd_config")],
                                         stdout=subprocess.DEVNULL, stderr=log_file)
        self.addCleanup(self.stop_sshd)
        if not wait_for_file_text(log, "Server listening on 127.0.0.1"):
            with open(log) as f:
                self.fail("sshd did not start: %s" % f.read())
        self.ssh_prefix = "ssh -F %s" % self.ssh_config

    def stop_sshd(self):
        self.sshd.terminate()
        try:
            self.sshd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.sshd.kill()
            self.sshd.wait()

    def remote_home(self, env):
        return pwd.getpwuid(os.getuid()).pw_dir

    def links_of(self, client):
        return [p for p in children_of(client)
                if dict(processes()).get(p, b"").split(b"\0")[0].endswith(b"ssh")]


if __name__ == "__main__":
    unittest.main()
