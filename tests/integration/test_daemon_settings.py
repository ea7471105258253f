"""Issue 14, the daemon's side: settings belong to the client that sent them, the provider's
model list, the session's working directory, nothing written in the work tree, sessions that
never reached the model, `agent rm` of an attached session, the socket path, a prompt shutdown
and a refused local model server.

Each test drives agentd through its API (as the `agent` client or a script does) against the
scripted model server, and fails on the daemon as it was before these changes."""
import json
import os
import socket
import subprocess
import time
import unittest
import urllib.request

import grpc

import grpc_client
from harness import BIN, Env, PROTOCOL_VERSION, tool_call
from test_multi_client import Api, Attached, collect_until_turns_end, kind


def running(pid):
    """Whether `pid` still runs: an exited daemon stays a zombie until init reaps it."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return not any(line.startswith("State:") and "Z" in line for line in f)
    except OSError:
        return False


def attach_bounded(api, sid, name):
    """An Attach stream with a deadline: a stream the daemon never ends fails the test."""
    return Attached(api.stub.Attach(api.pb.AttachRequest(
        session_id=sid, client_name=name, protocol_version=PROTOCOL_VERSION), timeout=30))


def free_loopback_port():
    """A port on 127.0.0.1 with nothing listening (bound for its number, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ClientSettings(unittest.TestCase):
    def test_the_prompts_step_limit_wins_over_the_one_the_session_was_created_with(self):
        env = Env([{"tool_calls": [tool_call("read_file", path="f.txt")], "repeat": 5},
                   {"text": "done"}])
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "f.txt"), "w") as f:
            f.write("x\n")
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, policy=pb.POLICY_MODE_YES,
            settings=pb.ClientSettings(max_steps=50),
            model=pb.ModelConfig(base_url=env.env["AGENT_BASE_URL"], model="scripted")),
            timeout=10).id
        stream = api.attach(sid, "watcher")
        api.stub.SendPrompt(pb.SendPromptRequest(
            session_id=sid, text="go", client_name="one-step",
            settings=pb.ClientSettings(max_steps=1)), timeout=10)
        events = collect_until_turns_end(stream)
        stream.cancel()
        ended = [e for e in events if kind(e) == "turn_ended"][0].turn_ended
        self.assertEqual(ended.outcome, pb.TURN_OUTCOME_MAX_STEPS)
        self.assertEqual(len(env.requests()), 1)

    def test_a_new_session_does_not_take_the_url_of_the_client_that_started_the_daemon(self):
        env = Env([{"text": "must not be asked"}])
        self.addCleanup(env.close)
        api = Api(env)  # `agent ls` with AGENT_BASE_URL set starts the daemon
        self.addCleanup(api.close)
        pb = api.pb
        # A second client with no AGENT_BASE_URL, AGENT_MODEL or key of its own.
        session = api.stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, policy=pb.POLICY_MODE_YES), timeout=10)
        self.assertEqual(session.model, "")
        stream = api.attach(session.id, "second")
        api.prompt(session.id, "hello")
        events = collect_until_turns_end(stream)
        stream.cancel()
        ended = [e for e in events if kind(e) == "turn_ended"][0].turn_ended
        self.assertEqual(ended.outcome, pb.TURN_OUTCOME_ERROR)
        self.assertIn("AGENT_BASE_URL", ended.error)
        self.assertEqual(env.requests(), [])


