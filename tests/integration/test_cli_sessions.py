"""Sessions from the command line: which project a directory belongs to, `agent ls` (aligned
columns with a header, --json, --long), `agent rm` of several ids and --older-than, and
`agent daemon stop` returning once the daemon has exited."""
import json
import os
import re
import unittest

import grpc_client
from harness import Env, tool_call
from test_project_context import raw_reply_with_cached_tokens


class Project(unittest.TestCase):
    def test_a_subdirectory_of_a_repository_uses_the_repositorys_sessions(self):
        env = Env([{"text": "one"}, {"text": "two"}])
        self.addCleanup(env.close)
        os.mkdir(os.path.join(env.project, ".git"))  # a work tree's top (git is not run)
        sub = os.path.join(env.project, "src", "deep")
        os.makedirs(sub)
        r = env.agent("hello from sub", cwd=sub)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(env.session_ids()), 1)  # keyed by the project, not by sub/
        self.assertFalse(os.path.exists(os.path.join(sub, ".agent")))
        for where in (env.project, sub):
            listed = env.agent("ls", cwd=where)
            self.assertIn("hello from sub", listed.stdout, where)
        r = env.agent("-c", "again", cwd=os.path.join(env.project, "src"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(env.session_ids()), 1)
        self.assertEqual(len([m for m in env.transcript() if m["role"] == "user"]), 2)

    def test_a_nested_agent_dir_is_its_own_project(self):
        env = Env([{"text": "one"}])
        self.addCleanup(env.close)
        os.mkdir(os.path.join(env.project, ".git"))
        tool = os.path.join(env.project, "tool")
        os.makedirs(os.path.join(tool, ".agent"))
        os.makedirs(os.path.join(tool, "src"))
        r = env.agent("hello", cwd=os.path.join(tool, "src"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.listdir(env.sessions_dir(tool)))
        self.assertEqual(env.session_ids(), [])


class Listing(unittest.TestCase):
    def setUp(self):
        # The first session's request is retried once; the third's reports cached tokens.
        usage = {"prompt_tokens": 1000, "completion_tokens": 100}
        self.env = Env([{"status": 503, "times": 1, "retry_after": 0},
                        {"text": "one", "usage": usage}, {"text": "two", "usage": usage},
                        {"raw_sse": raw_reply_with_cached_tokens("three", 23000, 50, 15000)}])
        self.addCleanup(self.env.close)
        for prompt in ("first task", "second task", "third task"):
            r = self.env.agent(prompt)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_ls_has_a_header_and_aligned_columns(self):
        r = self.env.agent("ls")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["ID", "STATE", "MSGS", "UPDATED", "ATTACHED", "TITLE"])
        self.assertEqual(len(lines), 4)
        title_at = lines[0].index("TITLE")
        msgs_at = lines[0].index("MSGS")
        for line in lines[1:]:
            self.assertRegex(line[title_at:], r"^(first|second|third) task$")
            self.assertRegex(line[msgs_at:], r"^3 +\d+s ago +0 +\w")
        self.assertIn("third task", lines[1])  # newest first

    def test_ls_json_and_long(self):
        r = self.env.agent("ls", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        sessions = json.loads(r.stdout)
        self.assertEqual(sorted(s["id"] for s in sessions), self.env.session_ids())
        self.assertTrue(all(isinstance(s["messages"], int) for s in sessions))
        self.assertTrue(all(s["workdir"] == self.env.project for s in sessions))
        by_title = {s["title"]: s["usage"] for s in sessions}
        self.assertEqual(by_title["first task"]["retries"], 1)
        self.assertEqual(by_title["first task"]["requests"], 1)
        self.assertEqual(by_title["third task"]["cached_tokens"], 15000)
        r = self.env.agent("ls", "--long")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0].split(),
                         ["ID", "STATE", "MSGS", "UPDATED", "ATTACHED", "IN", "OUT", "CACHED",
                          "WRITTEN", "REQS", "RETRIES", "COST", "TITLE"])
        at = lines[0].index("IN")
        rows = {line[lines[0].index("TITLE"):]: line[at:] for line in lines[1:]}
        # Aligned under the header: IN OUT CACHED WRITTEN REQS RETRIES COST, then the title.
        self.assertRegex(rows["first task"], r"^1000 +100 +0 +0 +1 +1 +- +first task$")
        self.assertRegex(rows["second task"], r"^1000 +100 +0 +0 +1 +0 +- +second task$")
        self.assertRegex(rows["third task"], r"^23k +50 +15k +0 +1 +0 +- +third task$")
        for line in lines[1:]:
            for column in ("OUT", "CACHED", "WRITTEN", "REQS", "RETRIES", "COST"):
                self.assertNotEqual(line[lines[0].index(column)], " ", (column, line))

    def test_rm_takes_several_ids_and_says_what_it_removed(self):
        ids = self.env.session_ids()
        r = self.env.agent("rm", ids[0][:10], ids[1])
        self.assertEqual(r.returncode, 0, r.stderr)
        removed = re.findall(r"^removed (\S+)", r.stdout, re.M)
        self.assertEqual(sorted(removed), ids[:2])
        self.assertEqual(self.env.session_ids(), ids[2:])
        r = self.env.agent("rm", "nosuchid", ids[2])
        self.assertEqual(r.returncode, 1)
        self.assertIn("nosuchid", r.stderr)
        self.assertEqual(self.env.session_ids(), [])

    def test_rm_older_than(self):
        r = self.env.agent("rm", "--older-than", "30d")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no session here is older than 30d", r.stdout)
        self.assertEqual(len(self.env.session_ids()), 3)
        r = self.env.agent("rm", "--older-than", "0s")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(re.findall(r"^removed ", r.stdout, re.M)), 3)
        self.assertEqual(self.env.session_ids(), [])


