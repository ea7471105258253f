"""The OpenAI Responses transport (AGENT_PROVIDER=openai-responses) end to end: the real agentd
and agent against the scripted server's POST /v1/responses, in strict mode (a function_call
without exactly one function_call_output is a 400, as at OpenAI). A turn with a tool call and an
encrypted reasoning item that must come back in the next request, the prefix of the input kept
byte for byte, and one session switched to chat completions and back."""
import json
import os
import unittest

from harness import Env, tool_call, transcript_problems
from test_prompt_cache import members

RESPONSES = {"AGENT_PROVIDER": "openai-responses"}


def events_of(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


class ResponsesProvider(unittest.TestCase):
    def setUp(self):
        self.env = Env([
            {"reasoning": "I should read the file.", "text": "Reading.", "signature": "ENC-ONE",
             "tool_calls": [tool_call("read_file", path="n.txt")]},
            {"expect": {"last_role": "tool", "last_message_contains": "note body"},
             "text": "It is a note."},
            {"expect": {"last_user_contains": "now over chat"}, "text": "chat works"},
            {"expect": {"last_user_contains": "and back"}, "text": "responses again"},
            {"expect": {"last_user_contains": "another model"}, "text": "other model"},
        ], extra_env=RESPONSES, log_raw=True)
        self.addCleanup(self.env.close)
        with open(os.path.join(self.env.project, "n.txt"), "w") as f:
            f.write("note body\n")

    def agent_ok(self, *args, env=None):
        r = self.env.agent(*args, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def test_tool_turn_echoes_the_encrypted_reasoning_and_survives_a_switch_to_chat(self):
        env = self.env
        r = self.agent_ok("--json", "--yes", "what is n.txt?")
        events = events_of(r.stdout)
        self.assertTrue(any("reasoning_delta" in e for e in events))
        self.assertIn("It is a note.", "".join(e["text_delta"]["text"] for e in events
                                               if "text_delta" in e))
        sid = env.session_ids()[0]
        reqs = env.requests()
        self.assertEqual([q["path"] for q in reqs], ["/v1/responses", "/v1/responses"])
        self.assertEqual(env.stats()["rejected"], 0)
        for q in reqs:
            body = q["body"]
            self.assertIs(body["store"], False)
            self.assertIs(body["stream"], True)
            self.assertEqual(body["include"], ["reasoning.encrypted_content"])
            self.assertEqual(body["prompt_cache_key"], sid)
            self.assertNotIn("messages", body)
            self.assertTrue(all(t["type"] == "function" and "name" in t for t in body["tools"]))

        # The reasoning item came back verbatim, before the message and the call it preceded,
        # and the call is answered by one output.
        items = reqs[1]["body"]["input"]
        kinds = [i.get("type") for i in items]
        at = kinds.index("reasoning")
        self.assertEqual(items[at]["encrypted_content"], "ENC-ONE")
        self.assertEqual(kinds[at:], ["reasoning", "message", "function_call",
                                      "function_call_output"])
        self.assertEqual(items[at + 2]["call_id"], items[at + 3]["call_id"])
        self.assertIn("note body", items[at + 3]["output"])

        # The second request repeats every input item of the first byte for byte.
        first, second = members(reqs[0]["raw"]), members(reqs[1]["raw"])
        self.assertEqual(second["input"][:len(first["input"])], first["input"])
        self.assertEqual(second["tools"], first["tools"])

        # On disk: chat shape, the reasoning item kept on its assistant message.
        messages = env.transcript()
        self.assertIsNone(transcript_problems(messages))
        assistant = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")][0]
        self.assertEqual(assistant["openai_reasoning"][0]["encrypted_content"], "ENC-ONE")

        # The same session over chat completions: nothing of the Responses items goes there.
        r = self.agent_ok("-r", sid, "now over chat", env={"AGENT_PROVIDER": "openai"})
        self.assertIn("chat works", r.stdout)
        chat = env.requests()[2]
        self.assertEqual(chat["path"], "/v1/chat/completions")
        self.assertNotIn("openai_reasoning", chat["raw"])
        self.assertNotIn("ENC-ONE", chat["raw"])
        self.assertEqual(env.stats()["rejected"], 0)

        # And back: the reasoning item is sent again, every call still answered once.
        r = self.agent_ok("-r", sid, "and back")
        self.assertIn("responses again", r.stdout)
        back = env.requests()[3]
        self.assertEqual(back["path"], "/v1/responses")
        self.assertIn("ENC-ONE", back["raw"])
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(env.stats()["expect_failed"], 0)
        self.assertIsNone(transcript_problems(env.transcript()))

        # Another model cannot read the encrypted reasoning (one without reasoning rejects the
        # items): it gets the conversation without them.
        r = self.agent_ok("-r", sid, "--model", "scripted-2", "another model")
        self.assertIn("other model", r.stdout)
        other = env.requests()[4]
        self.assertEqual(other["body"]["model"], "scripted-2")
        self.assertNotIn("ENC-ONE", other["raw"])
        self.assertEqual(env.stats()["rejected"], 0)
        self.assertEqual(env.transcript()[2]["openai_reasoning_model"], "scripted")

    def test_rate_limit_is_retried_and_length_cuts_the_last_call(self):
        env = self.env
        env.load_script([
            {"status": 429, "retry_after": "0"},
            {"tool_calls": [tool_call("read_file", path="n.txt")], "finish_reason": "length"},
            {"expect": {"last_role": "tool"}, "text": "gave up on the cut call"},
        ])
        r = self.agent_ok("--yes", "read it")
        self.assertIn("429", r.stderr)
        self.assertIn("gave up on the cut call", r.stdout)
        reqs = [q for q in env.requests() if "rejected" not in q]
        self.assertEqual(len(reqs), 3)
        # The cut call was answered with an error, not run.
        output = [i for i in reqs[2]["body"]["input"] if i["type"] == "function_call_output"]
        self.assertEqual(len(output), 1)
        self.assertNotIn("note body", output[0]["output"])
        self.assertEqual(env.stats()["rejected"], 0)


if __name__ == "__main__":
    unittest.main()
