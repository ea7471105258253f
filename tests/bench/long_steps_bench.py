"""make bench, long: the daemon's CPU per step of a real task in a session of 10,000 messages
against the same task in a session of 20, as a ratio (goal ≤ 1.5×). request_bench measures
the request alone; this is everything a step does in agentd: the reply's messages, the tool
call, the journal, the events, the request.

Used by run_bench.py (bench_long_steps(w, t, ...)) in its World; standalone:
    /usr/bin/python3 tests/bench/long_steps_bench.py --bin build-release/bin
"""
import argparse
import os
import sys


def _task(w, sid, steps, proc_cpu_ms, pid):
    w.load_script([{"tool_calls": [{"name": "read_file", "arguments": {"path": "small.txt"}}],
                    "repeat": steps - 1}, {"text": "read it %d times" % (steps - 1)}])
    k = w.request_count()
    d0 = proc_cpu_ms(pid)
    r = w.run("--resume", sid, "read small.txt again and again")
    d1 = proc_cpu_ms(pid)
    if r.code != 0:
        raise RuntimeError("the task exited %d: %s" % (r.code, r.err.strip()))
    if w.request_count() - k != steps:
        raise RuntimeError("the task made %d requests, not %d" % (w.request_count() - k, steps))
    return (d1 - d0) / steps


def bench_long_steps(w, t, write_sessions, proc_cpu_ms, median, sizes=(20, 10000), runs=5,
                     steps=50):
    with open(os.path.join(w.project, "small.txt"), "w") as f:
        f.write("a small file\nof three lines\nfor the benchmark\n")
    ids = {n: write_sessions(w.env["XDG_STATE_HOME"], w.project, 1, n)[0][0] for n in sizes}
    w.checked("ls")
    pid = w.daemon_pid()
    for n in sizes:
        _task(w, ids[n], 2, proc_cpu_ms, pid)  # loads it; the first request builds its cache
    per_step = {n: [] for n in sizes}
    for _ in range(runs):  # interleaved, so that the machine's moods fall on both
        for n in sizes:
            per_step[n].append(_task(w, ids[n], steps, proc_cpu_ms, pid))
    ref = median(per_step[sizes[0]])
    for n in sizes:
        t.goal_ratio("long", "agentd CPU per step of a %d-step task, %s-message session "
                     "(median of %d)" % (steps, format(n, ","), runs), median(per_step[n]), "ms",
                     ref, "%d messages" % sizes[0], 1.5)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import run_bench
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=5)
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
