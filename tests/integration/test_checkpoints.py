"""File checkpoints through the API with the real binaries and the strict scripted model:
a turn that edits (edit_file), creates (bash), deletes (bash rm) and chmods files is undone
whole; a file the user changed since is kept unless overwrite; a rewind forks and restores;
Diff shows a turn's change; the transcript stays valid after the undo note; a user's git
repository is left as it was."""
import json
import os
import stat
import subprocess
import unittest

from harness import Env, tool_call
from test_multi_client import Api, collect_until_turns_end, kind


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def four_changes_turn():
    """Replies of a turn that changes four files four ways."""
    return [
        {"tool_calls": [tool_call("read_file", path="edit.txt")]},
        {"tool_calls": [
            tool_call("edit_file", path="edit.txt", old_string="old", new_string="new"),
            tool_call("bash", command="echo made > made.txt"),
            tool_call("bash", command="rm gone.txt"),
            tool_call("bash", command="chmod +x run.sh"),
        ]},
        {"text": "done"},
    ]


def bash_turn(command):
    return [{"tool_calls": [tool_call("bash", command=command)]}, {"text": "ok"}]


class Checkpoints(unittest.TestCase):
    def start(self, replies, git=False):
        self.env = Env(replies)
        self.addCleanup(self.env.close)
        p = self.env.project
        write(os.path.join(p, "edit.txt"), "old text\n")
        write(os.path.join(p, "gone.txt"), "keep me\n")
        write(os.path.join(p, "run.sh"), "echo hi\n")
        os.chmod(os.path.join(p, "run.sh"), 0o644)
        if git:
            self.git("init", "-q")
            self.git("add", ".")
            self.git("commit", "-qm", "one")
            write(os.path.join(p, "edit.txt"), "old text, uncommitted\n")
        self.api = Api(self.env)
        self.addCleanup(self.api.close)
        self.pb = self.api.pb
        self.sid = self.api.create()

    def git(self, *args):
        env = {k: v for k, v in self.env.env.items() if not k.startswith("GIT_")}
        env["GIT_OPTIONAL_LOCKS"] = "0"  # our own `git status` must not refresh the index
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=self.env.project, env=env, capture_output=True, text=True,
                              check=True).stdout

    def turn(self, text):
        stream = self.api.attach(self.sid, "watcher")
        self.assertEqual(kind(next(stream)), "snapshot")
        self.api.prompt(self.sid, text)
        events = collect_until_turns_end(stream)
        stream.cancel()
        ended = [e for e in events if kind(e) == "turn_ended"][-1].turn_ended
        self.assertEqual(ended.outcome, self.pb.TURN_OUTCOME_DONE, ended.error)
        return events

    def undo(self, **kw):
        return self.api.stub.Undo(self.pb.UndoRequest(session_id=self.sid, client_name="test",
                                                      **kw), timeout=30)

    def path(self, rel):
        return os.path.join(self.env.project, rel)

    def read_bytes(self, rel):
        with open(self.path(rel), "rb") as f:
            return f.read()

    def is_exec(self, rel):
        return bool(os.stat(self.path(rel)).st_mode & stat.S_IXUSR)

    def assert_restored(self, edit_text="old text\n"):
        self.assertEqual(read(self.path("edit.txt")), edit_text)
        self.assertFalse(os.path.exists(self.path("made.txt")))
        self.assertEqual(read(self.path("gone.txt")), "keep me\n")
        self.assertFalse(self.is_exec("run.sh"))

    def test_undo_restores_an_edit_a_creation_a_deletion_and_a_mode(self):
        self.start(four_changes_turn() + [{"text": "noted"}])
        self.turn("change four files")
        self.assertEqual(read(self.path("edit.txt")), "new text\n")
        self.assertTrue(self.is_exec("run.sh"))
        # The records beside the transcript are not taken for a session of their own.
        self.assertEqual(self.env.session_ids(), [self.sid])
        listed = self.api.stub.ListSessions(
            self.pb.ListSessionsRequest(workdir=self.env.project), timeout=10).sessions
        self.assertEqual([s.id for s in listed], [self.sid])
        cps = self.api.stub.ListCheckpoints(
            self.pb.ListCheckpointsRequest(session_id=self.sid), timeout=10).checkpoints
        self.assertEqual([(c.turn, c.prompt, c.files_changed) for c in cps],
                         [(1, "change four files", 4)])
        self.assertEqual(cps[0].at_message, 1)  # after the system message
        dry = self.undo(dry_run=True)
        self.assertFalse(dry.restored)
        self.assertEqual(sorted((f.path, f.change, f.changed_since) for f in dry.files),
                         [("edit.txt", "modified", False), ("gone.txt", "deleted", False),
                          ("made.txt", "created", False), ("run.sh", "mode", False)])
        self.assertTrue(self.is_exec("run.sh"))  # a dry run changes nothing
        watcher = self.api.attach(self.sid, "watcher")
        self.assertEqual(kind(next(watcher)), "snapshot")
        r = self.undo()
        self.assertTrue(r.restored, r.message)
        self.assert_restored()
        for e in watcher:
            if kind(e) == "notice" and "restored" in e.notice.text:
                break
        watcher.cancel()
        # The model is told, and the strict server accepts the transcript that follows.
        note = self.env.transcript(self.sid)[-1]
        self.assertEqual(note["role"], "user")
        self.assertIn("restored the project's files", note["content"])
        self.turn("go on")
        last_request = self.env.requests()[-1]
        self.assertIn("restored the project's files",
                      json.dumps(last_request))
        status = self.api.stub.DaemonStatus(self.pb.DaemonStatusRequest(), timeout=10)
        self.assertGreater(status.checkpoint_store_bytes, 0)
        # Outside the project: nothing of the store is in it.
        self.assertEqual(sorted(os.listdir(self.env.project)),
                         ["edit.txt", "gone.txt", "run.sh"])

    def test_undo_in_a_git_repository_leaves_its_index_branches_and_stash(self):
        self.start(four_changes_turn(), git=True)
        before = self.git("status", "--porcelain=v2", "--branch") + self.git("stash", "list")
        index = self.read_bytes(".git/index")
        self.turn("change four files")
        r = self.undo()
        self.assertTrue(r.restored, r.message)
        self.assert_restored("old text, uncommitted\n")
        after = self.git("status", "--porcelain=v2", "--branch") + self.git("stash", "list")
        self.assertEqual(after, before)
        self.assertEqual(self.read_bytes(".git/index"), index)

    def test_undo_keeps_a_file_the_user_changed_since_unless_overwrite(self):
        self.start(bash_turn("echo agent > a.txt; echo agent > b.txt"))
        write(self.path("a.txt"), "mine\n")
        write(self.path("b.txt"), "mine\n")
        self.turn("write two files")
        write(self.path("a.txt"), "edited after the turn\n")
        dry = self.undo(dry_run=True)
        self.assertEqual(sorted((f.path, f.changed_since) for f in dry.files),
                         [("a.txt", True), ("b.txt", False)])
        r = self.undo()
        self.assertIn("kept 1", r.message)
        self.assertEqual(read(self.path("a.txt")), "edited after the turn\n")
        self.assertEqual(read(self.path("b.txt")), "mine\n")
        r = self.undo(overwrite=True)
        self.assertTrue(r.restored, r.message)
        self.assertEqual(read(self.path("a.txt")), "mine\n")

    def test_undo_is_refused_while_a_turn_runs(self):
        self.start(bash_turn("echo 1 > a.txt") +
                   [{"tool_calls": [tool_call("bash", command="sleep 30")]}, {"text": "x"}])
        self.turn("something to undo")
        stream = self.api.attach(self.sid, "watcher")
        next(stream)
        self.api.prompt(self.sid, "sleep")
        for e in stream:
            if kind(e) == "tool_call_ready":
                break
        with self.assertRaises(Exception) as cm:
            self.undo()
        self.assertIn("FAILED_PRECONDITION", str(cm.exception))
        self.assertIn("a turn is running", str(cm.exception))
        self.assertTrue(os.path.exists(self.path("a.txt")))
        self.api.stub.Cancel(self.pb.CancelRequest(session_id=self.sid, client_name="t"),
                             timeout=10)
        collect_until_turns_end(stream)
        stream.cancel()

    def test_diff_shows_a_turns_change_and_the_sessions(self):
        self.start(four_changes_turn() + bash_turn("echo two > second.txt"))
        self.turn("change four files")
        self.turn("one more")
        d1 = self.api.stub.Diff(self.pb.DiffRequest(session_id=self.sid, turn=1),
                                timeout=30).unified_diff
        self.assertIn("--- a/edit.txt\n+++ b/edit.txt", d1)
        self.assertIn("-old text\n+new text\n", d1)
        self.assertNotIn("second.txt", d1)
        all_ = self.api.stub.Diff(self.pb.DiffRequest(session_id=self.sid),
                                  timeout=30).unified_diff
        self.assertIn("+++ b/second.txt", all_)
        self.assertIn("+++ b/made.txt", all_)

    def test_a_diff_larger_than_a_grpc_message_is_cut(self):
        self.start(bash_turn("head -c 6000000 /dev/zero | tr '\\0' 'x' | fold -w 100 > big.txt"))
        self.turn("one big file")
        d = self.api.stub.Diff(self.pb.DiffRequest(session_id=self.sid, turn=1),
                               timeout=30).unified_diff
        self.assertIn("+++ b/big.txt", d)
        self.assertIn("[diff cut here: ", d)
        self.assertLess(len(d), 4 << 20)

    def test_rewind_forks_and_restores_the_files(self):
        self.start(bash_turn("echo 1 > n.txt") + bash_turn("echo 2 > n.txt"))
        self.turn("first")
        self.turn("second")
        cps = self.api.stub.ListCheckpoints(
            self.pb.ListCheckpointsRequest(session_id=self.sid), timeout=10).checkpoints
        self.assertEqual([c.turn for c in cps], [1, 2])
        fork = self.api.stub.ForkSession(self.pb.ForkSessionRequest(
            session_id=self.sid, at_message=cps[1].at_message, restore_files=True), timeout=30)
        self.assertEqual(fork.parent_id, self.sid)
        self.assertEqual(fork.message_count, cps[1].at_message)
        self.assertEqual(read(self.path("n.txt")), "1\n")
        self.assertIn(self.sid, [s.id for s in self.api.stub.ListSessions(
            self.pb.ListSessionsRequest(workdir=self.env.project), timeout=10).sessions])

    def test_a_turn_without_file_changes_records_nothing(self):
        self.start([{"text": "just talk"}])
        self.turn("hello")
        cps = self.api.stub.ListCheckpoints(
            self.pb.ListCheckpointsRequest(session_id=self.sid), timeout=10).checkpoints
        self.assertEqual(len(cps), 0)
        with self.assertRaises(Exception) as cm:
            self.undo()
        self.assertIn("nothing to undo", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
