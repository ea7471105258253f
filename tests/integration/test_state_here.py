"""State that stays out of the way (issue 26): one-shot runs do not pile up in `agent ls`, and
`@path` resolves from the directory the session was started in."""
import json
import os
import time
import unittest

from harness import Env
from test_multi_client import Api, collect_until_turns_end

DAY_MS = 24 * 3600 * 1000


class OneShotRunsDoNotPileUp(unittest.TestCase):
    def test_ls_leaves_out_one_shot_runs_older_than_a_day_unless_all(self):
        env = Env([{"text": "one"}, {"text": "two"}, {"text": "three"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("old one-shot").returncode, 0)
        [old] = env.session_ids()
        api = Api(env)
        self.addCleanup(api.close)
        kept = api.create()  # as `agent` interactive makes them: not a one-shot run
        stream = api.attach(kept, "test")
        api.prompt(kept, "interactive")
        collect_until_turns_end(stream)
        stream.cancel()
        self.assertEqual(env.agent("fresh one-shot").returncode, 0)
        fresh = [s for s in env.session_ids() if s not in (old, kept)][0]
        api.close()
        self.assertEqual(env.agent("daemon", "stop").returncode, 0)
        # Two days pass for the first two (their meta files say when they were last used).
        long_ago = int(time.time() * 1000) - 2 * DAY_MS
        for sid in (old, kept):
            path = os.path.join(env.sessions_dir(), sid + ".meta.json")
            with open(path) as f:
                meta = json.load(f)
            meta["updated_unix_ms"] = long_ago
            with open(path, "w") as f:
                json.dump(meta, f)
        r = env.agent("ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(old[:8], r.stdout)
        self.assertIn(kept[:8], r.stdout)
        self.assertIn(fresh[:8], r.stdout)
        self.assertIn("1 one-shot run older than a day not shown: agent ls --all", r.stdout)
        listed = [s["id"] for s in json.loads(env.agent("ls", "--json").stdout)]
        self.assertEqual(sorted(listed), sorted([kept, fresh]))
        r = env.agent("ls", "--all")
        self.assertIn(old[:8], r.stdout)
        self.assertNotIn("not shown", r.stdout)
        # Still there for rm.
        self.assertEqual(env.agent("rm", old).returncode, 0)
        self.assertNotIn(old, env.session_ids())



class MentionsFromTheSessionsDirectory(unittest.TestCase):
    def test_a_person_in_sub_typing_at_notes_means_sub_notes(self):
        env = Env([{"text": "seen"}, {"text": "seen again"}])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))  # the project root is here
        os.makedirs(os.path.join(env.project, "sub"))
        for rel, text in (("notes.txt", "ROOT NOTES"), ("sub/notes.txt", "SUB NOTES"),
                          ("top.txt", "TOP FILE")):
            with open(os.path.join(env.project, rel), "w") as f:
                f.write(text + "\n")
        sub = os.path.join(env.project, "sub")
        r = env.agent("read @notes.txt and @top.txt", cwd=sub)
        self.assertEqual(r.returncode, 0, r.stderr)
        sent = env.requests()[0]["body"]["messages"][-1]["content"]
        self.assertIn("SUB NOTES", sent)
        self.assertNotIn("ROOT NOTES", sent)
        self.assertIn("TOP FILE", sent)  # not under sub/: from the root
        self.assertIn('<mention path="sub/notes.txt"', sent)
        # From the root, the root's.
        r = env.agent("read @notes.txt")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ROOT NOTES", env.requests()[1]["body"]["messages"][-1]["content"])


if __name__ == "__main__":
    unittest.main()
