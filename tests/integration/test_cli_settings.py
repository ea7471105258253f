"""Settings belong to the client that asked: what `agent` sends with CreateSession and
SendPrompt (every AGENT_* setting of its environment, --model, the project root and the
directory it ran in), seen by a fake agentd that records the requests. How the daemon applies
them is tested with the daemon; here the question is only what the client says."""
import os
import queue
import subprocess
import threading
import time
import unittest
from concurrent import futures

import grpc

import grpc_client
from harness import Env, tool_call
from test_terminal import TMUX, Terminal

pb, pb_grpc = grpc_client.stubs()

SETTINGS = {
    "AGENT_MAX_STEPS": ("max_steps", 1),
    "AGENT_MAX_ATTEMPTS": ("max_attempts", 2),
    "AGENT_COMPACT_AT": ("compact_at_chars", 5000),
    "AGENT_CONTEXT_TOKENS": ("context_tokens", 64000),
    "AGENT_IDLE_TIMEOUT_MS": ("idle_timeout_ms", 3000),
    "AGENT_CONNECT_TIMEOUT_MS": ("connect_timeout_ms", 400),
    "AGENT_BASH_TIMEOUT": ("bash_timeout_s", 9),
}


class FakeDaemon(pb_grpc.AgentDaemonServicer):
    """Records requests; every prompt is a turn that answers "ok" at once."""

    def __init__(self, models=("alpha", "beta")):
        self.requests = []  # (method, request)
        self.models = list(models)
        self.events = queue.Queue()
        self.seq = 0
        self.lock = threading.Lock()
        self.session = pb.Session(id="fa4e0000000000000000000000000001",
                                  state=pb.SESSION_STATE_IDLE, title="fake")

    def record(self, method, req):
        with self.lock:
            self.requests.append((method, req))

    def of(self, method):
        with self.lock:
            return [r for m, r in self.requests if m == method]

    def event(self, **kind):
        self.seq += 1
        return pb.Event(seq=self.seq, epoch="fake", **kind)

    def CreateSession(self, req, ctx):
        self.record("CreateSession", req)
        self.session.workdir = req.workdir
        return self.session

    def ListSessions(self, req, ctx):
        self.record("ListSessions", req)
        return pb.ListSessionsResponse(sessions=[self.session])

    def SetPolicy(self, req, ctx):
        self.record("SetPolicy", req)
        return pb.SetPolicyResponse()

    def SendPrompt(self, req, ctx):
        self.record("SendPrompt", req)
        self.events.put(dict(user_message=pb.UserMessage(text=req.text,
                                                         client_name=req.client_name)))
        self.events.put(dict(turn_started=pb.TurnStarted(prompt=req.text)))
        self.events.put(dict(text_delta=pb.TextDelta(text="ok")))
        self.events.put(dict(turn_ended=pb.TurnEnded(outcome=pb.TURN_OUTCOME_DONE)))
        return pb.SendPromptResponse()

    def ListModels(self, req, ctx):
        self.record("ListModels", req)
        if self.models is None:  # a daemon from before ListModels
            ctx.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")
        if not self.models:
            return pb.ListModelsResponse(message="the provider answered 404 to GET /models")
        return pb.ListModelsResponse(models=self.models)

    def Attach(self, req, ctx):
        self.record("Attach", req)
        yield self.event(snapshot=pb.Snapshot(transcript_json="[]", session=self.session,
                                              state=pb.SESSION_STATE_IDLE))
        while ctx.is_active():  # ends when the client goes away
            try:
                kind = self.events.get(timeout=0.05)
            except queue.Empty:
                continue
            yield self.event(**kind)


class FakeWorld(unittest.TestCase):
    def setUp(self):
        self.env = Env([])
        self.addCleanup(self.env.close)
        self.fake = FakeDaemon()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        pb_grpc.add_AgentDaemonServicer_to_server(self.fake, self.server)
        self.server.add_insecure_port("unix:" + self.env.socket)
        self.server.start()
        self.addCleanup(self.server.stop, 0)  # before env.close: its `daemon stop` finds none

    def test_every_setting_and_model_flag_is_sent_with_the_session_and_the_prompt(self):
        extra = {name: str(value) for name, (_, value) in SETTINGS.items()}
        r = self.env.agent("--model", "picked-model", "hello", env=extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        create, = self.fake.of("CreateSession")
        send, = self.fake.of("SendPrompt")
        for req in (create, send):
            for name, (field, value) in SETTINGS.items():
                self.assertEqual(getattr(req.settings, field), value, name)
            self.assertEqual(req.model.model, "picked-model")
            self.assertEqual(req.model.api_key, "test-key-not-secret")
        self.assertEqual(create.max_steps, 1)  # also the field a protocol 2 daemon reads
        # Unset: nothing sent, so the daemon's environment and config.json fill it.
        r = self.env.agent("again")
        self.assertEqual(r.returncode, 0, r.stderr)
        second = self.fake.of("SendPrompt")[-1]
        self.assertEqual(second.settings.ByteSize(), 0)
        self.assertEqual(second.model.model, "scripted")  # AGENT_MODEL

    def test_workdir_is_the_project_root_and_cwd_where_the_user_ran_it(self):
        os.mkdir(os.path.join(self.env.project, ".git"))
        sub = os.path.join(self.env.project, "lib", "x")
        os.makedirs(sub)
        r = self.env.agent("hello", cwd=sub)
        self.assertEqual(r.returncode, 0, r.stderr)
        create, = self.fake.of("CreateSession")
        self.assertEqual(create.workdir, self.env.project)
        self.assertEqual(create.cwd, sub)
        r = self.env.agent("ls", cwd=sub)
        self.assertEqual(self.fake.of("ListSessions")[-1].workdir, self.env.project)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_model_without_a_name_lists_the_providers_models(self):
        term = Terminal(self, self.env)
        term.start("w", "--model", "beta")
        term.wait_for("w", "›")
        term.type_line("w", "/model")
        screen = term.wait_for("w", "switch with: /model NAME")
        self.assertIn("  alpha", screen)
        self.assertIn("* beta", screen)
        req, = self.fake.of("ListModels")
        self.assertEqual(req.session_id, self.fake.session.id)
        self.assertEqual(req.model.model, "beta")
        # /model NAME sticks: the next prompt carries it, not AGENT_MODEL or --model.
        term.type_line("w", "/model alpha")
        term.wait_for("w", "model alpha from the next request")
        term.type_line("w", "go")
        deadline = time.monotonic() + 30
        while not self.fake.of("SendPrompt") and time.monotonic() < deadline:
            time.sleep(0.05)  # the fake daemon records from its own threads
        self.assertEqual(self.fake.of("SendPrompt")[0].model.model, "alpha")
        self.fake.models = []
        term.type_line("w", "/model")
        term.wait_for("w", "no models listed: the provider answered 404 to GET /models")
        self.fake.models = None
        term.type_line("w", "/model")
        term.wait_for("w", "this agentd cannot list models")


class RealDaemon(unittest.TestCase):
    def test_a_new_sessions_step_limit_is_the_creating_clients(self):
        env = Env([{"tool_calls": [tool_call("list_dir")]}] * 3 + [{"text": "done"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("ls").returncode, 0)  # the daemon starts without the limit
        r = env.agent("--json", "loop", env={"AGENT_MAX_STEPS": "1"})
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(len(env.requests()), 1)


if __name__ == "__main__":
    unittest.main()
