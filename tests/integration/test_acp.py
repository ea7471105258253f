"""`agent acp`: an editor over the Agent Client Protocol, driven by a test client built on the
official SDK (@agentclientprotocol/sdk, pinned by acp/package-lock.json; acp/acp_client.mjs),
against the real daemon and the strict scripted model. The bad-input tests write raw bytes to
`agent acp` instead: the SDK cannot send malformed messages."""
import base64
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import unittest

from harness import BIN, Env, processes, tool_call
from test_mcp import EVERYTHING, install_servers
from test_terminal import TMUX, Terminal

HERE = os.path.dirname(os.path.abspath(__file__))
ACP_DIR = os.path.join(HERE, "acp")
CLIENT = os.path.join(ACP_DIR, "acp_client.mjs")
SDK = os.path.join(ACP_DIR, "node_modules", "@agentclientprotocol", "sdk", "package.json")
NPM_CI_TIMEOUT_S = 300
WAIT_S = 30


def install_sdk():
    """npm ci of the pinned SDK. Without network (npm ci fails) the tests skip, except on CI
    (CI set), where they must run."""
    missing = [p for p in ("node", "npm") if shutil.which(p) is None]
    if missing:
        raise unittest.SkipTest("%s not installed: the ACP test client needs Node.js"
                                % " and ".join(missing))
    if os.path.exists(SDK):
        return
    try:
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                           cwd=ACP_DIR, capture_output=True, text=True,
                           timeout=NPM_CI_TIMEOUT_S, stdin=subprocess.DEVNULL)
        failed = r.returncode != 0
        why = "exit %d:\n%s%s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    except subprocess.TimeoutExpired:
        failed, why = True, "no answer within %d s" % NPM_CI_TIMEOUT_S
    if failed:
        if os.environ.get("CI"):
            raise AssertionError("npm ci of the ACP SDK failed in %s (%s)" % (ACP_DIR, why))
        raise unittest.SkipTest("npm ci of the ACP SDK failed (no network to the npm "
                                "registry?); these tests run on CI. %s" % why[:300])


