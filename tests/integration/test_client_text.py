"""Text on screen and line editing (issue 14), in a real terminal: tmux runs `agent` against
the scripted model (test_terminal.Terminal); waits are bounded polls of the screen.

Tab completion of commands and of @paths, a readable Ctrl-R prompt, the prompt history of
two terminals merged, Markdown rendering, and the diff of an edit made under --yes.
"""
import os
import subprocess
import unittest

from harness import Env, tool_call
from test_terminal import TMUX, Terminal, wait_until


@unittest.skipIf(TMUX is None, "tmux is not installed")
class LineEditing(unittest.TestCase):
    def make(self, replies=(), **kw):
        env = Env(list(replies), **kw)
        self.addCleanup(env.close)
        return env, Terminal(self, env)

    def test_tab_completes_a_slash_command(self):
        env, term = self.make()
        w = term.start("main")
        term.wait_for(w, "›")
        term.keys(w, "-l", "/he")
        term.keys(w, "Tab")
        # A Tab that arrives with more input behind it is pasted text: wait for its effect.
        term.wait_for(w, "› /help")
        term.keys(w, "-l", "x")  # after the space Tab added
        term.wait_for(w, "› /help x")
        term.keys(w, "BSpace", "Enter")
        term.wait_for(w, "this list")  # /help ran
        # Several commands share "/s": Tab lists them above the prompt.
        term.keys(w, "-l", "/s")
        term.keys(w, "Tab")
        screen = term.wait_for(w, "/sessions")
        self.assertIn("/status", screen)

    def test_tab_completes_custom_commands_with_their_description(self):
        env, term = self.make()
        commands = os.path.join(env.project, ".agent", "commands")
        os.makedirs(commands)
        for name, what in (("review-file", "Review a file"), ("review-pr", "Review the PR")):
            with open(os.path.join(commands, name + ".md"), "w") as f:
                f.write("---\ndescription: %s\n---\nReview $ARGUMENTS\n" % what)
        w = term.start("main")
        term.wait_for(w, "›")
        term.keys(w, "-l", "/rev")
        term.keys(w, "Tab")  # the common prefix, then the choices with what they do
        term.wait_for(w, "› /review-")
        term.keys(w, "Tab")
        screen = term.wait_for(w, "/review-pr (Review the PR)")
        self.assertIn("/review-file (Review a file)", screen)
        term.keys(w, "-l", "p")
        term.keys(w, "Tab")
        term.wait_for(w, "› /review-pr")
        term.keys(w, "-l", "x")
        term.wait_for(w, "› /review-pr x")

    def test_tab_after_at_completes_project_files_honouring_gitignore(self):
        env, term = self.make()
        os.makedirs(os.path.join(env.project, "src", "render"))
        os.makedirs(os.path.join(env.project, "build"))
        for p in ("src/render/markdown_table.cc", "README.md", "build/markdown_table.o"):
            with open(os.path.join(env.project, p), "w") as f:
                f.write("x\n")
        with open(os.path.join(env.project, ".gitignore"), "w") as f:
            f.write("build/\n")
        subprocess.run(["git", "init", "-q", env.project], check=True)
        w = term.start("main")
        term.wait_for(w, "›")
        # Fuzzy: the letters in order, the ignored build/ output not a candidate.
        term.keys(w, "-l", "look at @mdtable")
        term.keys(w, "Tab")
        term.wait_for(w, "› look at @src/render/markdown_table.cc")
        term.keys(w, "-l", "x")
        screen = term.wait_for(w, "› look at @src/render/markdown_table.cc x")
        self.assertNotIn("build/", screen)

    def test_tab_completes_a_path_in_a_command_argument(self):
        env, term = self.make()
        os.makedirs(os.path.join(env.project, "docs"))
        with open(os.path.join(env.project, "docs", "guide-to-tables.md"), "w") as f:
            f.write("x\n")
        w = term.start("main")
        term.wait_for(w, "›")
        term.keys(w, "-l", "/allow docs/gu")
        term.keys(w, "Tab")
        term.wait_for(w, "› /allow docs/guide-to-tables.md")
        term.keys(w, "-l", "x")
        term.wait_for(w, "› /allow docs/guide-to-tables.md x")

    def test_ctrl_r_shows_a_readable_search_prompt(self):
        env, term = self.make()
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "/help")
        term.wait_for(w, "this list")
        term.type_line(w, "/sessions")
        term.keys(w, "C-r")
        term.wait_for(w, "search history: (type to search)")
        term.keys(w, "-l", "hel")
        term.wait_for(w, "search history: hel → /help")
        term.keys(w, "Escape")  # gives the line back as it was
        self.assertTrue(wait_until(lambda: "search history" not in term.screen(w).splitlines()[-1]
                                   and term.screen(w).rstrip().endswith("›")), term.screen(w))
        term.keys(w, "C-r")
        term.keys(w, "-l", "nothing like it")
        term.wait_for(w, "search history (no match): nothing like it")

    def test_history_of_two_terminals_is_merged(self):
        env, term = self.make()
        a = term.start("a")
        term.wait_for(a, "›")
        b = term.start("b")
        term.wait_for(b, "›")
        term.type_line(a, "/help")
        term.wait_for(a, "this list")
        # B started before A's entry: its next search sees it.
        term.type_line(b, "/sessions")
        term.wait_for(b, "session")
        term.keys(b, "C-r")
        term.keys(b, "-l", "hel")
        term.wait_for(b, "search history: hel → /help")
        term.keys(b, "C-g")
        term.keys(a, "C-d")
        term.wait_exit(a)
        term.keys(b, "C-d")
        term.wait_exit(b)
        # B left last: A's entry is still there for the next terminal.
        c = term.start("c")
        term.wait_for(c, "›")
        term.keys(c, "Up")
        term.wait_for(c, "› /sessions")
        term.keys(c, "Up")
        term.wait_for(c, "› /help")


