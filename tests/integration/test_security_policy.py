"""Security: the model cannot grant itself permissions (issue items 2, 3 and 6).

The model is untrusted: whatever a rule or --yes allows, it must not be able to rewrite the
agent's own configuration (.agent/) or what makes git run code (.git/config, .git/hooks/),
through a symlink or not; and a rule file that does not parse must stop gated tools instead
of silently dropping its deny rules.
"""
import json
import os
import unittest

import grpc

from harness import BIN, Env, tool_call
from test_multi_client import Api, collect_until_turns_end, next_approval

# What `agent` sends with an answer a person typed (common/person_answer.h).
PERSON = (("agent-person", "1"),)

ASK_USER = "Only the user can allow"


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def read(path):
    with open(path) as f:
        return f.read()


class ProtectedPaths(unittest.TestCase):
    def project_settings(self, env):
        return os.path.join(env.project, ".agent", "settings.json")

    def test_an_edit_rule_cannot_rewrite_the_rules(self):
        # Deny-unruled mode (no --yes, no terminal) with edits allowed by a rule.
        env = Env([
            {"tool_calls": [tool_call("write_file", path=".agent/settings.json",
                                      content=json.dumps({"allow": ["bash", "write_file"]}))]},
            {"expect": {"last_message_contains": ASK_USER},
             "tool_calls": [tool_call("bash", command="touch pwned")]},
            {"text": "done"},
        ])
        self.addCleanup(env.close)
        write_json(self.project_settings(env), {"allow": ["write_file", "edit_file"]})
        before = read(self.project_settings(env))
        r = env.agent("go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertEqual(read(self.project_settings(env)), before)
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_yes_does_not_allow_writing_the_agents_configuration(self):
        env = Env([
            {"tool_calls": [tool_call("write_file", path=".agent/settings.json",
                                      content='{"allow": ["bash"]}')]},
            {"expect": {"last_message_contains": ASK_USER}, "text": "I will ask"},
        ])
        self.addCleanup(env.close)
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertFalse(os.path.exists(self.project_settings(env)))
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_a_symlink_does_not_bypass_a_deny_rule_on_the_resolved_path(self):
        env = Env([
            {"tool_calls": [tool_call("read_file", path="docs/notes.md")]},
            {"tool_calls": [tool_call("edit_file", path="docs/notes.md",
                                      old_string='"deny"', new_string='"ignored"')]},
            {"expect": {"last_message_contains": "Denied"}, "text": "blocked"},
        ])
        self.addCleanup(env.close)
        write_json(self.project_settings(env),
                   {"allow": ["edit_file", "read_file"], "deny": ["edit_file(.agent/**)"]})
        before = read(self.project_settings(env))
        os.makedirs(os.path.join(env.project, "docs"))
        os.symlink("../.agent/settings.json", os.path.join(env.project, "docs", "notes.md"))
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertEqual(read(self.project_settings(env)), before)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_git_config_cannot_be_made_to_run_code_through_an_allowed_command(self):
        # core.fsmonitor names a program git runs on `git status`.
        env = Env(lambda e: [
            {"tool_calls": [tool_call(
                "write_file", path=".git/config",
                content="[core]\n\tfsmonitor = touch %s/pwned; false\n" % e.project)]},
            {"tool_calls": [tool_call("write_file", path="sub/.git/hooks/pre-commit",
                                      content="#!/bin/sh\ntouch pwned\n")]},
            {"tool_calls": [tool_call("bash", command="git status")]},
            {"text": "done"},
        ])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".git"))
        os.makedirs(os.path.join(env.project, "sub", ".git", "hooks"))
        import subprocess
        subprocess.run(["git", "init", "-q", env.project], check=True)
        git_config = read(os.path.join(env.project, ".git", "config"))
        write_json(self.project_settings(env), {"allow": ["write_file", "bash(git status)"]})
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertEqual(read(os.path.join(env.project, ".git", "config")), git_config)
        self.assertFalse(os.path.exists(os.path.join(env.project, "sub", ".git", "hooks",
                                                     "pre-commit")))
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))
        results = [m["content"] for m in env.transcript() if m["role"] == "tool"]
        self.assertIn(ASK_USER, results[0])
        self.assertIn(ASK_USER, results[1])

    def test_a_persons_answer_can_allow_it_for_that_call(self):
        env = Env([
            {"tool_calls": [tool_call("write_file", path=".agent/notes.txt", content="hi")]},
            {"text": "written"},
        ])
        self.addCleanup(env.close)
        write_json(self.project_settings(env), {"allow": ["write_file"]})
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "write")
        req = next_approval(s)  # None: it ran without asking, the failure this test is for
        self.assertIsNotNone(req, "the write into .agent/ was not asked about")
        self.assertEqual(req.tool, "write_file")
        self.assertTrue(req.requires_person)
        # The daemon checks it, not the client: an answer that no person typed, or an
        # "always" with a rule the daemon did not propose, is refused and the call stays open.
        with self.assertRaises(grpc.RpcError) as e:
            api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                               decision=pb.DECISION_ALLOW_ONCE, client_name="t"),
                             timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("only a person may allow", e.exception.details())
        with self.assertRaises(grpc.RpcError) as e:
            api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                               decision=pb.DECISION_ALLOW_ALWAYS,
                                               rules=["write_file(**)"], client_name="t"),
                             timeout=10, metadata=PERSON)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                           decision=pb.DECISION_ALLOW_ONCE, client_name="t"),
                         timeout=10, metadata=PERSON)
        collect_until_turns_end(s)
        self.assertEqual(read(os.path.join(env.project, ".agent", "notes.txt")), "hi")
        s.cancel()


