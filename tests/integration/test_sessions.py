"""Sessions that are never lost or broken: crash recovery, resume, the registry, damaged
files, fork/rm/prefixes, and compaction."""
import json
import os
import unittest

from harness import Env, tool_call, transcript_problems
import grpc_client


def read_events_until(proc, predicate):
    """Reads JSON event lines from `proc` until one satisfies `predicate`; returns them."""
    seen = []
    for line in proc.stdout:
        e = json.loads(line)
        seen.append(e)
        if predicate(e):
            return seen
    raise AssertionError("stream ended before the event came: %r" % seen[-3:])


class CrashRecovery(unittest.TestCase):
    """kill -9 of agentd at many points of a multi-step turn; then the session comes back
    sealed, `agent -r` continues it, and the strict server accepts the next request."""

    def turn(self, env):
        marker = env.dir  # in the bash command, so cleanup can find a leftover tool
        return [
            {"text": "Looking around first. " * 3, "chunk_size": 2, "delay_ms": 5,
             "tool_calls": [tool_call("read_file", path="a.txt")]},
            {"tool_calls": [tool_call("bash", command="cd . && sleep 30 # " + marker)]},
            {"text": "All done, slowly. " * 5, "chunk_size": 1, "delay_ms": 20},
        ]

    def crash_and_resume(self, kill_when):
        env = Env(self.turn)
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "a.txt"), "w") as f:
            f.write("alpha\n")
        p = env.popen_agent("--yes", "--json", "do the task")
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stderr.close)
        events = read_events_until(p, kill_when)
        sid = events[0]["session_id"]  # the first line: session_started
        self.assertTrue(env.kill_daemon())
        p.wait(timeout=30)
        self.assertNotEqual(p.returncode, 0)
        env.kill_marked_processes()
        env.load_script([{"expect": {"last_user_contains": "carry on"}, "text": "resumed fine"}])
        # Any agent command brings the daemon back; the session loads sealed.
        r = env.agent("-r", sid[:6], "carry on")
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertIn("resumed fine", r.stdout)
        messages = env.transcript(sid)
        self.assertIsNone(transcript_problems(messages))
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(env.stats()["expect_failed"], 0)
        return messages

    def test_kill_while_the_first_reply_streams(self):
        self.crash_and_resume(lambda e: "text_delta" in e)

    def test_kill_right_after_a_tool_call_is_ready(self):
        self.crash_and_resume(lambda e: "tool_call_ready" in e
                              and e["tool_call_ready"]["call"]["name"] == "read_file")

    def test_kill_during_a_running_tool_seals_it_as_interrupted(self):
        messages = self.crash_and_resume(lambda e: "tool_call_ready" in e
                                         and e["tool_call_ready"]["call"]["name"] == "bash")
        tool_results = [m["content"] for m in messages if m["role"] == "tool"]
        self.assertTrue(any("interrupted" in c for c in tool_results), tool_results)

    def test_kill_while_the_final_answer_streams(self):
        seen = {"results": 0}

        def after_second_result(e):
            if "tool_result" in e:
                seen["results"] += 1
            return seen["results"] == 2 and "text_delta" in e
        self.crash_and_resume(after_second_result)

    def test_kill_while_waiting_for_approval(self):
        env = Env([{"tool_calls": [tool_call("write_file", path="w.txt", content="x")]},
                   {"expect": {"last_user_contains": "carry on"}, "text": "resumed fine"}])
        self.addCleanup(env.close)
        env.agent("daemon", "status")  # nothing running yet
        r = env.agent("ls")  # starts the daemon
        self.assertEqual(r.returncode, 0, r.stderr)
        pb, stub, channel = grpc_client.connect(env.socket)
        self.addCleanup(channel.close)
        s = stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, policy=pb.POLICY_MODE_ASK,
            model=pb.ModelConfig(base_url=env.env["AGENT_BASE_URL"], model="scripted")),
            timeout=10)
        stream = stub.Attach(pb.AttachRequest(session_id=s.id, client_name="watcher"), timeout=60)
        next(stream)  # the snapshot
        stub.SendPrompt(pb.SendPromptRequest(session_id=s.id, text="write it", client_name="w"),
                        timeout=10)
        for e in stream:
            if e.WhichOneof("kind") == "approval_requested":
                break
        stream.cancel()
        self.assertTrue(env.kill_daemon())
        r = env.agent("-r", s.id, "carry on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(env.project, "w.txt")))
        self.assertIsNone(transcript_problems(env.transcript(s.id)))
        self.assertEqual(env.stats()["rejected"], 0)


class Registry(unittest.TestCase):
    def test_ls_all_lists_sessions_of_every_project_after_a_restart(self):
        env = Env([{"text": "one"}, {"text": "two"}])
        self.addCleanup(env.close)
        other = os.path.join(env.dir, "other")
        os.makedirs(other)
        self.assertEqual(env.agent("first project").returncode, 0)
        self.assertEqual(env.agent("second project", cwd=other).returncode, 0)
        env.kill_daemon()
        r = env.agent("ls", "--all")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("first project", r.stdout)
        self.assertIn("second project", r.stdout)
        here = env.agent("ls")
        self.assertIn("first project", here.stdout)
        self.assertNotIn("second project", here.stdout)

    def test_damaged_files_are_reported_and_the_rest_stays_usable(self):
        env = Env([{"text": "fine"}, {"text": "still fine"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("good session").returncode, 0)
        good = env.session_ids()[0]
        d = env.sessions_dir()
        with open(os.path.join(d, "aaaatruncated.json"), "w") as f:
            f.write('[{"role": "user", "content": "hi"}, {"ro')
        with open(os.path.join(d, "bbbbbroken.json"), "w") as f:
            json.dump([{"role": "user", "content": "hi"},
                       {"role": "tool", "tool_call_id": "nope", "content": "x"}], f)
        env.kill_daemon()
        r = env.agent("-r", "aaaa", "hi")
        self.assertEqual(r.returncode, 1)
        self.assertIn("aaaatruncated.json", r.stderr)
        self.assertIn("not valid JSON", r.stderr)
        r = env.agent("-r", "bbbb", "hi")
        self.assertEqual(r.returncode, 1)
        self.assertIn("bbbbbroken.json", r.stderr)
        self.assertIn("breaks the transcript rule", r.stderr)
        r = env.agent("-r", good, "next")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("still fine", r.stdout)
        self.assertEqual(env.agent("daemon", "status").returncode, 0)


class JournalRecords(unittest.TestCase):
    """A journal record that parses but does not replay never wipes the session: what comes
    before it is loaded, it and what follows are kept beside the session, the person is told."""

    def test_a_bad_record_is_set_aside_and_the_session_goes_on(self):
        env = Env([{"text": "first answer"},
                   {"expect": {"last_user_contains": "carry on"}, "text": "resumed fine"},
                   {"text": "third"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("start").returncode, 0)
        sid = env.session_ids()[0]
        env.kill_daemon()
        journal = os.path.join(env.sessions_dir(), sid + ".journal")
        good = json.dumps({"role": "user", "content": "from the journal"}) + "\n"
        bad = json.dumps({"role": "tool", "tool_call_id": "nope", "content": "x"}) + "\n"
        after = json.dumps({"role": "user", "content": "after the bad one"}) + "\n"
        with open(journal, "a") as f:
            f.write(good + bad + after)
        r = env.agent("-r", sid, "carry on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("resumed fine", r.stdout)
        self.assertIn("2 lines of its journal could not be replayed", r.stdout + r.stderr)
        kept = [n for n in os.listdir(env.sessions_dir()) if ".journal-set-aside-" in n]
        self.assertEqual(len(kept), 1)
        self.assertIn(kept[0], r.stdout + r.stderr)
        with open(os.path.join(env.sessions_dir(), kept[0])) as f:
            self.assertEqual(f.read(), bad + after)
        contents = [m.get("content") for m in env.transcript(sid)]
        self.assertIn("from the journal", contents)
        self.assertNotIn("after the bad one", contents)
        self.assertEqual(contents[-1], "resumed fine")
        self.assertEqual(env.stats()["rejected"], 0)
        # The session was written whole: a restart replays nothing bad and sets nothing aside.
        env.kill_daemon()
        r = env.agent("-r", sid, "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("could not be replayed", r.stdout + r.stderr)
        self.assertEqual(
            len([n for n in os.listdir(env.sessions_dir()) if ".journal-set-aside-" in n]), 1)


class SessionCommands(unittest.TestCase):
    def test_fork_rm_resume_and_prefixes(self):
        env = Env([{"text": "original"}, {"text": "in the fork"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("start").returncode, 0)
        sid = env.session_ids()[0]
        r = env.agent("fork", sid[:5])
        self.assertEqual(r.returncode, 0, r.stderr)
        fork = r.stdout.strip()
        self.assertNotEqual(fork, sid)
        with open(os.path.join(env.sessions_dir(), fork + ".meta.json")) as f:
            self.assertEqual(json.load(f)["parent_id"], sid)
        self.assertEqual(env.transcript(fork), env.transcript(sid))
        r = env.agent("-r", fork, "continue the fork")
        self.assertIn("in the fork", r.stdout)
        self.assertEqual(env.agent("rm", sid).returncode, 0)
        self.assertEqual(env.session_ids(), [fork])
        r = env.agent("-r", "zzzz", "x")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no session zzzz", r.stderr)

    def test_ambiguous_prefix_is_refused(self):
        env = Env([{"text": "a"}])
        self.addCleanup(env.close)
        self.assertEqual(env.agent("one").returncode, 0)
        sid = env.session_ids()[0]
        d = env.sessions_dir()
        for name in ("abc1", "abc2"):
            with open(os.path.join(d, sid + ".json")) as src, \
                    open(os.path.join(d, name + "0000.json"), "w") as dst:
                dst.write(src.read())
        r = env.agent("-r", "abc", "x")
        self.assertEqual(r.returncode, 1)
        self.assertIn("ambiguous", r.stderr)
        self.assertIn("abc10000", r.stderr)


class Compaction(unittest.TestCase):
    def test_long_task_compacts_several_times_and_every_request_is_valid(self):
        steps = 12
        replies = [{"text": "step %d " % i + "filler " * 20,
                    "tool_calls": [tool_call("read_file", path="big.txt")]} for i in range(steps)]
        replies.append({"text": "finished the long task"})
        env = Env(replies, summary={"text": "SUMMARY: read big.txt many times."},
                  extra_env={"AGENT_COMPACT_AT": "3000"})
        self.addCleanup(env.close)
        with open(os.path.join(env.project, "big.txt"), "w") as f:
            f.write("line of the big file\n" * 40)
        r = env.agent("--json", "a long task")
        self.assertEqual(r.returncode, 0, r.stderr)
        events = [json.loads(l) for l in r.stdout.splitlines()]
        compactions = [e for e in events if "compacted" in e]
        self.assertGreaterEqual(len(compactions), 2)
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertGreaterEqual(env.stats()["summaries"], 2)
        messages = env.transcript()
        self.assertIsNone(transcript_problems(messages))
        self.assertTrue(any("SUMMARY" in (m.get("content") or "") for m in messages))
        sid = env.session_ids()[0]
        with open(os.path.join(env.sessions_dir(), sid + ".compacted.jsonl")) as f:
            kept = [json.loads(l) for l in f]
        self.assertEqual(len(kept), len(compactions))
        self.assertTrue(all(k["removed"] for k in kept))

    def test_failed_summary_leaves_the_transcript_as_it_was(self):
        env = Env([{"tool_calls": [tool_call("list_dir")]},
                   {"tool_calls": [tool_call("list_dir")]},
                   {"text": "x " * 300},
                   {"text": "answered anyway"}],
                  summary={"status": 400, "body": {"error": {"message": "no summaries today"}}})
        self.addCleanup(env.close)
        self.assertEqual(env.agent("first").returncode, 0)
        sid = env.session_ids()[0]
        before = env.transcript()
        # A daemon with a low threshold compacts before the next request, and that fails.
        env.kill_daemon()
        r = env.agent("-r", sid, "second", env={"AGENT_COMPACT_AT": "500"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("compaction failed, the transcript is unchanged", r.stderr)  # errors: stderr
        self.assertIn("no summaries today", r.stderr)
        self.assertIn("answered anyway", r.stdout)
        after = env.transcript()
        self.assertEqual(after[:len(before)], before)
        self.assertEqual(env.stats()["summaries"], 1)


if __name__ == "__main__":
    unittest.main()
