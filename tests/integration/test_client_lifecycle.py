"""The attached client's lifecycle (issue 14): signals, errors and denials on stderr with
their exit codes, the --json result line, a daemon restart under an interactive client,
detaching mid-reply and at an approval, the "while you were away" rule, who cancelled, the
Ctrl-C hint, a huge prompt's echo, and stdin that is no longer split into turns.

Screen tests run `agent` in a private tmux server (test_terminal.Terminal); waits are
bounded polls for what is expected, never fixed sleeps.
"""
import json
import os
import signal
import subprocess
import threading
import unittest

import grpc
import grpc_client
from harness import BIN, Env, processes, tool_call, transcript_problems
from test_multi_client import Api, collect_until_turns_end, kind
from test_terminal import TMUX, Terminal, processes_with, wait_until

WAIT_S = 30


def make_env(test, replies, **kw):
    env = Env(replies, **kw)
    test.addCleanup(env.close)
    return env


def wait_proc(p, timeout=WAIT_S):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


class OneShotSignals(unittest.TestCase):
    def run_and_signal(self, sig):
        marker = "sig-%d-%d" % (sig, os.getpid())
        env = make_env(self, [
            {"tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
        ])
        p = env.popen_agent("--yes", "run the long job")
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertTrue(wait_until(lambda: processes_with(marker)), "bash never started")
        p.send_signal(sig)
        code, out, err = wait_proc(p)
        # The turn was cancelled like Ctrl-C: the tool's process is gone and the session idle.
        self.assertTrue(wait_until(lambda: not processes_with(marker)), "the turn kept running")
        results = [m["content"] for m in env.transcript() if m["role"] == "tool"]
        self.assertEqual(len(results), 1, results)
        self.assertIn("cancel", results[0].lower())
        return code, out, err

    def test_sigterm_cancels_the_turn_then_exits_143(self):
        code, _, err = self.run_and_signal(signal.SIGTERM)
        self.assertEqual(code, 143)
        self.assertIn("[cancelled by", err)  # the trace: stdout, a pipe, is the answer only

    def test_sighup_cancels_the_turn_then_exits_129(self):
        code, _, _ = self.run_and_signal(signal.SIGHUP)
        self.assertEqual(code, 129)

    def test_a_signal_before_the_client_sees_its_turn_start_still_cancels_it(self):
        # A UserPromptSubmit hook holds the turn before it starts, as a busy machine delays
        # the client's events: the signal comes while the client has seen no turn yet.
        from test_hooks import one, user_hooks
        marker = "early-sig-%d" % os.getpid()
        env = make_env(self, [
            {"tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
        ])
        gate = os.path.join(env.project, "gate")
        os.mkfifo(gate)
        user_hooks(env, {"UserPromptSubmit": one("cat %s >/dev/null" % gate)})
        p = env.popen_agent("--yes", "run the long job")
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertTrue(wait_until(lambda: processes_with("cat " + gate)), "no hook ran")
        p.send_signal(signal.SIGHUP)
        with open(gate, "w") as f:  # the hook ends and the turn starts
            f.write("go\n")
        code, _, _ = wait_proc(p)
        self.assertEqual(code, 129)
        # Cancelled as soon as it showed: the command never ran or was ended with it (and the
        # session, which the model never answered, is discarded as any such one-shot's is).
        self.assertTrue(wait_until(lambda: not processes_with(marker)), "the turn kept running")
        self.assertLessEqual(len(env.requests()), 1)


class OneShotOutput(unittest.TestCase):
    def test_a_failed_turn_prints_its_error_once_on_stderr(self):
        env = make_env(self, [{"status": 400, "body": {"error": {"message": "bad model name"}}}])
        r = env.agent("hello")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("error", r.stdout.lower())
        lines = [l for l in r.stderr.splitlines() if "bad model name" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("agent: "), lines)

    def test_a_denied_gated_call_is_said_on_stderr_and_exits_4(self):
        env = make_env(self, [
            {"tool_calls": [tool_call("write_file", path="notes.txt", content="hi\n")]},
            {"text": "I changed notes.txt."},
        ])
        r = env.agent("write the notes")  # stdin is not a terminal: nobody can be asked
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("agent: denied write_file(notes.txt)", r.stderr)
        self.assertIn("1 gated call was denied by the policy", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(env.project, "notes.txt")))

    def test_json_has_numbers_and_ends_with_one_result_object(self):
        env = make_env(self, [
            {"text": "All done.", "usage": {"prompt_tokens": 1234, "completion_tokens": 56}},
        ])
        r = env.agent("--json", "say done")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(l) for l in r.stdout.splitlines()]
        ended = [l for l in lines if "turn_ended" in l]
        self.assertEqual(len(ended), 1)
        self.assertIsInstance(ended[0]["seq"], int)
        self.assertIsInstance(ended[0]["unix_ms"], int)
        usage = [l["usage"] for l in lines if l["type"] == "usage"]
        self.assertEqual(usage[0]["prompt_tokens"], 1234)
        result = lines[-1]
        self.assertEqual(result["type"], "result")
        self.assertEqual(result["outcome"], "done")
        self.assertFalse(result["is_error"])
        self.assertEqual(result["result"], "All done.")
        self.assertEqual(result["session_id"], env.session_ids()[0])
        self.assertIsInstance(result["duration_ms"], int)
        self.assertIn("prompt_tokens", result["usage"])

    def test_json_result_says_who_cancelled(self):
        marker = "json-cancel-%d" % os.getpid()
        env = make_env(self, [
            {"tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
        ])
        p = env.popen_agent("--json", "--yes", "run it")
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertTrue(wait_until(lambda: processes_with(marker)), "bash never started")
        grpc_client.cancel(env.socket, env.session_ids()[0], client="the-canceller")
        code, out, _ = wait_proc(p)
        self.assertEqual(code, 130)
        lines = [json.loads(l) for l in out.splitlines()]
        ended = [l["turn_ended"] for l in lines if "turn_ended" in l]
        self.assertEqual(ended[0]["cancelled_by"], "the-canceller")
        self.assertEqual(lines[-1]["outcome"], "cancelled")
        self.assertEqual(lines[-1]["cancelled_by"], "the-canceller")

    def test_a_one_shot_whose_daemon_dies_says_its_turn_is_lost(self):
        marker = "lost-%d" % os.getpid()
        env = make_env(self, [
            {"tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
        ])
        p = env.popen_agent("--yes", "run it")
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertTrue(wait_until(lambda: processes_with(marker)), "bash never started")
        env.kill_daemon()
        code, _, err = wait_proc(p)
        self.assertEqual(code, 1)
        self.assertIn("this turn is lost", err)

    def test_stdin_of_an_attached_client_is_not_split_into_turns(self):
        env = make_env(self, [{"text": "hello"}])
        self.assertEqual(env.agent("say hello").returncode, 0)
        sid = env.session_ids()[0]
        before = len(env.requests())
        r = subprocess.run([os.path.join(BIN, "agent"), "attach", sid], cwd=env.project,
                           env=env.env, input="first line\nsecond line\n", text=True,
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(env.requests()), before)  # no prompt was sent


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Screen(unittest.TestCase):
    def make(self, replies, **kw):
        env = make_env(self, replies, **kw)
        return env, Terminal(self, env)

    def pane_pid(self, term, w):
        """The pid of the agent running in window `w` (the child of the pane's shell)."""
        shell = int(term.tmux("list-panes", "-t", "t:" + w, "-F", "#{pane_pid}").stdout.split()[0])
        agent = os.path.join(BIN, "agent").encode()
        found = []

        def look():
            for pid, cmd in processes():
                if cmd.split(b"\0")[0] == agent and self.ppid(pid) == shell:
                    found.append(pid)
            return found

        self.assertTrue(wait_until(look), "no agent under the pane")
        return found[0]

    @staticmethod
    def ppid(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            return -1

    def test_sighup_detaches_an_interactive_client(self):
        env, term = self.make([])
        w = term.start("main")
        term.wait_for(w, "›")
        os.kill(self.pane_pid(term, w), signal.SIGHUP)
        self.assertEqual(term.wait_exit(w), 0)
        self.assertIn("detached; the session goes on", term.screen(w))

    def test_one_ctrl_c_at_an_empty_prompt_gives_the_hint(self):
        env, term = self.make([])
        w = term.start("main")
        term.wait_for(w, "›")
        term.keys(w, "C-c")
        term.wait_for(w, "Ctrl-C again to leave, Ctrl-D to detach")

    def test_ctrl_d_while_a_reply_streams_keeps_what_was_shown(self):
        text = "First line done.\nSecond line streams " + "slowly " * 200
        env, term = self.make([{"text": text, "chunk_size": 3, "delay_ms": 20}])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "talk slowly")
        term.wait_for(w, "Second line streams slowly")
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)
        screen = term.screen(w)
        self.assertIn("First line done.", screen)
        self.assertIn("Second line streams slowly", screen)

    def test_esc_at_an_approval_denies(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="echo esc-run")]},
            {"text": "Understood, not run."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "run echo")
        term.wait_for(w, "Allow?")
        term.keys(w, "Escape")
        term.wait_for(w, "denied by you")
        term.wait_for(w, "Understood, not run.")

    def test_q_at_an_approval_denies(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="echo q-run")]},
            {"text": "Fine, not run."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "run echo")
        term.wait_for(w, "Allow?")
        term.keys(w, "q")
        term.wait_for(w, "denied by you")

    def test_ctrl_d_at_an_approval_detaches_and_leaves_it_pending(self):
        env, term = self.make([{"tool_calls": [tool_call("bash", command="echo later")]}])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "run echo")
        term.wait_for(w, "Allow?")
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)
        api = Api(env)
        self.addCleanup(api.close)
        stream = api.attach(env.session_ids()[0], "other")
        snap = next(iter(stream))
        self.assertEqual(kind(snap), "snapshot")
        self.assertTrue(snap.snapshot.pending_approval.call_id)
        stream.cancel()

    def test_cancelled_says_which_client_cancelled(self):
        marker = "who-%d" % os.getpid()
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
        ])
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "run the long job")
        self.assertTrue(wait_until(lambda: processes_with(marker)), "bash never started")
        grpc_client.cancel(env.socket, env.session_ids()[0], client="someone-else")
        term.wait_for(w, "[cancelled by someone-else]")

    def test_a_huge_prompt_is_not_echoed_whole(self):
        env, term = self.make([{"text": "Read it all."}])
        w = term.start("main")
        term.wait_for(w, "›")
        api = Api(env)
        self.addCleanup(api.close)
        big = "".join("huge-line-%06d %s\n" % (i, "x" * 40) for i in range(20000))
        api.prompt(env.session_ids()[0], big, client="a-script")
        term.wait_for(w, "Read it all.")
        history = term.tmux("capture-pane", "-p", "-S", "-", "-t", "t:" + w).stdout
        self.assertTrue("more lines)" in history, history[-2000:])
        self.assertLess(history.count("huge-line-"), 20, history[:2000])
        # Nor is it replayed whole by a later attach.
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)
        a = term.start("again", "attach")
        term.wait_for(a, "Read it all.")
        history = term.tmux("capture-pane", "-p", "-S", "-", "-t", "t:" + a).stdout
        self.assertTrue("more lines)" in history, history[-2000:])
        self.assertLess(history.count("huge-line-"), 20, history[:2000])

    def test_a_daemon_restart_reattaches_and_keeps_the_typed_text(self):
        env, term = self.make([
            {"text": "First answer."},
            {"expect": {"last_user_contains": "half typed and finished"}, "text": "Second answer."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "first")
        term.wait_for(w, "First answer.")
        term.tmux("send-keys", "-t", "t:" + w, "-l", "half typed")
        term.wait_for(w, "half typed")
        env.kill_daemon(signal.SIGTERM)  # what systemd's restart or a package upgrade sends
        term.wait_for(w, "daemon restarting")
        self.assertEqual(env.agent("ls").returncode, 0)  # starts a new daemon
        term.wait_for(w, "daemon back")
        self.assertIn("half typed", term.screen(w).split("daemon back")[-1])
        term.type_line(w, " and finished")
        term.wait_for(w, "Second answer.")
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertNotIn("[agent exited", term.screen(w))

    def test_after_a_crash_the_client_starts_the_daemon_again_and_goes_on(self):
        env, term = self.make([{"text": "Answer after the crash."}])
        w = term.start("main")
        term.wait_for(w, "›")
        crashed = env.kill_daemon()  # SIGKILL: nobody restarts it but the client
        self.assertTrue(crashed)
        term.wait_for(w, "daemon back", timeout=20)
        self.assertTrue(env.daemon_pids())
        self.assertFalse(set(env.daemon_pids()) & set(crashed))
        term.type_line(w, "still there?")
        term.wait_for(w, "Answer after the crash.")
        self.assertNotIn("did not come back", term.screen(w))

    def test_a_crash_mid_turn_says_which_turn_was_cut_short_and_which_question_was_dropped(self):
        env, term = self.make([
            {"tool_calls": [tool_call("ask_user", question="Which port?",
                                      options=["8080", "9090"])]},
            {"text": "Answer after the crash."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "start the server")
        term.wait_for(w, "[1-2] choose")
        self.assertTrue(env.kill_daemon())  # SIGKILL, while the question waits
        screen = term.wait_for(w, "was dropped", timeout=20)
        after = screen.split("daemon back")[-1]
        self.assertIn("the daemon stopped during the turn for “start the server”: it was cut "
                      "short", after)
        self.assertIn("the question “Which port?” was dropped", after)
        # The transcript keeps the rule: the cut call is answered, and the session goes on.
        term.type_line(w, "go on")
        term.wait_for(w, "Answer after the crash.")
        self.assertIsNone(transcript_problems(env.transcript()))

    def test_agent_daemon_stop_makes_attached_clients_leave_at_once(self):
        env, term = self.make([])
        w = term.start("main")
        term.wait_for(w, "›")
        self.assertEqual(env.agent("daemon", "stop").returncode, 0)
        self.assertEqual(term.wait_exit(w, timeout=20), 1)
        screen = term.screen(w)
        self.assertIn("agentd was stopped", screen)
        self.assertNotIn("daemon restarting", screen)

    def test_reattach_marks_what_was_missed(self):
        env, term = self.make([{"text": "Answer one."}, {"text": "Answer two."}])
        # One pane (one terminal) runs agent, then waits for Enter and attaches again.
        agent = os.path.join(BIN, "agent")
        script = term._script("seq", {})
        cmd = ["sh", script, "sh", "-c", "%s; read x; %s attach" % (agent, agent)]
        term.tmux("new-session", "-d", "-s", "t", "-n", "seq", "-x", "120", "-y", "40", *cmd)
        term.tmux("set-option", "-g", "remain-on-exit", "on")
        term.started = True
        w = "seq"
        term.wait_for(w, "›")
        term.type_line(w, "question one")
        term.wait_for(w, "Answer one.")
        term.wait_for(w, "1 client")
        term.keys(w, "C-d")
        term.wait_for(w, "detached")
        api = Api(env)
        self.addCleanup(api.close)
        sid = env.session_ids()[0]
        stream = api.attach(sid, "script")
        api.prompt(sid, "question two", client="script")
        collect_until_turns_end(stream)
        stream.cancel()
        term.keys(w, "Enter")
        screen = term.wait_for(w, "Answer two.")
        after_rule = screen.split("— while you were away —")
        self.assertEqual(len(after_rule), 2, screen)
        self.assertIn("Answer one.", after_rule[0])
        self.assertNotIn("Answer one.", after_rule[1])
        self.assertIn("question two", after_rule[1])


def daemon_tells_removal(env):
    """Whether this daemon sends SessionRemoved to attached clients on DeleteSession
    (the daemon's side of the removal; the client's side is what the tests check)."""
    api = Api(env)
    try:
        sid = api.create()
        stream = api.attach(sid, "probe")
        it = iter(stream)
        next(it)  # the snapshot
        api.stub.DeleteSession(api.pb.DeleteSessionRequest(session_id=sid), timeout=10)
        seen = []

        def read():
            try:
                for e in it:
                    if kind(e) == "session_removed":
                        seen.append(e)
                        return
            except grpc.RpcError:
                pass  # cancelled below when nothing came

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(5)
        stream.cancel()
        t.join(5)
        return bool(seen)
    finally:
        api.close()


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Removal(unittest.TestCase):
    def test_an_attached_client_is_told_and_its_next_prompt_says_so(self):
        env = make_env(self, [{"text": "Hi."}])
        self.assertTrue(daemon_tells_removal(env))
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "hello")
        term.wait_for(w, "Hi.")
        sid = env.session_ids()[0]
        r = env.agent("rm", sid)
        self.assertEqual(r.returncode, 0, r.stderr)
        term.wait_for(w, "session %s was removed by agent-" % sid[:8])
        term.type_line(w, "are you there")
        term.wait_for(w, "was removed; not sent")
        self.assertNotIn("[agent exited", term.screen(w))


if __name__ == "__main__":
    unittest.main()
