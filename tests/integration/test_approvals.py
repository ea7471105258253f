"""Tools, approvals and permission rules through the real daemon."""
import json
import os
import time
import unittest

from harness import Env, tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind


class Approvals(unittest.TestCase):
    def test_edit_needing_approval_is_answered_by_a_second_client(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="src.txt")]},
            {"tool_calls": [tool_call("edit_file", path="src.txt", old_string="old line",
                                      new_string="new line")]},
            {"text": "edited"},
        ])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "src.txt"), "w") as f:
            f.write("first\nold line\nlast\n")
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        a = api.attach(sid, "terminal-a")
        b = api.attach(sid, "terminal-b")
        next(a)
        next(b)
        api.prompt(sid, "fix src.txt", client="terminal-a")
        for e in b:
            if kind(e) == "approval_requested":
                req = e.approval_requested.approval
                break
        self.assertEqual(req.tool, "edit_file")
        self.assertIn("-old line", req.diff)
        self.assertIn("+new line", req.diff)
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                           decision=pb.DECISION_ALLOW_ONCE,
                                           client_name="terminal-b"), timeout=10)
        events = collect_until_turns_end(a)
        resolved = [e for e in events if kind(e) == "approval_resolved"]
        self.assertEqual(resolved[0].approval_resolved.client_name, "terminal-b")
        self.assertEqual(events[-1].turn_ended.outcome, pb.TURN_OUTCOME_DONE)
        with open(os.path.join(env.project, "src.txt")) as f:
            self.assertEqual(f.read(), "first\nnew line\nlast\n")
        a.cancel()
        b.cancel()

    def test_allow_always_then_the_same_command_runs_without_a_question(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo hi && echo there")]},
            {"text": "ran"},
            {"tool_calls": [tool_call("bash", command="echo hi && echo there")]},
            {"text": "ran again"},
            {"tool_calls": [tool_call("bash", command="echo hi && rm -f nothing")]},
            {"text": "asked"},
        ])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "one")
        for e in s:
            if kind(e) == "approval_requested":
                req = e.approval_requested.approval
                break
        # The prefix rule first, the exact commands as the narrow choice; this client takes those.
        self.assertEqual(list(req.proposed_rules), ["bash(echo *)"])
        self.assertEqual(list(req.exact_rules), ["bash(echo hi)", "bash(echo there)"])
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                           decision=pb.DECISION_ALLOW_ALWAYS,
                                           rules=list(req.exact_rules), client_name="t"),
                         timeout=10)
        collect_until_turns_end(s)
        # A person's own rules go to the state directory, bound to this project: nothing in
        # the checkout is created or changed.
        self.assertEqual(env.personal_rules(), ["bash(echo hi)", "bash(echo there)"])
        self.assertFalse(os.path.exists(os.path.join(env.project, ".agent")))
        api.prompt(sid, "two")
        second = collect_until_turns_end(s)
        self.assertFalse([e for e in second if kind(e) == "approval_requested"])
        # A compound with one part not allowed still asks.
        api.prompt(sid, "three")
        for e in s:
            if kind(e) == "approval_requested":
                self.assertEqual(list(e.approval_requested.approval.proposed_rules),
                                 ["bash(echo *)", "bash(rm -f nothing)"])
                api.stub.Approve(pb.ApproveRequest(
                    session_id=sid, call_id=e.approval_requested.approval.call_id,
                    decision=pb.DECISION_DENY, reason="no rm", client_name="t"), timeout=10)
            if kind(e) == "turn_ended":
                break
        self.assertIn("The user denied this call: no rm", json.dumps(env.transcript(sid)))
        s.cancel()

    def test_deny_rule_wins_over_yes_mode_is_not_bypassed_by_rules(self):
        env = Env([{"tool_calls": [tool_call("bash", command="rm -rf build")]},
                   {"expect": {"last_message_contains": "Denied by a permission rule"},
                    "text": "blocked"}])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"allow": ["bash(rm *)"], "deny": ["bash(rm -rf *)"]}, f)
        r = env.agent("clean")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertEqual(env.stats()["expect_failed"], 0)


class Modes(unittest.TestCase):
    def test_read_only_mode_denies_every_gated_tool_even_with_rules(self):
        env = Env([{"tool_calls": [tool_call("write_file", path="w.txt", content="x"),
                                   tool_call("bash", command="touch t.txt")]},
                   {"expect": {"last_message_contains": "read-only"}, "text": "could not"}])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"allow": ["bash", "write_file"]}, f)
        r = env.agent("--read-only", "write things")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertFalse(os.path.exists(os.path.join(env.project, "w.txt")))
        self.assertFalse(os.path.exists(os.path.join(env.project, "t.txt")))
        self.assertEqual(env.stats()["expect_failed"], 0)


class BashCancel(unittest.TestCase):
    def test_cancel_during_background_sleeps_leaves_no_process(self):
        env = Env(lambda e: [{"tool_calls": [tool_call(
            "bash", command="sleep 60 & sleep 60 # %s" % e.dir)]}, {"text": "after"}])
        self.addCleanup(env.close)
        p = env.popen_agent("--yes", "--json", "sleep")
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stderr.close)
        sid = None
        for line in p.stdout:
            e = json.loads(line)
            if e["type"] == "session_started":
                sid = e["session_id"]
            if "tool_call_ready" in e:
                break
        # The command is running once its process shows up.
        deadline = time.monotonic() + 10
        while not self.sleepers(env) and time.monotonic() < deadline:
            time.sleep(0.01)  # no event tells us bash has forked; poll /proc
        self.assertTrue(self.sleepers(env))
        import grpc_client
        t0 = time.monotonic()
        grpc_client.cancel(env.socket, sid)
        rest = p.stdout.read()
        p.wait(timeout=30)
        print("cancel of a bash tool: turn ended %.0f ms after Cancel"
              % ((time.monotonic() - t0) * 1000))
        self.assertEqual(p.returncode, 130, rest)
        self.assertEqual(self.sleepers(env), [])
        self.assertIsNone(transcript_problems(env.transcript(sid)))

    @staticmethod
    def sleepers(env):
        """Processes of the tool: the bash carrying the marker, and sleeps in its group."""
        marked, groups, found = [], set(), []
        procs = {}
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    cmd = f.read()
                with open("/proc/%s/stat" % p) as f:
                    stat = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[0] == "Z":
                continue
            procs[int(p)] = (cmd, int(stat[2]))
            if env.dir.encode() in cmd and b"agentd" not in cmd and b"scripted_model" not in cmd:
                marked.append(int(p))
                groups.add(int(stat[2]))
        for pid, (cmd, pgid) in procs.items():
            if pgid in groups and pgid != os.getpgrp():
                found.append(pid)
        return found


if __name__ == "__main__":
    unittest.main()
