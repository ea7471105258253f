"""Checkpoints from the client (issue 17): `agent undo`, `/undo`, `/rewind` and `agent diff`
with the real binaries and the scripted model. A turn (under --yes) edits a file with
edit_file, and with bash creates one, deletes one and changes a mode; undoing it restores
all four. The terminal tests run `agent` in tmux (test_terminal.Terminal).
"""
import os
import re
import stat
import unittest

from harness import Env, tool_call
from test_terminal import TMUX, Terminal

ORIGINAL = {"a.txt": "alpha\nbeta\n", "gone.txt": "keep me\n", "run.sh": "echo run\n"}


def turn_changing_four_files(final="Changed four files."):
    """The replies of one turn: an edit, then a created file, a deleted one and a mode."""
    return [
        {"tool_calls": [tool_call("read_file", path="a.txt")]},
        {"tool_calls": [tool_call("edit_file", path="a.txt", old_string="beta\n",
                                  new_string="BETA\n")]},
        {"tool_calls": [tool_call("bash", command="echo fresh > created.txt && rm gone.txt"
                                                  " && chmod +x run.sh")]},
        {"expect": {"last_role": "tool"}, "text": final},
    ]


def turn_creating(path, final):
    return [
        {"tool_calls": [tool_call("bash", command="echo later > %s" % path)]},
        {"expect": {"last_role": "tool"}, "text": final},
    ]