class AutomaticApprovers(unittest.TestCase):
    def test_a_yes_client_without_a_terminal_does_not_answer_for_a_person(self):
        # `agent --yes "…"` answers approval requests on its own when the session asks
        # (here: a person switched the session to ask mode while the turn ran).
        env = Env(lambda e: [
            # In the project: the sandbox's /tmp is its own (a fifo outside is not seen).
            {"tool_calls": [tool_call("bash", command="read line < gate")]},
            {"tool_calls": [tool_call("write_file", path=".agent/settings.json",
                                      content='{"allow": ["bash"]}')]},
            {"expect": {"last_message_contains": "only a person may allow"}, "text": "asked"},
        ])
        self.addCleanup(env.close)
        os.mkfifo(os.path.join(env.project, "gate"))
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        p = env.popen_agent("--yes", "--json", "go")
        self.addCleanup(lambda: (p.kill(), p.communicate()))
        # The bash call blocks on the fifo until the session is in ask mode.
        with open(os.path.join(env.project, "gate"), "w") as gate:
            sid = env.session_ids()[0]
            api.stub.SetPolicy(pb.SetPolicyRequest(session_id=sid, mode=pb.POLICY_MODE_ASK),
                               timeout=10)
            gate.write("go\n")
        out, err = p.communicate(timeout=60)
        self.assertFalse(os.path.exists(os.path.join(env.project, ".agent", "settings.json")))
        self.assertIn("only a person may allow", json.dumps(env.transcript(sid)))
        self.assertEqual(env.stats()["expect_failed"], 0)


class Spellings(unittest.TestCase):
    def test_a_deny_rule_is_not_bypassed_by_spelling_the_command_differently(self):
        spellings = ["command rm x", "env rm x", "\\rm x", "'rm' x", "/bin/rm x",
                     "time -p rm x", "nice rm x", "echo x | xargs rm", "eval 'rm x'",
                     "bash -c 'rm x'", "sh -c 'rm x'", "exec rm x"]
        replies = [{"tool_calls": [tool_call("bash", command=c)]} for c in spellings]
        replies.append({"text": "done"})
        env = Env(replies)
        self.addCleanup(env.close)
        write_json(os.path.join(env.project, ".agent", "settings.json"),
                   {"allow": ["bash"], "deny": ["bash(rm *)"]})
        with open(os.path.join(env.project, "x"), "w") as f:
            f.write("keep me\n")
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertTrue(os.path.exists(os.path.join(env.project, "x")))
        results = [m["content"] for m in env.transcript() if m["role"] == "tool"]
        self.assertEqual(len(results), len(spellings))
        for command, result in zip(spellings, results):
            self.assertIn("Denied", result, command)


class Workdir(unittest.TestCase):
    def test_a_relative_workdir_over_raw_grpc_is_an_error(self):
        import grpc
        env = Env([])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        with self.assertRaises(grpc.RpcError) as e:
            api.stub.CreateSession(pb.CreateSessionRequest(workdir="project"), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("absolute", e.exception.details())


class BrokenRuleFiles(unittest.TestCase):
    def test_a_rule_file_that_does_not_parse_stops_gated_tools(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="rm -rf important")]},
            {"expect": {"last_message_contains": "config.json"}, "text": "stopped"},
        ])
        self.addCleanup(env.close)
        config = os.path.join(env.dir, "config", "agent", "config.json")
        os.makedirs(os.path.dirname(config))
        with open(config, "w") as f:
            f.write('{\n  "allow": ["bash"],\n  "deny": ["bash(rm *)", "bash("]\n}\n')
        os.makedirs(os.path.join(env.project, "important"))
        r = env.agent("--json", "--yes", "clean up")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertTrue(os.path.isdir(os.path.join(env.project, "important")))
        result = [m["content"] for m in env.transcript() if m["role"] == "tool"][0]
        self.assertIn("config.json", result)
        self.assertIn("config.json:3:", result)  # file:line:column
        # The attached client was told, and so is `agent daemon status`.
        self.assertIn("config.json", r.stdout)
        st = env.agent("daemon", "status")
        self.assertIn("config.json", st.stdout + st.stderr)


if __name__ == "__main__":
    unittest.main()
