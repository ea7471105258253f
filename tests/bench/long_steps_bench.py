"""make bench, long: the daemon's CPU per step of a real task in a session of 10,000 messages
against the same task in a session of 20, as a ratio (goal ≤ 1.5×). request_bench measures
the request alone; this is everything a step does in agentd: the reply's messages, the tool
call, the journal, the events, the request. A step's cost is the difference between a long and
a short task over the steps between them, so what a task pays once (loading the session, the
client's attach with its history, the whole write at the end) is not spread over its steps.

Used by run_bench.py (bench_long_steps(w, t, ...)) in its World; standalone:
    /usr/bin/python3 tests/bench/long_steps_bench.py --bin build-release/bin
"""
import argparse
import json
import os
import sys


NO_COMPACTION = {"AGENT_COMPACT_AT": "4000000000", "AGENT_CONTEXT_TOKENS": "1000000000"}


def _task(w, sid, steps, proc_cpu_ms, pid):
    w.load_script([{"tool_calls": [{"name": "read_file", "arguments": {"path": "small.txt"}}],
                    "repeat": steps - 1}, {"text": "read it %d times" % (steps - 1)}])
    k = w.request_count()
    d0 = proc_cpu_ms(pid)
    # Not compacted: the figure is a step's cost at this length, not a compaction's.
    r = w.run("--resume", sid, "read small.txt again and again", env=NO_COMPACTION, timeout=600)
    d1 = proc_cpu_ms(pid)
    if r.code != 0:
        raise RuntimeError("the task exited %d: %s" % (r.code, r.err.strip()))
    if w.request_count() - k != steps:
        raise RuntimeError("the task made %d requests, not %d" % (w.request_count() - k, steps))
    return (d1 - d0) / steps


def bench_long_steps(w, t, write_sessions, proc_cpu_ms, median, sizes=(20, 10000), runs=3,
                     steps=25):
    with open(os.path.join(w.project, "small.txt"), "w") as f:
        f.write("a small file\nof three lines\nfor the benchmark\n")
    ids = {n: write_sessions(w.env["XDG_STATE_HOME"], w.project, 1, n)[0][0] for n in sizes}
    # The daemon finds saved sessions through its registry of projects, read when it starts.
    registry = os.path.join(w.env["XDG_STATE_HOME"], "agent", "projects.json")
    known = []
    if os.path.exists(registry):
        with open(registry) as f:
            known = json.load(f).get("projects", [])
    with open(registry, "w") as f:
        json.dump({"projects": sorted(set(known) | {w.project})}, f)
    w.stop_daemon()
    w.checked("ls")
    pid = w.daemon_pid()
    for n in sizes:
        _task(w, ids[n], 2, proc_cpu_ms, pid)  # loads it; the first request builds its cache
    short = max(2, steps // 5)
    per_step = {n: [] for n in sizes}
    for _ in range(runs):  # interleaved, so that the machine's moods fall on both
        for n in sizes:
            a = _task(w, ids[n], short, proc_cpu_ms, pid) * short
            b = _task(w, ids[n], steps, proc_cpu_ms, pid) * steps
            per_step[n].append((b - a) / (steps - short))
    ref = median(per_step[sizes[0]])
    for n in sizes:
        t.goal_ratio("long", "agentd CPU per step, %s-message session (%d- minus %d-step task, "
                     "median of %d)" % (format(n, ","), steps, short, runs), median(per_step[n]),
                     "ms", ref, "%d messages" % sizes[0], 1.5)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import run_bench
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    t = run_bench.Table()
    w = run_bench.World(os.path.abspath(args.bin))
    try:
        bench_long_steps(w, t, run_bench.write_sessions, run_bench.proc_cpu_ms, run_bench.median,
                         runs=args.runs)
    finally:
        w.close()
    t.print("long sessions, end to end")


if __name__ == "__main__":
    main()
