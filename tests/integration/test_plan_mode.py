"""Plan mode (`agent --plan`, `/mode plan`, POLICY_MODE_PLAN): the model is offered only what
reads, plans and asks; a command runs inside the sandbox with the project read-only and an edit
is not run (not offered; the policy would refuse it too: escalation_test), as root and as an
unprivileged user; the plan is handed over with present_plan, a
run without a terminal prints it and ends, and a person's choice sets the mode the work goes on
in. The world lives under /home (the sandbox replaces /tmp)."""
import json
import os
import shutil
import unittest

from harness import tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind
from test_sandbox import SandboxWorld, bwrap_works, unused_uid

PLAN = "1. Add the cache\n2. Test it"
PLAN_TOOLS = {"read_file", "list_dir", "find_files", "search", "update_plan", "ask_user", "bash",
              "present_plan"}


def tool_results(transcript):
    return [m["content"] for m in transcript if m.get("role") == "tool"]


class PlanModeCases:
    uid = None

    def world(self, replies):
        if shutil.which("bwrap") is None:
            self.skipTest("bubblewrap is not installed (packaging/install-deps.sh installs it)")
        w = SandboxWorld(replies, uid=self.uid)
        self.addCleanup(w.close)
        if not bwrap_works(w.prefix()):
            self.skipTest("bubblewrap cannot create namespaces on this machine")
        return w

    def test_writes_are_refused_and_a_run_without_a_terminal_prints_the_plan(self):
        w = self.world([
            {"tool_calls": [tool_call("bash", command="echo planned > inside.txt")]},
            {"tool_calls": [tool_call("write_file", path="made.txt", content="x\n")]},
            {"tool_calls": [tool_call("bash", command="cat notes.txt")]},
            {"tool_calls": [tool_call("present_plan", plan=PLAN)]},
            {"text": "the plan is above"},
        ])
        w.write(os.path.join(w.project, "notes.txt"), "read me\n")
        if self.uid is not None:
            os.chown(os.path.join(w.project, "notes.txt"), self.uid, self.uid)
        r = w.agent("--plan", "--json", "plan the cache")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(w.project, "inside.txt")))
        self.assertFalse(os.path.exists(os.path.join(w.project, "made.txt")))
        results = tool_results(w.transcript())
        self.assertEqual(len(results), 4, results)
        self.assertIn("Read-only file system", results[0])
        # Not offered, so not run: the model is told what it has.
        self.assertIn('Unknown tool "write_file"', results[1])
        self.assertIn("present_plan", results[1])
        self.assertIn("read me", results[2])  # reading works
        self.assertTrue(results[3].startswith("Nobody chose how to go on (nobody can answer"),
                        results[3])
        # The plan was printed, as the question every client is shown.
        events = [json.loads(line) for line in r.stdout.splitlines()]
        asked = [e for e in events if e.get("type") == "approval_requested"]
        self.assertEqual(len(asked), 1, r.stdout)
        self.assertIn("Add the cache", json.dumps(asked[0]))
        # Only what reads, plans and asks was offered.
        tools = {t["function"]["name"] for t in w.requests()[0]["body"]["tools"]}
        self.assertEqual(tools, PLAN_TOOLS)
        self.assertIsNone(transcript_problems(w.transcript()))


class PlanModeAsRoot(PlanModeCases, unittest.TestCase):
    def test_a_persons_choice_sets_the_mode_and_the_work_goes_on(self):
        w = self.world([
            {"tool_calls": [tool_call("present_plan", plan=PLAN)]},
            {"tool_calls": [tool_call("bash", command="echo done > inside.txt")]},
            {"text": "done"},
        ])
        api = Api(w)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_PLAN)
        s = api.attach(sid, "terminal")
        api.prompt(sid, "add the cache", client="terminal")
        before = []
        for e in s:
            before.append(e)
            if kind(e) == "approval_requested":
                q = e.approval_requested.approval
                break
        self.assertEqual(q.tool, "present_plan")
        self.assertEqual(q.question.text, PLAN)
        self.assertEqual(q.question.options[-1], "Keep planning")
        choice = q.question.options[0]
        self.assertIn("auto", choice)
        # Going on may widen what runs unasked: a script's answer is refused.
        with self.assertRaises(Exception) as refused:
            api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=q.call_id,
                                               decision=pb.DECISION_ALLOW_ONCE, reason=choice,
                                               client_name="script"), timeout=10)
        self.assertIn("PERMISSION_DENIED", str(refused.exception))
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=q.call_id,
                                           decision=pb.DECISION_ALLOW_ONCE, reason=choice,
                                           client_name="terminal"),
                         timeout=10, metadata=(("agent-person", "1"),))
        events = collect_until_turns_end(s)
        # The plan's items are the session's plan, as update_plan's are, shown with the question.
        plans = [e.plan_updated for e in before if kind(e) == "plan_updated"]
        self.assertEqual([[p.text for p in plan.steps] for plan in plans],
                         [["Add the cache", "Test it"]])
        changed = [e.policy_changed for e in events if kind(e) == "policy_changed"]
        self.assertEqual([(c.mode, c.client_name) for c in changed],
                         [(pb.POLICY_MODE_AUTO, "terminal")])
        self.assertEqual(events[-1].turn_ended.outcome, pb.TURN_OUTCOME_DONE)
        with open(os.path.join(w.project, "inside.txt")) as f:
            self.assertEqual(f.read(), "done\n")
        results = tool_results(w.transcript(sid))
        self.assertIn("now in auto mode", results[0])
        s.cancel()


class PlanModeAsAnUnprivilegedUser(PlanModeCases, unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to become another user")
        self.uid = unused_uid()


if __name__ == "__main__":
    unittest.main()
