"""make bench, billing: what a scripted task costs on each provider's prompt cache.

Each task runs against the scripted model server (its own daemon, state and server), and the
request bodies the server received are then priced by the providers' published cache rules
(tests/model_server/prompt_cache.py replays them):

- OpenAI chat and Responses: any prefix of 1024 tokens and more shared with an earlier
  request is cached, in steps of 128 tokens, and billed at 0.1 of the input price (Responses:
  tools, instructions and the `input` items).
- Anthropic Messages: only prefixes ending at a `cache_control` breakpoint are cached; a
  write costs 1.25, a read 0.1 (the 5-minute TTL's prices).

Printed per task and provider: input tokens (bytes / 4 of each part), the share served from
the cache, and billed units (1.0 = one uncached input token). Goals (issue 25): a cached
share of at least 95 % on the 50-step task; on the task that reads about 60k tokens of files
at its first step and then takes 20 (and, as long as the first task, 50) small steps, billed
units at most 0.15 of the uncached total. `python3 billing_bench.py BIN_DIR` runs it alone.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model_server"))
import prompt_cache  # noqa: E402

SERVER = os.path.join(HERE, "model_nodelay.py")
PROVIDERS = [("OpenAI chat", "openai", "/v1/chat/completions"),
             ("OpenAI Responses", "openai-responses", "/v1/responses"),
             ("Anthropic Messages", "anthropic", "/v1/messages")]
READ = 0.1
WRITE = 1.25


def steps_task(steps):
    small = {"name": "read_file", "arguments": {"path": "small.txt"}}
    return [{"tool_calls": [small], "repeat": steps - 1}, {"text": "read it %d times" % steps}]


def big_files_task(small_steps):
    files = [{"name": "read_file", "arguments": {"path": "big%d.txt" % i}} for i in range(3)]
    return [{"tool_calls": files}] + steps_task(small_steps)


def write_files(project):
    with open(os.path.join(project, "small.txt"), "w") as f:
        f.write("a small file\nof three lines\nfor the benchmark\n")
    # Three files of ~80 KB (read_file returns at most 100 KiB): ~60k tokens in all.
    line = "int function_%05d(int x) { return x * %d + 17; }  // a line of source\n"
    for i in range(3):
        with open(os.path.join(project, "big%d.txt" % i), "w") as f:
            f.write("".join(line % (k, k) for k in range(i * 1200, i * 1200 + 1200)))


def run_task(bin_dir, provider, replies):
    """The bodies of the task's model requests, in order."""
    d = tempfile.mkdtemp(prefix="agbill-", dir="/tmp")
    server = None
    try:
        project = os.path.join(d, "project")
        os.makedirs(project)
        write_files(project)
        script, log = os.path.join(d, "script.json"), os.path.join(d, "model.log")
        with open(script, "w") as f:
            json.dump({"replies": replies}, f)
        server = subprocess.Popen([sys.executable, SERVER, "--script", script, "--log", log],
                                  stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("scripted model server did not start: %r" % line)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("AGENT_", "OPENAI_", "ANTHROPIC_", "XDG_"))}
        env.update({"AGENT_SOCKET": os.path.join(d, "d.sock"),
                    "XDG_STATE_HOME": os.path.join(d, "state"),
                    "XDG_CONFIG_HOME": os.path.join(d, "config"),
                    "XDG_RUNTIME_DIR": os.path.join(d, "run"), "HOME": d,
                    "AGENT_BASE_URL": "http://127.0.0.1:%s/v1" % line.split()[1],
                    "AGENT_MODEL": "scripted", "AGENT_API_KEY": "bench-key-not-secret",
                    "AGENT_PROVIDER": provider, "AGENT_MAX_STEPS": "100", "NO_COLOR": "1"})
        agent = os.path.join(bin_dir, "agent")
        try:
            r = subprocess.run([agent, "--yes", "do the task"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=600,
                               stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                raise RuntimeError("the task exited %d: %s" % (r.returncode, r.stderr.strip()))
        finally:
            subprocess.run([agent, "daemon", "stop"], cwd=project, env=env, capture_output=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        with open(log) as f:
            return [json.loads(x)["body"] for x in f if x.strip()]
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
            server.stdout.close()
        shutil.rmtree(d, ignore_errors=True)


def bill(provider, bodies):
    """(input tokens, cached share, billed units) of the bodies under the provider's rules."""
    cache = prompt_cache.PromptCache()
    total = read = written = 0
    for body in bodies:
        if provider == "anthropic":
            t, r, w = cache.anthropic(body)
        elif provider == "openai-responses":
            (t, r), w = cache.openai(body, key="input"), 0
        else:
            (t, r), w = cache.openai(body), 0
        total, read, written = total + t, read + r, written + w
    billed = (total - read - written) + READ * read + WRITE * written
    return total, read / total if total else 0.0, billed


def rows(bin_dir, quick=False):
    """(figure, ours, goal, ratio, status) rows for run_bench.py's table; `quick`: one short
    task per provider (a smoke test of the section)."""
    out = []
    # The files' task twice: after 20 steps Anthropic's price of writing the 60k tokens once
    # (1.25) still weighs (at best (1.25 + 20 * 0.1) / 21 = 0.155 of the files' tokens); after
    # 50, as long as the first task, it is spread out.
    tasks = [("50-step task", steps_task(50), None),
             ("60k tokens of files, then 20 steps", big_files_task(20), 0.15),
             ("60k tokens of files, then 50 steps", big_files_task(50), 0.15)]
    if quick:
        tasks = [("5-step task", steps_task(5), None)]
    for task, replies, billed_goal in tasks:
        for name, provider, _ in PROVIDERS:
            total, share, billed = bill(provider, run_task(bin_dir, provider, replies))
            ours = "%dk in, %.1f %% cached, %dk billed" % (total / 1000, share * 100,
                                                         billed / 1000)
            if billed_goal is None:
                goal, ratio, met = "cached ≥ 95 %", "%.1f %%" % (share * 100), share >= 0.95
            else:
                goal = "billed ≤ %.2f of uncached" % billed_goal
                ratio = "%.3f" % (billed / total)
                met = billed / total <= billed_goal
            out.append(("billing, %s, %s" % (task, name), ours, goal, ratio,
                        "met" if met else "MISSED"))
    return out


if __name__ == "__main__":
    for r in rows(os.path.abspath(sys.argv[1])):
        print("  ".join(r))
