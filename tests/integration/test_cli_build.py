"""What a user builds: `make` and `make install PREFIX=~/.local` build the optimised Release
tree (build-release/), the tests build and run the Debug tree (build/), and the README's
real-model instructions run the installed programs, not the Debug build. Checked with
`make -n`, which prints the commands (and those of the make it recurses into) without
running them."""
import os
import re
import shutil
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def dry_run(*targets):
    r = subprocess.run(["make", "-n", "-C", ROOT, *targets], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, MAKEFLAGS=""))
    if r.returncode != 0:
        raise AssertionError("make -n %s: %s" % (" ".join(targets), r.stderr))
    return r.stdout


def builds(output):
    """The trees `cmake --build` builds, in order."""
    return re.findall(r"^cmake --build (\S+)", output, re.M)


@unittest.skipIf(shutil.which("make") is None, "make is not installed")
class WhatAUserBuilds(unittest.TestCase):
    def test_make_builds_the_release_tree(self):
        out = dry_run()
        self.assertEqual(builds(out), ["build-release"], out)
        if not os.path.exists(os.path.join(ROOT, "build-release", "CMakeCache.txt")):
            self.assertIn("-DCMAKE_BUILD_TYPE=Release", out)

    def test_install_is_one_command_with_a_prefix(self):
        out = dry_run("install", "PREFIX=/home/someone/.local")
        self.assertEqual(builds(out), ["build-release"], out)
        self.assertIn("cmake --install build-release --prefix /home/someone/.local", out)

    def test_the_tests_keep_the_debug_tree(self):
        out = dry_run("test")
        self.assertEqual(builds(out), ["build"], out)
        self.assertRegex(out, r"(?m)^cd build && ctest ")
        if not os.path.exists(os.path.join(ROOT, "build", "CMakeCache.txt")):
            self.assertIn("-DCMAKE_BUILD_TYPE=Debug", out)
        self.assertEqual(builds(dry_run("demo")), ["build"])

    def test_the_readme_tells_a_user_to_run_the_optimised_programs(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        section = readme.split("## Using it with a real model", 1)[1].split("\n## ", 1)[0]
        self.assertIn("make install PREFIX=~/.local", section)
        self.assertNotIn("build/bin/", section)


if __name__ == "__main__":
    unittest.main()
