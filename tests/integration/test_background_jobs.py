"""bash with background: true (issue 24): a job outlives the turn that started it (in the
sandbox too, where bwrap's --die-with-parent follows the spawning thread), bash_job reads it
in a later turn, and the job ends with the session when the daemon stops."""
import os
import time
import unittest

from harness import Env, processes, tool_call


def tool_results(env):
    return [m["content"] for m in env.transcript() if m["role"] == "tool"]


class BackgroundJobs(unittest.TestCase):
    def test_a_job_outlives_its_turn_is_read_later_and_ends_with_the_daemon(self):
        marker = "agentd-job-%d" % os.getpid()
        env = Env([
            {"tool_calls": [tool_call("bash", command="echo serving; exec -a %s sleep 300" % marker,
                                      background=True)]},
            {"text": "started"},
            {"tool_calls": [tool_call("bash_job", job=1)]},
            {"text": "still running"},
        ])
        self.addCleanup(env.close)

        def jobs():
            return [pid for pid, cmd in processes() if cmd.startswith(marker.encode() + b"\0")]
        self.addCleanup(lambda: [os.kill(p, 9) for p in jobs()])
        r = env.agent("--yes", "start the server")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[started background job 1;", tool_results(env)[0])
        r = env.agent("--yes", "-c", "is it up?")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = tool_results(env)[1]
        self.assertIn("[job 1 running: echo serving; exec -a %s sleep 300]" % marker, report)
        self.assertIn("serving", report)
        self.assertTrue(jobs())
        self.assertEqual(env.agent("daemon", "stop").returncode, 0)
        for _ in range(100):
            if not jobs():
                break
            time.sleep(0.05)  # ended as the daemon stops; not our child to wait for
        self.assertEqual(jobs(), [])
        self.assertEqual(env.stats()["rejected"], 0)


if __name__ == "__main__":
    unittest.main()
