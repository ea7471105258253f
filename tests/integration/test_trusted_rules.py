"""A repository cannot grant permissions through its own .agent/settings.json: its allow rules
count only once a person trusted them for that project (`agent trust`, "allow always")."""
import json
import os
import unittest

from harness import Env, tool_call
from test_multi_client import Api, collect_until_turns_end, kind
from test_terminal import TMUX, Terminal

NOT_TRUSTED = "you have not trusted for this project"


def ship_settings(env, settings):
    """What a clone ships: the project's own settings file."""
    os.makedirs(os.path.join(env.project, ".agent"), exist_ok=True)
    with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
        json.dump(settings, f)


def store(env):
    path = os.path.join(env.dir, "state", "agent", "trusted-rules.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {p: e["rules"] for p, e in json.load(f)["projects"].items()}


class TrustedRules(unittest.TestCase):
    def test_a_cloned_bash_star_rule_is_ignored_until_trusted(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="touch pwned")]},
            {"text": "blocked"},
            {"tool_calls": [tool_call("bash", command="touch trusted")]},
            {"text": "ran"},
        ])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(*)"]})
        r = env.agent("go")
        self.assertEqual(r.returncode, 4, r.stderr)  # a call denied by the policy
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))
        self.assertIn(NOT_TRUSTED + ": bash(*)", r.stderr)
        self.assertIn("agent trust", r.stderr)
        # Without a terminal and without --yes: listed, refused.
        t = env.agent("trust")
        self.assertEqual(t.returncode, 1, t.stderr)
        self.assertIn("bash(*)", t.stdout)
        self.assertIn("--yes", t.stderr)
        self.assertEqual(store(env), {})
        self.assertIn("trusted 1 rule(s)", env.trust_rules().stdout)
        self.assertEqual(store(env), {os.path.realpath(env.project): ["bash(*)"]})
        r = env.agent("go")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(env.project, "trusted")))
        self.assertNotIn(NOT_TRUSTED, r.stderr)

    def test_a_project_cloned_again_at_the_same_path_does_not_inherit_trust(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="touch trusted")]},
            {"text": "ran"},
            {"tool_calls": [tool_call("bash", command="touch pwned")]},
            {"text": "blocked"},
        ])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(touch *)"]})
        env.trust_rules()
        self.assertEqual(env.agent("go").returncode, 0)
        self.assertTrue(os.path.exists(os.path.join(env.project, "trusted")))
        # rm -rf and a new clone at the same path, shipping the same rule.
        import shutil
        shutil.rmtree(env.project)
        os.makedirs(env.project)
        ship_settings(env, {"allow": ["bash(touch *)"]})
        r = env.agent("go")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))
        self.assertIn(NOT_TRUSTED + ": bash(touch *)", r.stderr)
        self.assertIn("bash(touch *)", env.agent("trust").stdout)

    def test_a_changed_rule_needs_trust_again_and_daemon_status_lists_it(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="make all")]},
            {"text": "blocked"},
        ])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(make test)"]})
        env.trust_rules()
        ship_settings(env, {"allow": ["bash(make test)", "bash(make *)"]})
        listed = env.agent("trust")
        self.assertEqual(listed.returncode, 1)
        self.assertIn("allows 1 rule(s)", listed.stdout)
        self.assertIn("bash(make *)", listed.stdout)
        self.assertNotIn("bash(make test)", listed.stdout)
        r = env.agent("go")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(NOT_TRUSTED + ": bash(make *)", r.stderr)
        status = env.agent("daemon", "status")
        self.assertIn(NOT_TRUSTED + ": bash(make *)", status.stdout + status.stderr)
        self.assertEqual(env.agent("trust", "--revoke").returncode, 0)
        self.assertIn("allows 2 rule(s)", env.agent("trust").stdout)

    def test_project_deny_rules_apply_untrusted(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="rm -rf build")]},
            {"expect": {"last_message_contains": "Denied by a permission rule"},
             "text": "blocked"},
        ])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, "build"))
        ship_settings(env, {"deny": ["bash(rm *)"]})
        r = env.agent("--yes", "clean")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertTrue(os.path.isdir(os.path.join(env.project, "build")))
        self.assertNotIn(NOT_TRUSTED, r.stderr)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_allow_always_is_trusted_at_once(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo hi")]},
            {"text": "ran"},
            {"tool_calls": [tool_call("bash", command="echo hi")]},
            {"text": "ran again"},
        ])
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "one")
        for e in s:
            if kind(e) == "approval_requested":
                req = e.approval_requested.approval
                break
        api.stub.Approve(pb.ApproveRequest(session_id=sid, call_id=req.call_id,
                                           decision=pb.DECISION_ALLOW_ALWAYS, client_name="t"),
                         timeout=10)
        collect_until_turns_end(s)
        # The prefix rule proposed first (`echo hi` -> `echo *`) is what "always" trusted.
        self.assertEqual(store(env), {os.path.realpath(env.project): ["bash(echo *)"]})
        api.prompt(sid, "two")
        second = collect_until_turns_end(s)
        self.assertFalse([e for e in second if kind(e) == "approval_requested"])
        self.assertFalse([e for e in second if kind(e) == "notice"
                          and NOT_TRUSTED in e.notice.text])
        s.cancel()
        # A new session (another client) is not told either.
        r = env.agent("trust")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("every allow rule", r.stdout)

    def test_a_shipped_settings_local_json_is_not_trusted_either(self):
        # A clone can force-add the personal file; its allow rules need trust like the others.
        env = Env([
            {"tool_calls": [tool_call("bash", command="touch pwned")]},
            {"text": "blocked"},
        ])
        self.addCleanup(env.close)
        os.makedirs(os.path.join(env.project, ".agent"), exist_ok=True)
        with open(os.path.join(env.project, ".agent", "settings.local.json"), "w") as f:
            json.dump({"allow": ["bash(touch *)"]}, f)
        r = env.agent("go")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))
        self.assertIn("bash(touch *)", env.agent("trust").stdout)

    def test_an_untrusted_rule_is_asked_about_in_ask_mode_and_told_once(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="make all")]},
            {"text": "asked"},
            {"text": "second turn"},
        ])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(make *)", "bash(\x1b[2Jevil)"]})
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.create(policy=pb.POLICY_MODE_ASK)
        s = api.attach(sid, "t")
        next(s)
        api.prompt(sid, "one")
        notices = []
        for e in s:
            if kind(e) == "notice":
                notices.append(e.notice.text)
            if kind(e) == "approval_requested":
                api.stub.Approve(pb.ApproveRequest(
                    session_id=sid, call_id=e.approval_requested.approval.call_id,
                    decision=pb.DECISION_DENY, client_name="t"), timeout=10)
            if kind(e) == "turn_ended":
                break
        told = [n for n in notices if NOT_TRUSTED in n]
        self.assertEqual(len(told), 1, notices)
        self.assertIn("allows 2 rule(s)", told[0])
        self.assertIn("bash(^[[2Jevil)", told[0])  # repository content: no escape reaches a tty
        self.assertNotIn("\x1b", told[0])
        api.prompt(sid, "two")
        second = collect_until_turns_end(s)
        self.assertFalse([e for e in second if kind(e) == "notice"])
        s.cancel()

    def test_a_symlinked_settings_file_is_neither_followed_nor_trusted(self):
        env = Env([
            {"tool_calls": [tool_call("bash", command="touch pwned")]},
            {"text": "blocked"},
        ])
        self.addCleanup(env.close)
        elsewhere = os.path.join(env.dir, "elsewhere.json")
        with open(elsewhere, "w") as f:
            json.dump({"allow": ["bash(*)"]}, f)
        os.makedirs(os.path.join(env.project, ".agent"))
        os.symlink(elsewhere, os.path.join(env.project, ".agent", "settings.json"))
        t = env.agent("trust", "--yes")
        self.assertEqual(t.returncode, 1, t.stdout)
        self.assertIn("symbolic link", t.stderr)
        self.assertEqual(store(env), {})
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(env.project, "pwned")))



