#!/usr/bin/env python3
"""Tests for scripted_model.py: runs the server as a subprocess and talks HTTP to it.

Standard library only. Run: python3 tests/model_server/scripted_model_test.py
"""

import http.client
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scripted_model  # noqa: E402  (its helpers, for the random_bytes test)

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "scripted_model.py")
IO_TIMEOUT_S = 10
START_TIMEOUT_S = 10
USER_HI = [{"role": "user", "content": "hi"}]


def parse_sse(raw):
    """Events of an SSE body as (event name or None, data string) pairs."""
    events = []
    for block in raw.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        events.append((name, "\n".join(data)))
    return events


def json_chunks(raw):
    """The JSON data events of an OpenAI stream (without [DONE])."""
    return [json.loads(d) for _, d in parse_sse(raw) if d != "[DONE]"]


class ServerTestCase(unittest.TestCase):
    """Starts one server per test with the given script."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.proc = None
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=IO_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=IO_TIMEOUT_S)
        if self.proc is not None:
            self.proc.stdout.close()
            self.stderr.close()
        self.tmp.cleanup()

    def start(self, replies, strict=False, extra=()):
        script = os.path.join(self.tmp.name, "script.json")
        with open(script, "w", encoding="utf-8") as f:
            json.dump({"replies": replies}, f)
        self.log_path = os.path.join(self.tmp.name, "requests.jsonl")
        self.port_file = os.path.join(self.tmp.name, "port")
        args = [sys.executable, SERVER, "--script", script, "--log", self.log_path,
                "--port-file", self.port_file]
        if strict:
            args.append("--strict")
        args.extend(extra)
        self.stderr = open(os.path.join(self.tmp.name, "stderr"), "w+")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr)
        line = self.read_line_with_timeout(self.proc.stdout, START_TIMEOUT_S)
        self.assertTrue(line.startswith(b"PORT "), f"first line was {line!r}")
        self.port = int(line.split()[1])
        return self.port

    @staticmethod
    def read_line_with_timeout(stream, timeout):
        sel = selectors.DefaultSelector()
        sel.register(stream, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        buf = b""
        try:
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise AssertionError(f"timed out reading a line, got {buf!r}")
                b = os.read(stream.fileno(), 1)
                if not b:
                    break
                buf += b
        finally:
            sel.close()
        return buf

    def conn(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=IO_TIMEOUT_S)
        self.conns.append(c)
        return c

    def post(self, path, body, conn=None, headers=None):
        c = conn or self.conn()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request("POST", path, body=json.dumps(body).encode(), headers=h)
        return c.getresponse()

    def chat(self, conn=None, stream=True, messages=None, headers=None, **extra):
        body = {"model": "test-model", "stream": stream, "messages": messages or USER_HI}
        body.update(extra)
        return self.post("/v1/chat/completions", body, conn, headers)

    def messages(self, conn=None, stream=True, messages=None, **extra):
        body = {"model": "claude-test", "max_tokens": 100, "stream": stream,
                "messages": messages or USER_HI}
        body.update(extra)
        return self.post("/v1/messages", body, conn)

    def stats(self):
        c = self.conn()
        c.request("GET", "/stats")
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        data = json.loads(r.read())
        c.close()
        return data

    def log_entries(self):
        with open(self.log_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]


class OpenAIStreamingTest(ServerTestCase):

    def test_text_streams_in_several_chunks_and_ends_with_done(self):
        text = "Hello, wörld! 😀 ünïcødé"
        self.start([{"text": text, "chunk_size": 4}])
        r = self.chat()
        self.assertEqual(r.status, 200)
        self.assertTrue(r.getheader("Content-Type").startswith("text/event-stream"))
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        raw = r.read()
        events = parse_sse(raw)
        self.assertEqual(events[-1][1], "[DONE]")
        chunks = json_chunks(raw)
        pieces = [c["choices"][0]["delta"].get("content") for c in chunks]
        pieces = [p for p in pieces if p]
        self.assertGreaterEqual(len(pieces), 5)
        self.assertTrue(all(len(p) <= 4 for p in pieces))
        self.assertEqual("".join(pieces), text)
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        self.assertEqual(len({c["id"] for c in chunks}), 1)
        self.assertTrue(all(c["object"] == "chat.completion.chunk" for c in chunks))
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "stop")
        self.assertTrue(all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1]))

    def test_reasoning_is_streamed_before_text_as_reasoning_content(self):
        self.start([{"reasoning": "let me think", "text": "answer"}])
        chunks = json_chunks(self.chat().read())
        deltas = [c["choices"][0]["delta"] for c in chunks]
        kinds = [("r" if d.get("reasoning_content") else "t" if d.get("content") else "")
                 for d in deltas]
        kinds = "".join(kinds)
        self.assertRegex(kinds, r"^r+t+$")
        self.assertEqual("".join(d.get("reasoning_content") or "" for d in deltas),
                         "let me think")

    def test_tool_call_id_and_name_only_in_first_fragment(self):
        args0 = {"path": "a.txt", "note": "ünï \"quoted\""}
        self.start([{"tool_calls": [{"name": "read_file", "arguments": args0},
                                    {"name": "write_file", "arguments_raw": "{\"path\": \"b"}]},
                    {"tool_calls": [{"name": "read_file", "arguments": {"path": "c"}}]}])
        chunks = json_chunks(self.chat().read())
        frags = {}
        for c in chunks:
            for tc in c["choices"][0]["delta"].get("tool_calls") or []:
                frags.setdefault(tc["index"], []).append(tc)
        self.assertEqual(sorted(frags), [0, 1])
        for i, fl in frags.items():
            self.assertGreaterEqual(len(fl), 3, f"call {i} not split: {fl}")
            self.assertEqual(fl[0]["type"], "function")
            self.assertIn("name", fl[0]["function"])
            self.assertTrue(fl[0]["id"])
            for later in fl[1:]:
                self.assertEqual(set(later), {"index", "function"})
                self.assertEqual(set(later["function"]), {"arguments"})
        joined0 = "".join(f["function"].get("arguments", "") for f in frags[0])
        self.assertEqual(json.loads(joined0), args0)
        joined1 = "".join(f["function"].get("arguments", "") for f in frags[1])
        self.assertEqual(joined1, "{\"path\": \"b")  # broken JSON sent verbatim
        self.assertEqual(frags[0][0]["function"]["name"], "read_file")
        self.assertEqual(frags[1][0]["function"]["name"], "write_file")
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "tool_calls")
        # Default ids are unique across the whole run.
        more = json_chunks(self.chat().read())
        ids = [frags[0][0]["id"], frags[1][0]["id"]]
        for c in more:
            for tc in c["choices"][0]["delta"].get("tool_calls") or []:
                if "id" in tc:
                    ids.append(tc["id"])
        self.assertEqual(len(ids), 3)
        self.assertEqual(len(set(ids)), 3)

    def test_usage_chunk_has_empty_choices_before_done(self):
        self.start([{"text": "hello", "usage": {"prompt_tokens": 11, "completion_tokens": 7}},
                    {"text": "again"}])
        raw = self.chat(stream_options={"include_usage": True}).read()
        events = parse_sse(raw)
        self.assertEqual(events[-1][1], "[DONE]")
        usage_chunk = json.loads(events[-2][1])
        self.assertEqual(usage_chunk["choices"], [])
        self.assertEqual(usage_chunk["usage"], {"prompt_tokens": 11, "completion_tokens": 7,
                                                "total_tokens": 18})
        for _, d in events[:-2]:
            self.assertIsNone(json.loads(d)["usage"])
        # Without include_usage there is no usage chunk.
        chunks = json_chunks(self.chat().read())
        self.assertTrue(all(c["choices"] for c in chunks))

    def test_429_with_retry_after_then_success(self):
        self.start([{"status": 429, "retry_after": "1", "times": 2},
                    {"status": 503, "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"},
                    {"text": "finally"}])
        c = self.conn()
        for _ in range(2):
            r = self.chat(conn=c)
            self.assertEqual(r.status, 429)
            self.assertEqual(r.getheader("Retry-After"), "1")
            self.assertEqual(r.getheader("Content-Type"), "application/json")
            err = json.loads(r.read())["error"]
            self.assertEqual(err["code"], "rate_limit_exceeded")
            self.assertTrue(err["message"])
        r = self.chat(conn=c)
        self.assertEqual(r.status, 503)
        self.assertEqual(r.getheader("Retry-After"), "Wed, 21 Oct 2015 07:28:00 GMT")
        r.read()
        r = self.chat(conn=c)
        self.assertEqual(r.status, 200)
        text = "".join(ch["choices"][0]["delta"].get("content") or ""
                       for ch in json_chunks(r.read()))
        self.assertEqual(text, "finally")

    def test_reset_after_chunks_cuts_the_connection_mid_stream(self):
        self.start([{"text": "abcdefghijklmnop", "reset_after_chunks": 2}, {"text": "next"}])
        r = self.chat()
        self.assertEqual(r.status, 200)
        with self.assertRaises(http.client.IncompleteRead) as cm:
            r.read()
        events = parse_sse(cm.exception.partial)
        self.assertEqual(len(events), 2)
        self.assertNotIn("[DONE]", [d for _, d in events])
        # The next request on a new connection gets the next reply.
        text = "".join(ch["choices"][0]["delta"].get("content") or ""
                       for ch in json_chunks(self.chat().read()))
        self.assertEqual(text, "next")

    def test_reset_after_zero_chunks_sends_no_status_line(self):
        self.start([{"text": "never", "reset_after_chunks": 0}])
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.chat()

    def test_no_done_ends_the_stream_without_finish_reason(self):
        self.start([{"text": "cut short", "no_done": True}])
        raw = self.chat().read()  # the HTTP body itself ends cleanly
        events = parse_sse(raw)
        self.assertTrue(events)
        self.assertNotIn("[DONE]", [d for _, d in events])
        for c in json_chunks(raw):
            self.assertIsNone(c["choices"][0]["finish_reason"])

    def test_error_in_stream_sends_error_event_without_done(self):
        self.start([{"text": "partial answer", "error_in_stream": {"message": "boom"},
                     "error_after_chunks": 2}])
        raw = self.chat().read()
        events = parse_sse(raw)
        self.assertEqual(len(events), 3)
        last = json.loads(events[-1][1])
        self.assertNotIn("choices", last)
        self.assertEqual(last["error"]["message"], "boom")
        self.assertEqual(last["error"]["type"], "server_error")

    def test_text_times_repeats_the_text(self):
        self.start([{"text": "ab", "text_times": 5, "chunk_size": 4}])
        chunks = json_chunks(self.chat().read())
        pieces = [c["choices"][0]["delta"].get("content") for c in chunks]
        pieces = [p for p in pieces if p]
        self.assertEqual(pieces, ["abab", "abab", "ab"])

    def test_random_bytes_go_raw_inside_the_content_string(self):
        self.start([{"text": "before ", "random_bytes": 200}])
        raw = self.chat().read()
        with self.assertRaises(UnicodeDecodeError):
            raw.decode("utf-8")
        blocks = [b for b in raw.split(b"\n\n") if b.startswith(b"data: {")]
        contents = [json.loads(b[len(b"data: "):].decode("utf-8", "replace"))
                    ["choices"][0]["delta"].get("content") for b in blocks]
        text = "".join(c for c in contents if c)
        self.assertTrue(text.startswith("before "))
        self.assertIn("\ufffd", text)
        self.assertEqual(parse_sse(raw.decode("utf-8", "replace").encode())[-1][1], "[DONE]")
        # The same bytes for the same request number, so a failure reproduces.
        self.assertEqual(len(scripted_model.random_bytes(200, 1)), 200)
        self.assertEqual(scripted_model.random_bytes(200, 1), scripted_model.random_bytes(200, 1))

    def test_raw_sse_is_sent_verbatim(self):
        raw_sse = "data:{\"x\":1}\r\n\r\n: keep-alive\r\ndata: [DONE]\r\n\r\n"
        self.start([{"raw_sse": raw_sse, "chunk_size": 3}])
        self.assertEqual(self.chat().read(), raw_sse.encode())

    def test_exhausted_script_answers_fixed_text(self):
        self.start([])
        r = self.chat(stream=False)
        body = json.loads(r.read())
        self.assertEqual(body["choices"][0]["message"]["content"],
                         "(the scripted model has no more replies)")
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")

    def test_expect_mismatch_answers_400(self):
        self.start([{"text": "ok", "expect": {"last_user_contains": "second"}},
                    {"text": "ok2", "expect": {"last_user_contains": "third"}}])
        r = self.chat(messages=[{"role": "user", "content": "the second prompt"}])
        self.assertEqual(r.status, 200)
        r.read()
        r = self.chat(messages=[{"role": "user", "content": "wrong one"}])
        self.assertEqual(r.status, 400)
        self.assertIn("third", json.loads(r.read())["error"]["message"])
        self.assertEqual(self.stats()["expect_failed"], 1)

    def test_delay_slows_each_chunk(self):
        self.start([{"text": "abcdefgh", "chunk_size": 2, "delay_ms": 40}])
        t0 = time.monotonic()
        self.chat().read()
        # role chunk + 4 text chunks + finish + [DONE] = 7 delays of 40 ms.
        self.assertGreaterEqual(time.monotonic() - t0, 0.25)


class NonStreamTest(ServerTestCase):

    def test_openai_non_stream_returns_chat_completion(self):
        self.start([{"text": "hi there", "reasoning": "hmm",
                     "tool_calls": [{"name": "bash", "arguments": {"command": "ls"},
                                     "id": "call_custom"}]}])
        r = self.chat(stream=False)
        self.assertEqual(r.status, 200)
        self.assertIsNotNone(r.getheader("Content-Length"))
        body = json.loads(r.read())
        self.assertEqual(body["object"], "chat.completion")
        msg = body["choices"][0]["message"]
        self.assertEqual(msg["content"], "hi there")
        self.assertEqual(msg["reasoning_content"], "hmm")
        self.assertEqual(msg["tool_calls"], [{"id": "call_custom", "type": "function",
                                              "function": {"name": "bash",
                                                           "arguments": "{\"command\":\"ls\"}"}}])
        self.assertEqual(body["choices"][0]["finish_reason"], "tool_calls")
        self.assertGreater(body["usage"]["prompt_tokens"], 0)

    def test_anthropic_non_stream_returns_message(self):
        self.start([{"text": "done", "tool_calls": [{"name": "read_file",
                                                     "arguments": {"path": "x"}}]}])
        r = self.messages(stream=False)
        body = json.loads(r.read())
        self.assertEqual(body["type"], "message")
        self.assertEqual([b["type"] for b in body["content"]], ["text", "tool_use"])
        self.assertEqual(body["content"][1]["input"], {"path": "x"})
        self.assertTrue(body["content"][1]["id"].startswith("toolu_"))
        self.assertEqual(body["stop_reason"], "tool_use")


class AnthropicStreamingTest(ServerTestCase):

    def test_anthropic_stream_event_order(self):
        self.start([{"reasoning": "thinking hard", "text": "Here you go.",
                     "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}])
        r = self.messages()
        self.assertEqual(r.status, 200)
        events = parse_sse(r.read())
        names = [n for n, _ in events]
        datas = [json.loads(d) for _, d in events]
        for n, d in zip(names, datas):
            self.assertEqual(n, d["type"])
        names = [n for n in names if n != "ping"]
        datas = [d for d in datas if d["type"] != "ping"]
        self.assertEqual(names[0], "message_start")
        self.assertEqual(names[-2:], ["message_delta", "message_stop"])
        self.assertEqual(datas[0]["message"]["content"], [])
        self.assertIsNone(datas[0]["message"]["stop_reason"])
        # Blocks: start, deltas, stop, in index order, never interleaved.
        blocks = []
        for n, d in zip(names[1:-2], datas[1:-2]):
            if n == "content_block_start":
                self.assertEqual(d["index"], len(blocks))
                blocks.append({"start": d["content_block"], "deltas": [], "stopped": False})
            elif n == "content_block_delta":
                self.assertEqual(d["index"], len(blocks) - 1)
                self.assertFalse(blocks[-1]["stopped"])
                blocks[-1]["deltas"].append(d["delta"])
            else:
                self.assertEqual(n, "content_block_stop")
                self.assertEqual(d["index"], len(blocks) - 1)
                blocks[-1]["stopped"] = True
        self.assertEqual([b["start"]["type"] for b in blocks], ["thinking", "text", "tool_use"])
        thinking = blocks[0]["deltas"]
        self.assertEqual(thinking[-1]["type"], "signature_delta")
        self.assertTrue(thinking[-1]["signature"])
        self.assertEqual("".join(d["thinking"] for d in thinking[:-1]), "thinking hard")
        self.assertEqual("".join(d["text"] for d in blocks[1]["deltas"]), "Here you go.")
        tool = blocks[2]
        self.assertEqual(tool["start"]["name"], "read_file")
        self.assertEqual(tool["start"]["input"], {})
        self.assertTrue(all(d["type"] == "input_json_delta" for d in tool["deltas"]))
        self.assertGreaterEqual(len(tool["deltas"]), 3)
        self.assertEqual(json.loads("".join(d["partial_json"] for d in tool["deltas"])),
                         {"path": "a.txt"})
        self.assertEqual(datas[-2]["delta"]["stop_reason"], "tool_use")
        self.assertGreater(datas[-2]["usage"]["output_tokens"], 0)

    def test_anthropic_random_bytes_are_a_raw_text_delta(self):
        self.start([{"text": "x", "random_bytes": 50}])
        raw = self.messages().read()
        with self.assertRaises(UnicodeDecodeError):
            raw.decode("utf-8")
        events = parse_sse(raw.decode("utf-8", "replace").encode())
        texts = [json.loads(d)["delta"].get("text", "") for n, d in events
                 if n == "content_block_delta"]
        self.assertTrue("".join(texts).startswith("x"))
        self.assertIn("\ufffd", "".join(texts))
        self.assertEqual(events[-1][0], "message_stop")

    def test_anthropic_error_in_stream_is_an_error_event(self):
        self.start([{"text": "partial", "error_in_stream": {}}])
        events = parse_sse(self.messages().read())
        self.assertEqual(events[-1][0], "error")
        self.assertEqual(json.loads(events[-1][1])["error"]["type"], "overloaded_error")
        self.assertNotIn("message_stop", [n for n, _ in events])

    def test_anthropic_error_status_uses_anthropic_shape(self):
        self.start([{"status": 529}])
        r = self.messages()
        self.assertEqual(r.status, 529)
        body = json.loads(r.read())
        self.assertEqual(body["type"], "error")
        self.assertEqual(body["error"]["type"], "overloaded_error")


def assistant_call(*ids):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": i, "type": "function",
                            "function": {"name": "read_file", "arguments": "{}"}} for i in ids]}


def tool_result(call_id):
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


class StrictModeTest(ServerTestCase):

    def test_missing_tool_result_is_rejected_with_openai_text(self):
        self.start([{"text": "should not be used yet"}], strict=True)
        msgs = [{"role": "user", "content": "go"}, assistant_call("call_a", "call_b"),
                tool_result("call_a"), {"role": "user", "content": "next"}]
        r = self.chat(messages=msgs)
        self.assertEqual(r.status, 400)
        err = json.loads(r.read())["error"]
        self.assertEqual(err["message"],
                         "An assistant message with 'tool_calls' must be followed by tool "
                         "messages responding to each 'tool_call_id'. The following "
                         "tool_call_ids did not have response messages: call_b")
        self.assertEqual(err["param"], "messages.[1].role")
        self.assertEqual(err["type"], "invalid_request_error")
        # A call left unanswered at the end of the list is rejected too.
        r = self.chat(messages=[{"role": "user", "content": "go"}, assistant_call("call_c")])
        self.assertEqual(r.status, 400)
        self.assertIn("call_c", json.loads(r.read())["error"]["message"])
        self.assertEqual(self.stats()["rejected"], 2)

    def test_a_request_whose_body_never_arrived_whole_is_not_counted(self):
        # A client killed while it sends (headers out, the body not): no request, no rejection.
        self.start([{"text": "fine"}], strict=True)
        import socket
        for sent in (b"", b'{"model": "m", "mess'):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=IO_TIMEOUT_S)
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n" + sent)
            s.shutdown(socket.SHUT_WR)
            self.assertEqual(s.recv(100), b"")  # closed unanswered
            s.close()
        stats = self.stats()
        self.assertEqual((stats["requests"], stats["rejected"]), (0, 0))
        r = self.chat(messages=[{"role": "user", "content": "go"}])
        self.assertEqual(r.status, 200)

    def test_orphan_tool_result_is_rejected(self):
        self.start([], strict=True)
        cases = [
            [{"role": "user", "content": "go"}, tool_result("call_x")],
            [{"role": "user", "content": "go"}, assistant_call("call_a"), tool_result("call_a"),
             tool_result("call_a")],
            [{"role": "user", "content": "go"}, {"role": "assistant", "content": "hi"},
             tool_result("call_a")],
        ]
        for msgs in cases:
            r = self.chat(messages=msgs)
            self.assertEqual(r.status, 400, msgs)
            err = json.loads(r.read())["error"]
            self.assertIn("must be a response to a preceeding message with 'tool_calls'",
                          err["message"])
        self.assertEqual(self.stats()["rejected"], 3)

    def test_other_broken_transcripts_are_rejected(self):
        self.start([], strict=True)
        bad_args = assistant_call("call_a")
        bad_args["tool_calls"][0]["function"]["arguments"] = {"path": "x"}
        cases = [
            [{"role": "user", "content": "go"}, assistant_call("call_a"), tool_result("call_a"),
             assistant_call("call_a"), tool_result("call_a")],     # duplicate id
            [{"role": "user", "content": "go"}, bad_args, tool_result("call_a")],
            [{"role": "wizard", "content": "go"}],
            ["not an object"],
            [],
        ]
        for msgs in cases:
            r = self.post("/v1/chat/completions", {"model": "m", "messages": msgs})
            self.assertEqual(r.status, 400, msgs)
            r.read()
        r = self.post("/v1/chat/completions", {"messages": USER_HI})
        self.assertEqual(r.status, 400)
        r.read()
        self.assertEqual(self.stats()["rejected"], 6)

    def test_valid_transcript_is_accepted_and_rejections_do_not_consume_replies(self):
        self.start([{"text": "first reply"}], strict=True)
        r = self.chat(messages=[{"role": "user", "content": "go"}, assistant_call("call_z")])
        self.assertEqual(r.status, 400)
        r.read()
        msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"},
                assistant_call("call_a", "call_b"), tool_result("call_b"),
                tool_result("call_a"), {"role": "assistant", "content": "done"},
                {"role": "user", "content": "more"}]
        r = self.chat(messages=msgs, stream=False)
        self.assertEqual(r.status, 200)
        self.assertEqual(json.loads(r.read())["choices"][0]["message"]["content"], "first reply")
        self.assertEqual(self.stats()["rejected"], 1)

    def test_anthropic_missing_and_orphan_tool_result(self):
        self.start([{"text": "fine"}], strict=True)
        use = {"role": "assistant", "content": [
            {"type": "text", "text": "reading"},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]}
        missing = [{"role": "user", "content": "go"}, use,
                   {"role": "user", "content": [{"type": "text", "text": "no result"}]}]
        r = self.messages(messages=missing)
        self.assertEqual(r.status, 400)
        body = json.loads(r.read())
        self.assertEqual(body["type"], "error")
        self.assertEqual(body["error"]["type"], "invalid_request_error")
        self.assertEqual(body["error"]["message"],
                         "messages.1: `tool_use` ids were found without `tool_result` blocks "
                         "immediately after: toolu_1. Each `tool_use` block must have a "
                         "corresponding `tool_result` block in the next message.")
        orphan = [{"role": "user", "content": "go"},
                  {"role": "assistant", "content": "hi"},
                  {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}]
        r = self.messages(messages=orphan)
        self.assertEqual(r.status, 400)
        self.assertEqual(json.loads(r.read())["error"]["message"],
                         "messages.2.content.0: unexpected `tool_use_id` found in "
                         "`tool_result` blocks: toolu_9. Each `tool_result` block must have a "
                         "corresponding `tool_use` block in the previous message.")
        valid = [{"role": "user", "content": "go"}, use,
                 {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]
        r = self.messages(messages=valid, stream=False)
        self.assertEqual(r.status, 200)
        self.assertEqual(json.loads(r.read())["content"][0]["text"], "fine")
        self.assertEqual(self.stats()["rejected"], 2)


class ResponsesTest(ServerTestCase):
    """POST /v1/responses: the Responses API's stream events, usage and strict checks."""

    def responses(self, items=None, stream=True, **extra):
        body = {"model": "gpt-test", "stream": stream, "store": False,
                "include": ["reasoning.encrypted_content"],
                "input": items if items is not None else [
                    {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "hi"}]}]}
        body.update(extra)
        return self.post("/v1/responses", body)

    def events(self, r):
        self.assertEqual(r.status, 200)
        self.assertTrue(r.getheader("Content-Type").startswith("text/event-stream"))
        out = []
        for name, data in parse_sse(r.read()):
            obj = json.loads(data)
            self.assertEqual(name, obj["type"])
            out.append(obj)
        return out

    def test_text_reasoning_and_calls_stream_as_response_events(self):
        self.start([{"reasoning": "think first", "text": "Reading.", "chunk_size": 3,
                     "tool_calls": [{"name": "read_file", "arguments": {"path": "ä.txt"},
                                     "id": "call_r"}]}])
        evs = self.events(self.responses())
        types = [e["type"] for e in evs]
        self.assertEqual(types[0], "response.created")
        self.assertEqual(types[-1], "response.completed")
        self.assertEqual([e["sequence_number"] for e in evs], list(range(len(evs))))
        summary = "".join(e["delta"] for e in evs
                          if e["type"] == "response.reasoning_summary_text.delta")
        self.assertEqual(summary, "think first")
        text = [e["delta"] for e in evs if e["type"] == "response.output_text.delta"]
        self.assertEqual("".join(text), "Reading.")
        self.assertGreater(len(text), 1)
        added = [e for e in evs if e["type"] == "response.output_item.added"]
        self.assertEqual([a["item"]["type"] for a in added],
                         ["reasoning", "message", "function_call"])
        call = added[2]["item"]
        self.assertEqual((call["call_id"], call["name"], call["arguments"]),
                         ("call_r", "read_file", ""))
        args = [e["delta"] for e in evs if e["type"] == "response.function_call_arguments.delta"]
        self.assertGreater(len(args), 1)
        self.assertEqual(json.loads("".join(args)), {"path": "ä.txt"})
        done = [e["item"] for e in evs if e["type"] == "response.output_item.done"]
        self.assertEqual(done[0]["type"], "reasoning")
        self.assertTrue(done[0]["encrypted_content"])
        usage = evs[-1]["response"]["usage"]
        self.assertGreater(usage["input_tokens"], 0)
        self.assertEqual(usage["input_tokens_details"]["cached_tokens"], 0)

    def test_length_is_an_incomplete_response(self):
        self.start([{"text": "cut", "finish_reason": "length"}])
        last = self.events(self.responses())[-1]
        self.assertEqual(last["type"], "response.incomplete")
        self.assertEqual(last["response"]["incomplete_details"]["reason"], "max_output_tokens")

    def test_error_in_stream_is_an_error_event(self):
        self.start([{"text": "abc", "error_in_stream": {"code": "rate_limit_exceeded"},
                     "error_after_chunks": 3}])
        evs = self.events(self.responses())
        self.assertEqual(len(evs), 4)
        self.assertEqual(evs[-1]["type"], "error")
        self.assertEqual(evs[-1]["code"], "rate_limit_exceeded")

    def test_cached_tokens_follow_the_prompt_cache(self):
        long_text = "x" * 8000  # well over 1024 tokens of 4 bytes
        items = [{"type": "message", "role": "system",
                  "content": [{"type": "input_text", "text": long_text}]},
                 {"type": "message", "role": "user",
                  "content": [{"type": "input_text", "text": "one"}]}]
        self.start([{"text": "a"}, {"text": "b"}])
        first = self.events(self.responses(items))[-1]["response"]["usage"]
        self.assertEqual(first["input_tokens_details"]["cached_tokens"], 0)
        items = items + [{"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": "a"}]},
                         {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": "two"}]}]
        second = self.events(self.responses(items))[-1]["response"]["usage"]
        self.assertGreaterEqual(second["input_tokens_details"]["cached_tokens"], 1024)
        self.assertEqual([e["cache"]["read"] > 0 for e in self.log_entries()], [False, True])

    def test_non_stream_returns_a_response_object(self):
        self.start([{"text": "plain", "tool_calls": [{"name": "ls", "arguments": {}}]}])
        r = self.responses(stream=False)
        self.assertEqual(r.status, 200)
        obj = json.loads(r.read())
        self.assertEqual(obj["object"], "response")
        self.assertEqual([o["type"] for o in obj["output"]], ["message", "function_call"])

    def test_strict_rejects_unanswered_calls_and_orphan_outputs(self):
        self.start([{"text": "fine"}], strict=True)
        user = {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "go"}]}

        def call(cid):
            return {"type": "function_call", "call_id": cid, "name": "ls", "arguments": "{}"}

        def out(cid):
            return {"type": "function_call_output", "call_id": cid, "output": "ok"}

        cases = [
            ([user, call("c1")], "No tool output found for function call c1."),
            ([user, out("c9")], "No tool call found for function call output with call_id c9."),
            ([user, call("c1"), out("c1"), out("c1")], "Duplicate function call output"),
            ([user, call("c1"), out("c1"), call("c1"), out("c1")], "Duplicate value"),
            ([user, {"type": "reasoning", "id": "rs_1", "summary": []}],
             "Items are not persisted when `store` is set to false"),
        ]
        for items, want in cases:
            r = self.responses(items)
            self.assertEqual(r.status, 400, items)
            err = json.loads(r.read())["error"]
            self.assertIn(want, err["message"])
            self.assertEqual(err["type"], "invalid_request_error")
        self.assertEqual(self.stats()["rejected"], len(cases))
        good = [user, {"type": "reasoning", "id": "rs_1", "summary": [],
                       "encrypted_content": "e"}, call("c1"), call("c2"), out("c2"), out("c1")]
        evs = self.events(self.responses(good))
        self.assertEqual(evs[-1]["type"], "response.completed")

    def test_expect_reads_the_input_items(self):
        self.start([{"text": "ok", "expect": {"last_role": "tool",
                                               "last_message_contains": "result!"}}])
        items = [{"type": "message", "role": "user",
                  "content": [{"type": "input_text", "text": "go"}]},
                 {"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"},
                 {"type": "function_call_output", "call_id": "c", "output": "the result!"}]
        self.assertEqual(self.events(self.responses(items))[-1]["type"], "response.completed")