class CheckpointsCli(unittest.TestCase):
    def make(self, replies):
        env = Env(replies)
        self.addCleanup(env.close)
        for name, text in ORIGINAL.items():
            with open(os.path.join(env.project, name), "w") as f:
                f.write(text)
        os.chmod(os.path.join(env.project, "run.sh"), 0o644)
        return env

    def path(self, env, name):
        return os.path.join(env.project, name)

    def read(self, env, name):
        with open(self.path(env, name)) as f:
            return f.read()

    def run_turn(self, env, prompt, *args):
        r = env.agent("--yes", *args, prompt)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def assert_changed(self, env):
        self.assertEqual(self.read(env, "a.txt"), "alpha\nBETA\n")
        self.assertEqual(self.read(env, "created.txt"), "fresh\n")
        self.assertFalse(os.path.exists(self.path(env, "gone.txt")))
        self.assertTrue(os.stat(self.path(env, "run.sh")).st_mode & stat.S_IXUSR)

    def assert_restored(self, env):
        for name, text in ORIGINAL.items():
            self.assertEqual(self.read(env, name), text, name)
        self.assertFalse(os.path.exists(self.path(env, "created.txt")))
        self.assertFalse(os.stat(self.path(env, "run.sh")).st_mode & stat.S_IXUSR)

    def test_undo_yes_restores_an_edit_a_created_a_deleted_file_and_a_mode(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        self.assert_changed(env)
        r = env.agent("undo", "--yes")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for change, name in (("modified", "a.txt"), ("created", "created.txt"),
                             ("deleted", "gone.txt"), ("mode", "run.sh")):
            self.assertRegex(r.stdout, r"(?m)^  %s +%s$" % (change, re.escape(name)))
        self.assert_restored(env)
        # The model is told, in the transcript, that the files were restored.
        last = env.transcript(env.session_ids()[0])[-1]
        self.assertEqual(last["role"], "user")
        self.assertIn("restored", last["content"])
        # The store's size (of real bytes: the turn's trees are in it).
        status = env.agent("daemon", "status")
        self.assertRegex(status.stdout, r"(?m)^checkpoints: [0-9.]+ (KiB|MiB) on disk$")

    def test_undo_without_yes_and_without_a_terminal_lists_and_refuses(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        r = env.agent("undo")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("created.txt", r.stdout)
        self.assertIn("not restored: no terminal to ask on; run again with --yes", r.stderr)
        self.assert_changed(env)

    def test_undo_yes_keeps_a_file_changed_since_unless_overwrite(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        with open(self.path(env, "a.txt"), "w") as f:
            f.write("mine now\n")
        r = env.agent("undo", "--yes")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^  modified +a\.txt  \(changed since the turn\)$")
        self.assertEqual(self.read(env, "a.txt"), "mine now\n")  # not overwritten
        self.assertEqual(self.read(env, "gone.txt"), "keep me\n")
        self.assertFalse(os.path.exists(self.path(env, "created.txt")))

    def test_undo_with_overwrite_restores_a_file_changed_since(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        with open(self.path(env, "a.txt"), "w") as f:
            f.write("mine now\n")
        r = env.agent("undo", "--yes", "--overwrite")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assert_restored(env)

    def test_diff_into_a_pipe_is_plain(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        r = env.agent("diff", env={"NO_COLOR": ""})  # colour would be allowed, but a pipe
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stdout)
        self.assertRegex(r.stdout, r"(?m)^-beta$")
        self.assertRegex(r.stdout, r"(?m)^\+BETA$")
        self.assertRegex(r.stdout, r"(?m)^\+fresh$")
        one = env.agent("diff", "--turn", "1")
        self.assertEqual(one.stdout, r.stdout)
        bad = env.agent("diff", "--turn", "0")
        self.assertEqual(bad.returncode, 2, bad.stderr)


@unittest.skipIf(TMUX is None, "tmux is not installed")
class CheckpointsTerminal(unittest.TestCase):
    make = CheckpointsCli.make
    path = CheckpointsCli.path
    read = CheckpointsCli.read
    run_turn = CheckpointsCli.run_turn
    assert_changed = CheckpointsCli.assert_changed
    assert_restored = CheckpointsCli.assert_restored

    def test_slash_undo_asks_and_asks_again_before_overwriting(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        with open(self.path(env, "a.txt"), "w") as f:
            f.write("mine now\n")
        term = Terminal(self, env)
        w = term.start("main", "-c")
        term.wait_for(w, "›")
        term.type_line(w, "/undo")
        screen = term.wait_for(w, "restore these files? [y/N]")
        self.assertIn("a.txt  (changed since the turn)", screen)
        self.assertIn("created.txt", screen)
        self.assertFalse(os.path.exists(self.path(env, "gone.txt")))  # not before the answer
        term.type_line(w, "y")
        term.wait_for(w, "1 file was changed after the turn: overwrite it too? [y/N]")
        term.type_line(w, "y")
        term.wait_for(w, "restored 4 files")
        self.assert_restored(env)
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_agent_undo_on_a_terminal_asks_twice_and_keeps_what_the_user_changed(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        with open(self.path(env, "a.txt"), "w") as f:
            f.write("mine now\n")
        term = Terminal(self, env)
        w = term.start("undo", "undo")
        screen = term.wait_for(w, "restore these files? [y/N]")
        self.assertIn("a.txt  (changed since the turn)", screen)
        self.assertTrue(os.path.exists(self.path(env, "created.txt")))  # not before the answer
        term.type_line(w, "y")
        term.wait_for(w, "1 file was changed after the turn: overwrite it too? [y/N]")
        term.type_line(w, "n")
        self.assertEqual(term.wait_exit(w), 0)
        self.assertEqual(self.read(env, "a.txt"), "mine now\n")
        self.assertEqual(self.read(env, "gone.txt"), "keep me\n")
        self.assertFalse(os.path.exists(self.path(env, "created.txt")))
        # Answered no: nothing restored, exit status 130.
        again = term.start("again", "undo")
        term.wait_for(again, "restore these files? [y/N]")
        term.type_line(again, "n")
        self.assertEqual(term.wait_exit(again), 130)
        self.assertEqual(self.read(env, "a.txt"), "mine now\n")

    def test_slash_undo_answered_no_restores_nothing(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        term = Terminal(self, env)
        w = term.start("main", "-c")
        term.wait_for(w, "›")
        term.type_line(w, "/undo")
        term.wait_for(w, "restore these files? [y/N]")
        term.keys(w, "Enter")
        term.wait_for(w, "nothing restored")
        self.assert_changed(env)

    def test_slash_rewind_forks_before_a_prompt_and_restores_its_files(self):
        env = self.make(turn_changing_four_files("first done")
                        + turn_creating("second.txt", "second done"))
        self.run_turn(env, "first prompt")
        self.run_turn(env, "second prompt", "-c")
        self.assertTrue(os.path.exists(self.path(env, "second.txt")))
        [original] = env.session_ids()
        before = env.transcript(original)
        term = Terminal(self, env)
        w = term.start("main", "-c")
        term.wait_for(w, "›")
        term.type_line(w, "/rewind")
        screen = term.wait_for(w, "before which prompt? [1-2")
        self.assertRegex(screen, r"1  first prompt")
        self.assertRegex(screen, r"2  second prompt")
        term.type_line(w, "2")
        term.wait_for(w, "restore the files too")
        term.type_line(w, "y")
        term.wait_for(w, "rewound:")
        # The files as before the second prompt: the first turn's changes stay.
        self.assertFalse(os.path.exists(self.path(env, "second.txt")))
        self.assert_changed(env)
        ids = env.session_ids()
        self.assertEqual(len(ids), 2, ids)
        [fork] = [i for i in ids if i != original]
        # The old branch stays (with a note that its files were restored).
        self.assertEqual(env.transcript(original)[:len(before)], before)
        contents = [m.get("content") for m in env.transcript(fork) if m["role"] == "user"]
        self.assertEqual(contents, ["first prompt"])
        term.keys(w, "C-d")
        screen = term.wait_for(w, "agent attach")
        self.assertIn(fork[:8], screen)

    def test_agent_diff_on_a_terminal_is_coloured(self):
        env = self.make(turn_changing_four_files())
        self.run_turn(env, "change four files")
        term = Terminal(self, env)
        w = term.start("diff", "diff", extra_env={"NO_COLOR": None})
        self.assertEqual(term.wait_exit(w), 0)
        screen = term.screen(w, escapes=True)
        self.assertRegex(screen, r"\x1b\[[0-9;]*31m-beta")
        self.assertRegex(screen, r"\x1b\[[0-9;]*32m\+BETA")
        # Headers bold (tmux draws a run of bold lines with one escape).
        self.assertRegex(screen, r"\x1b\[1m(\x1b\[\d+m)*(diff --git|index |--- |\+\+\+ )")
        plain = term.start("plain", "diff")  # NO_COLOR: none
        self.assertEqual(term.wait_exit(plain), 0)
        shot = term.screen(plain, escapes=True)
        self.assertIn("+BETA", shot)
        self.assertNotRegex(shot, r"\x1b\[[0-9;]*3[12]m")


if __name__ == "__main__":
    unittest.main()
