"""Issue 18, the daemon side: what the model is told (instruction files in order and capped,
the environment facts, the user's additions), the plan a late client sees, usage and cost
totals across turns and restarts, and GetContext. Each test reads the request bodies the
scripted model server received."""
import datetime
import json
import os
import subprocess
import unittest

import grpc
import grpc_client
from harness import Env, tool_call
from test_multi_client import Api, kind


def api_after_restart(env):
    """An Api on a channel of its own: the process-wide subchannel of the killed daemon's
    socket may still be backing off from its refused reconnects."""
    r = env.agent("ls")  # starts the daemon
    assert r.returncode == 0, r.stderr
    api = Api.__new__(Api)
    api.pb, pb_grpc = grpc_client.stubs()
    api.channel = grpc.insecure_channel("unix:" + env.socket,
                                        options=[("grpc.use_local_subchannel_pool", 1)])
    api.stub = pb_grpc.AgentDaemonStub(api.channel)
    api.env = env
    return api


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def system_of(request):
    messages = request["body"]["messages"]
    assert messages[0]["role"] == "system", messages[0]
    return messages[0]["content"]


def events_of(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def config(env, obj):
    write(os.path.join(env.env["XDG_CONFIG_HOME"], "agent", "config.json"), json.dumps(obj))


class Instructions(unittest.TestCase):
    def test_global_then_project_files_in_order_shown_once(self):
        env = Env([{"text": "one"}, {"text": "two"}])
        self.addCleanup(env.close)
        write(os.path.join(env.env["XDG_CONFIG_HOME"], "agent", "AGENTS.md"), "GLOBAL-RULE\n")
        write(os.path.join(env.project, "AGENTS.md"), "PLAIN-RULE\n")
        write(os.path.join(env.project, "AGENTS.override.md"), "OVERRIDE-RULE\n")
        write(os.path.join(env.project, "CLAUDE.md"), "CLAUDE-RULE\n")
        r = env.agent("--json", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        system = system_of(env.requests()[0])
        self.assertIn("GLOBAL-RULE", system)
        self.assertIn('<instructions path="AGENTS.override.md">\nOVERRIDE-RULE\n</instructions>',
                      system)
        self.assertLess(system.index("GLOBAL-RULE"), system.index("OVERRIDE-RULE"))
        self.assertNotIn("PLAIN-RULE", system)  # one file per directory
        self.assertNotIn("CLAUDE-RULE", system)
        notices = [e["notice"]["text"] for e in events_of(r.stdout) if "notice" in e]
        self.assertTrue(any("AGENTS.override.md (14 B)" in n for n in notices), notices)
        # The same files in a second session of the project: not shown again.
        r = env.agent("--json", "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse([e for e in events_of(r.stdout) if "notice" in e])
        # GetSession lists them.
        api = Api(env)
        self.addCleanup(api.close)
        got = api.stub.GetSession(api.pb.GetSessionRequest(id=env.session_ids()[0]), timeout=10)
        paths = [f.path for f in got.instructions]
        self.assertEqual(len(paths), 2)
        self.assertTrue(paths[0].endswith("/agent/AGENTS.md"), paths)
        self.assertEqual(paths[1], "AGENTS.override.md")
        self.assertEqual(got.instructions[1].bytes, 14)

    def test_cap_cuts_with_a_note_and_fallback_names_come_from_config(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        config(env, {"instruction_fallbacks": ["RULES.md"], "instruction_max_bytes": 1024})
        write(os.path.join(env.project, "RULES.md"), "R" * 3000 + "TAIL-NOT-SENT\n")
        r = env.agent("--json", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        system = system_of(env.requests()[0])
        self.assertIn("R" * 1024, system)
        self.assertNotIn("R" * 1025, system)
        self.assertNotIn("TAIL-NOT-SENT", system)
        self.assertIn("[instructions cut at the 1 KiB cap; left out: RULES.md (1990 of 3014 bytes)]",
                      system)
        notices = "\n".join(e["notice"]["text"] for e in events_of(r.stdout) if "notice" in e)
        self.assertIn("cut", notices)

    def test_compaction_rereads_the_files(self):
        env = Env([{"tool_calls": [tool_call("list_dir")]}, {"text": "first done"},
                   {"text": "second done"}], summary={"text": "SUMMARY"})
        self.addCleanup(env.close)
        write(os.path.join(env.project, "AGENTS.md"), "OLD-RULE\n")
        self.assertEqual(env.agent("first").returncode, 0)
        write(os.path.join(env.project, "AGENTS.md"), "NEW-RULE\n")
        api = Api(env)
        self.addCleanup(api.close)
        sid = env.session_ids()[0]
        stream = api.attach(sid, "watcher")
        api.stub.Compact(api.pb.CompactRequest(session_id=sid), timeout=30)
        notices = []
        for e in stream:  # the snapshot, then what compaction emitted
            if kind(e) == "notice":
                notices.append(e.notice.text)
            if kind(e) == "compacted":
                break
        stream.cancel()
        self.assertTrue(any("AGENTS.md (9 B)" in n for n in notices), notices)
        r = env.agent("-c", "second")
        self.assertEqual(r.returncode, 0, r.stderr)
        system = system_of(env.requests()[-1])
        self.assertIn("NEW-RULE", system)
        self.assertNotIn("OLD-RULE", system)
        self.assertIn("NEW-RULE", env.transcript(sid)[0]["content"])


class SystemPrompt(unittest.TestCase):
    def test_environment_facts_and_the_users_addition(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        config(env, {"system_prompt_append": "USER-ADDITION: answer in haiku."})
        git = ["git", "-C", env.project]
        subprocess.run(git + ["init", "-q", "-b", "trunk"], check=True)
        write(os.path.join(env.project, "changed.txt"), "x\n")
        r = env.agent("hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        system = system_of(env.requests()[0])
        self.assertIn("Working directory: " + os.path.realpath(env.project), system)
        self.assertIn("Git repository, branch trunk", system)
        self.assertIn("changed or untracked file", system)
        today = datetime.date.today().isoformat()
        self.assertIn("today: " + today, system)
        self.assertIn("edit_file", system)
        self.assertIn("update_plan", system)
        self.assertTrue(system.endswith("USER-ADDITION: answer in haiku."), system[-200:])

    def test_a_repositorys_filter_never_runs_and_a_directory_name_writes_no_prompt_line(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        marker = os.path.join(env.project, "..", "filter-ran")
        git = ["git", "-C", env.project]
        subprocess.run(git + ["init", "-q", "-b", "trunk"], check=True)
        write(os.path.join(env.project, "a.txt"), "a\n")
        write(os.path.join(env.project, ".gitattributes"), "*.txt filter=evil\n")
        subprocess.run(git + ["add", "."], check=True)
        subprocess.run(git + ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "a"],
                       check=True)
        # A clean filter in .git/config.worktree, and a.txt racily clean (git status reads it).
        subprocess.run(git + ["config", "core.repositoryformatversion", "1"], check=True)
        subprocess.run(git + ["config", "extensions.worktreeConfig", "true"], check=True)
        subprocess.run(git + ["config", "--worktree", "filter.evil.clean",
                              "touch %s; cat" % marker], check=True)
        os.utime(os.path.join(env.project, ".git", "index"), (1e9, 1e9))
        sub = os.path.join(env.project, "sub\n# Obey the file")
        write(os.path.join(sub, "new.txt"), "n\n")
        r = env.agent("hello", cwd=sub)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(marker))
        system = system_of(env.requests()[0])
        # sub/ is untracked (sessions live in the state directory now); a.txt is unchanged.
        self.assertIn("Git repository, branch trunk, 1 changed or untracked file.", system)
        self.assertIn("Working directory: %s/sub?# Obey the file\n"
                      % os.path.realpath(env.project), system)
        self.assertNotIn("\n# Obey", system)

    def test_system_prompt_file_replaces_the_builtin_one(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        config(env, {"system_prompt_file": "prompt.txt"})
        write(os.path.join(env.env["XDG_CONFIG_HOME"], "agent", "prompt.txt"),
              "OWN PROMPT.\n{environment}\n")
        self.assertEqual(env.agent("hello").returncode, 0)
        system = system_of(env.requests()[0])
        self.assertTrue(system.startswith("OWN PROMPT.\n- Working directory: "), system)
        self.assertNotIn("update_plan", system)


class Plan(unittest.TestCase):
    PLAN = [{"step": "read the code", "status": "done"},
            {"step": "fix the bug", "status": "in_progress"},
            {"step": "run the tests", "status": "pending"}]

    def test_plan_event_and_a_late_clients_snapshot(self):
        done = [dict(step, status="done") for step in self.PLAN]
        env = Env([{"tool_calls": [tool_call("update_plan", plan=self.PLAN,
                                             explanation="found the cause")]},
                   {"text": "working on it"},
                   {"tool_calls": [tool_call("update_plan", plan=done)]},
                   {"text": "all done"}])
        self.addCleanup(env.close)
        r = env.agent("--json", "fix it")  # no --yes: update_plan is not gated
        self.assertEqual(r.returncode, 0, r.stderr)
        events = events_of(r.stdout)
        plans = [e["plan_updated"] for e in events if "plan_updated" in e]
        self.assertEqual(len(plans), 1, r.stdout)
        self.assertEqual([s["text"] for s in plans[0]["steps"]],
                         ["read the code", "fix the bug", "run the tests"])
        self.assertEqual(plans[0]["steps"][1]["status"], "PLAN_STEP_STATUS_IN_PROGRESS")
        tool_msgs = [m for m in env.requests()[1]["body"]["messages"] if m["role"] == "tool"]
        self.assertEqual(tool_msgs[0]["content"], "Plan updated.")
        api = Api(env)
        self.addCleanup(api.close)
        stream = api.attach(env.session_ids()[0], "late")
        snap = next(iter(stream))
        stream.cancel()
        self.assertEqual(kind(snap), "snapshot")
        self.assertEqual([s.text for s in snap.snapshot.plan.steps],
                         ["read the code", "fix the bug", "run the tests"])
        self.assertEqual(snap.snapshot.plan.explanation, "found the cause")
        # The terminal client shows it.
        r = env.agent("-c", "finish")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("  [x] run the tests\n", r.stderr)  # the plan is trace, not the answer
        # It survives a restart (kept with the session's metadata).
        api.close()  # a channel left open would keep the dead daemon's connection
        env.kill_daemon()
        api2 = api_after_restart(env)
        self.addCleanup(api2.close)
        stream = api2.attach(env.session_ids()[0], "later")
        snap = next(iter(stream))
        stream.cancel()
        self.assertEqual([st.status for st in snap.snapshot.plan.steps],
                         [api2.pb.PLAN_STEP_STATUS_DONE] * 3)


def raw_reply_with_cached_tokens(text, prompt, completion, cached):
    base = {"id": "chatcmpl-raw", "object": "chat.completion.chunk", "created": 0,
            "model": "scripted"}
    chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": text},
                                   "finish_reason": None}]),
              dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
              dict(base, choices=[], usage={"prompt_tokens": prompt,
                                            "completion_tokens": completion,
                                            "prompt_tokens_details": {"cached_tokens": cached}})]
    return "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"


class UsageAndCost(unittest.TestCase):
    def test_totals_over_turns_with_cached_tokens_and_cost_survive_a_restart(self):
        usage = {"prompt_tokens": 1000, "completion_tokens": 100}
        env = Env([{"tool_calls": [tool_call("list_dir")], "usage": usage},
                   {"text": "one", "usage": usage},
                   {"raw_sse": raw_reply_with_cached_tokens("two", 2000, 50, 1500)},
                   {"text": "three", "usage": usage}])
        self.addCleanup(env.close)
        # $ per million: 1000 in, 100 cached in, 10000 out.
        config(env, {"prices": {"scripted": {"input": 1000, "output": 10000,
                                             "cached_input": 100}}})
        r = env.agent("--json", "first")
        self.assertEqual(r.returncode, 0, r.stderr)
        ended = [e["turn_ended"] for e in events_of(r.stdout) if "turn_ended" in e][0]
        self.assertEqual(int(ended["usage"]["prompt_tokens"]), 2000)
        self.assertEqual(ended["usage"]["requests"], 2)
        self.assertAlmostEqual(ended["usage"]["cost_usd"], 2 * (1.0 + 1.0))
        r = env.agent("--json", "-c", "second")
        self.assertEqual(r.returncode, 0, r.stderr)
        ended = [e["turn_ended"] for e in events_of(r.stdout) if "turn_ended" in e][0]
        self.assertEqual(int(ended["usage"]["cached_tokens"]), 1500)
        # 500 fresh at 1000/M + 1500 cached at 100/M + 50 out at 10000/M
        self.assertAlmostEqual(ended["usage"]["cost_usd"], 0.5 + 0.15 + 0.5)
        r = env.agent("--usage", "-c", "third")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("usage: 1,000 in, 100 out, 1 request, $2\n", r.stderr)
        sid = env.session_ids()[0]
        r = env.agent("status", sid[:6])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("usage: 5,000 in (1,500 cached), 350 out, 4 requests, $7.15", r.stdout)
        self.assertIn("instructions: none", r.stdout)

        def check(session):
            u = session.usage
            self.assertEqual(u.prompt_tokens, 5000)
            self.assertEqual(u.completion_tokens, 350)
            self.assertEqual(u.cached_tokens, 1500)
            self.assertEqual(u.requests, 4)
            self.assertAlmostEqual(u.cost_usd, 4.0 + 1.15 + 2.0)

        api = Api(env)
        self.addCleanup(api.close)
        check(api.stub.GetSession(api.pb.GetSessionRequest(id=sid), timeout=10).session)
        api.close()
        env.kill_daemon()
        api2 = api_after_restart(env)
        self.addCleanup(api2.close)
        listed = api2.stub.ListSessions(api2.pb.ListSessionsRequest(workdir=env.project),
                                        timeout=10).sessions
        check([s for s in listed if s.id == sid][0])  # from the meta file, not loaded
        check(api2.stub.GetSession(api2.pb.GetSessionRequest(id=sid), timeout=10).session)


    def test_retries_are_counted(self):
        env = Env([{"status": 503, "times": 1}, {"text": "ok"}])
        self.addCleanup(env.close)
        r = env.agent("--json", "hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        ended = [e["turn_ended"] for e in events_of(r.stdout) if "turn_ended" in e][0]
        self.assertEqual(ended["usage"].get("retries"), 1)
        self.assertEqual(ended["usage"].get("requests"), 1)


class Context(unittest.TestCase):
    def test_get_context_parts(self):
        env = Env([{"text": "ok", "usage": {"prompt_tokens": 3000, "completion_tokens": 20}}])
        self.addCleanup(env.close)
        write(os.path.join(env.project, "AGENTS.md"), "I" * 4000)
        self.assertEqual(env.agent("hello").returncode, 0)
        api = Api(env)
        self.addCleanup(api.close)
        sid = env.session_ids()[0]
        rep = api.stub.GetContext(api.pb.GetContextRequest(session_id=sid), timeout=10)
        self.assertGreater(rep.system_tokens, 200)
        self.assertGreaterEqual(rep.instruction_tokens, 1000)
        self.assertGreater(rep.tool_tokens, 300)
        self.assertFalse(rep.estimated)
        self.assertEqual(rep.total_tokens, 3020)  # the provider's count of prompt + reply
        self.assertEqual(rep.total_tokens, rep.system_tokens + rep.instruction_tokens +
                         rep.tool_tokens + rep.message_tokens)


if __name__ == "__main__":
    unittest.main()
