"""What the client checks before it sends the API key, and what it hands a daemon it starts.

The requests carry the key, so the client talks only to a socket in a directory that no
other user can write in (not a symlink, owned by us, no group/other write bit), served by a
process of our uid or root (SO_PEERCRED), and it checks before gRPC writes a byte. The tests
that need a second uid run as root and use `nobody` (65534); they skip otherwise.
"""
import os
import subprocess
import sys
import unittest

from harness import Env, tool_call

NOBODY = 65534
IS_ROOT = os.getuid() == 0

# A listener that binds as root in root's private directory, becomes `nobody` and only
# then listens (SO_PEERCRED reports the uid at listen time); it prints "listening", then
# how many bytes the one client it accepts sent before hanging up (or 3 s of silence).
LISTENER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.setgroups([]); os.setgid(%d); os.setuid(%d)
s.listen(1)
print("listening", flush=True)
s.settimeout(20)
conn, _ = s.accept()
conn.settimeout(3)
total = 0
try:
    while True:
        b = conn.recv(65536)
        if not b:
            break
        total += len(b)
except socket.timeout:
    pass
print(total, flush=True)
""" % (NOBODY, NOBODY)


class SocketDirectory(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "hello"}])
        self.addCleanup(self.env.close)

    def start_daemon(self):
        r = self.env.agent("ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.env.daemon_pids())

    def assert_refused(self, r, *words):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        for w in words:
            self.assertIn(w, lines[0])
        self.assertEqual(self.env.requests(), [])  # nothing reached the model either

    def test_world_writable_socket_directory_is_refused_even_with_a_daemon_in_it(self):
        self.start_daemon()
        os.chmod(self.env.dir, 0o777)
        r = self.env.agent("hi")
        self.assert_refused(r, self.env.dir, "0777", "uid %d" % os.getuid())
        self.assertEqual(self.env.session_ids(), [])

    def test_wrong_mode_directory_is_not_repaired_to_start_a_daemon(self):
        os.chmod(self.env.dir, 0o777)
        r = self.env.agent("hi")
        self.assert_refused(r, self.env.dir, "0777")
        self.assertEqual(os.stat(self.env.dir).st_mode & 0o777, 0o777)
        self.assertEqual(self.env.daemon_pids(), [])

    def test_symlinked_socket_directory_is_refused(self):
        self.start_daemon()
        link = os.path.join(self.env.dir, "link")
        os.symlink(self.env.dir, link)
        r = self.env.agent("hi", env={"AGENT_SOCKET": os.path.join(link, "d.sock")})
        self.assert_refused(r, link, "symlink")

    @unittest.skipUnless(IS_ROOT, "needs root to chown the socket directory to nobody (65534)")
    def test_socket_directory_of_another_user_is_refused(self):
        self.start_daemon()
        os.chown(self.env.dir, NOBODY, NOBODY)
        r = self.env.agent("hi")
        self.assert_refused(r, self.env.dir, "owned by uid %d" % NOBODY)
        self.assertEqual(self.env.session_ids(), [])


class SocketPeer(unittest.TestCase):
    @unittest.skipUnless(IS_ROOT, "needs root to run a listener as nobody (65534)")
    def test_listener_of_another_user_is_refused_before_a_byte_is_sent(self):
        env = Env([{"text": "hello"}])
        self.addCleanup(env.close)
        listener = subprocess.Popen([sys.executable, "-c", LISTENER, env.socket],
                                    stdout=subprocess.PIPE, text=True)
        self.addCleanup(listener.wait, 30)
        self.addCleanup(listener.stdout.close)
        self.addCleanup(listener.kill)
        self.assertEqual(listener.stdout.readline().strip(), "listening")
        r = env.agent("hi", timeout=30)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(env.socket, lines[0])
        self.assertIn("uid %d" % NOBODY, lines[0])
        self.assertEqual(listener.stdout.readline().strip(), "0")  # it heard nothing


class DaemonEnvironment(unittest.TestCase):
    def test_autostarted_daemon_gets_no_secrets(self):
        env = Env([{"text": "hello"}], extra_env={
            "OPENAI_API_KEY": "sk-openai-not-secret", "FOO_TOKEN": "tok", "MY_Password": "pw",
            "AGENT_MAX_STEPS": "7"})
        self.addCleanup(env.close)
        r = env.agent("hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hello", r.stdout)  # the key reached the model through the request
        pids = env.daemon_pids()
        self.assertEqual(len(pids), 1)
        with open("/proc/%d/environ" % pids[0], "rb") as f:
            names = {e.split(b"=", 1)[0].decode() for e in f.read().split(b"\0") if e}
        for secret in ("AGENT_API_KEY", "OPENAI_API_KEY", "FOO_TOKEN", "MY_Password"):
            self.assertNotIn(secret, names)
        # Settings each client sends stay with it: the daemon must not make them everyone's.
        for per_client in ("AGENT_MAX_STEPS", "AGENT_BASE_URL", "AGENT_MODEL"):
            self.assertNotIn(per_client, names)
        for kept in ("AGENT_SOCKET", "HOME", "PATH", "XDG_STATE_HOME"):
            self.assertIn(kept, names)


class UnreadableEvent(unittest.TestCase):
    def test_tool_output_of_random_bytes_never_hangs_the_client(self):
        # The daemon should send valid UTF-8 only; if an event still cannot be parsed the
        # client ends with one line of error instead of waiting forever.
        env = Env([{"tool_calls": [tool_call("bash", command="head -c 300 /dev/urandom")]},
                   {"text": "done"}], strict=False)
        self.addCleanup(env.close)
        r = env.agent("--yes", "print noise", timeout=60)
        if r.returncode != 0:
            self.assertEqual(r.returncode, 1, r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("cannot read an event from agentd", lines[0])


if __name__ == "__main__":
    unittest.main()