class Editor:
    """acp_client.mjs running `agent acp` in the project; what it reports is kept in order."""

    def __init__(self, test, env, extra_env=None):
        e = dict(env.env, **(extra_env or {}))
        self.proc = subprocess.Popen(
            ["node", CLIENT, os.path.join(BIN, "agent"), "acp"], cwd=env.project, env=e,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.q = queue.Queue()
        self.seen = []
        self.tag = 0
        threading.Thread(target=self._read, daemon=True).start()
        test.addCleanup(self.close)

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def send(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def wait(self, pred, timeout=WAIT_S):
        """The first report (seen before or arriving) that `pred` accepts."""
        for m in self.seen:
            if pred(m):
                return m
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("not reported within %d s; seen:\n%s"
                                     % (timeout, "\n".join(map(json.dumps, self.seen[-30:]))))
            if m is None:
                raise AssertionError("the test client ended; seen:\n%s"
                                     % "\n".join(map(json.dumps, self.seen[-30:])))
            self.seen.append(m)
            if pred(m):
                return m

    def request(self, method, params, timeout=WAIT_S):
        self.tag += 1
        tag = self.tag
        self.send(op="request", tag=tag, method=method, params=params)
        return self.wait(lambda m: m["type"] == "response" and m["tag"] == tag, timeout)

    def updates(self, sid, kind=None):
        return [m["update"] for m in self.seen if m["type"] == "update" and m["sessionId"] == sid
                and (kind is None or m["update"]["sessionUpdate"] == kind)]

    def text(self, sid, kind="agent_message_chunk"):
        return "".join(u["content"]["text"] for u in self.updates(sid, kind))

    def sdk_errors(self):
        return [m for m in self.seen if m["type"] == "sdk_error"]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send(op="close")
                self.proc.wait(timeout=WAIT_S)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


def initialize(editor, caps=None):
    r = editor.request("initialize", {"protocolVersion": 1, "clientInfo": {
        "name": "test-editor", "version": "1"}, "clientCapabilities": caps or {}})
    return r["result"]


def new_session(editor, env):
    r = editor.request("session/new", {"cwd": env.project, "mcpServers": []})
    return r["result"]


def prompt(editor, sid, text, timeout=WAIT_S):
    return editor.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": text}]}, timeout)


class AcpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        install_sdk()

    def make(self, replies, **kw):
        env = Env(replies, **kw)
        self.addCleanup(env.close)
        return env

    def test_new_session_prompt_with_a_permission_answered_in_the_editor(self):
        env = self.make([
            {"reasoning": "Writing the notes.", "tool_calls": [
                tool_call("write_file", path="notes.txt", content="hello\n")]},
            {"expect": {"last_role": "tool"}, "text": "Wrote it."},
        ])
        ed = Editor(self, env)
        init = initialize(ed)
        self.assertEqual(init["protocolVersion"], 1)
        caps = init["agentCapabilities"]
        self.assertTrue(caps["loadSession"])
        self.assertTrue(caps["promptCapabilities"]["embeddedContext"])
        s = new_session(ed, env)
        sid = s["sessionId"]
        self.assertEqual(s["modes"]["currentModeId"], "ask")
        self.assertEqual({m["id"] for m in s["modes"]["availableModes"]},
                         {"ask", "auto", "edits", "plan", "read-only", "yes"})
        r = prompt(ed, sid, "write the notes")
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        perm = ed.wait(lambda m: m["type"] == "permission")["params"]
        self.assertEqual([o["kind"] for o in perm["options"]],
                         ["allow_once", "allow_always", "reject_once"])
        diff = perm["toolCall"]["content"][0]
        self.assertEqual(diff["type"], "diff")
        self.assertEqual(diff["path"], os.path.join(env.project, "notes.txt"))
        self.assertEqual(diff["newText"], "hello\n")
        calls = ed.updates(sid, "tool_call")
        self.assertEqual(calls[0]["kind"], "edit")
        done = [u for u in ed.updates(sid, "tool_call_update") if u.get("status") == "completed"]
        self.assertEqual(len(done), 1)
        self.assertEqual(ed.text(sid), "Wrote it.")
        self.assertEqual(ed.text(sid, "agent_thought_chunk"), "Writing the notes.")
        with open(os.path.join(env.project, "notes.txt")) as f:
            self.assertEqual(f.read(), "hello\n")
        self.assertEqual(ed.sdk_errors(), [])
        # The session is the daemon's: a terminal lists it.
        self.assertIn(sid[:8], env.agent("ls").stdout)

    def test_the_models_question_is_a_permission_request_whose_choice_is_the_answer(self):
        env = self.make([
            {"tool_calls": [tool_call("ask_user", question="Which database?",
                                      options=["sqlite", "postgres"])]},
            {"expect": {"last_role": "tool", "last_message_contains": "answered: postgres"},
             "text": "Using postgres."},
        ])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        ed.send(op="permissions", answer="hold")
        tag_prompt = ed.tag + 1
        ed.tag = tag_prompt
        ed.send(op="request", tag=tag_prompt, method="session/prompt", params={
            "sessionId": sid, "prompt": [{"type": "text", "text": "set up the database"}]})
        perm = ed.wait(lambda m: m["type"] == "permission")["params"]
        self.assertEqual([(o["optionId"], o["name"]) for o in perm["options"]],
                         [("answer-0", "sqlite"), ("answer-1", "postgres"),
                          ("reject_once", "No answer")])
        self.assertIn("Which database?", json.dumps(perm["toolCall"]))
        ed.send(op="answer", optionId="answer-1")
        r = ed.wait(lambda m: m["type"] == "response" and m["tag"] == tag_prompt)
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        self.assertEqual(ed.text(sid), "Using postgres.")
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertEqual(ed.sdk_errors(), [])

    def test_an_image_in_the_prompt_reaches_the_model_as_a_part_of_the_message(self):
        env = self.make([
            {"expect": {"last_role": "user"}, "text": "A red pixel."},
            {"expect": {"last_role": "user"}, "text": "Still a red pixel."},
        ])
        png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
        ed = Editor(self, env)
        init = initialize(ed)
        self.assertTrue(init["agentCapabilities"]["promptCapabilities"]["image"])
        sid = new_session(ed, env)["sessionId"]
        r = ed.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "what is in this screenshot?"},
            {"type": "image", "mimeType": "image/png", "data": png}]})
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        user = env.requests()[-1]["body"]["messages"][-1]
        self.assertEqual(user["content"], [
            {"type": "text", "text": "what is in this screenshot?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + png}}])
        # The session's file keeps it, and the next step sends it again.
        self.assertEqual(prompt(ed, sid, "and now?")["result"], {"stopReason": "end_turn"})
        self.assertEqual(env.requests()[-1]["body"]["messages"][-3], user)
        self.assertEqual(env.transcript(sid)[1], user)

    def test_the_editors_mcp_servers_serve_its_session_and_end_with_it(self):
        install_servers()
        env = self.make([
            {"tool_calls": [tool_call("mcp__everything__echo", message="from the editor")]},
            {"expect": {"last_role": "tool"}, "text": "Echoed."},
            {"text": "A terminal's session."},
        ])
        # Started by a path of this test's own, so that its processes can be told apart.
        server = os.path.join(env.dir, "everything.js")
        os.symlink(EVERYTHING, server)
        ed = Editor(self, env)
        self.assertTrue(initialize(ed)["agentCapabilities"]["mcpCapabilities"]["http"])
        r = ed.request("session/new", {"cwd": env.project, "mcpServers": [
            {"name": "everything", "command": shutil.which("node"),
             "args": [server, "stdio"], "env": [{"name": "MARK", "value": "editor"}]}]})
        sid = r["result"]["sessionId"]
        r = prompt(ed, sid, "echo something", timeout=120)
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        tools = [t["function"]["name"] for t in env.requests()[0]["body"]["tools"]]
        self.assertIn("mcp__everything__echo", tools)
        results = [m["content"] for m in env.transcript(sid) if m["role"] == "tool"]
        self.assertIn("from the editor", results[0])
        # Another session of the project (a terminal's) is not offered the editor's servers.
        t = env.agent("--yes", "hello")
        self.assertEqual(t.returncode, 0, t.stderr)
        tools = [t["function"]["name"] for t in env.requests()[-1]["body"]["tools"]]
        self.assertNotIn("mcp__everything__echo", tools)
        # The server runs while the session is loaded; deleting the session stops it.
        running = lambda: [pid for pid, cmd in processes() if server.encode() in cmd]
        self.assertTrue(running())
        ed.close()
        r = env.agent("rm", sid)
        self.assertEqual(r.returncode, 0, r.stderr)
        deadline = time.monotonic() + WAIT_S
        while running() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(running(), [])

    def test_an_editors_sse_server_or_bad_definition_is_refused(self):
        env = self.make([])
        ed = Editor(self, env)
        initialize(ed)
        r = ed.request("session/new", {"cwd": env.project, "mcpServers": [
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}]})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("sse", r["error"]["message"])
        r = ed.request("session/new", {"cwd": env.project, "mcpServers": [
            {"name": "nothing", "command": "", "args": [], "env": []}]})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("nothing", r["error"]["message"])

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_a_permission_answered_in_a_terminal_is_withdrawn_from_the_editor(self):
        env = self.make([
            {"tool_calls": [tool_call("bash", command="echo from-bash")]},
            {"expect": {"last_role": "tool"}, "text": "Ran it."},
        ])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        ed.send(op="permissions", answer="hold")
        term = Terminal(self, env)
        w = term.start("watch", "attach", sid)
        term.wait_for(w, "›")
        ed.send(op="request", tag="p", method="session/prompt",
                params={"sessionId": sid, "prompt": [{"type": "text", "text": "run it"}]})
        ed.wait(lambda m: m["type"] == "permission")
        term.wait_for(w, "[y]es")
        term.keys(w, "y")
        ed.wait(lambda m: m["type"] == "permission_withdrawn")
        r = ed.wait(lambda m: m["type"] == "response" and m["tag"] == "p")
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        result = [u for u in ed.updates(sid, "tool_call_update") if u.get("status") == "completed"]
        self.assertIn("from-bash", result[0]["content"][0]["content"]["text"])
        self.assertEqual(ed.text(sid), "Ran it.")
        term.wait_for(w, "Ran it.")
        self.assertEqual(ed.sdk_errors(), [])

    def test_read_file_sees_the_editors_unsaved_buffer(self):
        env = self.make([
            {"tool_calls": [tool_call("read_file", path="notes.txt"),
                            tool_call("read_file", path="other.txt")]},
            {"text": "read"}])
        with open(os.path.join(env.project, "notes.txt"), "w") as f:
            f.write("saved on disk\n")
        with open(os.path.join(env.project, "other.txt"), "w") as f:
            f.write("no buffer for me\n")
        editor = Editor(self, env)
        initialize(editor, {"fs": {"readTextFile": True}})
        path = os.path.join(env.project, "notes.txt")
        editor.send(op="buffer", path=path, text="typed, not saved\n")
        sid = new_session(editor, env)["sessionId"]
        self.assertEqual(prompt(editor, sid, "read them")["result"]["stopReason"], "end_turn")
        reads = [m["params"]["path"] for m in editor.seen if m["type"] == "fs_read"]
        self.assertEqual(sorted(reads), sorted([path, os.path.join(env.project, "other.txt")]))
        results = [m["content"] for m in env.requests()[-1]["body"]["messages"]
                   if m["role"] == "tool"]
        self.assertIn("typed, not saved", results[0])
        self.assertIn("the editor's unsaved text of notes.txt", results[0])
        self.assertNotIn("saved on disk", results[0])
        self.assertIn("no buffer for me", results[1])  # the editor's error: the disk
        self.assertNotIn("unsaved", results[1])
        self.assertEqual(editor.sdk_errors(), [])

    def test_an_editor_without_the_fs_capability_is_never_asked(self):
        env = self.make([{"tool_calls": [tool_call("read_file", path="notes.txt")]},
                         {"text": "read"}])
        with open(os.path.join(env.project, "notes.txt"), "w") as f:
            f.write("saved on disk\n")
        editor = Editor(self, env)
        initialize(editor)
        sid = new_session(editor, env)["sessionId"]
        self.assertEqual(prompt(editor, sid, "read it")["result"]["stopReason"], "end_turn")
        self.assertEqual([m for m in editor.seen if m["type"] == "fs_read"], [])
        results = [m["content"] for m in env.requests()[-1]["body"]["messages"]
                   if m["role"] == "tool"]
        self.assertIn("saved on disk", results[0])

    def test_cancel_mid_stream_answers_cancelled(self):
        env = self.make([{"text": "word " * 400, "chunk_size": 5, "delay_ms": 20}])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        ed.send(op="request", tag="p", method="session/prompt",
                params={"sessionId": sid, "prompt": [{"type": "text", "text": "talk"}]})
        ed.wait(lambda m: m["type"] == "update" and
                m["update"]["sessionUpdate"] == "agent_message_chunk")
        ed.send(op="notify", method="session/cancel", params={"sessionId": sid})
        r = ed.wait(lambda m: m["type"] == "response" and m["tag"] == "p")
        self.assertEqual(r["result"], {"stopReason": "cancelled"})
        self.assertLess(len(ed.text(sid)), len("word " * 400))

    def test_load_replays_a_session_started_in_a_terminal_then_is_live(self):
        env = self.make([{"text": "Hello there."},
                         {"expect": {"last_user_contains": "again"}, "text": "Hello again."}])
        r = env.agent("say hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        sid = env.session_ids()[0]
        ed = Editor(self, env)
        initialize(ed)
        r = ed.request("session/load", {"sessionId": sid, "cwd": env.project, "mcpServers": []})
        self.assertEqual(r["result"]["modes"]["currentModeId"], "ask")
        # Everything replayed came before the answer.
        answered = ed.seen.index(r)
        replayed = [m["update"] for m in ed.seen[:answered] if m["type"] == "update"]
        self.assertEqual(replayed[0]["sessionUpdate"], "user_message_chunk")
        self.assertIn("say hi", replayed[0]["content"]["text"])
        self.assertEqual(ed.text(sid), "Hello there.")
        r = prompt(ed, sid, "say it again")
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        self.assertEqual(ed.text(sid), "Hello there.Hello again.")

    def test_closing_the_editor_detaches_and_the_turn_goes_on(self):
        env = self.make([{"text": "slow " * 60 + "END", "chunk_size": 5, "delay_ms": 20}])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        ed.send(op="request", tag="p", method="session/prompt",
                params={"sessionId": sid, "prompt": [{"type": "text", "text": "go slowly"}]})
        ed.wait(lambda m: m["type"] == "update" and
                m["update"]["sessionUpdate"] == "agent_message_chunk")
        ed.send(op="close")
        self.assertEqual(ed.wait(lambda m: m["type"] == "exit")["code"], 0)
        deadline = time.monotonic() + WAIT_S
        messages = []
        while time.monotonic() < deadline:
            try:
                messages = env.transcript(sid)
            except (OSError, ValueError):  # replaced while read
                messages = []
            if messages and messages[-1].get("role") == "assistant":
                break
            time.sleep(0.05)  # polling the saved transcript: the daemon writes it at idle
        self.assertTrue(messages[-1]["content"].endswith("END"), messages[-1])

    def test_set_mode_read_only_refuses_edits_without_asking(self):
        env = self.make([
            {"tool_calls": [tool_call("write_file", path="x.txt", content="x")]},
            {"expect": {"last_role": "tool"}, "text": "Could not."},
        ])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        r = ed.request("session/set_mode", {"sessionId": sid, "modeId": "read-only"})
        self.assertEqual(r["result"], {})
        r = ed.request("session/set_mode", {"sessionId": sid, "modeId": "sudo"})
        self.assertEqual(r["error"]["code"], -32602)
        r = prompt(ed, sid, "write x")
        self.assertEqual(r["result"], {"stopReason": "end_turn"})
        self.assertEqual([m for m in ed.seen if m["type"] == "permission"], [])
        failed = [u for u in ed.updates(sid, "tool_call_update") if u.get("status") == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertFalse(os.path.exists(os.path.join(env.project, "x.txt")))

    def test_a_prompt_sent_while_the_editors_turn_runs_steers_it(self):
        from test_multi_client import Api, kind
        from test_steering import gated_bash, open_gate, until
        env = self.make(lambda e: [{"tool_calls": [gated_bash(e)]},
                                   {"expect": {"last_role": "user"}, "text": "switched"}])
        ed = Editor(self, env)
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        ed.request("session/set_mode", {"sessionId": sid, "modeId": "yes"})
        api = Api(env)
        self.addCleanup(api.close)
        watch = api.attach(sid, "watcher")
        self.addCleanup(watch.cancel)
        texts = {}
        for text in ("migrate the client", "use the v2 API instead"):
            ed.tag += 1
            texts[ed.tag] = text
            ed.send(op="request", tag=ed.tag, method="session/prompt", params={
                "sessionId": sid, "prompt": [{"type": "text", "text": text}]})
            if len(texts) == 1:  # the first turn is held at its bash call
                until(watch, lambda e: kind(e) == "tool_call_ready")
        pending = until(watch, lambda e: kind(e) == "steered")[-1].steered
        self.assertEqual(pending.text, "use the v2 API instead")
        open_gate(env)
        # Both requests are answered by the one turn, which read the steer at its next step.
        for tag in texts:
            r = ed.wait(lambda m, t=tag: m["type"] == "response" and m["tag"] == t)
            self.assertEqual(r["result"], {"stopReason": "end_turn"})
        self.assertEqual(len(env.requests()), 2)
        self.assertEqual(env.requests()[1]["body"]["messages"][-1]["content"],
                         "use the v2 API instead")

    def test_the_step_limit_is_a_stop_reason(self):
        env = self.make([{"tool_calls": [tool_call("read_file", path="a.txt")]}])
        with open(os.path.join(env.project, "a.txt"), "w") as f:
            f.write("a\n")
        ed = Editor(self, env, extra_env={"AGENT_MAX_STEPS": "1"})
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        r = prompt(ed, sid, "read a")
        self.assertEqual(r["result"], {"stopReason": "max_turn_requests"})

    def test_an_unreachable_model_is_an_acp_error(self):
        env = self.make([])
        ed = Editor(self, env, extra_env={"AGENT_BASE_URL": "http://127.0.0.1:9/v1",
                                          "AGENT_MAX_ATTEMPTS": "1"})
        initialize(ed)
        sid = new_session(ed, env)["sessionId"]
        r = prompt(ed, sid, "hello")
        self.assertEqual(r["error"]["code"], -32603)
        self.assertIn("the turn failed", r["error"]["message"])


class RawAcp:
    """`agent acp` on raw pipes, for what no SDK would send."""

    def __init__(self, test, env):
        self.proc = subprocess.Popen([os.path.join(BIN, "agent"), "acp"], cwd=env.project,
                                     env=env.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        test.addCleanup(self.close)

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def write(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self):
        m = self.q.get(timeout=WAIT_S)
        if m is None:
            raise AssertionError("agent acp ended (exit %s)" % self.proc.poll())
        return m

    def call(self, id, method, params):
        self.write((json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                "params": params}) + "\n").encode())
        while True:
            m = self.next()
            if m.get("id") == id and "method" not in m:
                return m

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


class AcpBadInputTest(unittest.TestCase):
    def test_bad_input_gets_the_protocols_errors_and_the_agent_goes_on(self):
        env = Env([])
        self.addCleanup(env.close)
        other = os.path.join(env.dir, "other-project")
        os.makedirs(other)
        acp = RawAcp(self, env)
        acp.write(b"{this is not json\n")
        self.assertEqual(acp.next()["error"]["code"], -32700)
        acp.write(b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]\n')
        self.assertEqual(acp.next()["error"]["code"], -32600)
        acp.write(b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":"x"}\n')
        m = acp.next()
        self.assertEqual((m["id"], m["error"]["code"]), (2, -32602))
        self.assertEqual(acp.call(3, "session/fly", {})["error"]["code"], -32601)
        r = acp.call(4, "session/new", {"cwd": "relative/dir", "mcpServers": []})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("absolute", r["error"]["message"])
        # A message over the cap (16 MiB) is refused without reading it into memory whole.
        acp.write(b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"x":"'
                  + b"a" * (17 << 20) + b'"}}\n')
        self.assertEqual(acp.next()["error"]["code"], -32600)
        r = acp.call(6, "session/new", {"cwd": other, "mcpServers": []})
        sid_elsewhere = r["result"]["sessionId"]
        r = acp.call(7, "session/load", {"sessionId": sid_elsewhere, "cwd": env.project,
                                         "mcpServers": []})
        self.assertEqual(r["error"]["code"], -32002)
        self.assertEqual(r["error"]["data"], {"sessionId": sid_elsewhere})
        r = acp.call(8, "session/prompt", {"sessionId": "nope", "prompt": [
            {"type": "text", "text": "hi"}]})
        self.assertEqual(r["error"]["code"], -32002)
        # Images the models do not take, broken base64, one too large: refused, naming why.
        for n, (block, why) in enumerate([
                ({"type": "image", "data": "AAAA", "mimeType": "image/tiff"}, "image/tiff"),
                ({"type": "image", "data": "not base64!", "mimeType": "image/png"}, "base64"),
                ({"type": "image", "data": "A" * (5 << 20), "mimeType": "image/png"}, "KiB"),
                ({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}, "audio")]):
            r = acp.call(90 + n, "session/prompt", {"sessionId": sid_elsewhere, "prompt": [
                {"type": "text", "text": "look"}, block]})
            self.assertEqual(r["error"]["code"], -32602, block["mimeType"])
            self.assertIn(why, r["error"]["message"])
        r = acp.call(10, "session/new", {"cwd": env.project, "mcpServers": [
            {"name": "x", "command": "/bin/true", "args": [], "env": {"A": "B"}}]})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("mcpServers[0].env must be a list", r["error"]["message"])
        # Still answering, and it leaves when the editor closes its end.
        self.assertEqual(acp.call(11, "initialize", {"protocolVersion": 1})["result"]
                         ["protocolVersion"], 1)
        acp.proc.stdin.close()
        self.assertEqual(acp.proc.wait(timeout=WAIT_S), 0)


if __name__ == "__main__":
    unittest.main()
