"""What a client can make the daemon hold: requests are bounded in size (16 MiB), and a
session nobody uses is unloaded from memory, still listed, and loaded again when used."""
import time
import unittest

import grpc

from harness import PROTOCOL_VERSION, Env
import grpc_client

MB = 1024 * 1024


def wait_until(pred, timeout=20.0, what="condition"):
    """Polls `pred` (a daemon query: there is no event to await) until true; bounded."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


class RequestSize(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "got it"}])
        self.addCleanup(self.env.close)
        self.assertEqual(self.env.agent("ls").returncode, 0)  # starts the daemon
        self.pb, self.stub, self.channel = grpc_client.connect(self.env.socket)
        self.addCleanup(self.channel.close)
        pb = self.pb
        self.sid = self.stub.CreateSession(pb.CreateSessionRequest(
            workdir=self.env.project, policy=pb.POLICY_MODE_YES,
            model=pb.ModelConfig(base_url=self.env.env["AGENT_BASE_URL"], model="scripted",
                                 api_key=self.env.env["AGENT_API_KEY"])), timeout=10).id

    def prompt(self, text):
        return self.stub.SendPrompt(self.pb.SendPromptRequest(
            session_id=self.sid, text=text, client_name="t"), timeout=60)

    def test_a_1mb_prompt_is_accepted_and_reaches_the_model(self):
        stream = self.stub.Attach(self.pb.AttachRequest(
            session_id=self.sid, client_name="t", protocol_version=PROTOCOL_VERSION), timeout=60)
        next(stream)  # the snapshot: attached before the prompt
        text = "1 MB prompt " + "x" * MB
        self.assertEqual(self.prompt(text).queue_position, 0)
        for e in stream:
            if e.WhichOneof("kind") == "turn_ended":
                break
        stream.cancel()
        users = [m for m in self.env.transcript(self.sid) if m["role"] == "user"]
        self.assertEqual(users[-1]["content"], text)
        self.assertEqual(len(self.env.requests()), 1)

    def test_a_100mb_prompt_is_refused_and_the_daemon_carries_on(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.prompt("y" * (100 * MB))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("larger than max", cm.exception.details())
        self.assertIn("16777216", cm.exception.details())  # the limit, named
        # Nothing of it was kept or sent, and the daemon still answers.
        self.assertEqual([m for m in self.env.transcript(self.sid) if m["role"] == "user"], [])
        self.assertEqual(self.env.requests(), [])
        self.assertEqual(self.prompt("small").queue_position, 0)


class IdleUnload(unittest.TestCase):
    def setUp(self):
        self.env = Env([{"text": "first answer"}, {"text": "second answer"}],
                       extra_env={"AGENT_SESSION_IDLE_UNLOAD_S": "1"})
        self.addCleanup(self.env.close)

    def loaded(self):
        pb, stub, channel = grpc_client.connect(self.env.socket)
        try:
            return stub.DaemonStatus(pb.DaemonStatusRequest(), timeout=10).sessions_loaded
        finally:
            channel.close()

    def test_an_idle_session_is_unloaded_listed_and_loaded_again(self):
        r = self.env.agent("hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        sid = self.env.session_ids()[0]
        wait_until(lambda: self.loaded() == 0, what="the idle session to be unloaded")
        ls = self.env.agent("ls")
        self.assertEqual(ls.returncode, 0, ls.stderr)
        self.assertIn(sid[:8], ls.stdout)
        r = self.env.agent("-r", sid, "again")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("second answer", r.stdout)
        contents = [m["content"] for m in self.env.transcript(sid) if m["role"] == "user"]
        self.assertEqual(contents, ["hello", "again"])


if __name__ == "__main__":
    unittest.main()
