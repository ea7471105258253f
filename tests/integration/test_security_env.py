"""Secrets stay out of tools and off disk, tool bytes stay valid UTF-8, and the daemon cannot
be dumped (security issue 13, items 4 and 8, PR_SET_DUMPABLE)."""
import json
import os
import select
import signal
import subprocess
import unittest

from harness import BIN, Env, tool_call
from test_multi_client import Api, collect_until_turns_end, kind

SECRETS = {
    "AGENT_API_KEY": "sk-test-SECRET123",
    "OPENAI_API_KEY": "sk-openai-SECRET456",
    "MY_TOKEN": "tok-SECRET789",
    "DB_PASSWORD": "pw-SECRET000",
    # Credentials a name filter misses; the allow-list leaves them out.
    "SSH_AUTH_SOCK": "/tmp/ssh-SECRETsock/agent.1",
    "DATABASE_URL": "postgres://user:SECRETpass@db/x",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/SECRET-gcp.json",
    "DOCKER_AUTH_CONFIG": "{\"auths\": \"SECRETdocker\"}",
    "SLACK_WEBHOOK_URL": "https://hooks.example/SECREThook",
    "COOKIE": "session=SECRETcookie",
    "AUTH": "SECRETauth",
    "CREDENTIALS": "SECRETcreds",
}


