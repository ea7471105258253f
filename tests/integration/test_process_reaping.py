"""Every program the daemon starts is reaped (issue 37): a daemon that runs for weeks must not
fill the process table with zombies. Many calls of each kind (bash in the sandbox and out of
it, a command whose background child outlives it, a background job that ends, a hook, the
checkpoints' git), then the daemon's children are counted: none may be a zombie. As root and
as an unprivileged user: bwrap forks differently in a user namespace, leaving its sandbox's init
to the daemon."""
import json
import os
import stat
import sys
import unittest

from harness import tool_call
from test_sandbox import SandboxWorld, bwrap_works, unused_uid

CALLS = 10


def children(pid):
    """(pid, state letter) of each child of every thread of `pid`, from /proc."""
    found = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            try:
                with open("/proc/%d/stat" % kid) as f:
                    stat = f.read()
            except OSError:
                continue  # reaped between the two reads
            found.append((kid, stat[stat.rfind(")") + 2:][:1]))
    return found


def script():
    calls = []
    for i in range(CALLS):
        calls.append({"tool_calls": [tool_call("bash", command="echo call %d" % i)]})
    # bash exits at once; its background child is ended by the daemon and must be reaped too.
    calls.append({"tool_calls": [tool_call("bash", command="sleep 5 & echo left")]})
    calls.append({"tool_calls": [tool_call("bash", command="echo job", background=True)]})
    calls.append({"tool_calls": [tool_call("bash_job", job=1)]})
    calls.append({"text": "done"})
    return calls


class Reaping(unittest.TestCase):
    def check(self, uid=None, extra_env=None):
        world = SandboxWorld(script(), uid=uid, extra_env=extra_env)
        self.addCleanup(world.close)
        if extra_env is None and not bwrap_works(world.prefix()):
            self.skipTest("bwrap cannot make its namespaces here")
        hook = os.path.join(world.home, "hook.py")
        world.write(hook, "#!%s\nimport json, sys\njson.load(sys.stdin)\n" % sys.executable)
        os.chmod(hook, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        world.write(os.path.join(world.home, ".config", "agent", "config.json"),
                    json.dumps({"hooks": {"PostToolUse": [{"hooks": [
                        {"type": "command", "command": hook}]}]}}))
        if uid is not None:
            for path in (hook, os.path.join(world.home, ".config", "agent", "config.json")):
                os.lchown(path, uid, uid)
        r = world.agent("--yes", "go")
        self.assertEqual(r.returncode, 0, r.stderr)
        results = [m["content"] for m in world.transcript() if m["role"] == "tool"]
        self.assertEqual(len(results), CALLS + 3, results)
        self.assertIn("call %d" % (CALLS - 1), results[CALLS - 1])
        daemon, = world.daemon_pids()
        zombies = [pid for pid, state in children(daemon) if state == "Z"]
        self.assertEqual(zombies, [], children(daemon))

    def test_no_zombie_after_many_calls_in_the_sandbox(self):
        self.check()

    def test_no_zombie_after_many_calls_in_the_sandbox_as_a_user(self):
        if os.getuid() != 0:
            self.skipTest("needs root to pick a user")  # the case above is this one then
        self.check(uid=unused_uid())

    def test_no_zombie_after_many_calls_without_the_sandbox(self):
        self.check(extra_env={"AGENT_SANDBOX": "off"})


if __name__ == "__main__":
    unittest.main()
