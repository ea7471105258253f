"""client/'s folders are layers (client/CMakeLists.txt): a file includes its own folder's files
and those of the layers below it, never one above it, and view/ and acp/ never include each
other. A file in a folder that is not a layer fails too, so a new folder takes its place here."""

import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLIENT = os.path.join(ROOT, "client")

# From the bottom up; folders of the same rank may not include each other.
RANKS = {"terminal": 0, "link": 1, "input": 2, "text": 3, "commands": 4, "view": 5, "acp": 5,
         ".": 6}
INCLUDE = re.compile(r'^\s*#\s*include\s+"client/([^"]+)"', re.M)


def layer_of(path_in_client):
    parts = path_in_client.split("/")
    return parts[0] if len(parts) > 1 else "."


def upward_includes():
    found = []
    for dirpath, _, files in os.walk(CLIENT):
        for name in files:
            if not name.endswith((".cc", ".h")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), CLIENT).replace(os.sep, "/")
            src = layer_of(rel)
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                dst = layer_of(inc)
                if src == dst:
                    continue
                if src not in RANKS or dst not in RANKS:
                    found.append("%s -> client/%s: a folder that is no layer" % (rel, inc))
                elif RANKS[dst] >= RANKS[src]:
                    found.append("%s (%s) -> client/%s (%s)" % (rel, src, inc, dst))
    return sorted(found)


class ClientLayersTest(unittest.TestCase):
    def test_no_include_runs_back_up(self):
        self.assertEqual(upward_includes(), [])

    def test_every_layer_is_a_folder(self):
        for layer in RANKS:
            self.assertTrue(os.path.isdir(os.path.join(CLIENT, layer)), layer)


if __name__ == "__main__":
    unittest.main()
