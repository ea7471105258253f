"""Auto mode and escalation (issue 24): `agent --auto` runs sandboxed commands and edits in
the project without a question, deny rules still apply, what the sandbox refused reaches the
model with the reason; an escalation runs only with a person's answer; the mode is an event
every client sees with who changed it; where the sandbox cannot start, nothing runs unasked
and the reason is shown."""
import json
import os
import shutil
import tempfile
import unittest

from harness import Env, tool_call
from test_multi_client import Api, kind

SANDBOX_HINT = "[sandbox (workspace-write, network off)"


def needs_bwrap(test):
    if shutil.which("bwrap") is None:
        test.skipTest("bubblewrap is not installed")
    from test_sandbox import bwrap_works
    if not bwrap_works([]):
        test.skipTest("bubblewrap cannot create namespaces on this machine")


class AutoMode(unittest.TestCase):
    def setUp(self):
        needs_bwrap(self)

    def test_a_multi_command_task_finishes_without_a_question(self):
        env = Env([
            {"tool_calls": [tool_call("write_file", path="hello.c",
                                      content='#include <stdio.h>\nint main(void){puts("hi");}\n')]},
            {"tool_calls": [tool_call("write_file", path="Makefile",
                                      content="hello: hello.c\n\tcc -o hello hello.c\n")]},
            {"tool_calls": [tool_call("edit_file", path="hello.c", old_string='"hi"',
                                      new_string='"hello"')]},
            {"tool_calls": [tool_call("bash", command="make && ./hello > out.txt")]},
            {"expect": {"last_message_contains": "[exit code 0]"},
             "tool_calls": [tool_call("bash", command="echo x > /var/outside.txt")]},
            {"expect": {"last_message_contains": SANDBOX_HINT},
             "tool_calls": [tool_call("bash", command="cat out.txt")]},
            {"expect": {"last_message_contains": "hello"}, "text": "done"},
        ])
        self.addCleanup(env.close)
        r = env.agent("--auto", "build it")  # no terminal: a question would be denied, exit 4
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertEqual(open(os.path.join(env.project, "out.txt")).read(), "hello\n")
        self.assertFalse(os.path.exists("/var/outside.txt"))

    def test_the_escalation_hint_follows_only_what_the_sandbox_refused(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo '3 tests FAILED' && exit 2")]},
            {"expect": {"last_message_not_contains": "escalate"},
             "tool_calls": [tool_call("bash", command="touch /usr/agt-refused")]},
            {"expect": {"last_message_contains": SANDBOX_HINT}, "text": "done"},
        ])
        self.addCleanup(env.close)
        r = env.agent("--auto", "go")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_deny_rules_still_apply(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="rm -f keep.txt")]},
            {"expect": {"last_message_contains": "Denied by a permission rule"}, "text": "ok"},
        ])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"deny": ["bash(rm *)"]}, f)
        open(os.path.join(env.project, "keep.txt"), "w").close()
        r = env.agent("--auto", "clean")
        self.assertTrue(os.path.exists(os.path.join(env.project, "keep.txt")))
        self.assertEqual(env.stats()["expect_failed"], 0, r.stderr)

    def test_an_escalation_is_never_approved_without_a_person(self):
        marker = "escalated.txt"
        for flags in (["--auto"], ["--yes"], ["--auto", "--yes"]):
            env = Env([
                {"tool_calls": [tool_call("bash", command="touch " + marker, escalate=True,
                                          justification="needs the host")]},
                {"text": "ok"},
            ])
            self.addCleanup(env.close)
            r = env.agent(*flags, "go")
            self.assertEqual(r.returncode, 4, flags)  # denied: nobody could be asked
            self.assertFalse(os.path.exists(os.path.join(env.project, marker)), flags)

    def test_an_escalation_written_as_a_string_is_read_once_as_one(self):
        # The policy and the tool read one checked value: "true" is an escalation for both
        # (refused: nobody can be asked), a word that is no boolean runs nothing at all.
        for value in ("true", "yes"):
            # Outside /tmp, which the sandbox replaces (a confined write there lands nowhere).
            marker = os.path.join(tempfile.mkdtemp(prefix="agt-esc-", dir="/home"),
                                  "escalated.txt")
            self.addCleanup(shutil.rmtree, os.path.dirname(marker), True)
            env = Env([
                {"tool_calls": [tool_call("bash", command="touch " + marker, escalate=value,
                                          justification="needs the host")]},
                {"text": "ok"},
            ])
            self.addCleanup(env.close)
            r = env.agent("--auto", "--yes", "go")
            self.assertFalse(os.path.exists(marker), (value, r.stdout, r.stderr))
            result = [m for m in env.transcript() if m.get("role") == "tool"][0]["content"]
            if value == "true":
                self.assertIn("only a person may allow this call (it asks to run outside the "
                              "sandbox", result)
            else:
                self.assertIn('argument "escalate" must be a boolean, got string', result)

    def test_an_escalation_needs_a_justification(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="true", escalate=True)]},
            {"expect": {"last_message_contains": "escalate needs a justification"},
             "text": "ok"},
        ])
        self.addCleanup(env.close)
        env.agent("--auto", "go")
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_a_person_approves_an_escalation_and_always_records_only_that_command(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo out > /tmp/agt-escalated-%d" %
                                      os.getpid(), escalate=True, justification="host /tmp")]},
            {"text": "ok"},
        ])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create(policy=api.pb.POLICY_MODE_AUTO)
        stream = api.attach(sid, "person")
        api.prompt(sid, "go")
        approval = None
        for e in stream:
            if kind(e) == "approval_requested":
                approval = e.approval_requested.approval
                break
        self.assertIsNotNone(approval)
        self.assertTrue(approval.requires_person)
        self.assertIn("outside the sandbox", approval.person_reason)
        self.assertEqual(list(approval.proposed_rules),
                         ["bash_escalated(echo out > /tmp/agt-escalated-%d)" % os.getpid()])
        # A person's answer says so (common/person_answer.h), as `agent` does at its prompt.
        api.stub.Approve(api.pb.ApproveRequest(session_id=sid, call_id=approval.call_id,
                                               decision=api.pb.DECISION_ALLOW_ONCE,
                                               client_name="person"), timeout=10,
                         metadata=(("agent-person", "1"),))
        for e in stream:
            if kind(e) == "turn_ended":
                break
        stream.cancel()
        path = "/tmp/agt-escalated-%d" % os.getpid()
        self.addCleanup(lambda: os.path.exists(path) and os.unlink(path))
        self.assertEqual(open(path).read(), "out\n")  # it ran on the host, not in the sandbox

    def test_a_mode_change_is_an_event_naming_who_changed_it(self):
        env = Env([])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create(policy=api.pb.POLICY_MODE_ASK)
        stream = api.attach(sid, "watcher")
        api.stub.SetPolicy(api.pb.SetPolicyRequest(session_id=sid, mode=api.pb.POLICY_MODE_AUTO,
                                                   client_name="alice"), timeout=10)
        for e in stream:
            if kind(e) == "policy_changed":
                self.assertEqual(e.policy_changed.mode, api.pb.POLICY_MODE_AUTO)
                self.assertEqual(e.policy_changed.client_name, "alice")
                break
        stream.cancel()


class SandboxUnavailable(unittest.TestCase):
    """Never a silent fallback: with bwrap missing, commands are asked about and every place
    says why."""

    def setUp(self):
        self.env = Env([
            {"tool_calls": [tool_call("bash", command="touch ran.txt")]},
            {"text": "ok"},
        ], extra_env={"AGENT_BWRAP": "/nonexistent/bwrap"})
        self.addCleanup(self.env.close)

    def test_check_status_and_the_first_notice_say_why(self):
        r = self.env.agent("sandbox", "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("bubblewrap is not installed", r.stdout)
        self.assertIn("apt-get install bubblewrap", r.stdout)
        self.assertIn("sandbox: unavailable", self.env.agent("daemon", "status").stdout)
        r = self.env.agent("sandbox", "--", "true")
        self.assertEqual(r.returncode, 1)
        self.assertIn("the sandbox cannot start", r.stderr)
        r = self.env.agent("--auto", "go")
        self.assertEqual(r.returncode, 4, r.stderr)  # asked, nobody to answer: denied
        self.assertFalse(os.path.exists(os.path.join(self.env.project, "ran.txt")))
        self.assertIn("sandbox: unavailable", r.stderr)


if __name__ == "__main__":
    unittest.main()
