"""Hooks (Claude Code's contract) fired by real turns against the scripted model, and
`agent wait`. The hook scripts are written by the tests; they log what they were given."""
import json
import os
import stat
import sys
import time
import unittest

from harness import Env, tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind

PY = sys.executable


def write_script(env, name, body):
    """An executable Python hook script in the Env's dir; returns its command line."""
    path = os.path.join(env.dir, name)
    with open(path, "w") as f:
        f.write("#!%s\nimport json, os, sys\n%s\n" % (PY, body))
    os.chmod(path, stat.S_IRWXU)
    return path


def user_hooks(env, hooks, **extra):
    d = os.path.join(env.dir, "config", "agent")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(hooks=hooks, **extra), f)


def project_hooks(env, hooks):
    d = os.path.join(env.project, ".agent")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump({"hooks": hooks}, f)


def one(command, matcher=None, timeout=None):
    h = {"type": "command", "command": command}
    if timeout:
        h["timeout"] = timeout
    group = {"hooks": [h]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


# Appends the hook's input to a log file named by argv[1].
LOGGER = """
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(data) + "\\n")
"""


def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def tool_results(transcript):
    return [m["content"] for m in transcript if m.get("role") == "tool"]


class Hooks(unittest.TestCase):
    def env(self, replies, **kw):
        env = Env(replies, **kw)
        self.addCleanup(env.close)
        return env

    def test_formatter_runs_after_edit_file_and_its_note_reaches_the_model(self):
        env = self.env([
            {"tool_calls": [tool_call("read_file", path="src.py")]},
            {"tool_calls": [tool_call("edit_file", path="src.py", old_string="x = 1",
                                      new_string="x  =  2   ")]},
            {"text": "done", "expect": {"last_message_contains": "formatted src.py"}},
        ])
        with open(os.path.join(env.project, "src.py"), "w") as f:
            f.write("x = 1\n")
        fmt = write_script(env, "fmt.py", """
data = json.load(sys.stdin)
path = os.path.join(data["cwd"], data["tool_input"]["path"])
with open(path) as f:
    text = f.read()
with open(path, "w") as f:
    f.write(" ".join(text.split()) + "\\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                  "additionalContext": "formatted " + data["tool_input"]["path"]}}))
""")
        log = os.path.join(env.dir, "post.log")
        user_hooks(env, {"PostToolUse": one(fmt, "Edit|Write") +
                         one("%s %s" % (write_script(env, "log.py", LOGGER), log))})
        r = env.agent("--yes", "tidy src.py")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(env.project, "src.py")) as f:
            self.assertEqual(f.read(), "x = 2\n")
        t = env.transcript()
        self.assertIsNone(transcript_problems(t))
        self.assertIn("formatted src.py", tool_results(t)[1])
        self.assertNotIn("formatted", tool_results(t)[0])  # the matcher: read_file is not Edit
        calls = read_log(log)
        self.assertEqual([c["tool_name"] for c in calls], ["read_file", "edit_file"])
        self.assertEqual(calls[1]["hook_event_name"], "PostToolUse")
        self.assertEqual(calls[1]["permission_mode"], "bypassPermissions")
        self.assertEqual(calls[1]["cwd"], env.project)
        self.assertTrue(calls[1]["tool_call_id"])

    def test_guard_denies_git_push_and_allows_ls_without_a_question(self):
        env = self.env([
            {"tool_calls": [tool_call("bash", command="ls")]},
            {"tool_calls": [tool_call("bash", command="git push origin main")]},
            {"text": "ok"},
        ])
        guard = write_script(env, "guard.py", """
data = json.load(sys.stdin)
cmd = data["tool_input"].get("command", "")
if cmd.startswith("git push"):
    print("pushing is for people", file=sys.stderr)
    sys.exit(2)
if cmd == "ls":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                      "permissionDecision": "allow", "permissionDecisionReason": "read-only"}}))
""")
        user_hooks(env, {"PreToolUse": one(guard, "Bash")})
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create(policy=api.pb.POLICY_MODE_ASK)
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "look and push")
        events = collect_until_turns_end(s)
        s.cancel()
        self.assertFalse([e for e in events if kind(e) == "approval_requested"])
        results = [e.tool_result for e in events if kind(e) == "tool_result"]
        self.assertFalse(results[0].is_error)
        self.assertTrue(results[1].is_error)
        self.assertIn("pushing is for people", results[1].content)
        t = env.transcript(sid)
        self.assertIsNone(transcript_problems(t))
        self.assertEqual(len(tool_results(t)), 2)  # one result each, the refused call too

    def test_a_deny_rule_wins_over_a_hooks_allow(self):
        env = self.env([
            {"tool_calls": [tool_call("bash", command="rm -rf build")]},
            {"text": "ok"},
        ])
        allow = write_script(env, "allow.py", """
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}}))
""")
        user_hooks(env, {"PreToolUse": one(allow)}, deny=["bash(rm *)"])
        os.makedirs(os.path.join(env.project, "build"))
        env.agent("--yes", "clean")
        self.assertTrue(os.path.isdir(os.path.join(env.project, "build")))
        result = tool_results(env.transcript())[0]
        self.assertNotIn("hook", result)  # the rule refused it, not the hook

    def test_stop_hook_sends_the_model_back_once(self):
        env = self.env([
            {"text": "I am done"},
            {"text": "tests pass now", "expect": {"last_user_contains": "run the tests"}},
        ])
        stop = write_script(env, "stop.py", """
data = json.load(sys.stdin)
if not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests first"}))
""")
        user_hooks(env, {"Stop": one(stop)})
        r = env.agent("--yes", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(env.requests()), 2)
        self.assertEqual(env.stats()["expect_failed"], 0)
        t = env.transcript()
        self.assertIsNone(transcript_problems(t))
        self.assertEqual(t[-1]["content"], "tests pass now")

    def test_session_start_and_prompt_context_reach_the_request_body(self):
        env = self.env([{"text": "hi", "expect": {"last_user_contains": "branch: feature-7"}}])
        user_hooks(env, {
            "SessionStart": one("echo 'branch: feature-7'", "startup"),
            "UserPromptSubmit": one("echo '{\"hookSpecificOutput\": {\"additionalContext\": "
                                    "\"ticket 42\"}}'"),
        })
        r = env.agent("--yes", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)
        body = env.requests()[0]["body"] if "body" in env.requests()[0] else env.requests()[0]
        self.assertIn("ticket 42", json.dumps(body))

    def test_user_prompt_submit_blocks_a_prompt(self):
        env = self.env([])
        user_hooks(env, {"UserPromptSubmit": one("echo 'no secrets in prompts' >&2; exit 2")})
        r = env.agent("--yes", "my password is hunter2")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no secrets in prompts", r.stderr + r.stdout)
        self.assertEqual(env.requests(), [])

    def _failing_guard_is_asked(self, command, timeout=None):
        env = self.env([
            {"tool_calls": [tool_call("bash", command="touch made")]},
            {"text": "ok"},
        ])
        user_hooks(env, {"PreToolUse": one(command, "bash", timeout)})
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_YES)  # --yes: a failed guard still asks
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "make it")
        errors = []
        for e in s:
            if kind(e) == "error":
                errors.append(e.error.message)
            if kind(e) == "approval_requested":
                req = e.approval_requested.approval
                break
        self.assertTrue(req.requires_person)
        self.assertIn("hook", req.person_reason)
        self.assertTrue(any("PreToolUse hook" in m for m in errors), errors)
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                           decision=pb.DECISION_DENY, client_name="t"),
                         timeout=10)
        collect_until_turns_end(s)
        s.cancel()
        self.assertFalse(os.path.exists(os.path.join(env.project, "made")))
        # No terminal to ask on, even with --yes: not allowed.
        env.load_script([{"tool_calls": [tool_call("bash", command="touch made")]},
                         {"text": "ok"}])
        r = env.agent("--yes", "make it again")
        self.assertFalse(os.path.exists(os.path.join(env.project, "made")), r.stdout)

    def test_a_crashing_guard_asks_a_person(self):
        self._failing_guard_is_asked("kill -SEGV $$")

    def test_a_hanging_guard_asks_a_person(self):
        self._failing_guard_is_asked("sleep 60", timeout=1)

    def test_a_guard_printing_garbage_asks_a_person(self):
        self._failing_guard_is_asked("echo sure, whatever")

    def test_a_project_hook_runs_only_after_trust(self):
        env = self.env([
            {"tool_calls": [tool_call("list_dir", path=".")]},
            {"text": "one"},
            {"tool_calls": [tool_call("list_dir", path=".")]},
            {"text": "two"},
        ])
        # In the project: a project's hooks run inside the sandbox.
        marker = os.path.join(env.project, "ran")
        project_hooks(env, {"PostToolUse": one("touch %s" % marker)})
        r = env.agent("--yes", "first")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(marker))
        self.assertIn("not trusted", r.stdout + r.stderr)
        listed = env.agent("trust", "--yes")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("PostToolUse", listed.stdout)
        self.assertIn("touch %s" % marker, listed.stdout)
        r = env.agent("--yes", "second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(marker))
        # The repository changes the hook: it is untrusted again.
        os.remove(marker)
        project_hooks(env, {"PostToolUse": one("touch %s; true" % marker)})
        env.load_script([{"tool_calls": [tool_call("list_dir", path=".")]}, {"text": "3"}])
        env.agent("--yes", "third")
        self.assertFalse(os.path.exists(marker))

    def test_hooks_fire_with_no_client_attached_and_agent_wait_idle(self):
        env = self.env([
            {"tool_calls": [tool_call("list_dir", path=".")]},
            {"text": "done"},
        ])
        log = os.path.join(env.dir, "events.log")
        logger = "%s %s" % (write_script(env, "log.py", LOGGER), log)
        user_hooks(env, {e: one(logger) for e in
                         ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                          "Stop", "Notification")})
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create()
        api.prompt(sid, "go")  # nobody attached
        w = env.agent("wait", sid, "--for", "idle", timeout=60)
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertEqual(w.stdout.strip(), "idle")
        # The Notification hook runs in the background: bounded wait for its line.
        deadline = time.monotonic() + 10
        while (len(read_log(log)) < 6 and time.monotonic() < deadline):
            time.sleep(0.02)  # polling a file a hook process writes
        names = [c["hook_event_name"] for c in read_log(log)]
        self.assertEqual(names, ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                 "Stop", "Notification"])
        self.assertEqual(read_log(log)[-1]["notification_type"], "idle_prompt")

    def test_agent_wait_for_approval_and_ls_shows_it_waiting(self):
        env = self.env([
            {"tool_calls": [tool_call("bash", command="echo hi")]},
            {"text": "done"},
        ])
        log = os.path.join(env.dir, "note.log")
        user_hooks(env, {"Notification": one("%s %s" % (write_script(env, "n.py", LOGGER), log),
                                             "permission_prompt")})
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        waiter = env.popen_agent("wait", sid, "--for", "approval")
        api.prompt(sid, "say hi")
        out, err = waiter.communicate(timeout=60)
        self.assertEqual(waiter.returncode, 0, err)
        self.assertEqual(out.strip(), "approval")
        ls = env.agent("ls")
        self.assertIn("waiting", ls.stdout)
        # Already waiting: answered at once.
        again = env.agent("wait", sid, timeout=30)
        self.assertEqual(again.stdout.strip(), "approval")
        s = api.attach(sid, "t")
        snap = next(s)
        call_id = snap.snapshot.pending_approval.call_id
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=call_id,
                                           decision=pb.DECISION_ALLOW_ONCE, client_name="t"),
                         timeout=10)
        collect_until_turns_end(s)
        s.cancel()
        idle = env.agent("wait", sid, "--for", "idle", timeout=30)
        self.assertEqual(idle.stdout.strip(), "idle")
        deadline = time.monotonic() + 10
        while not read_log(log) and time.monotonic() < deadline:
            time.sleep(0.02)  # polling a file a hook process writes
        self.assertEqual(read_log(log)[0]["notification_type"], "permission_prompt")


if __name__ == "__main__":
    unittest.main()
