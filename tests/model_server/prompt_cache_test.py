#!/usr/bin/env python3
"""Tests for prompt_cache.py (Anthropic's breakpoint rules, the emulated caches) and for how
the scripted server reports them. Run: python3 tests/model_server/prompt_cache_test.py
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prompt_cache  # noqa: E402
from scripted_model_test import ServerTestCase, json_chunks, parse_sse  # noqa: E402

EPHEMERAL = {"type": "ephemeral"}
LONG = "x" * 8000  # 2000 tokens: over every minimum


def text(t, mark=None):
    b = {"type": "text", "text": t}
    if mark is not None:
        b["cache_control"] = mark
    return b


def anthropic_body(messages, system_mark=True, tools=True):
    body = {"model": "claude-test", "max_tokens": 100, "messages": messages,
            "system": [text(LONG, EPHEMERAL if system_mark else None)]}
    if tools:
        body["tools"] = [{"name": "read_file", "input_schema": {"type": "object"},
                          "cache_control": EPHEMERAL}]
    return body


def conversation(steps, blocks_per_step, marks):
    """user, then per step an assistant of `blocks_per_step` text blocks and a user reply;
    `marks` chooses which message indexes (negative from the end) get a mark on their last
    block."""
    messages = [{"role": "user", "content": [text("start")]}]
    for s in range(steps):
        messages.append({"role": "assistant",
                         "content": [text(f"a{s}.{k}") for k in range(blocks_per_step)]})
        messages.append({"role": "user", "content": [text(f"u{s}")]})
    for i in marks:
        if -i <= len(messages):
            messages[i]["content"][-1]["cache_control"] = EPHEMERAL
    return messages


class BreakpointRules(unittest.TestCase):
    def test_four_marks_pass_and_five_are_anthropics_400(self):
        four = anthropic_body(conversation(2, 1, [-1, -3]))
        self.assertIsNone(prompt_cache.check_anthropic(four))
        five = anthropic_body(conversation(2, 1, [-1, -3, -5]))
        self.assertEqual(prompt_cache.check_anthropic(five),
                         "A maximum of 4 blocks with cache_control may be provided. Found 5.")

    def test_a_mark_on_a_thinking_block_is_refused(self):
        messages = [{"role": "user", "content": [text("hi")]},
                    {"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "t", "signature": "s",
                         "cache_control": EPHEMERAL}, text("ok")]}]
        err = prompt_cache.check_anthropic(anthropic_body(messages))
        self.assertIn("messages.1.content.0.thinking.cache_control", err)

    def test_an_hour_after_five_minutes_and_unknown_ttls_are_refused(self):
        body = anthropic_body(conversation(1, 1, []))
        body["messages"][-1]["content"][-1]["cache_control"] = {"type": "ephemeral",
                                                                "ttl": "1h"}
        self.assertIn("must not come after", prompt_cache.check_anthropic(body))
        body = anthropic_body(conversation(1, 1, []), system_mark=False, tools=False)
        body["messages"][-1]["content"][-1]["cache_control"] = {"type": "ephemeral",
                                                                "ttl": "2h"}
        self.assertIn("Input should be '5m' or '1h'", prompt_cache.check_anthropic(body))


class AnthropicCache(unittest.TestCase):
    def test_a_moving_mark_reads_what_the_previous_request_wrote(self):
        cache = prompt_cache.PromptCache(anthropic_min_tokens=0)
        total1, read1, written1 = cache.anthropic(anthropic_body(conversation(1, 1, [-1, -3])))
        self.assertEqual(read1, 0)
        self.assertEqual(written1, total1)  # the last mark is the last block
        total2, read2, written2 = cache.anthropic(anthropic_body(conversation(2, 1, [-1, -3])))
        self.assertEqual(read2, total1)
        self.assertEqual(read2 + written2, total2)

    def test_the_look_back_stops_after_twenty_blocks(self):
        for marks, hit in (([-1], False), ([-1, -3], True)):
            cache = prompt_cache.PromptCache(anthropic_min_tokens=0)
            total1, _, _ = cache.anthropic(anthropic_body(conversation(1, 1, [-1])))
            # The next step adds 25 blocks: the newest mark alone looks back too short (it
            # still reads the system prompt's entry).
            after = conversation(1, 1, [])
            after.append({"role": "assistant", "content": [text(f"b{k}") for k in range(25)]})
            after.append({"role": "user", "content": [text("next")]})
            for i in marks:
                after[i]["content"][-1]["cache_control"] = EPHEMERAL
            _, read, _ = cache.anthropic(anthropic_body(after))
            self.assertEqual(read == total1, hit, marks)
            self.assertGreater(read, 0)

    def test_without_marks_nothing_is_cached_and_short_prefixes_are_not_written(self):
        cache = prompt_cache.PromptCache()
        body = anthropic_body(conversation(1, 1, []), system_mark=False, tools=False)
        self.assertEqual(cache.anthropic(body)[1:], (0, 0))
        self.assertEqual(cache.anthropic(body)[1:], (0, 0))
        small = {"model": "m", "max_tokens": 1,
                 "messages": [{"role": "user", "content": [text("hi", EPHEMERAL)]}]}
        self.assertEqual(cache.anthropic(small)[1:], (0, 0))
        self.assertEqual(cache.anthropic(small)[1:], (0, 0))


class OpenAiCache(unittest.TestCase):
    def test_a_shared_prefix_from_1024_tokens_in_steps_of_128(self):
        cache = prompt_cache.PromptCache()
        first = {"messages": [{"role": "system", "content": LONG},
                              {"role": "user", "content": "one"}]}
        self.assertEqual(cache.openai(first)[1], 0)
        second = {"messages": first["messages"] + [{"role": "user", "content": "two"}]}
        prompt, cached = cache.openai(second)
        self.assertGreaterEqual(cached, 1024)
        self.assertEqual(cached % 128, 0)
        self.assertLess(prompt - cached, 128 + 10)
        short = {"messages": [{"role": "user", "content": "tiny"}]}
        cache.openai(short)
        self.assertEqual(cache.openai(short)[1], 0)


class ServerReportsTheCache(ServerTestCase):
    def test_anthropic_usage_splits_reads_and_writes_and_five_marks_are_refused(self):
        self.start([{"text": "one"}, {"text": "two"}], extra=["--log-raw"])
        body = anthropic_body(conversation(1, 1, [-1, -3]))
        body["stream"] = True
        first = parse_sse(self.post("/v1/messages", body).read())
        usage1 = json.loads(first[0][1])["message"]["usage"]
        self.assertEqual(usage1["cache_read_input_tokens"], 0)
        self.assertGreater(usage1["cache_creation_input_tokens"], 1024)
        body = anthropic_body(conversation(2, 1, [-1, -3]))
        body["stream"] = True
        second = parse_sse(self.post("/v1/messages", body).read())
        usage2 = json.loads(second[0][1])["message"]["usage"]
        self.assertGreater(usage2["cache_read_input_tokens"], 1024)
        self.assertLess(usage2["cache_creation_input_tokens"], 64)

        five = anthropic_body(conversation(2, 1, [-1, -3, -5]))
        r = self.post("/v1/messages", five)
        self.assertEqual(r.status, 400)
        err = json.loads(r.read())
        self.assertEqual(err["error"]["type"], "invalid_request_error")
        self.assertIn("A maximum of 4 blocks with cache_control", err["error"]["message"])
        with open(self.log_path, encoding="utf-8") as f:
            log = [json.loads(line) for line in f]
        self.assertEqual(json.loads(log[0]["raw"]), log[0]["body"])
        self.assertEqual(log[1]["cache"]["read"], usage2["cache_read_input_tokens"])
        self.assertIn("rejected", log[2])

    def test_openai_usage_carries_cached_tokens(self):
        self.start([{"text": "one"}, {"text": "two"}])
        messages = [{"role": "system", "content": LONG}, {"role": "user", "content": "hi"}]
        opts = {"stream_options": {"include_usage": True}}
        self.chat(messages=messages, **opts).read()
        chunks = json_chunks(self.chat(messages=messages + [
            {"role": "assistant", "content": "one"}, {"role": "user", "content": "more"}],
            **opts).read())
        usage = chunks[-1]["usage"]
        self.assertGreaterEqual(usage["prompt_tokens_details"]["cached_tokens"], 1024)


if __name__ == "__main__":
    unittest.main()