def running(pid):
    """True while `pid` exists and is not a zombie (an exited daemon nobody reaped)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


class RemoveKeepsRunning(unittest.TestCase):
    def test_older_than_keeps_a_session_whose_turn_runs(self):
        env = Env(lambda e: [{"tool_calls": [tool_call(
            "bash", command="cd . && sleep 30 # " + e.dir)]}, {"text": "done"}])
        self.addCleanup(env.close)
        p = env.popen_agent("--yes", "--json", "wait")
        self.addCleanup(p.stderr.close)
        self.addCleanup(p.stdout.close)
        for line in p.stdout:
            if "tool_call_ready" in line:
                break
        sid, = env.session_ids()
        r = env.agent("rm", "--older-than", "0s")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kept %s  (running)" % sid, r.stdout)
        self.assertEqual(env.session_ids(), [sid])
        grpc_client.cancel(env.socket, sid)
        p.communicate(timeout=30)


class Stop(unittest.TestCase):
    def test_daemon_stop_returns_once_the_daemon_has_exited(self):
        env = Env([{"text": "hi"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("hello").returncode, 0)
        # An attached client makes the daemon's exit take longer than the socket's removal.
        watcher = env.popen_agent("attach", "-r")
        self.addCleanup(lambda: (watcher.poll() is None and watcher.kill(), watcher.wait(30)))
        self.addCleanup(watcher.stderr.close)
        self.addCleanup(watcher.stdout.close)
        watcher.stdout.readline()
        pids = env.daemon_pids()
        self.assertEqual(len(pids), 1)
        r = env.agent("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("agentd stopped", r.stdout)
        self.assertFalse(running(pids[0]))
        # A deliberate stop is not a restart: the watcher leaves instead of reconnecting.
        self.assertEqual(watcher.wait(timeout=10), 1)
        self.assertIn("agentd was stopped", watcher.stderr.read())


if __name__ == "__main__":
    unittest.main()
