"""Subagents as the `agent` client shows them, with the real binaries: the parent's terminal
keeps one live line per running child (two at once) and a summary when each ends; a child's
gated call is asked in the parent's terminal, marked with the child's title, and answered
there; a second terminal attaches to a running child and follows it; `agent ls` lists the
children under their parent and `agent attach` without an id never picks a child; `--json`
tags child events with the child's id and a plain one-shot's stdout stays the answer.

The scripted model tells a child's requests from its parent's by a marker in the child's
prompt (the script's "agents" lists). A child that must still be running when the screen is
read waits in bash for a file the test creates once it has seen what it waits for.
"""
import json
import os
import unittest
import urllib.request

from harness import Env, tool_call, transcript_problems
from test_terminal import TMUX, Terminal, wait_until


def task(description, prompt):
    return tool_call("task", description=description, prompt=prompt)


def wait_file(name):
    """A bash command that returns once `name` exists in the project (bounded: 60 s)."""
    return "for i in $(seq 1200); do [ -e %s ] && break; sleep 0.05; done; echo waited-%s" % (
        name, name)


def load_script(env, replies, agents):
    req = urllib.request.Request("http://127.0.0.1:%d/script" % env.port,
                                 data=json.dumps({"replies": replies,
                                                  "agents": agents}).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        json.load(r)


def sessions(env):
    r = env.agent("ls", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def children(env):
    return [s for s in sessions(env) if s.get("depth", 0) > 0]


class SubagentsCli(unittest.TestCase):
    def make(self, replies, agents):
        env = Env([])
        self.addCleanup(env.close)
        env.agent("ls")  # starts the daemon
        load_script(env, replies, agents)
        return env

    def touch(self, env, name):
        with open(os.path.join(env.project, name), "w") as f:
            f.write("go\n")

    def assert_model_happy(self, env):
        stats = env.stats()
        self.assertEqual(stats["expect_failed"], 0, stats)
        self.assertEqual(stats["rejected"], 0, stats)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_two_children_are_live_lines_then_summaries(self):
        env = self.make(
            [{"tool_calls": [task("Find alpha", "[[A]] look for alpha"),
                             task("Find beta", "[[B]] look for beta")]},
             {"expect": {"last_role": "tool"}, "text": "Both searches came back."}],
            {"[[A]]": [{"tool_calls": [tool_call("bash", command=wait_file("go"))]},
                       {"text": "alpha is in a.c\nthat is all", "expect": {"last_role": "tool"}}],
             "[[B]]": [{"tool_calls": [tool_call("bash", command=wait_file("go"))]},
                       {"text": "beta is in b.c", "expect": {"last_role": "tool"}}]})
        term = Terminal(self, env, cols=140)
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "search for both")

        def both_live():
            s = term.screen(w)
            return "↳ Find alpha · general · bash" in s and "↳ Find beta · general · bash" in s
        self.assertTrue(wait_until(both_live), term.screen(w))
        # Ctrl-O shows what each is running in full; again hides it.
        term.keys(w, "C-o")
        self.assertTrue(wait_until(lambda: term.screen(w).count("tool: bash") == 2),
                        term.screen(w))
        term.keys(w, "C-o")
        self.assertTrue(wait_until(lambda: "tool: bash" not in term.screen(w)), term.screen(w))
        self.touch(env, "go")
        screen = term.wait_for(w, "Both searches came back.")
        kids = {k["title"]: k["id"] for k in children(env)}
        self.assertEqual(set(kids), {"Find alpha", "Find beta"}, kids)
        for title, kid in kids.items():
            summary = [l for l in screen.splitlines() if l.startswith("✓ " + title)]
            self.assertEqual(len(summary), 1, screen)
            self.assertIn("· general · done · 2 steps", summary[0])
            self.assertIn("child " + kid[:8], summary[0])
        self.assertNotIn("↳ Find", screen)  # the live lines went with the children
        self.assert_model_happy(env)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_a_childs_gated_call_is_approved_in_the_parents_terminal(self):
        env = self.make(
            [{"tool_calls": [task("Make the file", "[[C]] create approved.txt")]},
             {"expect": {"last_role": "tool", "last_message_contains": "made it"},
              "text": "The child made the file."}],
            {"[[C]]": [{"tool_calls": [tool_call("bash", command="echo ok > approved.txt")]},
                       {"expect": {"last_role": "tool"}, "text": "made it"}]})
        term = Terminal(self, env)
        w = term.start("main")  # asks: no --yes
        term.wait_for(w, "›")
        term.type_line(w, "delegate the file")
        screen = term.wait_for(w, "[y]es / [n]o")
        self.assertIn("? [child: Make the file] bash wants to run: echo ok > approved.txt",
                      screen)
        term.keys(w, "y")
        screen = term.wait_for(w, "The child made the file.")
        self.assertIn("allowed by you", screen)
        self.assertIn("✓ Make the file · general · done", screen)
        with open(os.path.join(env.project, "approved.txt")) as f:
            self.assertEqual(f.read(), "ok\n")
        parent = [s for s in sessions(env) if s.get("depth", 0) == 0][0]
        self.assertIsNone(transcript_problems(env.transcript(parent["id"])))
        self.assertIsNone(transcript_problems(env.transcript(children(env)[0]["id"])))
        self.assert_model_happy(env)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_two_children_asking_at_once_are_asked_one_after_the_other(self):
        env = self.make(
            [{"tool_calls": [task("Write a", "[[A]] write a"), task("Write b", "[[B]] write b")]},
             {"expect": {"last_role": "tool"}, "text": "Both files written."}],
            {"[[A]]": [{"tool_calls": [tool_call("bash", command="echo a > a.txt")],
                        "wait_for": "[[B]]"},
                       {"expect": {"last_role": "tool"}, "text": "a done"}],
             "[[B]]": [{"tool_calls": [tool_call("bash", command="echo b > b.txt")],
                        "wait_for": "[[A]]"},
                       {"expect": {"last_role": "tool"}, "text": "b done"}]})
        term = Terminal(self, env, cols=140)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "write both")

        def both_waiting():
            return term.screen(w).count("waiting for an answer") == 2
        self.assertTrue(wait_until(both_waiting), term.screen(w))
        screen = term.screen(w)
        self.assertEqual(screen.count("[y]es / [n]o"), 1, screen)  # one question at a time
        # Ctrl-O works at the question too: the children's calls in full.
        term.keys(w, "C-o")
        self.assertTrue(wait_until(lambda: "tool: bash: echo b > b.txt" in term.screen(w)
                                   and "tool: bash: echo a > a.txt" in term.screen(w)),
                        term.screen(w))
        term.keys(w, "y")
        self.assertTrue(wait_until(lambda: term.screen(w).count("wants to run") == 2),
                        term.screen(w))
        term.keys(w, "y")
        screen = term.wait_for(w, "Both files written.")
        self.assertEqual(screen.count("allowed by you"), 2, screen)
        for title in ("Write a", "Write b"):
            self.assertIn("? [child: %s] bash wants to run: echo" % title, screen)
            self.assertIn("✓ %s · general · done" % title, screen)
        for name in ("a.txt", "b.txt"):
            self.assertTrue(os.path.exists(os.path.join(env.project, name)), name)
        self.assert_model_happy(env)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_ctrl_c_during_a_child_cancels_it_and_its_line_goes(self):
        env = self.make(
            [{"tool_calls": [task("Stuck child", "[[S]] wait forever")]},
             {"expect": {"last_user_contains": "still there"}, "text": "Yes, here."}],
            {"[[S]]": [{"tool_calls": [tool_call("bash", command=wait_file("never"))]}]})
        term = Terminal(self, env, cols=140)
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "start it")
        term.wait_for(w, "↳ Stuck child · general · bash")
        term.keys(w, "C-c")
        screen = term.wait_for(w, "[cancelled by you]")
        self.assertNotIn("↳ Stuck child", screen)
        self.assertIn("✗ Stuck child · general · cancelled", screen)
        term.type_line(w, "still there?")
        term.wait_for(w, "Yes, here.")
        for s in sessions(env):
            self.assertIsNone(transcript_problems(env.transcript(s["id"])), s)
        self.assert_model_happy(env)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_a_second_terminal_attaches_to_a_running_child(self):
        env = self.make(
            [{"tool_calls": [task("Slow child", "[[S]] wait for go")]},
             {"expect": {"last_role": "tool"}, "text": "parent saw the end"}],
            {"[[S]]": [{"text": "waiting for the file now",
                        "tool_calls": [tool_call("bash", command=wait_file("go"))]},
                       {"expect": {"last_role": "tool"}, "text": "the child is finished"},
                       {"expect": {"last_user_contains": "once more"}, "text": "child again"}]})
        term = Terminal(self, env)
        w = term.start("parent", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "start the slow child")
        term.wait_for(w, "↳ Slow child")
        self.assertTrue(wait_until(lambda: children(env)), "no child listed")
        kid = children(env)[0]
        parent_id = kid["parent_id"]
        a = term.start("child", "attach", kid["id"][:12])
        # Its snapshot: what it is, its history so far, the running call.
        screen = term.wait_for(a, "waiting for the file now")
        self.assertIn("a subagent (general) of session %s: Slow child" % parent_id[:8], screen)
        self.assertIn("session %s" % kid["id"][:8], screen)
        # Then its live events: the end of its turn arrives after the attach.
        self.touch(env, "go")
        term.wait_for(a, "the child is finished")
        term.wait_for(w, "parent saw the end")
        term.keys(a, "C-d")
        self.assertEqual(term.wait_exit(a), 0)
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)
        # A prompt to the child makes it the newest session here; `agent attach` without an
        # id still opens the person's own session.
        r = env.agent("-r", kid["id"], "--yes", "once more")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("child again", r.stdout)
        self.assertEqual(sessions(env)[0]["id"], kid["id"])  # newest first
        b = term.start("default", "attach")
        screen = term.wait_for(b, "parent saw the end")
        self.assertIn("session %s" % parent_id[:8], screen)
        self.assertNotIn("a subagent", screen)
        self.assert_model_happy(env)

    def test_ls_lists_children_under_their_parent(self):
        env = self.make(
            [{"tool_calls": [task("First kid", "[[A]] one"), task("Second kid", "[[B]] two")]},
             {"expect": {"last_role": "tool"}, "text": "done"}],
            {"[[A]]": [{"text": "one done"}], "[[B]]": [{"text": "two done"}]})
        r = env.agent("--yes", "delegate")
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = sessions(env)
        kids = [s for s in listed if s.get("depth", 0) > 0]
        parent = [s for s in listed if s.get("depth", 0) == 0]
        self.assertEqual(len(kids), 2, listed)
        self.assertEqual(len(parent), 1, listed)
        self.assertTrue(all(k["parent_id"] == parent[0]["id"] for k in kids))
        rows = env.agent("ls").stdout.splitlines()
        self.assertEqual(len(rows), 4, rows)
        self.assertTrue(rows[1].startswith(parent[0]["id"][:16]), rows)
        nested = sorted(r.split()[1] for r in rows[2:])
        self.assertEqual(nested, sorted(k["id"][:16] for k in kids), rows)
        self.assertTrue(all(r.startswith("└ ") for r in rows[2:]), rows)
        self.assert_model_happy(env)

    def test_json_child_events_carry_the_child_id_and_plain_stdout_is_the_answer(self):
        env = self.make(
            [{"tool_calls": [task("Json kid", "[[J]] answer")]},
             {"expect": {"last_role": "tool"}, "text": "the final answer"},
             {"tool_calls": [task("Plain kid", "[[P]] answer")]},
             {"expect": {"last_role": "tool"}, "text": "the plain answer"}],
            {"[[J]]": [{"text": "json kid says hi"}], "[[P]]": [{"text": "plain kid says hi"}]})
        r = env.agent("--json", "--yes", "delegate")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
        kid = children(env)[0]["id"]
        progress = [l for l in lines if "child_progress" in l]
        self.assertTrue(progress, lines)
        self.assertTrue(all(l["child_id"] == kid for l in progress), progress)
        self.assertTrue(progress[-1]["child_progress"]["finished"])
        self.assertEqual(lines[-1]["type"], "result")
        self.assertEqual(lines[-1]["result"], "the final answer")
        # Without a terminal the child lines are skipped: stdout is what it always was.
        r = env.agent("--yes", "delegate again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the plain answer", r.stdout)
        self.assertNotIn("Plain kid ·", r.stdout)
        self.assertNotIn("Plain kid ·", r.stderr)
        self.assert_model_happy(env)


if __name__ == "__main__":
    unittest.main()
