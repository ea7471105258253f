"""Lifecycle and discoverability (issue 26): `agent --help` lists every subcommand, `/help`
every slash command, the man page every exit status; `agent mcp add` refuses a command the
daemon would not find;
`agent daemon stop` with turns running names them and asks (a terminal) or needs --force.
The restart of a crashed daemon by its clients is in test_client_lifecycle."""
import json
import os
import re
import stat
import unittest

from harness import Env, process_alive, tool_call
from test_terminal import TMUX, Terminal

HERE = os.path.dirname(os.path.abspath(__file__))
MAN = os.path.join(HERE, "..", "..", "packaging", "man", "agent.1.in")


class Help(unittest.TestCase):
    def test_agent_help_lists_every_subcommand(self):
        env = Env([])
        self.addCleanup(env.close)
        r = env.agent("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for sub in ("ls", "attach", "resume", "fork", "rm", "status", "undo", "diff", "trust",
                    "mcp", "daemon"):
            self.assertRegex(r.stdout, r"\n  agent %s\b" % sub, sub)
        # Each one listed is one the client runs (none is a prompt sent to the model).
        for sub in re.findall(r"\n  agent ([a-z]+)", r.stdout):
            h = env.agent(sub, "--help")
            self.assertEqual(h.returncode, 0, (sub, h.stderr))
        self.assertEqual(env.requests(), [])
        # The subcommands' descriptions start in one column.
        lines = [l for l in r.stdout.split("Subcommands:\n")[1].splitlines()
                 if l.startswith("  agent ")]
        columns = {re.search(r"\S  +\S", l).end() - 1 for l in lines}
        self.assertEqual(len(columns), 1, lines)

    def test_the_man_page_lists_every_exit_status(self):
        with open(MAN) as f:
            page = f.read()
        section = page.split(".SH EXIT STATUS")[1].split(".SH ")[0]
        for code in ("0", "1", "2", "3", "4", "129, 143", "130"):
            self.assertIn("\n.B %s\n" % code, section, code)


class McpChecks(unittest.TestCase):
    def config(self, env):
        return os.path.join(env.dir, "config", "agent", "config.json")

    def test_add_refuses_a_command_the_daemon_would_not_find(self):
        env = Env([])
        self.addCleanup(env.close)
        r = env.agent("mcp", "add", "srv", "--", "no-such-mcp-server-xyz", "--stdio")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("command not found: no-such-mcp-server-xyz", r.stderr)
        not_exec = os.path.join(env.dir, "srv.sh")
        with open(not_exec, "w") as f:
            f.write("#!/bin/sh\n")
        r = env.agent("mcp", "add", "srv", "--", not_exec)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is not an executable file", r.stderr)
        r = env.agent("mcp", "add", "srv", "--", os.path.join(env.dir, "missing"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("command not found", r.stderr)
        self.assertFalse(os.path.exists(self.config(env)))  # nothing written
        # On PATH, as the daemon looks it up: accepted.
        os.chmod(not_exec, stat.S_IRWXU)
        r = env.agent("mcp", "add", "srv", "--", "srv.sh",
                      env={"PATH": env.dir + ":" + env.env.get("PATH", "/usr/bin:/bin")})
        self.assertEqual(r.returncode, 0, r.stderr)


def sleeping_turn(test, env):
    """Starts a one-shot whose bash call sleeps; returns it once the call runs."""
    p = env.popen_agent("--yes", "--json", "wait for it")
    test.addCleanup(p.stderr.close)
    test.addCleanup(p.stdout.close)
    test.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(30)))
    for line in p.stdout:
        if json.loads(line)["type"] == "tool_call_ready":
            break
    return p


class DaemonStop(unittest.TestCase):
    def make(self):
        env = Env(lambda e: [{"tool_calls": [tool_call(
            "bash", command="cd . && sleep 30 # " + e.dir)]}, {"text": "stopped early"}])
        self.addCleanup(env.close)
        return env

    def test_without_a_terminal_it_names_the_turns_and_needs_force(self):
        env = self.make()
        p = sleeping_turn(self, env)
        pids = env.daemon_pids()
        r = env.agent("daemon", "stop")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        sid = json.loads(env.agent("ls", "--json").stdout)[0]["id"]
        self.assertIn(sid[:8] + "  running  wait for it", r.stderr)
        self.assertIn("--force", r.stderr)
        self.assertTrue(all(process_alive(pid) for pid in pids))
        r = env.agent("daemon", "stop", "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("agentd stopped", r.stdout)
        self.assertEqual(p.wait(timeout=30), 130)  # its turn was cancelled by the stop

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_on_a_terminal_it_asks_and_no_keeps_the_daemon(self):
        env = self.make()
        sleeping_turn(self, env)
        pids = env.daemon_pids()
        term = Terminal(self, env)
        w = term.start("stop", "daemon", "stop")
        term.wait_for(w, "Cancel it and stop agentd? [y/N]")
        self.assertIn("running  wait for it", term.screen(w))
        term.type_line(w, "n")
        self.assertEqual(term.wait_exit(w), 1)
        self.assertIn("not stopped", term.screen(w))
        self.assertTrue(all(process_alive(pid) for pid in pids))
        w = term.start("stop2", "daemon", "stop")
        term.wait_for(w, "Cancel it and stop agentd? [y/N]")
        term.type_line(w, "y")
        self.assertEqual(term.wait_exit(w), 0)
        self.assertIn("agentd stopped", term.screen(w))


@unittest.skipIf(TMUX is None, "tmux is not installed")
class SlashHelp(unittest.TestCase):
    def test_help_lists_every_slash_command(self):
        env = Env([])
        self.addCleanup(env.close)
        term = Terminal(self, env, rows=60)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "/help")
        screen = term.wait_for(w, "Tab completes")
        for c in ("/help", "/status", "/context", "/compact", "/clear", "/fork", "/undo",
                  "/rewind", "/diff", "/sessions", "/model", "/allow", "/trust", "/mcp",
                  "/last", "/detach"):
            self.assertIn(c, screen, c)
        term.type_line(w, "/mcp")
        term.wait_for(w, "no MCP servers")


if __name__ == "__main__":
    unittest.main()
