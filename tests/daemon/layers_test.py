"""daemon/'s folders are floors (daemon/CMakeLists.txt, the README's "Layout"): a file includes
its own folder's files and those of the floors below it, never one above it or beside it. A file
in a folder that is no floor fails too, so a new folder takes its place here."""

import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DAEMON = os.path.join(ROOT, "daemon")

# From the bottom up; folders of the same rank may not include each other. "." is main.cc.
RANKS = {"base": 0,
         "sandbox": 1, "llm": 1, "store": 1,
         "tools": 2,
         "policy": 3, "context": 3, "mcp": 3, "checkpoints": 3,
         "hooks": 4, "prompt": 4,
         "session": 5,
         "subagents": 6,
         "service": 7,
         ".": 8}
INCLUDE = re.compile(r'^\s*#\s*include\s+"daemon/([^"]+)"', re.M)
AT_THE_TOP = {"main.cc", "CMakeLists.txt"}  # nothing else is loose in daemon/
# The one process seam (base/process_runner.h): only it starts a program. The network bridge is
# a program of its own that runs inside the sandbox, not a part of agentd.
STARTS_A_PROCESS = re.compile(r"\b(posix_spawnp?|fork|vfork|execv[pe]?|execl[pe]?|system|popen)\s*\(")
SEAM = {"base/process_runner.cc", "sandbox/net_bridge_main.cc"}


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

    def test_only_the_seam_starts_a_process(self):
        found = []
        for rel, path in sources():
            if rel in SEAM:
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    code = line.split("//", 1)[0]
                    if STARTS_A_PROCESS.search(code):
                        found.append("%s:%d: %s" % (rel, number, line.strip()))
        self.assertEqual(found, [])

    def test_only_main_is_loose_at_the_top(self):
        loose = sorted(n for n in os.listdir(DAEMON)
                       if os.path.isfile(os.path.join(DAEMON, n)) and n not in AT_THE_TOP)
        self.assertEqual(loose, [])


if __name__ == "__main__":
    unittest.main()
