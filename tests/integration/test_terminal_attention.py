"""The interactive client tells a person who is not looking: the bell and OSC 9 / OSC 777
when a session it shows waits for an approval or finishes a turn. tmux's pipe-pane records
the raw bytes the client writes to its terminal (tmux itself swallows OSC 9), and tmux with
focus-events off sends no focus report, so the terminal counts as not focused."""
import os
import unittest

from harness import Env, tool_call
from test_terminal import TMUX, Terminal, wait_until


def raw(path):
    if not os.path.exists(path):
        return b""
    with open(path, "rb") as f:
        return f.read()


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Attention(unittest.TestCase):
    def run_turn(self, extra_env=None):
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo hi")]},
            {"text": "all done"},
        ])
        self.addCleanup(env.close)
        term = Terminal(self, env)
        w = term.start("main", extra_env=extra_env)
        log = os.path.join(env.dir, "pane.raw")
        term.tmux("pipe-pane", "-o", "-t", "t:" + w, "cat >> '%s'" % log)
        term.wait_for(w, "›")
        term.type_line(w, "say hi")
        term.wait_for(w, "[y]es")
        approval = raw(log)
        term.keys(w, "y")
        term.wait_for(w, "all done")
        return approval, log

    def test_bell_and_osc9_when_an_approval_waits_and_a_turn_ends(self):
        approval, log = self.run_turn()
        self.assertIn(b"\a\x1b]9;agent: needs your approval: bash\a", approval)
        self.assertIn(b"\x1b]777;notify;agent;needs your approval: bash\a", approval)
        self.assertTrue(wait_until(lambda: b"\a\x1b]9;agent: finished a turn\a" in raw(log)),
                        raw(log)[-400:])

    def test_agent_notify_0_turns_it_off(self):
        approval, _ = self.run_turn({"AGENT_NOTIFY": "0"})
        self.assertIn(b"[y]es", approval)  # the question was drawn, with no alert before it
        self.assertNotIn(b"\x1b]9;", approval)


if __name__ == "__main__":
    unittest.main()
