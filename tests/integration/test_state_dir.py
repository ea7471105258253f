"""Sessions live in the user's state directory, keyed by the project: a read-only checkout
works and nothing is written into the repository; a previous version's .agent/sessions/ is
moved on first use, with a note once, and what a repository shipped there is never taken."""
import json
import os
import pwd
import subprocess
import unittest

from harness import BIN, Env


def unused_uid():
    """A uid no account has, so the test's files are nobody else's."""
    for uid in range(45000, 45500):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise unittest.SkipTest("no unused uid in 45000..45499")


def chown_tree(root, uid):
    os.chown(root, uid, uid)
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(d, name), uid, uid, follow_symlinks=False)


class ReadOnlyCheckout(unittest.TestCase):
    def run_agent(self, env, *args):
        """The client as the test's user: an unprivileged one when we are root, since root
        ignores a directory's mode."""
        if os.geteuid() != 0:
            return env.agent(*args)
        return subprocess.run(["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.uid,
                               "--clear-groups", os.path.join(BIN, "agent"), *args],
                              cwd=env.project, env=env.env, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)

    def test_a_turn_in_a_read_only_project_creates_nothing_in_it(self):
        env = Env([{"text": "hello from a read-only checkout"}])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "README"), "w") as f:
            f.write("a checkout\n")
        if os.geteuid() == 0:
            self.uid = unused_uid()
            chown_tree(env.dir, self.uid)
            self.addCleanup(lambda: self.run_agent(env, "daemon", "stop"))
        os.chmod(env.project, 0o555)
        self.addCleanup(os.chmod, env.project, 0o755)

        r = self.run_agent(env, "hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hello from a read-only checkout", r.stdout)
        self.assertEqual(os.listdir(env.project), ["README"])
        self.assertEqual(len(env.session_ids()), 1)
        ls = self.run_agent(env, "ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertIn("hi", ls.stdout)


def old_session(project, sid, workdir, title, messages):
    """A session as the previous version left it in <project>/.agent/sessions/."""
    d = os.path.join(project, ".agent", "sessions")
    os.makedirs(d, exist_ok=True)
    files = {
        ".json": "\n".join(["["] + [",\n".join(json.dumps(m) for m in messages)] + ["]"]) + "\n",
        ".meta.json": json.dumps({"id": sid, "workdir": workdir, "title": title,
                                  "model": "scripted", "created_unix_ms": 1000,
                                  "updated_unix_ms": 2000, "message_count": len(messages),
                                  "turns": 1}, indent=2) + "\n",
        ".compacted.jsonl": "",
        ".checkpoints": json.dumps({"checkpoints": []}),
        ".lock": "",
    }
    for ext, text in files.items():
        with open(os.path.join(d, sid + ext), "w") as f:
            f.write(text)


MESSAGES = [{"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "the old question"},
            {"role": "assistant", "content": "the old answer"}]


class PreviousVersion(unittest.TestCase):
    def test_old_sessions_move_on_first_use_with_one_note_and_shipped_ones_stay(self):
        env = Env([{"text": "continued"}, {"text": "a new one"}, {"text": "after a restart"}])
        self.addCleanup(env.close)
        real = os.path.realpath(env.project)
        old_session(env.project, "0123456789abcdef", real, "old work", MESSAGES)
        # Shipped by the repository: its author's checkout, and one without a lock.
        old_session(env.project, "aaaaaaaaaaaaaaaa", "/home/author/project", "shipped", MESSAGES)
        old_session(env.project, "bbbbbbbbbbbbbbbb", real, "shipped too", MESSAGES)
        os.unlink(os.path.join(env.project, ".agent", "sessions", "bbbbbbbbbbbbbbbb.lock"))
        with open(os.path.join(env.project, ".agent", ".gitignore"), "w") as f:
            f.write("sessions/\n")

        ls = env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertIn("old work", ls.stdout)
        self.assertNotIn("shipped", ls.stdout)
        self.assertEqual(env.session_ids(), ["0123456789abcdef"])
        left = sorted(os.listdir(os.path.join(env.project, ".agent", "sessions")))
        self.assertEqual(len(left), 9, left)
        self.assertFalse([n for n in left if n.startswith("0123456789abcdef")], left)
        self.assertEqual(sorted(os.listdir(env.sessions_dir())),
                         ["0123456789abcdef" + e for e in
                          (".checkpoints", ".compacted.jsonl", ".json", ".lock", ".meta.json")])

        # The person is told once, by the first session they use.
        r = env.agent("-c", "go on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("continued", r.stdout)
        self.assertIn("moved from %s/.agent/sessions" % env.project, r.stderr)
        self.assertIn(env.sessions_dir(), r.stderr)
        self.assertIn("9 file(s)", r.stderr)
        user = [m["content"] for m in env.transcript("0123456789abcdef") if m["role"] == "user"]
        self.assertEqual(user, ["the old question", "go on"])
        r = env.agent("another")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("moved", r.stderr)
        self.assertEqual(len(env.session_ids()), 2)

        # After a restart: not moved or told again.
        env.agent("daemon", "stop", timeout=20)
        r = env.agent("once more")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("moved", r.stderr)
        self.assertEqual(len(env.session_ids()), 3)
        self.assertEqual(len(os.listdir(os.path.join(env.project, ".agent", "sessions"))), 9)


if __name__ == "__main__":
    unittest.main()
