"""Output that pipes (issue 26): a one-shot's stdout is the answer only when it is not a
terminal, --json lines are typed and short, concurrent calls' results stay under their own
line, and a session's title is the person's words."""
import json
import os
import subprocess
import unittest

from harness import BIN, Env, tool_call


def config(env, obj):
    d = os.path.join(env.dir, "config", "agent")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(obj, f)


class AnswerOnlyOnStdout(unittest.TestCase):
    def test_a_piped_run_writes_just_the_answer_and_the_trace_to_stderr(self):
        env = Env([
            {"text": "Let me run it.", "tool_calls": [tool_call("bash", command="echo hi")]},
            {"text": "The summary: it printed hi."},
        ])
        self.addCleanup(env.close)
        # As `git diff | agent "summarize" > notes.md` runs it: stdin and stdout are pipes.
        r = subprocess.run([os.path.join(BIN, "agent"), "--yes", "summarize"], cwd=env.project,
                           env=env.env, input="diff --git a/x b/x\n", capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "The summary: it printed hi.\n")
        self.assertIn("Let me run it.", r.stderr)  # narration before a tool call
        self.assertIn("→ bash(echo hi)", r.stderr)
        self.assertIn("[exit code 0]", r.stderr)
        # The title is the person's words, not the fenced stdin.
        ls = env.agent("ls", "--json")
        self.assertEqual([s["title"] for s in json.loads(ls.stdout)], ["summarize"])

    def test_results_of_calls_that_ran_at_once_are_each_under_their_own_line(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="a.txt"),
                            tool_call("read_file", path="b.txt")]},
            {"text": "Both read."},
        ])
        self.addCleanup(env.close)
        for name, word in (("a.txt", "alpha"), ("b.txt", "beta")):
            with open(os.path.join(env.project, name), "w") as f:
                f.write(word + "\n")
        r = env.agent("read both")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "Both read.\n")
        # Blocks: a call's line and what follows it up to the next call's line.
        blocks, current = [], None
        for line in r.stderr.splitlines():
            if line.startswith("→ "):
                current = [line]
                blocks.append(current)
            elif current is not None and line.startswith("  "):
                current.append(line)
        with_output = {b[0]: "\n".join(b[1:]) for b in blocks if len(b) > 1}
        self.assertIn("alpha", with_output["→ read_file(a.txt)"], r.stderr)
        self.assertNotIn("beta", with_output["→ read_file(a.txt)"], r.stderr)
        self.assertIn("beta", with_output["→ read_file(b.txt)"], r.stderr)
        self.assertNotIn("alpha", with_output["→ read_file(b.txt)"], r.stderr)


class JsonLines(unittest.TestCase):
    def test_every_line_is_typed_the_first_is_short_arguments_are_objects_costs_rounded(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="in.txt")],
             "usage": {"prompt_tokens": 1416, "completion_tokens": 0}},
            {"text": "done", "usage": {"prompt_tokens": 0, "completion_tokens": 0}},
            {"text": "again"},
        ])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "in.txt"), "w") as f:
            f.write("hi\n")
        config(env, {"prices": {"scripted": {"input": 8.0, "output": 8.0}}})  # 0.011328 $
        r = env.agent("--json", "read it")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        events = [json.loads(line) for line in lines]
        self.assertTrue(all("type" in e for e in events), r.stdout)
        first = events[0]
        self.assertEqual(first["type"], "session_started")
        self.assertLess(len(lines[0]), 1024)
        self.assertNotIn("transcript_json", lines[0])
        self.assertEqual(first["session_id"], events[-1]["session_id"])
        ready = [e for e in events if e["type"] == "tool_call_ready"][0]
        self.assertEqual(ready["tool_call_ready"]["call"]["arguments"], {"path": "in.txt"})
        ended = [e for e in events if e["type"] == "turn_ended"][0]
        self.assertIn('"cost_usd":0.0113', [l for l in lines if '"turn_ended"' in l][0])
        self.assertEqual(ended["turn_ended"]["usage"]["cost_usd"], 0.0113)
        self.assertEqual(events[-1]["total_cost_usd"], 0.0113)
        # The snapshot, on request.
        r = env.agent("--json", "--json-snapshot", "-c", "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = json.loads(r.stdout.splitlines()[0])
        self.assertEqual(first["type"], "snapshot")
        self.assertIn("transcript_json", first["snapshot"])


if __name__ == "__main__":
    unittest.main()
