"""A session started in $HOME or / gets a one-line warning: the agent reaches everything there."""
import os
import unittest

from harness import Env

WARNING = "the agent can read and change everything under"


class WideWorkdir(unittest.TestCase):
    def test_one_shot_in_home_warns_once_and_runs(self):
        env = Env([{"text": "hello"}, {"text": "again"}])
        self.addCleanup(env.close)
        home = os.path.realpath(env.dir)  # the harness's HOME
        r = env.agent("hi", cwd=env.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hello", r.stdout)
        warned = [l for l in r.stderr.splitlines() if WARNING in l]
        self.assertEqual(len(warned), 1, r.stderr)
        self.assertIn(home, warned[0])
        self.assertNotIn(WARNING, r.stdout)

    def test_one_shot_in_a_project_does_not_warn(self):
        env = Env([{"text": "hello"}])
        self.addCleanup(env.close)
        r = env.agent("hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(WARNING, r.stderr + r.stdout)


if __name__ == "__main__":
    unittest.main()