@unittest.skipIf(TMUX is None, "tmux is not installed")
class TrustOnATerminal(unittest.TestCase):
    def test_slash_trust_asks_and_trusts_exactly_the_rules_shown(self):
        env = Env([{"text": "hello"}])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(make *)"]})
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "/trust")
        screen = term.wait_for(w, "trust these rules for this project? [y/N]")
        self.assertIn("  bash(make *)", screen)
        # A rule added between the list and the answer is not trusted with it.
        ship_settings(env, {"allow": ["bash(make *)", "bash(*)"]})
        term.type_line(w, "y")
        term.wait_for(w, "trusted 1 rule(s) for this project")
        self.assertEqual(store(env), {os.path.realpath(env.project): ["bash(make *)"]})
        term.type_line(w, "/trust")
        screen = term.wait_for(w, "allows 1 rule(s)")
        term.type_line(w, "n")
        term.wait_for(w, "nothing trusted")
        self.assertEqual(store(env), {os.path.realpath(env.project): ["bash(make *)"]})

    def test_agent_trust_asks_on_a_terminal(self):
        env = Env([])
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(make *)"]})
        term = Terminal(self, env)
        w = term.start("main", "trust")
        screen = term.wait_for(w, "trust these rules for this project? [y/N]")
        self.assertIn("  bash(make *)", screen)
        term.type_line(w, "y")
        self.assertEqual(term.wait_exit(w), 0)
        self.assertEqual(store(env), {os.path.realpath(env.project): ["bash(make *)"]})


if __name__ == "__main__":
    unittest.main()