class ListModels(unittest.TestCase):
    def setUp(self):
        self.env = Env([])
        self.addCleanup(self.env.close)
        self.api = Api(self.env)
        self.addCleanup(self.api.close)
        self.pb = self.api.pb

    def list(self, **model):
        m = dict(base_url=self.env.env["AGENT_BASE_URL"], api_key="k")
        m.update(model)
        return self.api.stub.ListModels(
            self.pb.ListModelsRequest(model=self.pb.ModelConfig(**m)), timeout=30)

    def test_the_providers_ids_sorted_with_its_auth(self):
        self.set_models(["zeta", "alpha", "mid"])
        r = self.list()
        self.assertEqual(list(r.models), ["alpha", "mid", "zeta"])
        self.assertEqual(r.message, "")
        r = self.list(provider="anthropic")
        self.assertEqual(list(r.models), ["alpha", "mid", "zeta"])
        auth = self.env.stats()["models_auth"]
        self.assertEqual(auth[0], {"bearer": True, "x_api_key": False, "anthropic_version": ""})
        self.assertEqual(auth[1], {"bearer": False, "x_api_key": True,
                                   "anthropic_version": "2023-06-01"})

    def set_models(self, models):
        req = urllib.request.Request(
            "http://127.0.0.1:%d/script" % self.env.port, method="POST",
            data=json.dumps({"replies": [], "models": models}).encode())
        urllib.request.urlopen(req, timeout=10).read()

    def test_a_provider_without_models_gets_a_clear_message(self):
        self.set_models(None)
        r = self.list()
        self.assertEqual(list(r.models), [])
        self.assertIn("has no model list", r.message)
        self.set_models([])
        r = self.list()
        self.assertIn("lists no models", r.message)
        r = self.list(base_url="http://127.0.0.1:%d/v1" % free_loopback_port())
        self.assertIn("nothing listens on", r.message)

    def test_the_sessions_settings_fill_what_the_request_lacks(self):
        sid = self.api.create()
        r = self.api.stub.ListModels(self.pb.ListModelsRequest(session_id=sid), timeout=30)
        self.assertEqual(list(r.models), ["scripted-model"])


class SessionCwd(unittest.TestCase):
    def test_tools_run_where_the_user_started_and_a_resumed_session_keeps_it(self):
        env = Env([{"tool_calls": [tool_call("bash", command="pwd")]}, {"text": "done"}])
        self.addCleanup(env.close)
        sub = os.path.join(env.project, "sub", "dir")
        os.makedirs(sub)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, cwd=sub, policy=pb.POLICY_MODE_YES,
            model=pb.ModelConfig(base_url=env.env["AGENT_BASE_URL"], model="scripted")),
            timeout=10).id
        stream = api.attach(sid, "t")
        api.prompt(sid, "where am I")
        events = collect_until_turns_end(stream)
        stream.cancel()
        results = [e.tool_result.content for e in events if kind(e) == "tool_result"]
        self.assertEqual(len(results), 1)
        self.assertIn(os.path.realpath(sub) + "\n", results[0])
        env.kill_daemon()
        api.close()
        api2 = Api(env)  # a new daemon loads the session from its files
        self.addCleanup(api2.close)
        got = api2.stub.GetSession(pb.GetSessionRequest(id=sid), timeout=10)
        self.assertEqual(got.session.cwd, os.path.realpath(sub))

    def test_a_cwd_outside_the_project_is_not_taken(self):
        env = Env([])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        s = api.stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, cwd=env.dir), timeout=10)
        self.assertEqual(s.cwd, "")


