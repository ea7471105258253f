"""The sandbox of tool commands (issue 24), run for real with bubblewrap, as root and as an
unprivileged user the test picks (setpriv to a uid no account uses; nothing to clean up but
the files): writes outside the project, reads of each hidden path, TCP to 127.0.0.1 and the
daemon's socket, a signal to the daemon, .git/hooks, .git/config and .agent/ writes and a
setuid binary are each refused with the reason shown; a project's make and tests work inside.

The world lives under /home (not /tmp, which the sandbox replaces with a private one, so a
secret there would be hidden whatever the hide list says)."""
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

from harness import Env

SECRETS = [".ssh/id_ed25519", ".gnupg/private-keys-v1.d/k.key", ".aws/credentials",
           ".config/gcloud/credentials.db", ".docker/config.json", ".netrc", ".git-credentials",
           ".config/agent/config.json", ".local/state/agent/trusted-rules.json",
           # issue 36: git hosts', registries', databases' tokens and shell histories
           ".config/gh/hosts.yml", ".config/git/credentials", ".npmrc", ".pypirc",
           ".cargo/credentials.toml", ".pgpass", ".vault-token", ".gem/credentials",
           ".terraform.d/credentials.tfrc.json", ".m2/settings.xml", ".my.cnf",
           ".local/share/keyrings/login.keyring", ".bash_history", ".zsh_history"]
SECRET_TEXT = "TOP-SECRET-VALUE"


def unused_uid():
    for uid in range(64100, 64200):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise unittest.SkipTest("no unused uid")


def bwrap_works(prefix):
    r = subprocess.run(prefix + ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--dev", "/dev",
                                 "--proc", "/proc", "true"], capture_output=True)
    return r.returncode == 0


