"""A session's mode comes from the client that drives it (issue 24): a session that ran
one-shot with --yes and is continued interactively without a flag asks again; `-c --yes`
does not ask."""
import os
import unittest

from harness import Env, tool_call
from test_terminal import TMUX, Terminal


def first_turn_then_a_command():
    return [
        {"tool_calls": [tool_call("bash", command="touch one")]},
        {"text": "first done"},
        {"tool_calls": [tool_call("bash", command="touch two")]},
        {"text": "second done"},
    ]


@unittest.skipIf(TMUX is None, "tmux is not installed")
class ModeOfTheDrivingClient(unittest.TestCase):
    def test_continued_without_a_flag_after_a_yes_one_shot_asks_again(self):
        env = Env(first_turn_then_a_command())
        self.addCleanup(env.close)
        r = env.agent("--yes", "first")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(env.project, "one")))
        term = Terminal(self, env)
        w = term.start("main", "-c")
        term.wait_for(w, "›")
        term.type_line(w, "second")
        term.wait_for(w, "Allow?")
        self.assertFalse(os.path.exists(os.path.join(env.project, "two")))
        term.keys(w, "n")
        term.wait_for(w, "second done")
        self.assertFalse(os.path.exists(os.path.join(env.project, "two")))
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_continued_with_yes_runs_without_asking(self):
        env = Env(first_turn_then_a_command())
        self.addCleanup(env.close)
        self.assertEqual(env.agent("first").returncode, 4)  # no terminal, no --yes: denied
        term = Terminal(self, env)
        w = term.start("main", "-c", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "second")
        term.wait_for(w, "second done")
        self.assertTrue(os.path.exists(os.path.join(env.project, "two")))
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)


if __name__ == "__main__":
    unittest.main()
