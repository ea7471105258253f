"""The prefix a provider caches stays byte-identical: on the exact bytes of consecutive request
bodies the scripted server received, across the operations a session goes through (a step
of a turn, a mode change, a model switch on the same provider, an attach and a detach, an
idle unload and reload, a daemon restart and a resume from disk), for each provider. Also
what the emulated prompt caches (tests/model_server/prompt_cache.py) then serve."""
import json
import time
import unittest

from harness import Env, tool_call
import grpc_client

ANTHROPIC_MARK = '"cache_control":{"type":"ephemeral"},'


def wait_until(pred, timeout=20.0, what="condition"):
    """Polls `pred` (a daemon query: there is no event to await) until true; bounded."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def members(raw):
    """The top-level members of a compact JSON object, each as its exact text; an array's as
    the list of its elements' exact texts."""
    dec = json.JSONDecoder()
    out, pos = {}, 1
    assert raw[0] == "{", raw[:20]
    while raw[pos] != "}":
        key, pos = dec.raw_decode(raw, pos)
        assert raw[pos] == ":", raw[pos - 20:pos + 20]
        pos += 1
        if raw[pos] == "[":
            items, pos = [], pos + 1
            while raw[pos] != "]":
                _, end = dec.raw_decode(raw, pos)
                items.append(raw[pos:end])
                pos = end + 1 if raw[end] == "," else end
            pos += 1
            out[key] = items
        else:
            _, end = dec.raw_decode(raw, pos)
            out[key] = raw[pos:end]
            pos = end
        if raw[pos] == ",":
            pos += 1
    return out


def prefix_problem(before, after, model_changed=False):
    """None when `after` repeats every byte of `before` that a provider caches (its tools,
    system prompt and messages, Anthropic's moving cache_control marks aside), else what
    differs."""
    a, b = members(before), members(after)
    for key in sorted(set(a) | set(b)):
        if key == "model" and model_changed:
            continue
        if key in ("messages", "input"):  # chat and Anthropic; Responses
            old = [m.replace(ANTHROPIC_MARK, "") for m in a[key]]
            new = [m.replace(ANTHROPIC_MARK, "") for m in b[key]]
            if new[:len(old)] != old:
                i = next(i for i, (x, y) in enumerate(zip(old, new)) if x != y)
                return "message %d changed:\n%s\n%s" % (i, old[i], new[i])
            if len(new) <= len(old):
                return "no message was added"
        elif a.get(key) != b.get(key):
            return "%s changed:\n%s\n%s" % (key, str(a.get(key))[:300], str(b.get(key))[:300])
    return None


class BytesOfThePrefix:
    """The operations, each followed by a turn; every request checked against the one
    before it."""
    provider_env = {}

    def setUp(self):
        text = {"text": "done"}
        replies = [{"tool_calls": [tool_call("list_dir", path=".")]}, text,  # first turn
                   {"tool_calls": [tool_call("list_dir", path=".")]}, text,  # after a mode change
                   text,  # after a model switch
                   text,  # after an attach and a detach
                   text,  # after an idle unload
                   text]  # after a daemon restart, resumed from disk
        env = dict(self.provider_env, AGENT_SESSION_IDLE_UNLOAD_S="1")
        self.env = Env(replies, extra_env=env, log_raw=True)
        self.addCleanup(self.env.close)

    def turn(self, *args):
        r = self.env.agent(*args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def daemon(self, call):
        pb, stub, channel = grpc_client.connect(self.env.socket)
        try:
            return call(pb, stub)
        finally:
            channel.close()

    def loaded(self):
        return self.daemon(lambda pb, stub: stub.DaemonStatus(pb.DaemonStatusRequest(),
                                                              timeout=10).sessions_loaded)

    def test_no_operation_changes_a_byte_of_the_previous_request(self):
        self.turn("--yes", "first")
        sid = self.env.session_ids()[0]
        steps = ["first turn"]
        self.daemon(lambda pb, stub: stub.SetPolicy(
            pb.SetPolicyRequest(session_id=sid, mode=pb.POLICY_MODE_READ_ONLY), timeout=10))
        self.turn("-r", sid, "after a mode change")
        steps.append("mode change")
        self.turn("-r", sid, "--model", "scripted-2", "after a model switch")
        steps.append("model switch")

        def attach_and_detach(pb, stub):
            stream = stub.Attach(pb.AttachRequest(session_id=sid, client_name="watcher"),
                                 timeout=10)
            first = next(stream)
            self.assertTrue(first.HasField("snapshot"))
            stream.cancel()
        self.daemon(attach_and_detach)
        self.turn("-r", sid, "after an attach")
        steps.append("attach and detach")
        wait_until(lambda: self.loaded() == 0, what="the idle session to be unloaded")
        self.turn("-r", sid, "after an unload")
        steps.append("idle unload")
        r = self.env.agent("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.turn("-r", sid, "after a restart")
        steps.append("daemon restart and resume")

        requests = [e for e in self.env.requests() if "rejected" not in e]
        self.assertEqual(len(requests), 8, [e.get("rejected") for e in self.env.requests()])
        bodies = [e["raw"] for e in requests]
        for i in range(1, len(bodies)):
            # The request after --model scripted-2, and the next one: `-r` without --model sends
            # this client's AGENT_MODEL again, which switches back.
            model_changed = i in (4, 5)
            problem = prefix_problem(bodies[i - 1], bodies[i], model_changed)
            self.assertIsNone(problem, "request %d (%s)" % (i, steps[min(i // 2, 5)]))
        self.assertEqual(json.loads(bodies[4])["model"], "scripted-2")
        self.check_cache(requests)


class OpenAiPrefix(BytesOfThePrefix, unittest.TestCase):
    def check_cache(self, requests):
        for e in requests:
            self.assertEqual(e["body"]["prompt_cache_key"], self.env.session_ids()[0])
        # OpenAI caches any long enough prefix it saw: every request after the first hits.
        for e in requests[1:]:
            self.assertGreater(e["cache"]["read"], 0, e["n"])


class ResponsesPrefix(BytesOfThePrefix, unittest.TestCase):
    provider_env = {"AGENT_PROVIDER": "openai-responses"}

    def check_cache(self, requests):
        for e in requests:
            self.assertEqual(e["body"]["prompt_cache_key"], self.env.session_ids()[0])
            self.assertIs(e["body"]["store"], False)
        for e in requests[1:]:
            self.assertGreater(e["cache"]["read"], 0, e["n"])


class AnthropicPrefix(BytesOfThePrefix, unittest.TestCase):
    provider_env = {"AGENT_PROVIDER": "anthropic"}

    def check_cache(self, requests):
        # Each request reads all that the one before it read or wrote: the breakpoints move
        # forward with the conversation and the look-back never loses the previous entry.
        for prev, e in zip(requests, requests[1:]):
            self.assertGreaterEqual(e["cache"]["read"],
                                    prev["cache"]["read"] + prev["cache"]["written"], e["n"])
            self.assertGreater(e["cache"]["read"], 0)
        self.assertGreater(requests[0]["cache"]["written"], 0)
        for e in requests:
            self.assertNotIn("prompt_cache_key", e["body"])


if __name__ == "__main__":
    unittest.main()
