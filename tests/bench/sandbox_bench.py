"""The sandbox's cost per bash call (issue 24; goal ≤ 15 ms over an unsandboxed call).

A scripted task of CALLS `bash` calls of `true` runs through the real agent and agentd twice
per round, once with the sandbox (bubblewrap, the default) and once with AGENT_SANDBOX=off,
rounds interleaved so that load drifts hit both alike; the figure is the median over rounds of
(wall with − wall without) / CALLS: everything a call adds, namespaces, mounts and the bwrap
process included. Each world is the integration harness's (tests/integration/harness.py):
its own daemon, socket and scripted model server, all stopped afterwards.

    /usr/bin/python3 tests/bench/sandbox_bench.py --bin BUILD/bin
"""
import argparse
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

CALLS = 30
ROUNDS = 3


def one_run(sandbox_on):
    import harness
    replies = [{"tool_calls": [harness.tool_call("bash", command="true")]}
               for _ in range(CALLS)] + [{"text": "done"}]
    extra = {} if sandbox_on else {"AGENT_SANDBOX": "off"}
    env = harness.Env(replies, extra_env=dict(extra, AGENT_MAX_STEPS=str(CALLS + 5)))
    try:
        env.agent("ls")  # the daemon starts (and probes) outside the timed part
        start = time.monotonic()
        r = env.agent("--yes", "go", timeout=300)
        wall = time.monotonic() - start
        if r.returncode != 0:
            raise RuntimeError("agent exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return wall
    finally:
        env.close()


def rows(bin_dir):
    """[(figure, value in ms)]: the sandbox's cost per bash call."""
    if shutil.which("bwrap") is None:
        raise RuntimeError("bubblewrap is not installed")
    os.environ["AGENT_BIN_DIR"] = bin_dir
    import harness
    harness.BIN = bin_dir
    costs = []
    for _ in range(ROUNDS):
        on = one_run(True)
        off = one_run(False)
        costs.append((on - off) / CALLS * 1000.0)
    return [("sandbox cost per bash call (%d calls, median of %d)" % (CALLS, ROUNDS),
             statistics.median(costs))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    for figure, ms in rows(os.path.abspath(args.bin)):
        print("%s: %.2f ms (goal ≤ 15 ms)" % (figure, ms))


if __name__ == "__main__":
    main()