class SandboxWorld(Env):
    """Env with HOME, the XDG dirs, the socket and the project under /home, owned by `uid`, and
    the client (so the daemon it starts) run as `uid` when it is not ours."""

    def __init__(self, replies=(), uid=None, extra_env=None):
        super().__init__(list(replies), extra_env=extra_env)
        self.uid = uid
        self.home = tempfile.mkdtemp(prefix="agt-sbx-", dir="/home")
        os.chmod(self.home, 0o755)
        self.project = os.path.join(self.home, "project")
        self.socket = os.path.join(self.home, "run", "d.sock")
        os.makedirs(os.path.join(self.home, "run"), mode=0o700)
        self.env.update({"HOME": self.home, "AGENT_SOCKET": self.socket,
                         "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
                         "XDG_STATE_HOME": os.path.join(self.home, ".local", "state")})
        os.makedirs(os.path.join(self.project, ".git", "hooks"))
        os.makedirs(os.path.join(self.project, ".agent"))
        self.write(os.path.join(self.project, ".git", "config"), "[core]\n")
        self.write(os.path.join(self.project, ".agent", "settings.json"), "{}\n")
        for s in SECRETS:
            self.write(os.path.join(self.home, s), SECRET_TEXT + "\n")
        self.write(os.path.join(self.home, ".config", "agent", "config.json"),
                   json.dumps({"api_key": SECRET_TEXT}))
        if uid is not None:
            for root, dirs, files in os.walk(self.home):
                for n in [root] + [os.path.join(root, x) for x in dirs + files]:
                    os.lchown(n, uid, uid)

    @staticmethod
    def write(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def prefix(self):
        if self.uid is None:
            return []
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.uid, "--clear-groups"]

    def agent(self, *args, timeout=60, env=None, cwd=None):
        e = dict(self.env, **(env or {}))
        return subprocess.run(self.prefix() + [os.path.join(self.bin(), "agent"), *args],
                              cwd=cwd or self.project, env=e, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    @staticmethod
    def bin():
        from harness import BIN
        return BIN

    def sandbox(self, script, *flags):
        return self.agent("sandbox", *flags, "--", "bash", "-c", script)

    def close(self):
        super().close()
        shutil.rmtree(self.home, ignore_errors=True)


class SandboxCases:
    """The cases, run by a subclass as root and by one as an unprivileged user."""
    uid = None

    def setUp(self):
        if shutil.which("bwrap") is None:
            self.skipTest("bubblewrap is not installed (packaging/install-deps.sh installs it)")
        self.world = SandboxWorld(uid=self.uid)
        self.addCleanup(self.world.close)
        if not bwrap_works(self.world.prefix()):
            self.skipTest("bubblewrap cannot create namespaces on this machine")

    def refused(self, script, reason, *flags):
        r = self.world.sandbox(script, *flags)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(reason, r.stdout + r.stderr)
        return r

    def test_check_says_it_confines(self):
        r = self.world.agent("sandbox", "--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("sandbox: workspace-write, network off", r.stdout)
        self.assertIn("hidden: " + os.path.join(self.world.home, ".ssh"), r.stdout)
        status = self.world.agent("daemon", "status")
        self.assertIn("sandbox: workspace-write, network off", status.stdout)

    def test_the_project_is_writable_and_the_rest_is_not(self):
        r = self.world.sandbox("echo hi > inside.txt && cat inside.txt")
        self.assertEqual((r.returncode, r.stdout), (0, "hi\n"), r.stderr)
        outside = os.path.join(self.world.home, "outside.txt")
        self.refused("echo x > " + outside, "Read-only file system")
        self.assertFalse(os.path.exists(outside))
        # The private /tmp is writable, and it is not the host's.
        r = self.world.sandbox("echo t > /tmp/agt-sbx-probe && cat /tmp/agt-sbx-probe")
        self.assertEqual(r.stdout, "t\n", r.stderr)
        self.assertFalse(os.path.exists("/tmp/agt-sbx-probe"))

    def test_each_hidden_path_is_unreadable(self):
        for s in SECRETS:
            path = os.path.join(self.world.home, s)
            # A hidden directory is empty (cat fails); a hidden file reads as /dev/null.
            r = self.world.sandbox("cat " + path)
            self.assertNotIn(SECRET_TEXT, r.stdout + r.stderr, s)
        # Outside the sandbox the same command reads it: the refusal is the sandbox's.
        self.assertIn(SECRET_TEXT, open(os.path.join(self.world.home, SECRETS[0])).read())

    def test_no_network_not_even_loopback(self):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        self.addCleanup(server.close)
        port = server.getsockname()[1]
        accepted = []
        threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
        connect = "exec 3<>/dev/tcp/127.0.0.1/%d && echo connected" % port
        r = self.world.sandbox(connect)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("connected", r.stdout)
        self.assertRegex(r.stdout, "Network is unreachable|Connection refused")
        # --network opts in: the same connection works.
        r = self.world.sandbox(connect, "--network")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("connected", r.stdout)

    def test_the_daemons_socket_and_process_are_out_of_reach(self):
        self.world.agent("ls")
        pids = self.world.daemon_pids()
        self.assertTrue(pids)
        connect = ("python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                   "s.connect('%s'); print('connected')\"" % self.world.socket)
        r = self.world.sandbox(connect)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("connected", r.stdout)
        self.assertRegex(r.stdout, "No such file|Connection refused|Permission denied")
        r = self.refused("kill -TERM %d" % pids[0], "No such process")
        self.assertTrue(self.world.daemon_pids())  # still there

    def test_git_hooks_git_config_and_agent_settings_are_read_only(self):
        p = self.world.project
        for target in (".git/hooks/pre-commit", ".git/config", ".agent/settings.json"):
            self.refused("echo evil > " + target, "Read-only file system")
        # Mount points: not renamed (EBUSY), nor copied away and removed (read-only).
        for move in ("mv .git/hooks hooks.old", "mv .agent agent.old"):
            r = self.world.sandbox(move)
            self.assertNotEqual(r.returncode, 0, move)
            self.assertRegex(r.stdout, "busy|Read-only file system")
        self.assertTrue(os.path.isdir(os.path.join(p, ".git", "hooks")))
        self.refused("echo evil > .git/hooks/pre-commit", "Read-only file system")
        self.assertFalse(os.path.exists(os.path.join(p, ".git", "hooks", "pre-commit")))
        self.assertEqual(open(os.path.join(p, ".agent", "settings.json")).read(), "{}\n")

    def test_git_reads_nothing_a_command_wrote(self):
        p = self.world.project
        # Every file of .git, not only hooks and config; a submodule's .git file too.
        self.world.write(os.path.join(p, "sub", ".git"), "gitdir: ../.git/modules/sub\n")
        if self.world.uid is not None:
            for n in (os.path.join(p, "sub"), os.path.join(p, "sub", ".git")):
                os.lchown(n, self.world.uid, self.world.uid)
        for target in (".git/commondir", ".git/config.worktree", ".git/description",
                       "sub/.git"):
            self.refused("echo evil > " + target, "Read-only file system")
        # A repository made anew anywhere is set aside once the command ended, before the
        # person's next `git status` there could run its fsmonitor.
        r = self.world.sandbox("mkdir -p deep/x/.git/objects deep/x/.git/refs && "
                               "echo 'ref: refs/heads/main' > deep/x/.git/HEAD && "
                               "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > "
                               "deep/x/.git/config")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("the command made deep/x/.git", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(p, "deep", "x", ".git")))
        aside = [n for n in os.listdir(os.path.join(p, "deep", "x"))
                 if n.startswith(".git.made-in-sandbox-")]
        self.assertEqual(len(aside), 1, aside)

    def test_the_network_by_allow_list_works_as_this_user(self):
        import http.server
        import functools
        root = tempfile.mkdtemp(prefix="agt-www-")
        self.addCleanup(shutil.rmtree, root, True)
        with open(os.path.join(root, "hello.txt"), "w") as f:
            f.write("HELLO\n")
        httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler,
                                                directory=root))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        port = httpd.server_address[1]
        world = SandboxWorld(uid=self.uid, extra_env={
            "AGENT_TEST_RESOLVE": "pypi.test=127.0.0.1,evil.test=127.0.0.1",
            "AGENT_TEST_PROXY_LOOPBACK_PORT": str(port)})
        self.addCleanup(world.close)
        config = os.path.join(world.home, ".config", "agent", "config.json")
        world.write(config, json.dumps({"sandbox_network": {"allow": ["pypi.test"]}}))
        if self.uid is not None:
            os.lchown(config, self.uid, self.uid)
        r = world.sandbox("curl -sS http://pypi.test:%d/hello.txt; "
                          "curl -sS http://evil.test:%d/hello.txt" % (port, port))
        self.assertIn("HELLO", r.stdout, r.stdout + r.stderr)
        self.assertIn("[network] refused evil.test:%d (not on the allow list)" % port, r.stdout)
        self.assertEqual(r.stdout.count("HELLO"), 1)

    def test_no_new_privileges(self):
        r = self.world.sandbox("grep NoNewPrivs /proc/self/status")
        self.assertIn("1", r.stdout)

    def test_a_project_build_and_its_tests_work_inside(self):
        p = self.world.project
        self.world.write(os.path.join(p, "hello.c"),
                         '#include <stdio.h>\nint main(void) { puts("built"); return 0; }\n')
        self.world.write(os.path.join(p, "Makefile"), "hello: hello.c\n\tcc -o hello hello.c\n")
        self.world.write(os.path.join(p, "test_x.py"),
                         "import unittest\nclass T(unittest.TestCase):\n"
                         "    def test_ok(self):\n        self.assertTrue(True)\n")
        if self.uid is not None:
            for n in ("hello.c", "Makefile", "test_x.py"):
                os.lchown(os.path.join(p, n), self.uid, self.uid)
        r = self.world.sandbox("make && ./hello && python3 -m unittest -q test_x 2>&1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("built", r.stdout)
        self.assertIn("OK", r.stdout)

    def test_the_exit_status_is_the_commands(self):
        self.assertEqual(self.world.sandbox("exit 7").returncode, 7)


class SandboxAsRoot(SandboxCases, unittest.TestCase):
    def setUp(self):
        if os.getuid() != 0:
            self.skipTest("not root")
        super().setUp()


class SandboxAsUser(SandboxCases, unittest.TestCase):
    def setUp(self):
        if os.getuid() != 0:
            self.uid = None  # already unprivileged: the cases run as we are
        else:
            self.uid = unused_uid()
        super().setUp()

    def test_a_setuid_binary_gains_nothing(self):
        if self.uid is None:
            self.skipTest("needs root to make a setuid-root binary")
        suid = os.path.join(self.world.project, "suid_id")
        shutil.copy("/usr/bin/id", suid)
        os.chown(suid, 0, 0)
        os.chmod(suid, 0o4755)
        outside = subprocess.run(self.world.prefix() + [suid, "-u"], capture_output=True,
                                 text=True)
        if outside.stdout.strip() != "0":
            self.skipTest("setuid does not work on this filesystem (nosuid)")
        r = self.world.sandbox("./suid_id -u")
        self.assertEqual(r.stdout.strip(), str(self.uid), r.stderr)


class ProjectMcpServerIsConfined(unittest.TestCase):
    """A project's stdio MCP server runs in the sandbox: the fake server logs every message to
    a file outside the project, which inside the sandbox lands in its private /tmp; the same
    server defined by the user runs as the user defined it and its log appears."""

    def run_server(self, scope):
        from harness import tool_call
        from test_mcp_config import fake
        from test_multi_client import Api
        env = Env([{"tool_calls": [tool_call("mcp__repo__echo", text="hi")]},
                   {"expect": {"last_message_contains": "echo: hi"}, "text": "done"}])
        self.addCleanup(env.close)
        log = os.path.join(env.dir, "mcp-%s.log" % scope)
        definition = fake()
        definition["args"].append(log)
        settings = (os.path.join(env.project, ".agent", "settings.json") if scope == "project"
                    else os.path.join(env.dir, "config", "agent", "config.json"))
        SandboxWorld.write(settings, json.dumps({"mcp_servers": {"repo": definition}}))
        if scope == "project":
            api = Api(env)
            self.addCleanup(api.close)
            [shown] = api.stub.ListMcpServers(
                api.pb.ListMcpServersRequest(workdir=env.project), timeout=10).servers
            api.stub.ApproveMcpServer(api.pb.ApproveMcpServerRequest(
                workdir=env.project, name="repo", target=shown.target,
                definition=shown.definition), timeout=10)
        r = env.agent("--yes", "use it")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)
        return os.path.exists(log)

    def test_a_project_server_cannot_write_outside_the_project(self):
        if shutil.which("bwrap") is None or not bwrap_works([]):
            self.skipTest("bubblewrap cannot run here")
        self.assertFalse(self.run_server("project"))
        self.assertTrue(self.run_server("user"))


if __name__ == "__main__":
    unittest.main()