class ConnectionAndProcessTest(ServerTestCase):

    def test_keep_alive_two_requests_on_one_connection(self):
        self.start([{"text": "one"}, {"text": "two"}])
        c = self.conn()
        r1 = self.chat(conn=c)
        r1.read()
        r2 = self.chat(conn=c, stream=False)
        self.assertEqual(json.loads(r2.read())["choices"][0]["message"]["content"], "two")
        stats = self.stats()  # on a connection of its own
        self.assertEqual(stats["requests"], 2)
        self.assertEqual(stats["connections"], 1)
        self.assertEqual([e["connection"] for e in self.log_entries()], [1, 1])

    def test_reset_stats_zeroes_counters_but_keeps_the_script_position(self):
        self.start([{"text": "one"}, {"text": "two"}])
        c = self.conn()
        self.chat(conn=c).read()
        r = self.post("/reset-stats", {})
        self.assertEqual(r.status, 200)
        r.read()
        self.assertEqual(self.stats()["requests"], 0)
        body = json.loads(self.chat(conn=c, stream=False).read())
        self.assertEqual(body["choices"][0]["message"]["content"], "two")
        stats = self.stats()
        self.assertEqual((stats["requests"], stats["connections"]), (1, 1))
        self.assertEqual([e["n"] for e in self.log_entries()], [1, 2])

    def test_log_file_has_no_api_key(self):
        self.start([{"text": "a"}, {"text": "b"}])
        self.chat(headers={"Authorization": "Bearer sk-test-SECRET-123"}).read()
        self.messages().read()
        self.post("/v1/messages", {"model": "m", "max_tokens": 5, "messages": USER_HI},
                  headers={"x-api-key": "sk-ant-SECRET-456"}).read()
        with open(self.log_path, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("SECRET", text)
        entries = self.log_entries()
        self.assertEqual([e["n"] for e in entries], [1, 2, 3])
        self.assertEqual([e["has_auth"] for e in entries], [True, False, True])
        self.assertEqual([e["path"] for e in entries],
                         ["/v1/chat/completions", "/v1/messages", "/v1/messages"])
        self.assertEqual(entries[0]["body"]["messages"], USER_HI)

    def test_port_file_matches_port_line(self):
        port = self.start([])
        with open(self.port_file) as f:
            self.assertEqual(int(f.read().strip()), port)

    def test_hang_does_not_block_others_and_sigterm_exits_promptly(self):
        self.start([{"hang": True}, {"text": "served"}])
        hung = self.conn()
        r = self.chat(conn=hung)
        self.assertEqual(r.status, 200)  # headers arrive, then nothing
        other = self.chat(stream=False)
        self.assertEqual(json.loads(other.read())["choices"][0]["message"]["content"],
                         "served")
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=5), 0)

    def test_bad_script_exits_with_status_2(self):
        script = os.path.join(self.tmp.name, "bad.json")
        with open(script, "w") as f:
            json.dump({"replies": [{"txet": "typo"}]}, f)
        p = subprocess.run([sys.executable, SERVER, "--script", script],
                           capture_output=True, timeout=IO_TIMEOUT_S)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"txet", p.stderr)

    def test_demo_script_plays_a_valid_tool_loop(self):
        script = os.path.join(HERE, "demo_script.json")
        with open(script, encoding="utf-8") as f:
            replies = json.load(f)["replies"]
        self.start(replies, strict=True)
        msgs = [{"role": "user", "content": "Summarise notes.txt into summary.txt"}]
        names = []
        for _ in range(2):
            r = self.chat(messages=msgs, stream=False)
            self.assertEqual(r.status, 200)
            msg = json.loads(r.read())["choices"][0]["message"]
            self.assertEqual(len(msg["tool_calls"]), 1)
            call = msg["tool_calls"][0]
            names.append(call["function"]["name"])
            args = json.loads(call["function"]["arguments"])
            self.assertIn("path", args)
            msgs.append(msg)
            msgs.append(tool_result(call["id"]))
        self.assertEqual(names, ["read_file", "write_file"])
        r = self.chat(messages=msgs, stream=False)
        self.assertEqual(r.status, 200)
        final = json.loads(r.read())["choices"][0]
        self.assertEqual(final["finish_reason"], "stop")
        self.assertIn("summary.txt", final["message"]["content"])
        self.assertEqual(self.stats()["rejected"], 0)

if __name__ == "__main__":
    unittest.main()
