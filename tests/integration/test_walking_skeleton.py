"""The first path through every box: agent → agentd → model → tools → transcript."""
import json
import os
import unittest

from harness import Env, tool_call, transcript_problems


class OneShotTurn(unittest.TestCase):
    def test_reads_then_writes_then_answers_with_streamed_text(self):
        env = Env([
            {"text": "Reading it.", "tool_calls": [tool_call("read_file", path="in.txt")]},
            {"expect": {"last_role": "tool", "last_message_contains": "hello from the test"},
             "tool_calls": [tool_call("write_file", path="out/result.txt", content="HELLO\n")]},
            {"expect": {"last_role": "tool"},
             "text": "Done: I wrote out/result.txt in upper case.", "chunk_size": 3},
        ])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "in.txt"), "w") as f:
            f.write("hello from the test\n")
        r = env.agent("--yes", "--json", "copy in.txt in upper case to out/result.txt")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(env.project, "out", "result.txt")) as f:
            self.assertEqual(f.read(), "HELLO\n")
        events = [json.loads(line) for line in r.stdout.splitlines()]
        # Streamed: the final answer arrived as several deltas before the turn ended.
        end = next(i for i, e in enumerate(events) if "turn_ended" in e)
        last_user = max(i for i, e in enumerate(events) if "tool_result" in e)
        deltas = [e for e in events[last_user:end] if "text_delta" in e]
        self.assertGreater(len(deltas), 1)
        self.assertEqual("".join(d["text_delta"]["text"] for d in deltas),
                         "Done: I wrote out/result.txt in upper case.")
        self.assertEqual(events[end]["turn_ended"]["outcome"], "TURN_OUTCOME_DONE")
        # The saved transcript keeps the rule, and every request was accepted.
        messages = env.transcript()
        self.assertIsNone(transcript_problems(messages))
        self.assertEqual([m["role"] for m in messages],
                         ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"])
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(len(env.requests()), 3)

    def test_plain_output_shows_tool_lines_on_stderr_and_the_answer_on_stdout(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="in.txt")]},
            {"text": "It says hi."},
        ])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "in.txt"), "w") as f:
            f.write("hi\n")
        r = env.agent("what does in.txt say?")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("→ read_file(in.txt)", r.stderr)
        self.assertEqual(r.stdout, "It says hi.\n")
        self.assertNotIn("\x1b[", r.stdout + r.stderr)

    def test_gated_tool_is_denied_without_yes(self):
        env = Env([
            {"tool_calls": [tool_call("write_file", path="x.txt", content="no")]},
            {"expect": {"last_message_contains": "--yes"}, "text": "I was not allowed."},
        ])
        self.addCleanup(env.close)
        r = env.agent("write x.txt")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertFalse(os.path.exists(os.path.join(env.project, "x.txt")))
        self.assertEqual(env.stats()["expect_failed"], 0)


class ClearFailures(unittest.TestCase):
    def test_missing_base_url_is_a_one_line_error(self):
        env = Env([])
        self.addCleanup(env.close)
        r = env.agent("hello", env={"AGENT_BASE_URL": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("AGENT_BASE_URL", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_unreachable_model_gives_up_with_a_clear_message(self):
        env = Env([], extra_env={"AGENT_MAX_ATTEMPTS": "2"})
        self.addCleanup(env.close)
        r = env.agent("hello", env={"AGENT_BASE_URL": "http://127.0.0.1:9/v1"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing listens on", r.stderr)
        self.assertIn("127.0.0.1:9", r.stderr)

    def test_tool_call_with_broken_json_is_answered_and_the_turn_goes_on(self):
        env = Env([
            {"tool_calls": [{"name": "read_file", "arguments_raw": "{\"path\": \"a.txt\""}]},
            {"expect": {"last_role": "tool", "last_message_contains": "not valid JSON"},
             "text": "Sorry, let me fix that."},
        ])
        self.addCleanup(env.close)
        r = env.agent("read a.txt")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Sorry, let me fix that.", r.stdout)
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertIsNone(transcript_problems(env.transcript()))

    def test_path_outside_the_project_is_refused(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="../../etc/passwd")]},
            {"expect": {"last_message_contains": "outside"}, "text": "Not allowed."},
        ])
        self.addCleanup(env.close)
        r = env.agent("read it")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)


if __name__ == "__main__":
    unittest.main()
