"""What `agent` takes as input and how it says no: stdin as in `claude -p` / `codex exec`
(the question followed by stdin, fenced; stdin alone as one prompt; `-`, `-p`), the size cap,
and usage errors exiting 2 rather than CLI11's own codes."""
import os
import subprocess
import unittest

from harness import BIN, Env


def user_texts(env):
    """The user messages of every model request, in order (the last of each request)."""
    out = []
    for r in env.requests():
        msgs = [m for m in r["body"]["messages"] if m["role"] == "user"]
        out.append(msgs[-1]["content"])
    return out


class Stdin(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "one"}, {"text": "two"}])
        self.addCleanup(self.env.close)

    def run_agent(self, *args, stdin_text, env=None):
        e = dict(self.env.env, **(env or {}))
        return subprocess.run([os.path.join(BIN, "agent"), *args], cwd=self.env.project, env=e,
                              input=stdin_text, capture_output=True, text=True, timeout=60)

    def test_question_then_stdin_is_one_fenced_prompt(self):
        r = self.run_agent("what is this?", stdin_text="ctx line 1\nctx line 2\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(user_texts(self.env),
                         ["what is this?\n\n```\nctx line 1\nctx line 2\n```\n"])
        self.assertEqual(len(self.env.session_ids()), 1)

    def test_piped_lines_are_one_prompt_and_one_turn(self):
        r = self.run_agent(stdin_text="a\nb\nc\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(user_texts(self.env), ["a\nb\nc\n"])
        self.assertIn("one", r.stdout)
        self.assertNotIn("two", r.stdout)

    def test_dash_and_print_are_the_one_shot_forms(self):
        r = self.run_agent("-", stdin_text="from a file\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_agent("-p", "printed", stdin_text="")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(user_texts(self.env)[-2:], ["from a file\n", "printed"])

    def test_stdin_past_the_cap_is_refused_before_anything_starts(self):
        r = self.run_agent("summarise", stdin_text="x" * (3 << 20))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("stdin holds more than 2 MiB", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(self.env.daemon_pids(), [])
        self.assertEqual(self.env.requests(), [])

    def test_a_stdin_left_open_says_so_and_is_read_when_it_ends(self):
        p = subprocess.Popen([os.path.join(BIN, "agent"), "explain"], cwd=self.env.project,
                             env=self.env.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stderr.close)
        self.assertIn("reading stdin until it ends", p.stderr.readline())
        p.stdin.write("late context\n")
        p.stdin.close()
        p.wait(timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(user_texts(self.env), ["explain\n\n```\nlate context\n```\n"])

    def test_empty_stdin_without_a_prompt_is_a_usage_error(self):
        r = self.run_agent(stdin_text="")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nothing to send", r.stderr)
        self.assertEqual(self.env.session_ids(), [])


class UsageErrors(unittest.TestCase):
    def test_usage_errors_exit_2(self):
        env = Env([])
        self.addCleanup(env.close)
        for args in (["--bogus"], ["--resume"], ["ls", "--bogus"], ["daemon", "restart"],
                     ["fork"], ["rm"], ["rm", "--older-than", "3 weeks"], ["attach", "a", "b"]):
            with self.subTest(args=args):
                r = env.agent(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertNotEqual(r.stderr.strip(), "")
        r = env.agent("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--model", r.stdout)
        r = env.agent("hello", env={"AGENT_MAX_STEPS": "1O"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("AGENT_MAX_STEPS=1O", r.stderr)
        self.assertEqual(env.daemon_pids(), [])


if __name__ == "__main__":
    unittest.main()
