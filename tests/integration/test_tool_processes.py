"""A program started by a tool cannot act as the user towards the daemon (issue 24): with no
sandbox between them, the daemon tells a tool's process from a person's client by its
ancestry and refuses TrustProjectRules, Approve, SetPolicy, MCP approvals and an editor's MCP servers from
it."""
import json
import os
import unittest

from harness import BIN, HERE, Env, tool_call


def shell_env(env):
    """What a tool's command must name to reach this test's daemon (AGENT_* is not passed)."""
    return "AGENT_SOCKET=%s XDG_STATE_HOME=%s/state XDG_CONFIG_HOME=%s/config" % (
        env.socket, env.dir, env.dir)


def ship_settings(env, settings):
    os.makedirs(os.path.join(env.project, ".agent"), exist_ok=True)
    with open(os.path.join(env.project, ".agent", "settings.json"), "w") as f:
        json.dump(settings, f)


def tool_results(env):
    return [m["content"] for m in env.transcript() if m["role"] == "tool"]


# What these test is the daemon's own refusal, which matters where the sandbox does not hold the
# program (sandbox off, an escalated command); inside it the socket is not even reachable.
NO_SANDBOX = {"AGENT_SANDBOX": "off"}


class ToolProcesses(unittest.TestCase):
    def test_agent_trust_yes_run_by_a_tool_is_refused(self):
        env = Env(lambda e: [
            {"tool_calls": [tool_call("bash", command="%s %s/agent trust --yes; echo rc=$?" % (
                shell_env(e), BIN))]},
            # A setsid'd grandchild whose parent exited is still the daemon's descendant (the
            # daemon is its subreaper); the command waits for it on a fifo.
            {"tool_calls": [tool_call("bash", command=(
                "mkfifo {d}/f && (setsid sh -c '{e} {b}/agent trust --yes > {d}/late.txt 2>&1;"
                " echo rc=$? >> {d}/late.txt; echo x > {d}/f' &); read x < {d}/f;"
                " cat {d}/late.txt").format(d=e.dir, e=shell_env(e), b=BIN))]},
            {"text": "done"},
        ], extra_env=NO_SANDBOX)
        self.addCleanup(env.close)
        ship_settings(env, {"allow": ["bash(*)"]})
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = tool_results(env)[0]
        self.assertIn("a program started by a tool", first)
        self.assertNotIn("rc=0", first)
        self.assertNotIn("trusted 1 rule", first)
        second = tool_results(env)[1]
        self.assertIn("a program started by a tool", second)
        self.assertNotIn("rc=0", second)
        # Still untrusted: a person's own `agent trust` lists it.
        listed = env.agent("trust")
        self.assertIn("bash(*)", listed.stdout)
        self.assertFalse(os.path.exists(os.path.join(env.dir, "state", "agent",
                                                     "trusted-rules.json")))

    def test_approve_setpolicy_trust_and_mcp_approval_from_a_tool_are_refused(self):
        script = os.path.join(HERE, "tool_process_calls.py")
        env = Env(lambda e: [
            {"tool_calls": [tool_call("bash", command="/usr/bin/python3 %s %s %s" % (
                script, e.socket, e.project))]},
            {"text": "done"},
        ], extra_env=NO_SANDBOX)
        self.addCleanup(env.close)
        r = env.agent("--yes", "go")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = tool_results(env)[0]
        for call in ("Approve", "SetPolicy", "TrustProjectRules", "ApproveMcpServer",
                     "SetSessionMcpServers"):
            self.assertIn("%s PERMISSION_DENIED refused: a program started by a tool" % call,
                          lines)
        # The same calls from the person's side reach the session checks (not refused).
        import subprocess
        out = subprocess.run(["/usr/bin/python3", script, env.socket, env.project],
                             capture_output=True, text=True, timeout=60).stdout
        self.assertIn("Approve NOT_FOUND", out)
        self.assertIn("SetPolicy NOT_FOUND", out)
        self.assertIn("SetSessionMcpServers NOT_FOUND", out)


if __name__ == "__main__":
    unittest.main()
