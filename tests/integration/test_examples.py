"""The example API clients in tests/examples/ (Python and Node.js), run against a real agentd
and the scripted model: approve a gated write, deny it, and cancel a streaming reply."""
import os
import re
import shutil
import subprocess
import unittest

from harness import Env, tool_call, transcript_problems

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
PYTHON_EXAMPLE = os.path.join(EXAMPLES, "python", "agent_example.py")
NODE_DIR = os.path.join(EXAMPLES, "node")
NPM_CI_TIMEOUT_S = 180
EXAMPLE_TIMEOUT_S = 60

WRITE = tool_call("write_file", path="out.txt", content="written by the model\n")
SLOW_TEXT = "this reply streams slowly " * 20  # 260 characters, 130 events of 50 ms


class ExampleCases:
    """The cases every example must pass; a subclass says how to run its example."""

    def command(self):
        raise NotImplementedError

    def run_example(self, env, *flags):
        env.agent("ls")  # starts this Env's daemon
        r = subprocess.run([*self.command(), "--workdir", env.project, *flags,
                            "please write out.txt"],
                           cwd=env.project, env=env.env, capture_output=True, text=True,
                           timeout=EXAMPLE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        m = re.search(r"^session: (\S+) in ", r.stdout, re.M)
        self.assertIsNotNone(m, r.stdout + r.stderr)
        return r, m.group(1)

    def assert_clean_run(self, env, session_id):
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertIsNone(transcript_problems(env.transcript(session_id)))

    def test_approves_a_gated_write_and_the_turn_ends_done(self):
        env = Env([{"text": "Writing it.", "tool_calls": [WRITE]},
                   {"expect": {"last_role": "tool"}, "text": "I wrote out.txt for you."}])
        self.addCleanup(env.close)
        r, sid = self.run_example(env)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("health: SERVING", r.stdout)
        self.assertRegex(r.stdout, r"event \d+ approval_requested write_file ")
        self.assertIn("approval: answered DECISION_ALLOW_ONCE", r.stdout)
        self.assertRegex(r.stdout, r"approval_resolved \S+ DECISION_ALLOW_ONCE by example-")
        self.assertIn('"I wrote out.txt for you."', r.stdout)  # the assistant_message line
        self.assertTrue(r.stdout.rstrip().endswith("outcome: DONE"), out)
        with open(os.path.join(env.project, "out.txt")) as f:
            self.assertEqual(f.read(), "written by the model\n")
        self.assert_clean_run(env, sid)

    def test_denies_a_gated_write_and_the_model_is_told(self):
        env = Env([{"tool_calls": [WRITE]},
                   {"expect": {"last_role": "tool",
                               "last_message_contains": "The user denied this call: not today"},
                    "text": "Understood, I left out.txt alone."}])
        self.addCleanup(env.close)
        r, sid = self.run_example(env, "--deny", "--deny-reason", "not today")
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("approval: answered DECISION_DENY", r.stdout)
        self.assertRegex(r.stdout, r"tool_result write_file \(error\): \"The user denied")
        self.assertIn('"Understood, I left out.txt alone."', r.stdout)
        self.assertTrue(r.stdout.rstrip().endswith("outcome: DONE"), out)
        self.assertFalse(os.path.exists(os.path.join(env.project, "out.txt")))
        self.assert_clean_run(env, sid)

    def test_cancels_after_the_first_delta_and_the_transcript_stays_valid(self):
        env = Env([{"text": SLOW_TEXT, "chunk_size": 2, "delay_ms": 50}])
        self.addCleanup(env.close)
        r, sid = self.run_example(env, "--cancel-after-first-delta")
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 130, out)
        self.assertIn("cancel: sent (was running: ", r.stdout)
        self.assertTrue(r.stdout.rstrip().endswith("outcome: CANCELLED"), out)
        # Cancelled well before the reply's 130 events could have streamed.
        self.assertLess(len(re.findall(r"^event \d+ text_delta ", r.stdout, re.M)), 60, out)
        messages = env.transcript(sid)
        self.assertIsNone(transcript_problems(messages))
        self.assertEqual([m["content"] for m in messages if m["role"] == "user"],
                         ["please write out.txt"])
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(len(env.requests()), 1)


class PythonExample(ExampleCases, unittest.TestCase):
    def command(self):
        return ["/usr/bin/python3", PYTHON_EXAMPLE]


class NodeExample(ExampleCases, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [p for p in ("node", "npm") if shutil.which(p) is None]
        if missing:
            raise unittest.SkipTest("%s not installed (the Node example needs Node.js >= 18 "
                                    "and npm)" % " and ".join(missing))
        # Exactly the locked dependencies, no install scripts (.npmrc); a failed install
        # fails these tests rather than skipping them.
        try:
            r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                               cwd=NODE_DIR, capture_output=True, text=True,
                               timeout=NPM_CI_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            raise AssertionError("npm ci took over %d s in %s" % (NPM_CI_TIMEOUT_S, NODE_DIR)) \
                from e
        if r.returncode != 0:
            raise AssertionError("npm ci failed in %s (exit %d):\n%s%s"
                                 % (NODE_DIR, r.returncode, r.stdout, r.stderr))

    def command(self):
        return ["node", os.path.join(NODE_DIR, "agent_example.js")]


if __name__ == "__main__":
    unittest.main()
