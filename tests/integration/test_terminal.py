"""The interactive client in a real terminal: tmux runs `agent` against the scripted model,
the tests type with send-keys and read the screen with capture-pane.

A terminal sends no event when something is drawn, so waiting here is a bounded poll of
capture-pane for the text expected (never a fixed sleep). Each test has its own tmux server
on a private socket, killed in cleanup, and its own harness.Env (daemon, model server).
"""
import json
import os
import shutil
import subprocess
import time
import unittest

import grpc_client
from harness import BIN, Env, processes, tool_call, transcript_problems

TMUX = shutil.which("tmux")
WAIT_S = 30


class Terminal:
    """A private tmux server whose panes run `agent` with an Env's environment."""

    def __init__(self, test, env, cols=120, rows=40):
        self.env = env
        self.cols, self.rows = cols, rows
        # The server's socket lives in the Env's dir (TMUX_TMPDIR), so it goes with it.
        self.socket = "term"
        self.started = False
        test.addCleanup(self.close)

    def _script(self, name, extra):
        # The pane's environment is exactly the Env's (plus `extra`; None removes a
        # variable), not the tmux server's, and TERM is the one tmux gives its panes.
        path = os.path.join(self.env.dir, "run-%s.sh" % name)
        variables = dict(self.env.env, LC_ALL="C.UTF-8")
        variables.update(extra)
        quoted = ["'%s=%s'" % (k, v.replace("'", "'\\''"))
                  for k, v in variables.items() if v is not None and k != "TERM"]
        with open(path, "w") as f:
            f.write("cd '%s' || exit 99\n" % self.env.project)
            # The shell stays to print the exit status (tmux 3.3 does not keep it); a
            # trap, not an ignore, so that agent gets Ctrl-C with the default disposition.
            f.write("trap 'true' INT\n")
            f.write("env -i TERM=\"$TERM\" %s \"$@\"\n" % " ".join(quoted))
            f.write("status=$?\n")
            f.write("echo \"[agent exited with status $status]\"\n")
            f.write("exit $status\n")  # the pane's dead status too (wait_exit)
        return path

    def tmux(self, *args, check=True):
        r = subprocess.run([TMUX, "-u", "-L", self.socket, "-f", "/dev/null", *args],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, LC_ALL="C.UTF-8", TMUX_TMPDIR=self.env.dir))
        if check and r.returncode != 0:
            raise AssertionError("tmux %s: %s" % (args[0], r.stderr))
        return r

    def start(self, name, *agent_args, extra_env=None):
        """Opens window `name` running `agent agent_args...`."""
        script = self._script(name, extra_env or {})
        cmd = ["sh", script, os.path.join(BIN, "agent"), *agent_args]
        if not self.started:
            self.tmux("new-session", "-d", "-s", "t", "-n", name, "-x", str(self.cols),
                      "-y", str(self.rows), *cmd)
            self.tmux("set-option", "-g", "remain-on-exit", "on")
            self.started = True
        else:
            self.tmux("new-window", "-d", "-t", "t", "-n", name, *cmd)
        return name

    def keys(self, name, *keys):
        self.tmux("send-keys", "-t", "t:" + name, *keys)

    def type_line(self, name, text):
        # Literal text, then Enter on its own: the client must not take it for a paste.
        self.tmux("send-keys", "-t", "t:" + name, "-l", text)
        self.tmux("send-keys", "-t", "t:" + name, "Enter")

    def screen(self, name, escapes=False):
        args = ["capture-pane", "-p", "-t", "t:" + name]
        if escapes:
            args.insert(1, "-e")
        return self.tmux(*args).stdout

    def wait_for(self, name, text, timeout=WAIT_S):
        """Polls the screen until `text` is on it; returns the screen."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen(name)
            if text in s:
                return s
            if time.monotonic() > deadline:
                raise AssertionError("%r never appeared; the screen:\n%s" % (text, s))
            time.sleep(0.05)

    def wait_exit(self, name, timeout=WAIT_S):
        """Waits until the pane's agent has exited; returns its exit status: from the line the
        pane's shell prints, or from the dead pane (the shell exits with the agent's status),
        since a client's last terminal writes can leave that line off the captured screen."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen(name)
            lines = [l for l in s.splitlines() if "[agent exited with status " in l]
            if lines:
                return int(lines[-1].split("status ")[1].rstrip("]"))
            dead = self.tmux("display-message", "-p", "-t", "t:" + name,
                             "#{pane_dead} #{pane_dead_status}").stdout.split()
            if len(dead) == 2 and dead[0] == "1":
                return int(dead[1])
            if time.monotonic() > deadline:
                raise AssertionError("the agent never exited; the screen:\n%s" % s)
            time.sleep(0.05)

    def close(self):
        if self.started:
            self.tmux("kill-server", check=False)


