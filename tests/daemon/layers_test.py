"""daemon/'s folders are floors (daemon/CMakeLists.txt, the README's "Layout"): a file includes
its own folder's files and those of the floors below it, never one above it or beside it. A file
in a folder that is no floor fails too, so a new folder takes its place here."""

import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DAEMON = os.path.join(ROOT, "daemon")

# From the bottom up; folders of the same rank may not include each other. "." is main.cc.
RANKS = {"sandbox": 0, "llm": 0, "store": 0,
         "tools": 1, "base": 1,
         "policy": 2, "context": 2, "mcp": 2, "checkpoints": 2,
         "hooks": 3, "prompt": 3,
         "session": 4,
         "subagents": 5,
         "service": 6,
         ".": 7}
INCLUDE = re.compile(r'^\s*#\s*include\s+"daemon/([^"]+)"', re.M)
AT_THE_TOP = {"main.cc", "CMakeLists.txt"}  # nothing else is loose in daemon/


def floor_of(path_in_daemon):
    parts = path_in_daemon.split("/")
    return parts[0] if len(parts) > 1 else "."


def sources():
    for dirpath, _, files in os.walk(DAEMON):
        for name in files:
            if name.endswith((".cc", ".h")):
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, DAEMON).replace(os.sep, "/"), path


def wrong_includes():
    found = []
    for rel, path in sources():
        src = floor_of(rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            dst = floor_of(inc)
            if src == dst:
                continue
            if src not in RANKS or dst not in RANKS:
                found.append("%s -> daemon/%s: a folder that is no floor" % (rel, inc))
            elif RANKS[dst] >= RANKS[src]:
                found.append("%s (%s) -> daemon/%s (%s)" % (rel, src, inc, dst))
    return sorted(found)


class DaemonFloorsTest(unittest.TestCase):
    def test_no_include_runs_back_up_or_across(self):
        self.assertEqual(wrong_includes(), [])

    def test_every_floor_is_a_folder(self):
        for floor in RANKS:
            self.assertTrue(os.path.isdir(os.path.join(DAEMON, floor)), floor)

    def test_only_main_is_loose_at_the_top(self):
        loose = sorted(n for n in os.listdir(DAEMON)
                       if os.path.isfile(os.path.join(DAEMON, n)) and n not in AT_THE_TOP)
        self.assertEqual(loose, [])


if __name__ == "__main__":
    unittest.main()
