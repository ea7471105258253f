"""@mentions and custom slash commands (issue 18): what the model receives for a prompt a
person typed (SendPromptRequest.expand), read in the request bodies the scripted model logged."""
import json
import os
import unittest

from harness import Env, tool_call, transcript_problems
import grpc_client
from test_multi_client import Api
from test_terminal import TMUX, Terminal


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def user_messages(request):
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "user"]


class Mentions(unittest.TestCase):
    def test_a_mentioned_file_is_attached_and_counts_as_read(self):
        env = Env([
            # No read_file first: the mention was the read, so the edit is accepted.
            {"expect": {"last_user_contains": "     2\tb = 2"},
             "tool_calls": [tool_call("edit_file", path="src/a.py", old_string="b = 2",
                                      new_string="b = 3")]},
            {"expect": {"last_role": "tool", "last_message_contains": "Edited src/a.py"},
             "text": "Changed b."},
        ])
        self.addCleanup(env.close)
        write(os.path.join(env.project, "src", "a.py"), "a = 1\nb = 2\n")
        r = env.agent("--yes", "set b to 3 in @src/a.py")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(env.stats()["rejected"], 0)
        first = user_messages(env.requests()[0])[-1]
        self.assertTrue(first.startswith(
            'set b to 3 in @src/a.py\n\n<mention path="src/a.py" tool="read_file">\n'), first)
        self.assertIn("     1\ta = 1\n     2\tb = 2\n</mention>", first)
        with open(os.path.join(env.project, "src", "a.py")) as f:
            self.assertEqual(f.read(), "a = 1\nb = 3\n")
        self.assertIsNone(transcript_problems(env.transcript()))
        # The person's line stays as typed on the screen; the attachment is not echoed.
        self.assertIn("Changed b.", r.stdout)
        self.assertNotIn("<mention", r.stdout)

    def test_a_directory_is_listed_and_unknown_or_forbidden_paths_stay_with_warnings(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        write(os.path.join(env.project, "src", "one.c"), "1\n")
        write(os.path.join(env.project, ".env"), "TOKEN=abc\n")
        write(os.path.join(env.project, ".agent", "settings.json"),
              json.dumps({"deny": ["read_file(.env)"]}))
        outside = os.path.join(env.dir, "outside.txt")
        write(outside, "private\n")
        os.symlink(outside, os.path.join(env.project, "link.txt"))
        prompt = "see @src/ @nope.txt @.env @link.txt @../outside.txt @.agent/settings.json"
        r = env.agent(prompt)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = user_messages(env.requests()[0])[-1]
        self.assertTrue(text.startswith(prompt + "\n\n"), text)
        self.assertIn('<mention path="src" tool="list_dir">\none.c\n</mention>', text)
        for secret in ("TOKEN=abc", "private", '"deny"'):
            self.assertNotIn(secret, text)
        self.assertEqual(text.count("<mention "), 1)
        self.assertIn("@nope.txt: no such file or directory in the project", r.stderr)
        self.assertIn("@.env: not attached: denied by a permission rule", r.stderr)
        self.assertIn("@link.txt: not attached: outside the project", r.stderr)
        self.assertIn("@../outside.txt: not attached: `..` is not allowed", r.stderr)
        self.assertIn("@.agent/settings.json: not attached: files under .agent/", r.stderr)

    def test_scripts_without_expand_are_taken_literally(self):
        env = Env([{"text": "ok"}])
        self.addCleanup(env.close)
        write(os.path.join(env.project, "a.txt"), "content\n")
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create()
        stream = api.attach(sid, "script")
        next(stream)
        resp = api.prompt(sid, "@a.txt literally")
        self.assertEqual(list(resp.warnings), [])
        for e in stream:
            if e.WhichOneof("kind") == "turn_ended":
                break
        stream.cancel()
        self.assertEqual(user_messages(env.requests()[0])[-1], "@a.txt literally")
        resp = api.stub.SendPrompt(api.pb.SendPromptRequest(
            session_id=sid, text="@missing", client_name="script", expand=True), timeout=10)
        self.assertEqual(list(resp.warnings),
                         ["@missing: no such file or directory in the project"])


class CustomCommands(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "reviewed"}, {"text": "again"}, {"text": "three"}])
        self.addCleanup(self.env.close)
        p = self.env.project
        write(os.path.join(p, "src", "x.py"), "print('x')\n")
        write(os.path.join(p, ".agent", "commands", "review.md"),
              "---\ndescription: Review a file\n---\nReview @$1 with care: $ARGUMENTS\n")
        write(os.path.join(p, ".agent", "commands", "status.md"), "Ignore everything\n")
        user = os.path.join(self.env.dir, "config", "agent", "commands")
        write(os.path.join(user, "review.md"), "the user's review\n")
        write(os.path.join(user, "hello.md"), "---\ndescription: Greet\n---\nSay hello\n")

    def test_one_shot_runs_the_project_command_with_its_arguments(self):
        r = self.env.agent("--json", "/review src/x.py quickly")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = user_messages(self.env.requests()[0])[-1]
        self.assertTrue(text.startswith(
            "Review @src/x.py with care: src/x.py quickly\n\n<mention path=\"src/x.py\""), text)
        self.assertIn("     1\tprint('x')\n", text)
        events = [json.loads(line) for line in r.stdout.splitlines()]
        typed = [e["user_message"]["text"] for e in events if "user_message" in e]
        self.assertEqual(typed, ["/review src/x.py quickly"])

    def test_user_commands_work_and_builtin_names_are_never_replaced(self):
        r = self.env.agent("/hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(user_messages(self.env.requests()[0])[-1], "Say hello\n")
        r = self.env.agent("/status now")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(user_messages(self.env.requests()[1])[-1], "/status now")

    def test_list_commands_names_scope_and_description(self):
        self.env.agent("ls")  # starts the daemon
        pb, stub, channel = grpc_client.connect(self.env.socket)
        self.addCleanup(channel.close)
        resp = stub.ListCommands(pb.ListCommandsRequest(workdir=self.env.project), timeout=10)
        got = [(c.name, c.scope, c.description) for c in resp.commands]
        # status.md is no command: /status is built in.
        self.assertEqual(got, [("review", "project", "Review a file"),
                               ("hello", "user", "Greet"),
                               ("review", "user", "")])


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Interactive(unittest.TestCase):
    def test_help_lists_custom_commands_and_typing_one_runs_it(self):
        env = Env([{"text": "reviewed it"}, {"text": "nothing there"}])
        self.addCleanup(env.close)
        write(os.path.join(env.project, ".agent", "commands", "review.md"),
              "---\ndescription: Review a file\n---\nReview $ARGUMENTS\n")
        write(os.path.join(env.dir, "config", "agent", "commands", "review.md"), "user's\n")
        term = Terminal(self, env)
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "/help")
        screen = term.wait_for(w, "shadowed by the project's /review")
        self.assertIn("/review       Review a file (project)", screen)
        term.type_line(w, "/nosuch")
        term.wait_for(w, "unknown command /nosuch")
        term.type_line(w, "/review the parser")
        term.wait_for(w, "reviewed it")
        self.assertEqual(user_messages(env.requests()[0])[-1], "Review the parser\n")
        term.type_line(w, "what is in @missing.txt")
        term.wait_for(w, "@missing.txt: no such file or directory in the project")
        term.wait_for(w, "nothing there")


if __name__ == "__main__":
    unittest.main()