MARKDOWN_REPLY = "\n".join([
    "Here is **the summary**, with an *odd* note and [the docs](https://example.org/docs).",
    "",
    "| File | Lines |",
    "|------|------:|",
    "| a.cc | 12 |",
    "| b.h | 1234 |",
    "",
    "```python",
    "print('**not bold**')",
    "```",
    "",
    "- " + " ".join("word%02d" % i for i in range(40)),
])


@unittest.skipIf(TMUX is None, "tmux is not installed")
class Rendering(unittest.TestCase):
    def make(self, replies, **kw):
        env = Env(list(replies), **kw)
        self.addCleanup(env.close)
        return env, Terminal(self, env, cols=60)

    def test_markdown_without_colour_keeps_its_structure_and_wraps_at_words(self):
        # NO_COLOR is set (harness.Env): no escapes, but no raw ** or ``` either.
        env, term = self.make([{"text": MARKDOWN_REPLY, "chunk_size": 7}])
        w = term.start("main")
        term.wait_for(w, "›")
        term.type_line(w, "summarise")
        screen = term.wait_for(w, "word39")
        self.assertIn("Here is the summary, with an odd note and the docs", screen)
        self.assertIn("(https://example.org/docs)", screen)
        self.assertNotIn("**", screen.replace("'**not bold**'", ""))
        self.assertNotIn("```", screen)
        self.assertIn("╭─ python", screen)
        self.assertIn("│ print('**not bold**')", screen)  # code is shown as it is
        self.assertIn("│ File │ Lines │", screen)
        self.assertIn("│ a.cc │    12 │", screen)
        self.assertIn("│ b.h  │  1234 │", screen)
        self.assertIn("└──────┴───────┘", screen)
        # The long item wraps at words, under its bullet: every word whole on one row.
        rows = screen.splitlines()
        for i in range(40):
            word = "word%02d" % i
            self.assertTrue(any(word in r.split() for r in rows), (word, screen))
        self.assertTrue(any(r.startswith("• word00") for r in rows), screen)
        self.assertTrue(any(r.startswith("  word") for r in rows), screen)
        self.assertTrue(all(len(r) < 60 for r in rows if "word" in r), screen)

    def test_markdown_with_colour_styles_italics_and_links(self):
        env, term = self.make([{"text": "An *odd* note, [docs](https://e.org)."}])
        w = term.start("main", extra_env={"NO_COLOR": None})
        term.wait_for(w, "›")
        term.type_line(w, "go")
        term.wait_for(w, "An odd note, docs (https://e.org).")
        screen = term.screen(w, escapes=True)
        self.assertIn("\x1b[3modd", screen)   # italic
        self.assertIn("\x1b[4mdocs", screen)  # underlined


    def test_yes_edits_still_show_a_compact_diff(self):
        env, term = self.make([
            {"tool_calls": [tool_call("read_file", path="notes.txt")]},
            {"tool_calls": [tool_call("edit_file", path="notes.txt", old_string="beta\n",
                                      new_string="BETA\ndelta\n")]},
            {"tool_calls": [tool_call("write_file", path="new.txt", content="one\ntwo\n")]},
            {"expect": {"last_role": "tool"}, "text": "All done."},
        ])
        with open(os.path.join(env.project, "notes.txt"), "w") as f:
            f.write("alpha\nbeta\ngamma\n")
        w = term.start("main", "--yes")
        term.wait_for(w, "›")
        term.type_line(w, "edit the notes")
        screen = term.wait_for(w, "All done.")
        self.assertNotIn("[y]es", screen)  # nothing was asked
        rows = [r.strip() for r in screen.splitlines()]
        self.assertIn("notes.txt +2 -1", rows, screen)
        for line in ("-beta", "+BETA", "+delta", " alpha".strip()):
            self.assertIn(line, rows, screen)
        self.assertIn("new.txt +2 -0", rows, screen)
        self.assertIn("+one", rows, screen)
        self.assertEqual(env.stats()["expect_failed"], 0)


if __name__ == "__main__":
    unittest.main()
