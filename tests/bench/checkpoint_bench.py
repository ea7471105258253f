"""Checkpoint costs on a generated project of 10,000 files (about 100 MB): the time of a turn
whose one bash step changes 3 files, with checkpoints on (the first turn: an empty store; then
steady state) and off, and how much the store grows per turn. Through the real binaries and the
scripted model (answering at once, so the checkpoint's share shows at its largest).

    AGENT_BIN_DIR=BUILD/bin /usr/bin/python3 tests/bench/checkpoint_bench.py [--files N]

run_bench.py prints rows() in its table.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

STEADY_TURNS = 5
CHANGE = "for f in d0/f0 d1/f1 d2/f2; do echo $RANDOM >> $f; done"


def generate(project, files):
    dirs = max(1, files // 100)
    for d in range(dirs):
        os.makedirs(os.path.join(project, "d%d" % d))
        for i in range(files // dirs):
            with open(os.path.join(project, "d%d" % d, "f%d" % i), "w") as f:
                f.write(os.urandom(5000).hex())  # 10 KB of text, half of it compressible
    return files * 10000


def timed_turns(bin_dir, files, checkpoints, turns):
    """Wall ms of each turn (prompt sent → TurnEnded) and the store's bytes after each."""
    os.environ["AGENT_BIN_DIR"] = bin_dir
    from harness import Env, tool_call
    from test_multi_client import Api, collect_until_turns_end
    replies = []
    for _ in range(turns):
        replies += [{"tool_calls": [tool_call("bash", command=CHANGE)]}, {"text": "ok"}]
    env = Env(replies)
    api = None
    try:
        generate(env.project, files)
        config = os.path.join(env.env["XDG_CONFIG_HOME"], "agent")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "config.json"), "w") as f:
            json.dump({"checkpoints": checkpoints}, f)
        api = Api(env)
        sid = api.create()
        stream = api.attach(sid, "bench")
        next(stream)
        times, sizes = [], []
        for n in range(turns):
            t0 = time.monotonic()
            api.prompt(sid, "change three files %d" % n)
            collect_until_turns_end(stream)
            times.append((time.monotonic() - t0) * 1000)
            st = api.stub.DaemonStatus(api.pb.DaemonStatusRequest(), timeout=30)
            sizes.append(st.checkpoint_store_bytes)
        stream.cancel()
        return times, sizes
    finally:
        if api is not None:
            api.close()
        env.close()


def rows(bin_dir, files=10000):
    """(figure, value, ratio to the turn without checkpoints) rows."""
    on, sizes = timed_turns(bin_dir, files, {"max_project_mb": 1000}, 1 + STEADY_TURNS)
    off, _ = timed_turns(bin_dir, files, False, 1 + STEADY_TURNS)
    steady_on = statistics.median(on[1:])
    steady_off = statistics.median(off[1:])
    growth = (sizes[-1] - sizes[0]) / STEADY_TURNS
    return [
        ("project", "%d files, %.0f MB" % (files, files * 10000 / 1e6), ""),
        ("turn changing 3 files, checkpoints off (median of %d)" % STEADY_TURNS,
         "%.0f ms" % steady_off, ""),
        ("same, checkpoints on, first turn (empty store)", "%.0f ms" % on[0],
         "%.1fx" % (on[0] / steady_off)),
        ("same, checkpoints on, steady state (median of %d)" % STEADY_TURNS,
         "%.0f ms (+%.0f ms)" % (steady_on, steady_on - steady_off),
         "%.1fx" % (steady_on / steady_off)),
        ("store after the first checkpoint", "%.1f MB" % (sizes[0] / 1e6), ""),
        ("store growth per turn (3 files changed)", "%.0f KB" % (growth / 1e3), ""),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--bin", default=os.environ.get(
        "AGENT_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin")))
    args = ap.parse_args()
    for figure, value, ratio in rows(os.path.abspath(args.bin), args.files):
        print("%-55s %-22s %s" % (figure, value, ratio))


if __name__ == "__main__":
    main()