class ProjectFiles(unittest.TestCase):
    def test_git_add_all_stages_settings_and_nothing_of_the_agents_own(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(git + ["init", "-q"], cwd=env.project, check=True)
        r = env.agent("hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(env.session_ids()), 1)
        # Sessions live in the state directory: the daemon wrote nothing in the work tree.
        self.assertEqual(sorted(os.listdir(env.project)), [".git"])
        os.makedirs(os.path.join(env.project, ".agent"))
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            f.write("{}\n")
        subprocess.run(git + ["add", "-A"], cwd=env.project, check=True)
        staged = subprocess.run(git + ["diff", "--cached", "--name-only"], cwd=env.project,
                                check=True, capture_output=True, text=True).stdout.split()
        self.assertEqual(staged, [".agent/settings.json"])

    def test_a_one_shot_that_never_reached_the_model_leaves_no_session(self):
        port = free_loopback_port()
        env = Env([], extra_env={"AGENT_BASE_URL": "http://127.0.0.1:%d/v1" % port})
        self.addCleanup(env.close)
        start = time.monotonic()
        r = env.agent("hello")
        took = time.monotonic() - start
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nothing listens on http://127.0.0.1:%d/v1" % port, r.stdout + r.stderr)
        self.assertLess(took, 10.0)  # not 13.5 s of retries against a local port
        # The session is discarded when the daemon sees the client gone, which the client
        # does not wait for: the files' removal is polled (bounded).
        sessions_dir = env.sessions_dir()
        left = lambda: os.listdir(sessions_dir) if os.path.isdir(sessions_dir) else []
        deadline = time.monotonic() + 10
        while left() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(left(), [])
        ls = env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        api = Api(env)
        self.addCleanup(api.close)
        listed = api.stub.ListSessions(api.pb.ListSessionsRequest(workdir=env.project),
                                       timeout=10)
        self.assertEqual(list(listed.sessions), [])


class RemovedSession(unittest.TestCase):
    def test_attached_clients_are_told_then_their_streams_end(self):
        env = Env([{"text": "first"}])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create()
        stream = attach_bounded(api, sid, "viewer")
        api.prompt(sid, "hi")
        collect_until_turns_end(stream)
        api.stub.DeleteSession(pb.DeleteSessionRequest(session_id=sid, client_name="remover"),
                               timeout=10)
        rest = list(stream)  # ends: the daemon finished the stream
        removed = [e for e in rest if kind(e) == "session_removed"]
        self.assertEqual(len(removed), 1)
        self.assertEqual(removed[0].session_removed.client_name, "remover")
        self.assertEqual(stream.code(), grpc.StatusCode.OK)
        with self.assertRaises(grpc.RpcError) as err:
            api.prompt(sid, "still there?")
        self.assertEqual(err.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("was removed", err.exception.details())


class SocketPath(unittest.TestCase):
    def test_a_regular_file_at_the_socket_path_is_refused_and_kept(self):
        env = Env([])
        self.addCleanup(env.close)
        notes = os.path.join(env.project, "notes.txt")
        with open(notes, "w") as f:
            f.write("precious\n")
        os.chmod(env.project, 0o755)
        r = subprocess.run([os.path.join(BIN, "agentd"), "--socket", notes], env=env.env,
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not a socket", r.stderr)
        with open(notes) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.stat(env.project).st_mode & 0o777, 0o755)  # not chmod-ed either

    def test_a_socket_in_the_users_own_directory_leaves_its_mode_alone(self):
        env = Env([])
        self.addCleanup(env.close)
        os.chmod(env.project, 0o755)  # a typo such as AGENT_SOCKET=~/agentd.sock
        here = {"AGENT_SOCKET": os.path.join(env.project, "d.sock")}
        self.addCleanup(env.agent, "daemon", "stop", env=here)
        r = env.agent("ls", env=here)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.stat(env.project).st_mode & 0o777, 0o755)
        os.chmod(env.project, 0o777)  # others could replace the socket: refused, not repaired
        # Cleanups run last-first: the mode is put back before `daemon stop`, which the client
        # would refuse in a directory others can write.
        self.addCleanup(os.chmod, env.project, 0o755)
        r = subprocess.run([os.path.join(BIN, "agentd"), "--socket",
                            os.path.join(env.project, "e.sock")], env=env.env,
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("lets other users write in it", r.stderr)
        self.assertEqual(os.stat(env.project).st_mode & 0o777, 0o777)

    def test_a_stale_socket_is_replaced(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        stale = socket.socket(socket.AF_UNIX)
        os.makedirs(os.path.dirname(env.socket), exist_ok=True)
        stale.bind(env.socket)
        stale.close()  # the file stays, nobody listens
        r = env.agent("hello")
        self.assertEqual(r.returncode, 0, r.stderr)


class Shutdown(unittest.TestCase):
    def test_shutdown_with_a_client_attached_ends_its_stream_clearly_and_promptly(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create()
        stream = attach_bounded(api, sid, "viewer")
        api.prompt(sid, "hi")
        collect_until_turns_end(stream)
        pid = env.daemon_pids()[0]
        start = time.monotonic()
        api.stub.Shutdown(pb.ShutdownRequest(), timeout=10)
        with self.assertRaises(grpc.RpcError) as err:
            for _ in stream:
                pass
        # A deliberate stop (not a restart): clients leave instead of reconnecting.
        self.assertEqual(err.exception.code(), grpc.StatusCode.ABORTED)
        self.assertIn("agentd was stopped", err.exception.details())
        deadline = time.monotonic() + 10
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.01)  # polling /proc for a process that is not our child
        took = time.monotonic() - start
        self.assertFalse(running(pid))
        self.assertLess(took, 1.0)  # was 2 s and more: the streams held gRPC's shutdown


if __name__ == "__main__":
    unittest.main()