def env_lines(text):
    """NAME -> value of `env`'s output (the tool result's trailer line has no '=')."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name and name not in out:
            out[name] = value
    return out


def files_under(root):
    for dirpath, _, names in os.walk(root):
        for n in names:
            yield os.path.join(dirpath, n)


def tool_results(messages):
    return [m["content"] for m in messages if m.get("role") == "tool"]


class ToolEnvironment(unittest.TestCase):
    def test_bash_sees_the_clients_path_and_no_secret_and_no_file_holds_the_key(self):
        client_path = "/opt/client-only/bin:" + os.environ.get("PATH", "/usr/bin:/bin")
        env = Env([{"tool_calls": [tool_call("bash", command="env")]}, {"text": "done"}],
                  extra_env=dict(SECRETS, PATH=client_path, CLIENT_MARK="from-the-client",
                                 VIRTUAL_ENV="/opt/venv", KEPT_MARK="kept"))
        self.addCleanup(env.close)
        config_dir = os.path.join(env.dir, "config", "agent")
        os.makedirs(config_dir)
        with open(os.path.join(config_dir, "config.json"), "w") as f:
            json.dump({"tool_env": {"keep": ["KEPT_*"]}}, f)  # how a person adds one
        r = env.agent("--yes", "show me the environment")
        self.assertEqual(r.returncode, 0, r.stderr)
        [result] = tool_results(env.transcript())
        seen = env_lines(result)
        # An allow-list: what is not on it (or kept by the config) does not pass.
        self.assertNotIn("CLIENT_MARK", seen)
        self.assertEqual(seen.get("KEPT_MARK"), "kept", result)
        self.assertEqual(seen.get("VIRTUAL_ENV"), "/opt/venv")
        self.assertEqual(seen.get("PATH"), client_path)
        for name, value in SECRETS.items():
            self.assertNotIn(name, seen)
            self.assertNotIn(value, result)
        self.assertFalse([n for n in seen if n.startswith("AGENT_")], result)

        # The whole session is over: nothing the daemon or client wrote holds the key.
        env.agent("daemon", "stop", timeout=20)
        roots = [os.path.join(env.project, ".agent"), os.path.join(env.dir, "state", "agent")]
        checked = 0
        for root in roots:
            for path in files_under(root):
                with open(path, "rb") as f:
                    data = f.read()
                checked += 1
                for value in SECRETS.values():
                    self.assertNotIn(value.encode(), data, path)
        self.assertGreater(checked, 0)

    def test_a_client_that_sends_no_environment_gets_the_minimal_one_not_the_daemons(self):
        # The daemon is started by `agent` with CLIENT_MARK and a key in its own environment.
        env = Env([{"tool_calls": [tool_call("bash", command="env")]}, {"text": "done"}],
                  extra_env=dict(SECRETS, CLIENT_MARK="in-the-daemons-env"))
        self.addCleanup(env.close)
        api = Api(env)
        self.addCleanup(api.close)
        sid = api.create()
        stream = api.attach(sid, "raw")
        next(stream)
        api.prompt(sid, "env")
        events = collect_until_turns_end(stream)
        stream.cancel()
        [result] = [e.tool_result.content for e in events if kind(e) == "tool_result"]
        seen = env_lines(result)
        self.assertEqual(seen.get("PATH"), "/usr/local/bin:/usr/bin:/bin", result)
        self.assertIn("HOME", seen)
        self.assertNotIn("CLIENT_MARK", seen)
        for value in SECRETS.values():
            self.assertNotIn(value, result)

    def test_the_latest_prompts_environment_wins_filtered_by_the_config(self):
        script = [{"tool_calls": [tool_call("bash", command="env")]}, {"text": "one"},
                  {"tool_calls": [tool_call("bash", command="env")]}, {"text": "two"}]
        env = Env(script)
        self.addCleanup(env.close)
        config_dir = os.path.join(env.dir, "config", "agent")
        os.makedirs(config_dir)
        with open(os.path.join(config_dir, "config.json"), "w") as f:
            json.dump({"tool_env": {"keep": ["GH_TOKEN", "WHICH"], "drop": ["DROP*"]}}, f)
        api = Api(env)
        self.addCleanup(api.close)
        pb = api.pb
        sid = api.stub.CreateSession(pb.CreateSessionRequest(
            workdir=env.project, policy=pb.POLICY_MODE_YES,
            model=pb.ModelConfig(base_url=env.env["AGENT_BASE_URL"], model="scripted",
                                 api_key="k"),
            tool_env=pb.ToolEnvironment(variables=["PATH=/usr/bin:/bin", "WHICH=create"])),
            timeout=10).id
        stream = api.attach(sid, "raw")
        next(stream)
        api.stub.SendPrompt(pb.SendPromptRequest(
            session_id=sid, text="one", client_name="raw",
            tool_env=pb.ToolEnvironment(variables=[
                "PATH=/usr/bin:/bin", "WHICH=prompt", "GH_TOKEN=kept", "DROPME=x",
                "OTHER_TOKEN=dropped"])), timeout=10)
        api.prompt(sid, "two")  # no environment: the session keeps the last one
        events = collect_until_turns_end(stream, turns=2)
        stream.cancel()
        results = [e.tool_result.content for e in events if kind(e) == "tool_result"]
        self.assertEqual(len(results), 2)
        for result in results:
            seen = env_lines(result)
            self.assertEqual(seen.get("WHICH"), "prompt", result)
            self.assertEqual(seen.get("GH_TOKEN"), "kept")
            self.assertNotIn("DROPME", seen)
            self.assertNotIn("OTHER_TOKEN", seen)


class BinaryOutput(unittest.TestCase):
    def test_random_bytes_from_bash_end_the_one_shot_normally_and_save_valid_json(self):
        env = Env([{"tool_calls": [tool_call(
            "bash", command="head -c 300 /dev/urandom; printf '\\377\\300'")]},
            {"text": "done"}])
        self.addCleanup(env.close)
        # Bytes, not text: the terminal rendering is not what this test is about.
        r = subprocess.run([os.path.join(BIN, "agent"), "--yes", "print noise"],
                           cwd=env.project, env=env.env, capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = os.path.join(env.sessions_dir(), env.session_ids()[-1] + ".json")
        with open(path, "rb") as f:
            raw = f.read()
        messages = json.loads(raw.decode("utf-8"))  # strict: raises on invalid UTF-8
        [result] = tool_results(messages)
        self.assertIn("\ufffd", result)
        self.assertIn("[exit code 0]", result)

    def test_json_events_of_binary_output_are_valid_utf8(self):
        env = Env([{"tool_calls": [tool_call(
            "bash", command="head -c 3000 /dev/urandom")]}, {"text": "done"}])
        self.addCleanup(env.close)
        p = subprocess.run([os.path.join(BIN, "agent"), "--yes", "--json", "noise"],
                           cwd=env.project, env=env.env, capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(p.returncode, 0, p.stderr)
        # strict UTF-8; lines end at "\n" only: the repaired noise may hold U+0085 or U+2028,
        # which JSON leaves unescaped and str.splitlines() would take for line ends (about one
        # run in twenty split an event in two).
        lines = p.stdout.decode("utf-8").split("\n")
        events = [json.loads(line) for line in lines if line.strip()]
        self.assertTrue([e for e in events if "toolResult" in e or "tool_result" in e], lines)


class Hardening(unittest.TestCase):
    def test_the_daemon_is_not_dumpable(self):
        """A non-dumpable process's /proc/<pid> files belong to root (kernel task_dump_owner),
        so their owner differs from the process's uid. Observable only when the daemon's uid
        is not 0: as root, the daemon is run as nobody."""
        env = Env([])
        self.addCleanup(env.close)
        uid = os.getuid()
        drop = None
        if uid == 0:
            uid = 65534
            for dirpath, _, names in os.walk(env.dir):
                for path in [dirpath] + [os.path.join(dirpath, n) for n in names]:
                    os.chown(path, uid, uid)

            def drop():
                os.setgid(uid)
                os.setuid(uid)
        r, w = os.pipe()
        p = subprocess.Popen([os.path.join(BIN, "agentd"), "--socket", env.socket,
                              "--ready-fd", str(w)], env=env.env, pass_fds=[w],
                             preexec_fn=drop, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(w)

        def stop():
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stderr.close()
        self.addCleanup(stop)
        ready, _, _ = select.select([r], [], [], 20)
        line = os.read(r, 100) if ready else b""
        os.close(r)
        self.assertTrue(line.startswith(b"ok"), line)
        with open("/proc/%d/status" % p.pid) as f:
            status_uid = int(f.read().split("\nUid:")[1].split()[0])
        self.assertEqual(status_uid, uid)
        self.assertEqual(os.stat("/proc/%d/status" % p.pid).st_uid, 0,
                         "/proc/<agentd>/status belongs to the daemon's uid: it is dumpable")


if __name__ == "__main__":
    unittest.main()
