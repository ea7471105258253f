"""Sessions live in the user's state directory, keyed by the project: a read-only checkout
works and nothing is written into the repository; a previous version's .agent/sessions/ is
taken only when a person asks (`agent trust --sessions`), and what a repository shipped there
never."""
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
    def test_old_sessions_are_taken_only_when_a_person_asks_and_shipped_ones_never(self):
        env = Env([{"text": "a new one"}, {"text": "continued"}])
        self.addCleanup(env.close)
        real = os.path.realpath(env.project)
        # What a repository can ship: a meta naming the path its victims use, and a lock.
        old_session(env.project, "0123456789abcdef", real, "old work", MESSAGES)
        # Not even that: its author's checkout, and one without a lock.
        old_session(env.project, "aaaaaaaaaaaaaaaa", "/home/author/project", "shipped", MESSAGES)
        old_session(env.project, "bbbbbbbbbbbbbbbb", real, "shipped too", MESSAGES)
        os.unlink(os.path.join(env.project, ".agent", "sessions", "bbbbbbbbbbbbbbbb.lock"))
        legacy = os.path.join(env.project, ".agent", "sessions")

        ls = env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertNotIn("old work", ls.stdout)
        # The first `agent -c` after a clone continues nothing planted; the first session
        # made here tells the person what is there and how to take it.
        r = env.agent("-c", "go on")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no session in this project yet", r.stderr)
        r = env.agent("go on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("a new one", r.stdout)
        self.assertIn("%s holds 3 session(s) of an older agentd" % legacy, r.stderr)
        self.assertIn("agent trust --sessions", r.stderr)
        self.assertNotIn("0123456789abcdef", env.session_ids())
        user = [m["content"] for m in env.transcript() if m["role"] == "user"]
        self.assertEqual(user, ["go on"])
        self.assertEqual(len(os.listdir(legacy)), 14)

        # The person takes them: listed, then moved (only the one written for this checkout).
        t = env.agent("trust", "--sessions", "--yes")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn("0123456789abcdef  old work", t.stdout)
        self.assertNotIn("shipped", t.stdout)
        self.assertIn("1 session(s) of this project moved from %s" % legacy, t.stdout)
        self.assertIn("0123456789abcdef", env.session_ids())
        self.assertEqual(len(os.listdir(legacy)), 9)
        r = env.agent("-r", "0123456789abcdef", "go on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("continued", r.stdout)
        user = [m["content"] for m in env.transcript("0123456789abcdef") if m["role"] == "user"]
        self.assertEqual(user, ["the old question", "go on"])


if __name__ == "__main__":
    unittest.main()
