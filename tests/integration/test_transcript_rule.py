"""The randomised transcript operations, checked by the strict scripted model's own rule."""
import json
import os
import subprocess
import tempfile
import unittest

from harness import BIN, transcript_problems


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


if __name__ == "__main__":
    unittest.main()
