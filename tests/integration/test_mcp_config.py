"""MCP servers without npm: `agent mcp add/ls/rm`, a project's server that runs only after a
person's approval, and faults (a server that dies mid-call, one that never starts) that end
no turn badly. The server is tests/daemon/mcp/fake_mcp_server.py; the strict scripted model
checks every transcript."""
import json
import os
import time
import unittest

from harness import BIN, Env, processes, tool_call
from test_multi_client import Api, collect_until_turns_end, kind
from test_terminal import TMUX, Terminal

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "..", "daemon", "mcp", "fake_mcp_server.py")


def fake(mode="ok"):
    return {"command": "/usr/bin/python3", "args": [os.path.abspath(FAKE), mode],
            "startup_timeout_ms": 3000}


def tool_messages(transcript):
    messages = transcript["messages"] if isinstance(transcript, dict) else transcript
    return [m for m in messages if m.get("role") == "tool"]


def tool_names(request):
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


class McpCommand(unittest.TestCase):
    def test_add_ls_rm(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        config = os.path.join(env.dir, "config", "agent", "config.json")
        os.makedirs(os.path.dirname(config))
        with open(config, "w") as f:
            json.dump({"max_steps": 7}, f)
        r = env.agent("mcp", "add", "fake", "--", "/usr/bin/python3", os.path.abspath(FAKE), "ok")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(config) as f:
            saved = json.load(f)
        self.assertEqual(saved["max_steps"], 7)  # the other settings stay
        self.assertEqual(saved["mcp_servers"]["fake"]["args"], [os.path.abspath(FAKE), "ok"])
        r = env.agent("mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = env.agent("mcp", "ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake  user  stdio  stopped", r.stdout)  # lazy: not started yet
        self.assertIn("web  user  http  stopped  0 tools  http://127.0.0.1:9/mcp", r.stdout)
        self.assertEqual(env.agent("--yes", "hello").returncode, 0)
        r = env.agent("mcp", "ls")
        self.assertIn("fake  user  stdio  running  9 tools", r.stdout)
        self.assertIn("mcp__fake__echo (read-only)", r.stdout)
        self.assertIn("web  user  http  failed", r.stdout)
        self.assertIn("error: ", r.stdout)
        r = env.agent("mcp", "rm", "web")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("web", env.agent("mcp", "ls").stdout)
        r = env.agent("mcp", "rm", "nope")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no MCP server nope", r.stderr)

    def test_ls_check_starts_the_servers_and_fails_when_one_does(self):
        env = Env([])
        self.addCleanup(env.close)
        r = env.agent("mcp", "add", "fake", "--", "/usr/bin/python3", os.path.abspath(FAKE), "ok")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = env.agent("mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Without --check nothing starts, and nothing has failed yet.
        r = env.agent("mcp", "ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake  user  stdio  stopped  0 tools", r.stdout)
        r = env.agent("mcp", "ls", "--check")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fake  user  stdio  running  9 tools", r.stdout)
        self.assertIn("mcp__fake__echo (read-only)", r.stdout)
        self.assertIn("web  user  http  failed", r.stdout)
        self.assertEqual(env.agent("mcp", "rm", "web").returncode, 0)
        r = env.agent("mcp", "ls", "--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("fake  user  stdio  running  9 tools", r.stdout)

    def test_tool_filters_choose_what_the_model_is_offered(self):
        env = Env([{"text": "one"}, {"text": "two"}])
        self.addCleanup(env.close)
        config = os.path.join(env.dir, "config", "agent", "config.json")
        os.makedirs(os.path.dirname(config))

        log = os.path.join(env.dir, "fake-log")

        def write(**filters):
            server = dict(fake(), **filters)
            server["args"] = server["args"] + [log]
            with open(config, "w") as f:
                json.dump({"mcp_servers": {"fake": server}}, f)
        write(disabled_tools=["die", "fl*"])
        self.assertEqual(env.agent("--yes", "hello").returncode, 0)
        offered = tool_names(env.requests()[0])
        self.assertIn("mcp__fake__echo", offered)
        self.assertNotIn("mcp__fake__die", offered)
        self.assertNotIn("mcp__fake__flood", offered)
        ls = env.agent("mcp", "ls").stdout
        self.assertIn("fake  user  stdio  running  9 tools", ls)
        self.assertIn("mcp__fake__die (not offered: the server's tool filters)", ls)
        self.assertIn("mcp__fake__echo (read-only)\n", ls)
        # An edited filter applies at the next request, to the same server process.
        write(enabled_tools=["echo"])
        self.assertEqual(env.agent("--yes", "-c", "again").returncode, 0)
        mcp_tools = [n for n in tool_names(env.requests()[1]) if n.startswith("mcp__")]
        self.assertEqual(mcp_tools, ["mcp__fake__echo"])
        with open(log) as f:
            self.assertEqual(sum(1 for line in f if '"started"' in line), 1)

    def test_add_refuses_what_the_daemon_would_reject(self):
        env = Env([])
        self.addCleanup(env.close)
        config = os.path.join(env.dir, "config", "agent", "config.json")
        for args, why in [
                (["a__b", "--", "/bin/true"], 'a server name is 1-32 letters, digits, _ or - '
                                               'without "__" and not ending in _, not "a__b"'),
                (["a b", "--", "/bin/true"], "not \"a b\""),
                (["web", "--url", "ftp://example.com/mcp"],
                 '--url must be an http:// or https:// URL, not "ftp://example.com/mcp"'),
                (["web", "--url", "file:///etc/passwd"], "http:// or https://"),
                (["empty", "--", ""], "the command is empty")]:
            r = env.agent("mcp", "add", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(why, r.stderr)
        self.assertFalse(os.path.exists(config))  # nothing written


class ProjectServers(unittest.TestCase):
    def test_a_repositorys_server_runs_only_after_a_person_approved_it(self):
        env = Env([{"text": "first"}, {"text": "second"}])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"mcp_servers": {"repo": fake()}}, f)
        r = env.agent("--yes", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("needs a person's approval", r.stdout + r.stderr)
        self.assertNotIn("mcp__repo__echo", tool_names(env.requests()[0]))
        ls = env.agent("mcp", "ls").stdout
        self.assertIn("repo  project  stdio  needs approval", ls)
        # `agent mcp approve` refuses without a person at a terminal.
        r = env.agent("mcp", "approve", "repo")
        self.assertEqual(r.returncode, 1)
        self.assertIn("person", r.stderr)
        # An approval for another command line is refused.
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        with self.assertRaises(Exception):
            api.stub.ApproveMcpServer(pb.ApproveMcpServerRequest(
                workdir=env.project, name="repo", target="/bin/sh -c evil"), timeout=10)
        [shown] = api.stub.ListMcpServers(pb.ListMcpServersRequest(workdir=env.project),
                                          timeout=10).servers
        # An approval must carry the whole definition the person saw, not the target alone.
        with self.assertRaises(Exception):
            api.stub.ApproveMcpServer(pb.ApproveMcpServerRequest(
                workdir=env.project, name="repo", target=shown.target), timeout=10)
        api.stub.ApproveMcpServer(pb.ApproveMcpServerRequest(
            workdir=env.project, name="repo", target=shown.target,
            definition=shown.definition), timeout=10)
        r = env.agent("--yes", "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("mcp__repo__echo", tool_names(env.requests()[1]))
        # Recorded outside the repository.
        self.assertTrue(os.path.exists(os.path.join(env.dir, "state", "agent",
                                                    "mcp-approvals.json")))
        self.assertFalse(any("approv" in n for n in os.listdir(os.path.join(env.project,
                                                                             ".agent"))))


    def test_a_bare_command_is_never_the_repositorys_file_of_that_name(self):
        # The repository ships ./agentd-test-server and names it without a slash, with a PATH
        # of its own: neither the project directory nor that PATH is searched.
        env = Env([{"text": "first"}])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"))
        os.makedirs(os.path.join(env.project, "bin"))
        marker = os.path.join(env.dir, "ran-from-repo")
        for path in (os.path.join(env.project, "agentd-test-server"),
                     os.path.join(env.project, "bin", "agentd-test-server")):
            with open(path, "w") as f:
                f.write("#!/bin/sh\necho ran > '%s'\nexit 1\n" % marker)
            os.chmod(path, 0o755)
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"mcp_servers": {"repo": {
                "command": "agentd-test-server",
                "env": {"PATH": os.path.join(env.project, "bin") + ":/nonexistent"},
                "startup_timeout_ms": 3000}}}, f)
        api = Api(env)
        self.addCleanup(api.close)
        [shown] = api.stub.ListMcpServers(api.pb.ListMcpServersRequest(workdir=env.project),
                                          timeout=10).servers
        api.stub.ApproveMcpServer(api.pb.ApproveMcpServerRequest(
            workdir=env.project, name="repo", target=shown.target,
            definition=shown.definition), timeout=10)
        r = env.agent("--yes", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("command not found: agentd-test-server", r.stdout + r.stderr)
        self.assertFalse(os.path.exists(marker))
        ls = env.agent("mcp", "ls").stdout
        self.assertIn("repo  project  stdio  failed", ls)
        self.assertIn("error: command not found: agentd-test-server", ls)


@unittest.skipIf(TMUX is None, "tmux is not installed")
class ApproveAtATerminal(unittest.TestCase):
    def test_approve_from_a_subdirectory_shows_the_whole_definition_first(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        sub = os.path.join(env.project, "src", "deep")
        os.makedirs(sub)
        os.makedirs(os.path.join(env.project, ".agent"))
        server = fake()
        server["env"] = {"MODE_X": "on\x1b[31mred", "OTHER": "2"}
        server["cwd"] = "/"
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"mcp_servers": {"repo": server}}, f)
        ls = env.agent("mcp", "ls", cwd=sub)
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertIn("repo  project  stdio  needs approval", ls.stdout)
        self.assertIn("    env: MODE_X=on\\x1b[31mred\n", ls.stdout)
        self.assertIn("    cwd: /\n", ls.stdout)
        term = Terminal(self, env)
        script = term._script("approve", {})
        term.tmux("new-session", "-d", "-s", "t", "-n", "approve", "-x", "200", "-y", "40",
                  "sh", script, "/bin/sh", "-c",
                  "cd '%s' && exec '%s' mcp approve repo" % (sub, os.path.join(BIN, "agent")))
        term.tmux("set-option", "-g", "remain-on-exit", "on")
        term.started = True
        screen = term.wait_for("approve", "[y/N]")
        self.assertIn("command: /usr/bin/python3 ", screen)
        self.assertIn("cwd: /", screen)
        self.assertIn("env: MODE_X=on\\x1b[31mred", screen)  # the escape, made visible
        self.assertIn("env: OTHER=2", screen)
        self.assertIn("Run it for %s " % env.project, screen)
        term.type_line("approve", "y")
        term.wait_for("approve", "approved repo for %s" % env.project)
        self.assertEqual(term.wait_exit("approve"), 0)
        r = env.agent("--yes", "hello", cwd=sub)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("mcp__repo__echo", tool_names(env.requests()[0]))


class Faults(unittest.TestCase):
    def write_config(self, env, servers):
        d = os.path.join(env.dir, "config", "agent")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"mcp_servers": servers}, f)

    def test_a_server_dying_mid_call_answers_the_call_and_comes_back(self):
        env = Env([
            {"tool_calls": [tool_call("mcp__fake__die"), tool_call("mcp__fake__echo", text="x")]},
            {"text": "it died"},
            {"tool_calls": [tool_call("mcp__fake__echo", text="back")]},
            {"text": "done"},
        ])
        self.addCleanup(env.close)
        self.write_config(env, {"fake": fake()})
        r = env.agent("--yes", "call it")
        self.assertEqual(r.returncode, 0, r.stderr)
        died, second = [m["content"] for m in tool_messages(env.transcript())]
        self.assertIn("not available", died)
        self.assertIn("fake", second)  # not running, or restarted by now: answered either way
        # Restarted with backoff (1 s first): wait, bounded, until it runs again.
        for _ in range(100):
            if "fake  user  stdio  running" in env.agent("mcp", "ls").stdout:
                break
            time.sleep(0.1)  # polling the daemon's view; no event tells a client
        r = env.agent("--yes", "-c", "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(tool_messages(env.transcript())[-1]["content"], "echo: back")
        self.assertEqual(env.stats()["rejected"], 0)

    def test_the_servers_end_with_the_daemon(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        marker = os.path.join(env.dir, "marker-log")
        server = fake()
        server["args"].append(marker)  # the fake's log file: names this Env in its argv
        self.write_config(env, {"fake": server})
        self.assertEqual(env.agent("--yes", "hello").returncode, 0)

        def servers():
            return [pid for pid, cmd in processes() if marker.encode() in cmd]
        # The server, and bwrap's two processes where the sandbox gives it a PID namespace.
        self.assertIn(len(servers()), (1, 3))
        self.assertEqual(env.agent("daemon", "stop").returncode, 0)
        for _ in range(100):
            if not servers():
                break
            time.sleep(0.05)  # reaped by the daemon as it stops; not our child to wait for
        self.assertEqual(servers(), [])

    def test_what_a_server_daemonized_ends_with_it(self):
        # A helper forked twice has no parent left to find it by: only the PID namespace the
        # sandbox gives a user's server ends it.
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        if env.agent("sandbox", "--check").returncode != 0:
            self.skipTest("the sandbox cannot start here")
        marker = os.path.join(env.dir, "orphan-log")
        server = fake("orphan")
        server["args"].append(marker)  # the helper's command line names it
        self.write_config(env, {"fake": server})
        self.assertEqual(env.agent("--yes", "hello").returncode, 0)

        def helpers():
            return [pid for pid, cmd in processes()
                    if b"time.sleep(300)" in cmd and marker.encode() in cmd]
        for _ in range(100):
            if helpers():
                break
            time.sleep(0.05)  # started by the server beside its first answer
        self.assertTrue(helpers())
        self.assertEqual(env.agent("daemon", "stop").returncode, 0)
        for _ in range(100):
            if not helpers():
                break
            time.sleep(0.05)  # ended by the daemon as it stops
        left = helpers()
        for pid in left:
            os.kill(pid, 9)
        self.assertEqual(left, [])

    def test_a_server_that_never_initializes_leaves_a_working_session(self):
        env = Env([
            {"tool_calls": [tool_call("mcp__slow__echo", text="x")]},
            {"text": "no such tool"},
        ])
        self.addCleanup(env.close)
        server = fake("no-init")
        server["startup_timeout_ms"] = 500
        self.write_config(env, {"slow": server})
        r = env.agent("--yes", "try")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("MCP server slow failed: initialize", r.stdout + r.stderr)
        [result] = tool_messages(env.transcript())
        self.assertIn("Unknown tool", result["content"])
        self.assertEqual(env.stats()["rejected"], 0)

    def test_mcp_tools_are_asked_about_unless_a_rule_allows_them(self):
        env = Env([
            {"tool_calls": [tool_call("mcp__fake__add", a=1, b=2)]},
            {"text": "denied"},
            {"tool_calls": [tool_call("mcp__fake__add", a=1, b=2)]},
            {"text": "allowed"},
        ])
        self.addCleanup(env.close)
        self.write_config(env, {"fake": fake()})
        # No terminal and no --yes: an unruled gated call is refused.
        r = env.agent("add them")
        self.assertEqual(r.returncode, 4, r.stderr)  # a gated call was denied by the policy
        [result] = tool_messages(env.transcript())
        self.assertIn("Denied", result["content"])
        os.makedirs(os.path.join(env.project, ".agent"), exist_ok=True)
        with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
            json.dump({"allow": ["mcp__fake__*"]}, f)
        env.trust_rules()  # a project's allow rule counts once a person trusted it
        r = env.agent("-c", "add them")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(tool_messages(env.transcript())[-1]["content"], "3")
        self.assertEqual(env.stats()["rejected"], 0)


if __name__ == "__main__":
    unittest.main()