def processes_with(marker):
    """Pids of processes whose command line holds `marker`."""
    return [pid for pid, cmd in processes() if marker.encode() in cmd and b"tmux" not in cmd]


def wait_until(predicate, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@unittest.skipIf(TMUX is None, "tmux is not installed")
class InteractiveTerminal(unittest.TestCase):
    def make(self, replies, **kw):
        env = Env(replies, **kw)
        self.addCleanup(env.close)
        return env, Terminal(self, env)

    def test_ctrl_c_cancels_a_running_bash_and_the_next_prompt_is_answered(self):
        # Two commands, so that bash does not exec sleep and the marker stays visible.
        marker = "done-term-%d" % os.getpid()
        env, term = self.make(lambda e: [
            {"text": "Starting the long job.", "tool_calls": [tool_call("bash", command="sleep 60; echo " + marker)]},
            {"expect": {"last_user_contains": "are you still there"}, "text": "Still here, ready."},
        ])
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "run the long job")
        term.wait_for(w, "running bash")  # the spinner while the tool runs
        self.assertTrue(wait_until(lambda: processes_with(marker)), "bash never started")
        term.keys(w, "C-c")
        screen = term.wait_for(w, "[cancelled by you]")
        self.assertNotIn("running bash", screen)  # the spinner was erased
        # Cancel killed the tool's process group.
        self.assertTrue(wait_until(lambda: not processes_with(marker)), "sleep 60 survived")
        term.type_line(w, "are you still there?")
        screen = term.wait_for(w, "Still here, ready.")
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertEqual(env.stats()["rejected"], 0)
        messages = env.transcript()
        self.assertIsNone(transcript_problems(messages))
        results = [m["content"] for m in messages if m["role"] == "tool"]
        self.assertEqual(len(results), 1)
        self.assertIn("cancel", results[0].lower())
        # The client is still in the session: it did not exit.
        self.assertNotIn("[agent exited", screen)

    def test_enter_steers_a_running_turn_and_alt_enter_queues(self):
        from test_steering import gated_bash, open_gate
        env, term = self.make(lambda e: [
            {"tool_calls": [gated_bash(e)]},
            {"expect": {"last_role": "user", "last_user_contains": "use v2"},
             "text": "Switched to v2."},
            {"expect": {"last_user_contains": "do this later"}, "text": "Later is now."},
        ])
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "start the work")
        term.wait_for(w, "running bash")
        term.type_line(w, "use v2")  # Enter: to the running turn
        term.wait_for(w, "steering: the model reads it at its next step")
        term.keys(w, "-l", "do this later")
        term.keys(w, "M-Enter")  # Alt-Enter: after the turn
        term.wait_for(w, "queued: it runs when the current turn ends")
        open_gate(env)
        term.wait_for(w, "your steer reached the model: use v2")
        term.wait_for(w, "Switched to v2.")
        term.wait_for(w, "Later is now.")
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(len(env.requests()), 3)  # one turn took the steer, one the queued line
        self.assertIsNone(transcript_problems(env.transcript()))

    def test_ctrl_d_detaches_and_attach_shows_the_history(self):
        env, term = self.make([
            {"expect": {"last_user_contains": "first line\nsecond line"},
             "text": "Noted: **pineapple**.", "chunk_size": 2, "delay_ms": 5},
            {"text": "Back again."},
        ])
        w = term.start("first")
        term.wait_for(w, "›")
        # A trailing backslash continues the prompt on a second line.
        term.type_line(w, "remember pineapple, first line\\")
        # Typed, not pasted: keys that arrive in one read are a paste, whose newline stays
        # in the prompt with the backslash. Wait until the continuation took the backslash.
        self.assertTrue(wait_until(lambda: "first line\n" in term.screen(w)
                                   and "first line\\" not in term.screen(w)), term.screen(w))
        term.type_line(w, "second line")
        term.wait_for(w, "Noted: pineapple.")
        term.wait_for(w, "1 client")  # the status line after the turn
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)
        sid = env.session_ids()[0]
        screen = term.screen(w)
        self.assertIn("agent attach %s" % sid[:8], screen)
        # The session goes on in the daemon; `agent attach` (newest here) shows its history.
        r = env.agent("ls")
        self.assertTrue(r.stdout.splitlines()[1].startswith(sid[:16]), r.stdout)
        a = term.start("again", "attach")
        screen = term.wait_for(a, "Noted: pineapple.")
        self.assertIn("remember pineapple, first line", screen)
        self.assertIn("second line", screen)
        # The history of prompts is kept per project: Up brings back the last one.
        term.keys(a, "Up")
        wait_until(lambda: term.screen(a).count("› remember pineapple, first line") == 2)
        self.assertEqual(term.screen(a).count("› remember pineapple, first line"), 2,
                         term.screen(a))
        term.keys(a, "C-u")
        term.type_line(a, "hello again")
        term.wait_for(a, "Back again.")
        term.keys(a, "C-d")
        self.assertEqual(term.wait_exit(a), 0)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_always_records_the_rule_and_the_same_command_then_runs_unasked(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="echo first-run")]},
            {"expect": {"last_role": "tool", "last_message_contains": "first-run"},
             "text": "It ran once."},
            {"tool_calls": [tool_call("bash", command="echo first-run")]},
            {"expect": {"last_role": "tool", "last_message_contains": "first-run"},
             "text": "It ran again."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "run it")
        screen = term.wait_for(w, "[e]xactly: bash(echo first-run)")
        self.assertIn("[y]es / [n]o", screen)
        self.assertIn("[a]lways: bash(echo *)", screen)
        self.assertIn("? bash wants to run: echo first-run", screen)
        term.keys(w, "e")
        screen = term.wait_for(w, "It ran once.")
        self.assertIn("allowed always by you: bash(echo first-run)", screen)
        self.assertNotIn("[y]es", screen)  # the question is gone
        self.assertEqual(["bash(echo first-run)"], env.personal_rules())
        # The same command again: no question, it just runs (nothing is typed to answer).
        term.type_line(w, "run it again")
        screen = term.wait_for(w, "It ran again.")
        self.assertEqual(screen.count("wants to run"), 1, screen)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_an_escalation_question_says_it_leaves_the_sandbox_and_why(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="npm install -g pnpm", escalate=True,
                                      justification="the global prefix is outside the project")]},
            {"expect": {"last_message_contains": "The user denied this call"}, "text": "ok"},
        ])
        w = term.start("main")
        screen = term.wait_for(w, "›")
        # From the first screen: the mode and how commands are confined.
        self.assertRegex(screen, r"mode ask · sandbox: (workspace-write|unavailable|off)")
        term.type_line(w, "install it")
        screen = term.wait_for(w, "[y]es / [n]o")
        self.assertIn("! OUTSIDE THE SANDBOX", screen)
        self.assertIn("bash wants to run, with all your access", screen)
        self.assertIn("npm install -g pnpm", screen)
        self.assertIn("its reason: the global prefix is outside the project", screen)
        self.assertNotIn("? bash wants to run:", screen)
        term.keys(w, "n")
        term.wait_for(w, "ok")
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_the_models_question_is_a_menu_answered_by_a_digit_or_in_words(self):
        env, term = self.make([
            {"tool_calls": [tool_call("ask_user", question="Which database?",
                                      options=["sqlite", "postgres"])]},
            {"expect": {"last_role": "tool", "last_message_contains": "answered: postgres"},
             "tool_calls": [tool_call("ask_user", question="Any name for it?")]},
            {"expect": {"last_role": "tool", "last_message_contains": "answered: call it app_db"},
             "text": "Using postgres, app_db."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "set up the database")
        screen = term.wait_for(w, "[t]ype an answer")
        self.assertIn("? the agent asks: Which database?", screen)
        self.assertIn("1. sqlite", screen)
        self.assertIn("2. postgres", screen)
        self.assertIn("[1-2] choose", screen)
        self.assertNotIn("[y]es", screen)  # not an approval
        term.keys(w, "2")
        term.wait_for(w, "answered by you: postgres")
        screen = term.wait_for(w, "Any name for it?")
        self.assertNotIn("[1-", screen.split("Any name for it?")[1])  # no options: words only
        term.keys(w, "t")
        term.wait_for(w, "Your answer:")
        term.type_line(w, "call it app_db")
        term.wait_for(w, "Using postgres, app_db.")
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_plan_mode_hands_the_plan_over_and_the_choice_sets_the_mode(self):
        env, term = self.make([
            {"tool_calls": [tool_call("present_plan", plan="1. Add a cache\n2. Test it")]},
            {"expect": {"last_role": "tool", "last_message_contains": "now in auto mode"},
             "text": "Carrying it out."},
        ])
        w = term.start("main", "--plan")
        screen = term.wait_for(w, "›")
        self.assertIn("mode plan", screen)
        term.type_line(w, "plan a cache")
        screen = term.wait_for(w, "Keep planning")
        self.assertIn("1. Add a cache", screen)
        self.assertIn("Go on in auto mode", screen)
        term.keys(w, "1")
        screen = term.wait_for(w, "Carrying it out.")
        self.assertIn("mode: auto", screen)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_slash_last_shows_the_whole_output_the_trace_clipped(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="seq 1 30")]},
            {"expect": {"last_role": "tool"}, "text": "Counted."},
        ])
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "count")
        screen = term.wait_for(w, "Counted.")
        self.assertIn("more lines (/last shows them)", screen)
        self.assertNotIn("  27\n", screen)
        term.type_line(w, "/last")
        screen = term.wait_for(w, "the last output, of bash, whole:")
        for n in (25, 27, 30):
            self.assertIn("  %d\n" % n, screen.split("whole:")[-1])

    def test_no_notice_lands_between_a_question_and_its_answer_line(self):
        env, term = self.make([
            {"tool_calls": [tool_call("bash", command="echo asked")]},
            {"expect": {"last_role": "tool"}, "text": "Ran it."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "run it")
        term.wait_for(w, "[y]es / [n]o")
        # Another terminal attaches while the question is shown: said after the answer.
        term.start("watcher", "attach", "-r", env.session_ids()[0])
        term.wait_for("watcher", "echo asked")
        screen = term.screen(w)
        self.assertNotIn("attached", screen.split("? bash wants to run")[-1])
        term.keys(w, "y")
        screen = term.wait_for(w, "Ran it.")
        after = screen.split("allowed by you")[-1]
        self.assertIn("attached", after)
        self.assertEqual(env.stats()["expect_failed"], 0)

    def test_approval_answered_by_another_client_disappears_and_says_who(self):
        env, term = self.make([
            {"tool_calls": [tool_call("write_file", path="notes.txt", content="hello\n")]},
            {"expect": {"last_role": "tool"}, "text": "Wrote it."},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "write the notes")
        screen = term.wait_for(w, "[a]lways: write_file(notes.txt)")
        self.assertIn("+hello", screen)  # the diff of the change
        sid = env.session_ids()[0]
        pb, stub, channel = grpc_client.connect(env.socket)
        self.addCleanup(channel.close)
        info = stub.GetSession(pb.GetSessionRequest(id=sid), timeout=10)
        self.assertEqual(info.session.state, pb.SESSION_STATE_WAITING_APPROVAL)
        # The pending call id, from a snapshot of our own.
        stream = stub.Attach(pb.AttachRequest(session_id=sid, client_name="other-terminal"),
                             timeout=60)
        snap = next(stream).snapshot
        stream.cancel()
        stub.Approve(pb.ApproveRequest(session_id=sid, call_id=snap.pending_approval.call_id,
                                       decision=pb.DECISION_ALLOW_ONCE,
                                       client_name="other-terminal"), timeout=10)
        # The client was waiting for a key; the event woke it.
        screen = term.wait_for(w, "allowed by other-terminal")
        term.wait_for(w, "Wrote it.")
        self.assertNotIn("[y]es", term.screen(w))
        with open(os.path.join(env.project, "notes.txt")) as f:
            self.assertEqual(f.read(), "hello\n")

    def test_a_session_in_home_warns_in_one_line_and_goes_on(self):
        env, term = self.make([{"text": "Hello from home."}])
        # The project directory is $HOME here: the agent would reach everything under it.
        w = term.start("main", extra_env={"HOME": env.project})
        screen = term.wait_for(w, "›")
        warned = [l for l in screen.splitlines() if "can read and change everything" in l]
        self.assertEqual(len(warned), 1, screen)
        self.assertIn(os.path.realpath(env.project), warned[0])
        term.type_line(w, "hi")
        term.wait_for(w, "Hello from home.")
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)

    def test_no_color_output_has_no_escape_codes(self):
        reply = [{"tool_calls": [tool_call("read_file", path="a.txt")]},
                 {"text": "# Title\n**bold** and `code`:\n```python\nprint('hi')  # x\n```\n"
                          "- one\n- two\n", "chunk_size": 5}]
        env, term = self.make(reply + reply)
        with open(os.path.join(env.project, "a.txt"), "w") as f:
            f.write("alpha\n")
        # With colour: capture-pane -e does show the escapes (so the check below can fail).
        c = term.start("color", extra_env={"NO_COLOR": None})
        term.wait_for(c, "›")
        term.type_line(c, "show me")
        term.wait_for(c, "two")
        colored = term.screen(c, escapes=True)
        self.assertIn("\x1b[", colored)
        self.assertNotIn("**bold**", term.screen(c))  # Markdown was rendered
        n = term.start("plain", extra_env={"NO_COLOR": "1"})
        term.wait_for(n, "›")
        term.type_line(n, "show me")
        term.wait_for(n, "• two")
        term.wait_for(n, "1 client")
        plain = term.screen(n, escapes=True)
        self.assertIn("→ read_file(a.txt)", plain)
        self.assertIn("bold and `code`", plain)  # the structure, without ** and escapes
        self.assertNotIn("**", plain)
        self.assertNotIn("\x1b", plain)

    def test_read_only_observer_watches_but_cannot_prompt(self):
        env, term = self.make([
            {"text": "An answer both terminals see.", "chunk_size": 3, "delay_ms": 10},
        ])
        w = term.start("main")
        term.wait_for(w, "›")
        sid = env.session_ids()[0]
        o = term.start("watch", "attach", "-r", sid[:8])
        term.wait_for(o, "read-only")
        term.wait_for(w, "attached")  # the first client is told who came
        term.type_line(w, "say something")
        term.wait_for(o, "An answer both terminals see.")
        self.assertIn("say something", term.screen(o))
        requests = len(env.requests())
        term.type_line(o, "I am only watching")
        term.keys(o, "q")
        self.assertEqual(term.wait_exit(o), 0)
        self.assertEqual(len(env.requests()), requests)
        self.assertNotIn("I am only watching", json.dumps(env.transcript()))
        term.keys(w, "C-d")
        self.assertEqual(term.wait_exit(w), 0)


if __name__ == "__main__":
    unittest.main()
