"""Symlinks must never make the daemon write, create or remove files elsewhere (security item
7): one planted in the state directory where the sessions live, or in a cloned repository's
.agent/ (which no longer holds sessions, but may hold a previous version's)."""
import os
import unittest

from harness import Env


def tree(root):
    """{relative path: content} of every file under `root`, and its directories as None."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(d, name), root)] = None
        for name in files:
            with open(os.path.join(d, name), "rb") as f:
                out[os.path.relpath(os.path.join(d, name), root)] = f.read()
    return out


class PlantedSymlinks(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "this reply must never be asked for"}])
        self.addCleanup(self.env.close)
        # Where a link leads: a directory of the user's, outside the project, with a file
        # named like a session so that listing, loading or removing it would show.
        self.outside = os.path.join(self.env.dir, "outside")
        os.makedirs(os.path.join(self.outside, "sessions"))
        for d in (self.outside, os.path.join(self.outside, "sessions")):
            with open(os.path.join(d, "notes.json"), "w") as f:
                f.write("precious\n")

    def assert_refused(self, link):
        before = tree(self.outside)
        r = self.env.agent("--yes", "hello")
        out = r.stdout + r.stderr
        self.assertNotEqual(r.returncode, 0, out)
        self.assertIn(link, out)
        self.assertIn("symbolic link", out)
        ls = self.env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertNotIn("notes", ls.stdout)
        rm = self.env.agent("rm", "notes")
        self.assertNotEqual(rm.returncode, 0, rm.stdout)
        self.assertEqual(tree(self.outside), before)
        self.assertEqual(self.env.requests(), [])  # no turn ran

    def test_a_symlinked_sessions_dir_is_refused_and_nothing_outside_changes(self):
        os.makedirs(os.path.dirname(self.env.sessions_dir()))
        os.symlink(self.outside, self.env.sessions_dir())
        self.assert_refused(self.env.sessions_dir())

    def test_a_symlinked_agent_dir_is_not_followed_for_old_sessions(self):
        # What the link leads to looks like a previous version's session of this project.
        with open(os.path.join(self.outside, "sessions", "notes.meta.json"), "w") as f:
            f.write('{"id": "notes", "workdir": "%s"}' % os.path.realpath(self.env.project))
        with open(os.path.join(self.outside, "sessions", "notes.lock"), "w") as f:
            f.write("")
        os.symlink(self.outside, os.path.join(self.env.project, ".agent"))
        before = tree(self.outside)
        self.env.agent("--yes", "hello")
        ls = self.env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertNotIn("notes", ls.stdout)
        self.assertEqual(tree(self.outside), before)
        self.assertEqual(sorted(os.listdir(self.env.project)), [".agent"])


if __name__ == "__main__":
    unittest.main()
