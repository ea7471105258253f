"""Production units (a .cc/.h pair, or a lone .cc/.h) of daemon/, client/ and common/ that no
unit test includes, largest first. A .cc without a header of its own (a core tool, a part of the
service) counts as tested when the header it implements (the first it includes) is included by
a test. Run from the checkout: /usr/bin/python3 tests/untested_units.py"""
import os, re, subprocess, sys
os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
def ls(*dirs):
    a = subprocess.check_output(["git", "ls-files", *dirs], text=True).split()
    b = subprocess.check_output(["git", "ls-files", "--others", "--exclude-standard", *dirs], text=True).split()
    return a + b
files = [f for f in ls("daemon", "client", "common") if f.endswith((".cc", ".h"))]
units = sorted({f.rsplit(".", 1)[0] for f in files})
inc = set()
for t in ls("tests"):
    if t.endswith((".cc", ".h")):
        inc.update(re.findall(r'#include "([^"]+)"', open(t).read()))
out = []
for u in units:
    if u.endswith("main"):
        continue
    if u + ".h" in inc:
        continue
    if not os.path.exists(u + ".h"):
        first = re.findall(r'#include "([^"]+)"', open(u + ".cc").read())
        if first and first[0] in inc:
            continue
    size = sum(sum(1 for _ in open(f)) for f in (u + ".cc", u + ".h") if os.path.exists(f))
    out.append((size, u))
out.sort(reverse=True)
print(len(units), "units;", len(out), "included by no unit test")
for s, u in out:
    print(s, u)
