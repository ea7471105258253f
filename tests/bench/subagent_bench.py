"""make bench, subagents: the daemon-side cost of a child session (create it, run its one
model request, return its answer) against a plain tool step (read_file), as a ratio.

Used by run_bench.py (bench_subagent(w, t)) in its World: the scripted server answers at
once, so what is left is the daemon's and the client's own work. Both tasks make the same
parent requests; the task run adds one child request per step, answered at once too.
"""
import json
import os
import urllib.request

MARKER = "[[bench-child]]"


def _script(w, replies, agents=None):
    body = {"replies": replies}
    if agents is not None:
        body["agents"] = agents
    req = urllib.request.Request("http://127.0.0.1:%d/script" % w.port,
                                 data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def _steps(call, steps):
    return [{"tool_calls": [call], "repeat": steps - 1}, {"text": "done"}]


def _run(w, steps, proc_cpu_ms, pid):
    k = w.request_count()
    d0 = proc_cpu_ms(pid)
    r = w.run("do it step by step")
    d1 = proc_cpu_ms(pid)
    if r.code != 0:
        raise RuntimeError("the task exited %d: %s" % (r.code, r.err.strip()))
    return r.wall_ms, d1 - d0, w.request_count() - k


def bench_subagent(w, t, proc_cpu_ms, median, runs=3, steps=20):
    with open(os.path.join(w.project, "small.txt"), "w") as f:
        f.write("a small file\n")
    w.checked("ls")
    pid = w.daemon_pid()
    read = {"name": "read_file", "arguments": {"path": "small.txt"}}
    task = {"name": "task", "arguments": {"description": "bench child",
                                          "prompt": MARKER + " answer at once"}}
    plain_wall, plain_cpu, child_wall, child_cpu = [], 0.0, [], 0.0
    for _ in range(runs):
        _script(w, _steps(read, steps))
        wall, cpu, n = _run(w, steps, proc_cpu_ms, pid)
        if n != steps:
            raise RuntimeError("the read_file task made %d requests, not %d" % (n, steps))
        plain_wall.append(wall / steps)
        plain_cpu += cpu
        _script(w, _steps(task, steps), {MARKER: [{"text": "child answer", "repeat": 100000}]})
        wall, cpu, n = _run(w, steps, proc_cpu_ms, pid)
        if n != 2 * steps - 1:
            raise RuntimeError("the task run made %d requests, not %d" % (n, 2 * steps - 1))
        child_wall.append(wall / steps)
        child_cpu += cpu
    _script(w, [{"text": "ok", "repeat": 100000}])
    total = runs * steps
    pw, cw = median(plain_wall), median(child_wall)
    t.add("steps", "subagent step (create child, 1 child request, return): wall per step",
          "%.2f ms" % cw, "—", "%.2f× a read_file step (%.2f ms)" % (cw / pw, pw))
    t.add("steps", "  agentd CPU per subagent step / per read_file step",
          "%.2f / %.2f ms" % (child_cpu / total, plain_cpu / total), "—",
          "%.2f×" % (child_cpu / plain_cpu if plain_cpu > 0 else float("nan")))
    t.note("subagent: `agent \"…\"` of %d parent steps, each one `task` call whose child "
           "session answers its one model request at once, against the same task with a "
           "read_file call per step; medians of %d runs. A subagent step costs a session "
           "created and saved (transcript, meta, lock), one more model request and its saves, "
           "and the events to the parent; agentd CPU from /proc (10 ms ticks, summed)."
           % (steps, runs))
