"""The model asks (the ask_user tool): its question reaches every attached client, the first
answer is the call's result (the strict model server checks the transcript), with nobody
attached it waits as an approval waits, and a run without a terminal is told at once that
nobody can answer."""
import json
import unittest

from harness import Env, tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind

QUESTION = "Which database should the tests use?"
OPTIONS = ["sqlite", "postgres"]


def asking(then="done"):
    return [{"tool_calls": [tool_call("ask_user", question=QUESTION, options=OPTIONS)]},
            {"text": then}]


def tool_results(transcript):
    return [m["content"] for m in transcript if m.get("role") == "tool"]


class AskUserTest(unittest.TestCase):
    def setUp(self):
        self.env = Env(asking())
        self.addCleanup(self.env.close)
        self.api = Api(self.env)
        self.addCleanup(self.api.close)
        self.pb = self.api.pb

    def question_on(self, stream):
        for e in stream:
            if kind(e) == "approval_requested":
                return e.approval_requested.approval
            if kind(e) == "snapshot" and e.snapshot.HasField("pending_approval"):
                return e.snapshot.pending_approval
        raise AssertionError("the stream ended before the question")

    def test_the_first_answer_from_another_terminal_is_the_result(self):
        sid = self.api.create(policy=self.pb.POLICY_MODE_ASK)
        a = self.api.attach(sid, "terminal-a")
        b = self.api.attach(sid, "terminal-b")
        self.api.prompt(sid, "set up the tests", client="terminal-a")
        q = self.question_on(b)
        self.assertEqual(q.tool, "ask_user")
        self.assertEqual(q.question.text, QUESTION)
        self.assertEqual(list(q.question.options), OPTIONS)
        self.assertEqual(self.question_on(a).call_id, q.call_id)  # every client is asked
        self.api.stub.Approve(self.pb.ApproveRequest(
            session_id=sid, call_id=q.call_id, decision=self.pb.DECISION_ALLOW_ONCE,
            reason="postgres", client_name="terminal-b"), timeout=10)
        # The second answer comes too late: the first won.
        with self.assertRaises(Exception) as late:
            self.api.stub.Approve(self.pb.ApproveRequest(
                session_id=sid, call_id=q.call_id, decision=self.pb.DECISION_ALLOW_ONCE,
                reason="sqlite", client_name="terminal-a"), timeout=10)
        self.assertIn("FAILED_PRECONDITION", str(late.exception))
        events = collect_until_turns_end(a)
        resolved = [e.approval_resolved for e in events if kind(e) == "approval_resolved"]
        self.assertEqual([(r.client_name, r.reason) for r in resolved],
                         [("terminal-b", "postgres")])
        self.assertEqual(events[-1].turn_ended.outcome, self.pb.TURN_OUTCOME_DONE)
        transcript = self.env.transcript(sid)
        self.assertEqual(tool_results(transcript), ["The user answered: postgres"])
        self.assertIsNone(transcript_problems(transcript))
        a.cancel()
        b.cancel()

    def test_with_nobody_attached_it_waits_as_an_approval_does(self):
        sid = self.api.create(policy=self.pb.POLICY_MODE_ASK)
        self.api.prompt(sid, "set up the tests")
        w = self.env.agent("wait", sid, "--for", "approval", timeout=60)
        self.assertEqual(w.returncode, 0, w.stdout + w.stderr)
        info = self.api.stub.GetSession(self.pb.GetSessionRequest(id=sid), timeout=10)
        self.assertEqual(info.session.state, self.pb.SESSION_STATE_WAITING_APPROVAL)
        s = self.api.attach(sid, "late")
        q = self.question_on(s)  # the snapshot holds it
        self.api.stub.Approve(self.pb.ApproveRequest(
            session_id=sid, call_id=q.call_id, decision=self.pb.DECISION_DENY,
            reason="ask me later", client_name="late"), timeout=10)
        collect_until_turns_end(s)
        self.assertEqual(tool_results(self.env.transcript(sid)),
                         ["The user did not answer: ask me later. Decide yourself and say what "
                          "you chose."])
        s.cancel()

    def test_a_run_without_a_terminal_is_told_nobody_can_answer(self):
        r = self.env.agent("--json", "set up the tests")
        self.assertEqual(r.returncode, 0, r.stderr)
        events = [json.loads(line) for line in r.stdout.splitlines()]
        asked = [e for e in events if e.get("type") == "approval_requested"]
        self.assertEqual(len(asked), 1, r.stdout)
        self.assertEqual(tool_results(self.env.transcript()),
                         ["The user did not answer: nobody can answer: agent runs without a "
                          "terminal. Decide yourself and say what you chose."])


if __name__ == "__main__":
    unittest.main()
