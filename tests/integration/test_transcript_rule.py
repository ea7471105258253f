"""The randomised transcript operations, checked by the strict scripted model's own rule."""
import json
import os
import subprocess
import tempfile
import unittest

from harness import BIN, Env, tool_call, transcript_problems


class RandomisedTranscriptsPassTheStrictServer(unittest.TestCase):
    def test_every_final_transcript_is_accepted(self):
        with tempfile.TemporaryDirectory() as d:
            dump = os.path.join(d, "transcripts.jsonl")
            r = subprocess.run(
                [os.path.join(BIN, "common_test"),
                 "--gtest_filter=TranscriptRandomized.*"],
                env=dict(os.environ, AGENT_TRANSCRIPT_DUMP=dump),
                capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout[-2000:])
            with open(dump) as f:
                transcripts = [json.loads(line) for line in f]
        self.assertEqual(len(transcripts), 2000)
        for i, messages in enumerate(transcripts):
            self.assertIsNone(transcript_problems(messages), "transcript %d" % i)


class AFloodOfCalls(unittest.TestCase):
    """A reply of 3,000 calls: 256 run, the rest are answered "not run" in one batch, and the
    Debug build's re-check of the rule stays linear, so the turn takes seconds, not minutes."""

    def test_every_call_is_answered_once_and_the_daemon_stays_responsive(self):
        n = 3000
        env = Env([
            {"tool_calls": [tool_call("read_file", path="missing-%d.txt" % i) for i in range(n)]},
            {"expect": {"last_message_contains": "may make at most 256 tool calls"},
             "text": "done"},
        ])
        self.addCleanup(env.close)
        r = env.agent("--yes", "--json", "go", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertEqual(env.stats()["rejected"], 0)
        messages = env.transcript()
        self.assertIsNone(transcript_problems(messages))
        self.assertEqual(sum(1 for m in messages if m.get("role") == "tool"), n)
        self.assertEqual(env.agent("ls", timeout=20).returncode, 0)


if __name__ == "__main__":
    unittest.main()
