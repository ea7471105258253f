"""Steering a running turn: a prompt sent with PROMPT_DELIVERY_STEER reaches the model at the
turn's next step, after that step's tool results (the strict model server refuses any other
place), every client sees it at each stage with who sent it, and a steer the turn cannot take
any more becomes the next prompt. The turn is held at a known point by a bash call that reads
a FIFO the test writes when it is ready, so nothing here depends on timing."""
import json
import os
import unittest

from harness import Env, tool_call, transcript_problems
from test_multi_client import Api, kind

STEER = "use the v2 API instead"


def gated_bash(env):
    """A bash call that ends when the test writes to the project's FIFO `gate`."""
    os.mkfifo(os.path.join(env.project, "gate"))
    return tool_call("bash", command="cat gate")


def open_gate(env):
    with open(os.path.join(env.project, "gate"), "w") as f:
        f.write("go\n")


def until(stream, pred):
    """Events of `stream` up to and including the first for which pred holds."""
    seen = []
    for e in stream:
        seen.append(e)
        if pred(e):
            return seen
    raise AssertionError("the stream ended first")


def steered(events, stage=None):
    return [e.steered for e in events
            if kind(e) == "steered" and (stage is None or e.steered.stage == stage)]


class SteeringTest(unittest.TestCase):
    def setUp(self):
        self.env = None
        self.api = None

    def tearDown(self):
        if self.api:
            self.api.close()
        if self.env:
            self.env.close()

    def start(self, replies):
        self.env = Env(replies)
        self.api = Api(self.env)
        self.pb = self.api.pb
        self.sid = self.api.create()
        self.watch = self.api.attach(self.sid, "watcher")

    def test_a_steer_from_another_terminal_lands_after_the_steps_results(self):
        self.start(lambda env: [{"tool_calls": [gated_bash(env)]}, {"text": "switched to v2"}])
        self.api.prompt(self.sid, "migrate the client")
        until(self.watch, lambda e: kind(e) == "tool_call_ready")
        r = self.env.agent("steer", self.sid, STEER)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("steered", r.stdout)
        # The watcher sees it pending with who sent it, before the step's result is in.
        pending = until(self.watch, lambda e: kind(e) == "steered")[-1].steered
        self.assertEqual(pending.stage, self.pb.Steered.PENDING)
        self.assertEqual(pending.text, STEER)
        self.assertTrue(pending.client_name.startswith("agent-"), pending.client_name)
        open_gate(self.env)
        rest = until(self.watch, lambda e: kind(e) == "turn_ended")
        landed = steered(rest, self.pb.Steered.LANDED)
        self.assertEqual([s.text for s in landed], [STEER])
        self.assertEqual(rest[-1].turn_ended.outcome, self.pb.TURN_OUTCOME_DONE)
        # One turn: the second request carries the steer right after the call's result.
        requests = self.env.requests()
        self.assertEqual(len(requests), 2)
        messages = requests[1]["body"]["messages"]
        self.assertEqual([m["role"] for m in messages[-3:]], ["assistant", "tool", "user"])
        self.assertEqual(messages[-1]["content"], STEER)
        saved = self.env.transcript(self.sid)
        self.assertIsNone(transcript_problems(saved))
        self.assertEqual(sum(1 for e in rest if kind(e) == "turn_started"), 0)

    def test_with_no_turn_running_a_steer_is_a_prompt(self):
        self.start([{"text": "hello"}])
        resp = self.api.stub.SendPrompt(self.pb.SendPromptRequest(
            session_id=self.sid, text="hi", client_name="api",
            delivery=self.pb.PROMPT_DELIVERY_STEER), timeout=10)
        self.assertFalse(resp.steered)
        events = until(self.watch, lambda e: kind(e) == "turn_ended")
        self.assertEqual(steered(events), [])
        self.assertEqual(len(self.env.requests()), 1)
        self.assertEqual(self.env.requests()[0]["body"]["messages"][-1]["content"], "hi")

    def test_a_steer_the_turn_cannot_take_becomes_the_next_prompt(self):
        self.start(lambda env: [{"tool_calls": [gated_bash(env)]}, {"text": "on it"}])
        self.api.prompt(self.sid, "start")
        until(self.watch, lambda e: kind(e) == "tool_call_ready")
        resp = self.api.stub.SendPrompt(self.pb.SendPromptRequest(
            session_id=self.sid, text=STEER, client_name="api",
            delivery=self.pb.PROMPT_DELIVERY_STEER), timeout=10)
        self.assertTrue(resp.steered)
        # Cancelled before its next step: the turn ends without taking the steer.
        self.api.stub.Cancel(self.pb.CancelRequest(session_id=self.sid, client_name="api"),
                             timeout=10)
        # The cancel ends `cat` with its group: the gate is never opened (an open for writing
        # would wait for a reader that is gone).
        first = until(self.watch, lambda e: kind(e) == "turn_ended")
        self.assertEqual(first[-1].turn_ended.outcome, self.pb.TURN_OUTCOME_CANCELLED)
        queued = steered(first, self.pb.Steered.QUEUED)
        self.assertEqual([(s.text, s.client_name) for s in queued], [(STEER, "api")])
        # Its own turn follows, the steer as the prompt.
        second = until(self.watch, lambda e: kind(e) == "turn_ended")
        prompts = [e.user_message.text for e in second if kind(e) == "user_message"]
        self.assertEqual(prompts, [STEER])
        self.assertEqual(self.env.requests()[-1]["body"]["messages"][-1]["content"], STEER)
        self.assertIsNone(transcript_problems(self.env.transcript(self.sid)))

    def test_a_user_prompt_submit_hook_sees_a_steer_and_may_refuse_it(self):
        from test_hooks import one, user_hooks
        self.env = Env(lambda env: [{"tool_calls": [gated_bash(env)]},
                                    {"expect": {"last_role": "tool"}, "text": "done"}])
        user_hooks(self.env, {"UserPromptSubmit": one(
            "grep -q hunter2 && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0")})
        self.api = Api(self.env)
        self.pb = self.api.pb
        self.sid = self.api.create()
        self.watch = self.api.attach(self.sid, "watcher")
        self.api.prompt(self.sid, "start")
        until(self.watch, lambda e: kind(e) == "tool_call_ready")
        resp = self.api.stub.SendPrompt(self.pb.SendPromptRequest(
            session_id=self.sid, text="my password is hunter2", client_name="api",
            delivery=self.pb.PROMPT_DELIVERY_STEER), timeout=10)
        self.assertTrue(resp.steered)
        open_gate(self.env)
        events = until(self.watch, lambda e: kind(e) == "turn_ended")
        blocked = steered(events, self.pb.Steered.BLOCKED)
        self.assertEqual(len(blocked), 1)
        self.assertIn("no secrets in prompts", blocked[0].reason)
        self.assertEqual(steered(events, self.pb.Steered.LANDED), [])
        # The model never saw it: the second request ends with the call's result.
        self.assertEqual(self.env.requests()[-1]["body"]["messages"][-1]["role"], "tool")
        self.assertNotIn("hunter2", json.dumps(self.env.transcript(self.sid)))

    def test_a_read_only_observer_cannot_steer(self):
        self.start([{"text": "hello"}])
        observer = self.api.attach(self.sid, "observer", read_only=True)  # kept attached
        with self.assertRaises(Exception) as caught:
            self.api.stub.SendPrompt(self.pb.SendPromptRequest(
                session_id=self.sid, text=STEER, client_name="observer",
                delivery=self.pb.PROMPT_DELIVERY_STEER), timeout=10)
        self.assertIn("read-only", str(caught.exception))
        observer.cancel()


if __name__ == "__main__":
    unittest.main()
