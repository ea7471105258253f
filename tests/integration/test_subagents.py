"""Subagents through the API: the `task` tool runs child sessions (two at once), a child's
gated call is approved through its parent's stream, a cancel and a kill -9 during a child
leave both transcripts valid, a second client attaches to a running child, and the child's
usage rolls up into its parent's. The scripted model tells a child's requests from its
parent's by a marker in the child's first user message (the script's "agents" lists)."""
import json
import os
import threading
import unittest
import urllib.request

from harness import Env, tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind


def task(description, prompt, agent=None):
    args = {"description": description, "prompt": prompt}
    if agent:
        args["agent"] = agent
    return tool_call("task", **args)


def load_script(env, replies, agents):
    req = urllib.request.Request("http://127.0.0.1:%d/script" % env.port,
                                 data=json.dumps({"replies": replies,
                                                  "agents": agents}).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        json.load(r)


class Subagents(unittest.TestCase):
    def start(self, replies, agents, policy="POLICY_MODE_YES", config=None):
        self.env = Env([])
        self.addCleanup(self.env.close)
        if config is not None:  # the daemon's config.json, before it starts
            path = os.path.join(self.env.env["XDG_CONFIG_HOME"], "agent")
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, "config.json"), "w") as f:
                json.dump(config, f)
        load_script(self.env, replies, agents)
        self.api = Api(self.env)
        self.addCleanup(self.api.close)
        self.pb = self.api.pb
        self.parent = self.api.create(getattr(self.pb, policy))
        self.stream = self.api.attach(self.parent, "watcher")
        self.addCleanup(self.stream.cancel)

    def session(self, sid):
        return self.api.stub.GetSession(self.pb.GetSessionRequest(id=sid), timeout=10)

    def messages(self, sid):
        return json.loads(self.session(sid).transcript_json)

    def wait_for(self, pred):
        """Events of the parent's stream up to the first that `pred` accepts."""
        seen = []
        for e in self.stream:
            seen.append(e)
            if pred(e):
                return seen
            if kind(e) == "turn_ended":
                break
        raise AssertionError("the turn ended first: %s" % [kind(e) for e in seen])

    def test_two_children_run_at_once_and_answer_in_call_order(self):
        # Each child's first request waits until the other child's has arrived: run one
        # after the other, the first would fail.
        self.start(
            [{"tool_calls": [task("Find A", "[[A]] look for a"),
                             task("Find B", "[[B]] look for b")]},
             {"text": "both done", "expect": {"last_role": "tool"}}],
            {"[[A]]": [{"text": "answer from A", "wait_for": "[[B]]",
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10}}],
             "[[B]]": [{"text": "answer from B", "wait_for": "[[A]]",
                        "usage": {"prompt_tokens": 200, "completion_tokens": 20}}]})
        self.api.prompt(self.parent, "delegate two searches")
        events = collect_until_turns_end(self.stream)
        ended = [e for e in events if kind(e) == "turn_ended"][-1].turn_ended
        self.assertEqual(ended.outcome, self.pb.TURN_OUTCOME_DONE, ended.error)
        progress = [e.child_progress for e in events if kind(e) == "child_progress"]
        first_finish = next(i for i, p in enumerate(progress) if p.finished)
        started = {p.title for p in progress[:first_finish]}
        self.assertEqual(started, {"Find A", "Find B"})  # both ran before either finished
        finished = [p for p in progress if p.finished]
        self.assertEqual(len(finished), 2)
        self.assertTrue(all(p.outcome == self.pb.TURN_OUTCOME_DONE for p in finished))

        messages = self.messages(self.parent)
        self.assertIsNone(transcript_problems(messages))
        results = [m for m in messages if m["role"] == "tool"]
        self.assertIn("answer from A", results[0]["content"])
        self.assertIn("answer from B", results[1]["content"])
        # The children's transcripts never enter the parent's.
        self.assertNotIn("look for a", json.dumps([m for m in messages if m["role"] != "assistant"]))

        listed = self.api.stub.ListSessions(
            self.pb.ListSessionsRequest(workdir=self.env.project), timeout=10).sessions
        children = [s for s in listed if s.parent_id == self.parent]
        self.assertEqual(sorted(s.title for s in children), ["Find A", "Find B"])
        for c in children:
            self.assertEqual((c.agent, c.depth), ("general", 1))
            child_messages = self.messages(c.id)
            self.assertIsNone(transcript_problems(child_messages))
            self.assertIn(c.id, results[0]["content"] + results[1]["content"])
            self.assertIn("subagent", child_messages[0]["content"])
        # Usage: the parent's two requests and the children's, in the turn and the session.
        self.assertEqual(ended.usage.requests, 4)
        self.assertGreaterEqual(ended.usage.prompt_tokens, 300)
        info = self.session(self.parent).session
        self.assertEqual(info.usage.requests, 4)
        self.assertEqual(self.env.stats()["rejected"], 0)

    def test_children_past_the_concurrency_limit_wait_for_a_slot(self):
        # One child at a time: whichever runs first cannot see the other's request (it times
        # out, a 400), the second sees the first's; and neither starts inside the other.
        self.start(
            [{"tool_calls": [task("Find A", "[[A]] look"), task("Find B", "[[B]] look")]},
             {"text": "done"}],
            {"[[A]]": [{"text": "A saw B", "wait_for": "[[B]]", "wait_for_ms": 500}],
             "[[B]]": [{"text": "B saw A", "wait_for": "[[A]]", "wait_for_ms": 500}]},
            config={"subagent_max_concurrent": 1})
        self.api.prompt(self.parent, "delegate two searches")
        events = collect_until_turns_end(self.stream)
        titles = [(e.child_progress.title, e.child_progress.finished) for e in events
                  if kind(e) == "child_progress"]
        first = titles[0][0]
        first_end = titles.index((first, True))
        self.assertEqual({t for t, _ in titles[:first_end + 1]}, {first})
        results = [m["content"] for m in self.messages(self.parent) if m["role"] == "tool"]
        timed_out = [r for r in results if "no such request came" in r]
        self.assertEqual(len(timed_out), 1, results)

    def test_a_childs_gated_call_is_approved_through_the_parents_stream(self):
        self.start(
            [{"tool_calls": [task("Write it", "[[W]] write out.txt")]}, {"text": "ok"}],
            {"[[W]]": [{"tool_calls": [tool_call("write_file", path="out.txt",
                                                 content="from the child\n")]},
                       {"text": "wrote out.txt"}]},
            policy="POLICY_MODE_ASK")
        self.api.prompt(self.parent, "delegate a write")
        seen = self.wait_for(lambda e: kind(e) == "approval_requested")
        approval = seen[-1].approval_requested.approval
        self.assertEqual(approval.tool, "write_file")
        self.assertEqual(approval.child_title, "Write it")
        self.assertNotEqual(approval.child_session_id, "")
        self.assertEqual(self.session(self.parent).session.state,
                         self.pb.SESSION_STATE_WAITING_APPROVAL)
        # A client attaching to the parent now is asked too (the snapshot holds it).
        late = self.api.attach(self.parent, "late")
        self.addCleanup(late.cancel)
        pending = next(late).snapshot.pending_approval
        self.assertEqual((pending.call_id, pending.child_session_id),
                         (approval.call_id, approval.child_session_id))
        self.api.stub.Approve(self.pb.ApproveRequest(
            session_id=self.parent, call_id=approval.call_id,
            decision=self.pb.DECISION_ALLOW_ONCE, client_name="watcher"), timeout=10)
        events = collect_until_turns_end(self.stream)
        resolved = [e for e in events if kind(e) == "approval_resolved"]
        self.assertEqual(resolved[0].approval_resolved.call_id, approval.call_id)
        with open(os.path.join(self.env.project, "out.txt")) as f:
            self.assertEqual(f.read(), "from the child\n")
        results = [m for m in self.messages(self.parent) if m["role"] == "tool"]
        self.assertIn("wrote out.txt", results[0]["content"])

    def test_a_read_only_parent_has_a_read_only_child(self):
        self.start(
            [{"tool_calls": [task("Try", "[[R]] write")]}, {"text": "ok"}],
            {"[[R]]": [{"tool_calls": [tool_call("write_file", path="no.txt", content="x")]},
                       {"text": "could not write"}]},
            policy="POLICY_MODE_READ_ONLY")
        self.api.prompt(self.parent, "delegate a write")
        events = collect_until_turns_end(self.stream)
        self.assertFalse([e for e in events if kind(e) == "approval_requested"])
        self.assertFalse(os.path.exists(os.path.join(self.env.project, "no.txt")))

    def test_an_agent_definition_narrows_the_tools_and_picks_the_model(self):
        self.start(
            [{"tool_calls": [task("Read", "[[D]] read", agent="reader")]}, {"text": "ok"}],
            {"[[D]]": [{"text": "read it"}]})
        agents = os.path.join(self.env.project, ".agent", "agents")
        os.makedirs(agents)
        with open(os.path.join(agents, "reader.md"), "w") as f:
            f.write("---\nname: reader\ndescription: Reads files only\n"
                    "tools: read_file, task\nmodel: reader-model\nmode: yes\n---\n"
                    "You only read.\n")
        self.api.prompt(self.parent, "delegate a read")
        events = collect_until_turns_end(self.stream)
        self.assertEqual(events[-1].turn_ended.outcome, self.pb.TURN_OUTCOME_DONE)
        requests = self.env.requests()
        parent_tools = {t["function"]["name"]: t["function"] for t in requests[0]["body"]["tools"]}
        self.assertIn("- reader: Reads files only", parent_tools["task"]["description"])
        child = next(r["body"] for r in requests if r.get("agent") == "[[D]]")
        # `task` is listed by the file but the depth limit (1) keeps it from the child.
        self.assertEqual([t["function"]["name"] for t in child["tools"]], ["read_file"])
        self.assertEqual(child["model"], "reader-model")
        self.assertTrue(child["messages"][0]["content"].startswith("You only read."))
        listed = self.api.stub.ListSessions(
            self.pb.ListSessionsRequest(workdir=self.env.project), timeout=10).sessions
        self.assertEqual([s.agent for s in listed if s.parent_id == self.parent], ["reader"])

    def hang_in_child(self, marker):
        """Starts a parent turn whose child hangs in its model request; its ChildProgress."""
        self.start([{"tool_calls": [task("Hang", marker + " wait")]},
                    {"text": "after", "expect": {"last_role": "user"}}],
                   {marker: [{"hang": True}]})
        self.api.prompt(self.parent, "delegate and wait")
        return self.wait_for(lambda e: kind(e) == "child_progress")[-1].child_progress

    def test_cancel_during_a_child_cancels_it_and_answers_the_call(self):
        progress = self.hang_in_child("[[H]]")
        self.api.stub.Cancel(self.pb.CancelRequest(session_id=self.parent, client_name="x"),
                             timeout=10)
        events = collect_until_turns_end(self.stream)
        ended = [e for e in events if kind(e) == "turn_ended"][-1].turn_ended
        self.assertEqual(ended.outcome, self.pb.TURN_OUTCOME_CANCELLED)
        finished = [e.child_progress for e in events
                    if kind(e) == "child_progress" and e.child_progress.finished]
        self.assertEqual(finished[-1].outcome, self.pb.TURN_OUTCOME_CANCELLED)
        parent = self.messages(self.parent)
        self.assertIsNone(transcript_problems(parent))
        self.assertIn("Cancelled", parent[-1]["content"])
        child = self.session(progress.child_id)
        self.assertIsNone(transcript_problems(json.loads(child.transcript_json)))
        self.assertEqual(child.session.state, self.pb.SESSION_STATE_IDLE)

    def test_kill_9_during_a_child_then_the_parent_resumes_with_the_strict_model(self):
        progress = self.hang_in_child("[[K]]")
        self.stream.cancel()
        self.api.close()
        self.env.kill_daemon()
        # On disk the parent's task call is open; a load seals it.
        self.env.load_script([{"text": "resumed", "expect": {"last_role": "user"}}])
        self.api = Api(self.env)
        self.addCleanup(self.api.close)
        self.stream = self.api.attach(self.parent, "again")
        # The model connection is memory only: the resuming client sends it, as agent does.
        self.api.stub.SendPrompt(self.pb.SendPromptRequest(
            session_id=self.parent, text="go on", client_name="api",
            model=self.pb.ModelConfig(base_url=self.env.env["AGENT_BASE_URL"], model="scripted",
                                      api_key=self.env.env["AGENT_API_KEY"])), timeout=10)
        events = collect_until_turns_end(self.stream)
        ended = [e for e in events if kind(e) == "turn_ended"][-1].turn_ended
        self.assertEqual(ended.outcome, self.pb.TURN_OUTCOME_DONE, ended.error)
        parent = self.messages(self.parent)
        self.assertIsNone(transcript_problems(parent))
        self.assertEqual(parent[-1]["content"], "resumed")
        self.assertIn("interrupted", next(m for m in parent if m["role"] == "tool")["content"])
        child = self.session(progress.child_id)
        self.assertIsNone(transcript_problems(json.loads(child.transcript_json)))
        self.assertEqual(child.session.parent_id, self.parent)
        self.assertEqual(self.env.stats()["rejected"], 0)

    def test_a_second_client_attaches_to_a_running_child(self):
        progress = self.hang_in_child("[[S]]")
        child_stream = self.api.attach(progress.child_id, "second")
        self.addCleanup(child_stream.cancel)
        snap = next(child_stream)
        self.assertEqual(kind(snap), "snapshot")
        self.assertEqual(snap.snapshot.session.parent_id, self.parent)
        self.assertEqual(snap.snapshot.session.depth, 1)
        self.assertIn("[[S]] wait", snap.snapshot.transcript_json)
        self.assertEqual(snap.snapshot.state, self.pb.SESSION_STATE_RUNNING)
        # The parent's cancel reaches the child's own clients.
        result = {}

        def read_child():
            result["events"] = collect_until_turns_end(child_stream)

        t = threading.Thread(target=read_child)
        t.start()
        self.api.stub.Cancel(self.pb.CancelRequest(session_id=self.parent, client_name="x"),
                             timeout=10)
        t.join(timeout=60)
        self.assertFalse(t.is_alive())
        ended = result["events"][-1].turn_ended
        self.assertEqual(ended.outcome, self.pb.TURN_OUTCOME_CANCELLED)


if __name__ == "__main__":
    unittest.main()
