"""`agent resume` with several sessions here opens a picker on a terminal: newest first, the
arrow keys choose, Enter opens, Esc leaves (exit 130) with the terminal as it was."""
import re
import time
import unittest

from harness import Env
from test_terminal import TMUX, Terminal


def with_history(term, name):
    """The pane with its scrollback: tmux scrolls a dead pane's top row away."""
    return term.tmux("capture-pane", "-p", "-S", "-100", "-t", "t:" + name).stdout


def exit_status(term, name, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # the pane sends no event: poll it
        m = re.search(r"\[agent exited with status (\d+)\]", with_history(term, name))
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError("agent did not exit:\n" + with_history(term, name))


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Picker(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "one"}, {"text": "two"}, {"text": "three"}])
        self.addCleanup(self.env.close)
        self.newest_first = []
        for prompt in ("oldest task", "middle task", "newest task"):
            before = set(self.env.session_ids())
            r = self.env.agent(prompt)
            self.assertEqual(r.returncode, 0, r.stderr)
            new, = set(self.env.session_ids()) - before
            self.newest_first.insert(0, new)

    def test_arrows_and_enter_open_the_chosen_session(self):
        term = Terminal(self, self.env)
        term.start("p", "resume")
        screen = term.wait_for("p", "Resume which session?")
        lines = [l for l in screen.splitlines() if " task" in l]
        self.assertEqual([l.split()[-2] for l in lines], ["newest", "middle", "oldest"])
        self.assertTrue(lines[0].startswith("› " + self.newest_first[0][:8]), lines[0])
        term.keys("p", "Down")
        term.wait_for("p", "› " + self.newest_first[1][:8])
        term.keys("p", "Down", "Up", "Enter")
        screen = term.wait_for("p", "session %s in " % self.newest_first[1][:8])
        self.assertNotIn("Resume which session?", screen)
        term.keys("p", "C-d")
        self.assertEqual(term.wait_exit("p"), 0)

    def test_esc_leaves_without_opening_anything(self):
        term = Terminal(self, self.env)
        term.start("p", "resume")
        term.wait_for("p", "Resume which session?")
        term.keys("p", "Escape")
        self.assertEqual(exit_status(term, "p"), 130)
        # The picker erased itself (tmux keeps an erased screen in its history).
        self.assertNotIn("Resume which session?", term.screen("p"))
        self.assertNotIn("session ", with_history(term, "p"))


if __name__ == "__main__":
    unittest.main()
