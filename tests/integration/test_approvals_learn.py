"""Approvals that learn (issue 26), as a person at a terminal sees them: deny with a message to
the model in one step, and /allow that records in the personal file and warns."""
import json
import os
import unittest

from harness import Env, tool_call
from test_terminal import TMUX, Terminal


@unittest.skipIf(TMUX is None, "tmux is not installed")
class ApprovalsThatLearn(unittest.TestCase):
    def test_no_and_tell_it_denies_with_the_persons_words_for_the_model(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="rm -rf build")]},
            {"expect": {"last_role": "tool",
                        "last_message_contains": "The user denied this call: use make clean"},
             "text": "I will use make clean."},
        ])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, "build"))
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "clean up")
        term.wait_for(w, "[t]ell it instead")
        term.keys(w, "t")
        term.wait_for(w, "No, and tell it:")
        term.tmux("send-keys", "-t", "t:" + w, "-l", "use make cleanX")
        term.keys(w, "BSpace")
        term.wait_for(w, "use make clean▏")
        term.keys(w, "Enter")
        screen = term.wait_for(w, "I will use make clean.")
        self.assertIn("denied by you (use make clean)", screen)
        self.assertTrue(os.path.isdir(os.path.join(env.project, "build")))
        self.assertEqual(env.stats()["expect_failed"], 0)
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_always_offers_the_prefix_and_the_exact_command(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="ls -a")]},
            {"tool_calls": [tool_call("bash", command="ls -l")]},
            {"text": "listed twice"},
            {"tool_calls": [tool_call("bash", command="rm -f nothing-here")]},
            {"text": "removed"},
        ])
        self.addCleanup(env.close)
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "list")
        screen = term.wait_for(w, "[e]xactly: bash(ls -a)")
        self.assertIn("[a]lways: bash(ls *)", screen)
        term.keys(w, "a")
        # The prefix rule answers the second, similar call: the turn ends with nothing typed.
        term.wait_for(w, "listed twice")
        self.assertEqual(env.personal_rules(), ["bash(ls *)"])
        # A command whose prefix would allow too much is offered exactly, with no [e] choice.
        term.type_line(w, "remove")
        screen = term.wait_for(w, "[a]lways: bash(rm -f nothing-here)")
        self.assertNotIn("[e]xactly: bash(rm", screen)
        term.keys(w, "n")
        term.wait_for(w, "removed")
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_exactly_records_the_command_alone(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="ls -a")]},
            {"tool_calls": [tool_call("bash", command="ls -l")]},
            {"text": "done"},
        ])
        self.addCleanup(env.close)
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "list")
        term.wait_for(w, "[e]xactly: bash(ls -a)")
        term.keys(w, "e")
        term.wait_for(w, "allowed always by you: bash(ls -a)")
        # `ls -l` is not `ls -a`: asked again.
        term.wait_for(w, "ls -l")
        term.wait_for(w, "[e]xactly: bash(ls -l)")
        term.keys(w, "y")
        term.wait_for(w, "done")
        self.assertEqual(env.personal_rules(), ["bash(ls -a)"])
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_edits_mode_writes_without_asking_and_asks_for_commands(self):
        env = Env([
            {"tool_calls": [tool_call("write_file", path="notes.txt", content="hello\n")]},
            {"expect": {"last_role": "tool"},
             "tool_calls": [tool_call("bash", command="ls -a")]},
            {"text": "wrote and listed"},
        ])
        self.addCleanup(env.close)
        term = Terminal(self, env)
        w = term.start("main", "--accept-edits")
        term.wait_for(w, "›")
        term.type_line(w, "write then list")
        # The edit ran unasked; the command is asked about.
        screen = term.wait_for(w, "? bash wants to run: ls -a")
        self.assertNotIn("write_file wants to change", screen)
        with open(os.path.join(env.project, "notes.txt")) as f:
            self.assertEqual(f.read(), "hello\n")
        term.keys(w, "y")
        term.wait_for(w, "wrote and listed")
        term.type_line(w, "/status")
        term.wait_for(w, "mode edits")
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_slash_allow_records_in_the_personal_file_and_warns(self):
        env = Env([])
        self.addCleanup(env.close)
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "/allow edit_file(*)")
        screen = term.wait_for(w, "matches only files directly in")
        self.assertIn("recorded for you in this project", screen)
        self.assertIn("edit_file(**)", screen)
        term.type_line(w, "/allow bash(*)")
        term.wait_for(w, "allows every command")
        self.assertEqual(env.personal_rules(), ["edit_file(*)", "bash(*)"])
        # Nothing in the checkout is created or changed.
        self.assertFalse(os.path.exists(os.path.join(env.project, ".agent")))
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)


if __name__ == "__main__":
    unittest.main()
