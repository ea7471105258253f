#!/usr/bin/env python3
"""Scripted OpenAI- and Anthropic-compatible model server for tests and the demo.

Each model request (POST /v1/chat/completions, POST /v1/responses or POST /v1/messages)
consumes the next
reply of a JSON script and answers it in the provider's real wire shape (WIRE.md
sections 2 and 5), or misbehaves on purpose (HTTP errors, cut streams, hangs, raw SSE).
README.md in this folder documents the script format.

Standard library only; runs under any python3 >= 3.11.

    scripted_model.py --script FILE [--strict] [--port-file FILE] [--log FILE] [--port N]

Prints exactly one line "PORT <n>" once listening on 127.0.0.1, then serves until
SIGTERM/SIGINT and exits 0.
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import select
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prompt_cache  # noqa: E402  (a sibling file; the server runs as a script)

EXHAUSTED_TEXT = "(the scripted model has no more replies)"
HANG_LIMIT_S = 120.0
MAX_DELAY_PER_REPLY_MS = 60000
WAIT_FOR_LIMIT_S = 30.0

OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")

# Keys a reply may carry; anything else is a typo in a test script and is refused at load.
REPLY_KEYS = {
    "text", "reasoning", "reasoning_field", "signature", "tool_calls", "usage",
    "finish_reason", "delay_ms", "chunk_size", "status", "retry_after", "body", "headers",
    "times", "repeat", "reset_after_chunks", "error_in_stream", "error_after_chunks",
    "no_done", "hang", "stall_after_chunks", "raw_sse", "expect", "text_times",
    "random_bytes", "wait_for", "wait_for_ms",
}
TOOL_CALL_KEYS = {"name", "arguments", "arguments_raw", "id"}
EXPECT_KEYS = {"last_user_contains", "last_message_contains", "last_message_not_contains",
               "last_role"}


class ScriptError(Exception):
    pass


def _is_comment_key(key):
    return key.startswith("_") or key == "comment"


def load_script(path):
    """Reads and checks the script; raises ScriptError with a readable reason."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            script = json.load(f)
    except (OSError, ValueError) as e:
        raise ScriptError(f"cannot read script {path}: {e}") from None
    if not isinstance(script, dict):
        raise ScriptError("script must be a JSON object {\"replies\": [...]}")
    replies = script.get("replies", [])
    if not isinstance(replies, list):
        raise ScriptError("\"replies\" must be a list")
    check_replies(replies, "replies")
    agents = script.get("agents", {})
    if not isinstance(agents, dict) or not all(
            isinstance(k, str) and k and isinstance(v, list) for k, v in agents.items()):
        raise ScriptError("\"agents\" must be an object {\"MARKER\": [reply, ...]}")
    for marker, lst in agents.items():
        check_replies(lst, f"agents[{marker!r}]")
    return replies


def load_agents(path):
    """The script's optional "agents": {MARKER: [reply, ...]}. A request whose system prompt
    or first user message contains MARKER (a subagent's) takes its replies from that list,
    with a cursor of its own; the others use "replies"."""
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f).get("agents", {})


def check_replies(replies, name):
    for i, r in enumerate(replies):
        where = f"{name}[{i}]"
        if not isinstance(r, dict):
            raise ScriptError(f"{where} must be an object")
        unknown = [k for k in r if k not in REPLY_KEYS and not _is_comment_key(k)]
        if unknown:
            raise ScriptError(f"{where}: unknown key(s) {unknown}")
        for k in ("times", "repeat", "delay_ms", "chunk_size", "reset_after_chunks", "wait_for_ms",
                  "stall_after_chunks", "text_times", "random_bytes",
                  "error_after_chunks", "status"):
            if k in r and (not isinstance(r[k], int) or isinstance(r[k], bool) or r[k] < 0):
                raise ScriptError(f"{where}.{k} must be a non-negative integer")
        if "chunk_size" in r and r["chunk_size"] < 1:
            raise ScriptError(f"{where}.chunk_size must be >= 1")
        for k in ("text", "reasoning", "raw_sse", "reasoning_field", "signature"):
            if k in r and not isinstance(r[k], str):
                raise ScriptError(f"{where}.{k} must be a string")
        calls = r.get("tool_calls", [])
        if not isinstance(calls, list):
            raise ScriptError(f"{where}.tool_calls must be a list")
        for j, c in enumerate(calls):
            if not isinstance(c, dict) or not isinstance(c.get("name"), str):
                raise ScriptError(f"{where}.tool_calls[{j}] needs a string \"name\"")
            unknown = [k for k in c if k not in TOOL_CALL_KEYS and not _is_comment_key(k)]
            if unknown:
                raise ScriptError(f"{where}.tool_calls[{j}]: unknown key(s) {unknown}")
            if "arguments_raw" in c and not isinstance(c["arguments_raw"], str):
                raise ScriptError(f"{where}.tool_calls[{j}].arguments_raw must be a string")
        if "expect" in r:
            e = r["expect"]
            if not isinstance(e, dict) or any(k not in EXPECT_KEYS for k in e):
                raise ScriptError(f"{where}.expect may only hold {sorted(EXPECT_KEYS)}")
        if "usage" in r and not isinstance(r["usage"], dict):
            raise ScriptError(f"{where}.usage must be an object")
        if "headers" in r and not isinstance(r["headers"], dict):
            raise ScriptError(f"{where}.headers must be an object")
        if "wait_for" in r and not isinstance(r["wait_for"], str):
            raise ScriptError(f"{where}.wait_for must be a string (an agents marker)")


def load_summary(path):
    """The script's optional "summary" reply: the answer to every compaction request (one
    whose last user message asks for a summary "for your own future reference"). It does
    not use up a reply, so a script need not know when the agent compacts."""
    with open(path, "r", encoding="utf-8") as f:
        summary = json.load(f).get("summary")
    if summary is not None and not isinstance(summary, dict):
        raise ScriptError("\"summary\" must be a reply object")
    return summary


SUMMARY_MARKER = "for your own future reference"


def is_summary_request(body):
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return False
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            return SUMMARY_MARKER in _content_text(m.get("content"))
    return False


# ---------------------------------------------------------------------------------------
# Shared state: script cursor, counters, log. All access under one lock.

class State:
    def __init__(self, replies, strict, log_path, log_raw=False):
        self.lock = threading.Lock()
        self.log_raw = log_raw   # the log carries each request body's exact text too
        self.cache = prompt_cache.PromptCache()
        self.replies = replies
        self.strict = strict
        self.cursor = 0          # index of the reply the next request gets
        self.used = 0            # how many times replies[cursor] was already answered
        self.request_number = 0  # monotonic, never reset: log "n" and default call ids
        self.generation = 0      # bumped by /reset-stats; connections re-counted after it
        self.requests = 0
        self.connections = 0     # TCP connections that carried at least one model request
        self.tcp_connections = 0
        self.rejected = 0
        self.expect_failed = 0
        self.summary = None      # the script's "summary" reply, see load_summary
        # GET /v1/models: these ids, or a 404 when None (POST /script {"models": ...}).
        self.models = ["scripted-model"]
        self.models_auth = []    # per GET /v1/models: which auth headers it carried
        self.summaries = 0
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None
        # Subagents' replies (load_agents): marker -> [replies, cursor, used]; requests seen
        # per marker, and a condition on `lock` that "wait_for" waits on.
        self.agents = {}
        self.agent_requests = {}
        self.seen = threading.Condition(self.lock)

    def set_agents(self, agents):
        self.agents = {m: [list(r), 0, 0] for m, r in agents.items()}
        self.agent_requests = {m: 0 for m in agents}

    def marker_of(self, body):
        """The agents marker in the request's system prompt or first user message, or None."""
        if not self.agents or not isinstance(body, dict):
            return None
        texts = [_content_text(body.get("system"))]
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "system":
                texts.append(_content_text(m.get("content")))
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "user":
                texts.append(_content_text(m.get("content")))
                break
        for marker in self.agents:
            if any(marker in t for t in texts):
                return marker
        return None

    def next_agent_reply(self, marker):
        """As next_reply, from the list of `marker`; counts the request for "wait_for"."""
        self.agent_requests[marker] += 1
        self.seen.notify_all()
        entry = self.agents[marker]
        replies, cursor, used = entry
        if cursor >= len(replies):
            return None
        reply = replies[cursor]
        used += 1
        if used >= max(reply.get("repeat", 1), 1):
            cursor, used = cursor + 1, 0
        entry[1], entry[2] = cursor, used
        return reply

    def wait_for(self, marker, limit_s):
        """Waits until a request of `marker`'s list arrived; False after `limit_s`."""
        with self.lock:
            return self.seen.wait_for(lambda: self.agent_requests.get(marker, 0) > 0,
                                      timeout=min(limit_s, WAIT_FOR_LIMIT_S))

    def next_reply(self):
        """The reply for this request, or None when the script is exhausted."""
        if self.cursor >= len(self.replies):
            return None
        reply = self.replies[self.cursor]
        count = reply.get("times", reply.get("repeat", 1)) if "status" in reply \
            else reply.get("repeat", 1)
        self.used += 1
        if self.used >= max(count, 1):
            self.cursor += 1
            self.used = 0
        return reply

    def write_log(self, entry):
        if self.log is None:
            return
        self.log.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.log.flush()

    def stats(self):
        return {
            "requests": self.requests,
            "connections": self.connections,
            "tcp_connections": self.tcp_connections,
            "rejected": self.rejected,
            "expect_failed": self.expect_failed,
            "replies_remaining": max(len(self.replies) - self.cursor, 0),
            "summaries": self.summaries,
            "models_auth": self.models_auth,
        }

    def reset_stats(self):
        self.generation += 1
        self.requests = 0
        self.connections = 0
        self.tcp_connections = 0
        self.rejected = 0
        self.expect_failed = 0


# ---------------------------------------------------------------------------------------
# Strict transcript validation (THE ONE RULE), with the providers' own texts (WIRE.md 7).

def _type_name(v):
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return "null"


def _check_openai_tool_call(i, k, c, seen_ids):
    """None when call k of assistant message i is well-formed (its id then joins seen_ids),
    else (message, param, code)."""
    where = f"messages[{i}].tool_calls[{k}]"
    param = f"messages.[{i}].tool_calls.[{k}]"
    if not isinstance(c, dict):
        return (f"Invalid type for '{where}': expected an object, but got "
                f"{_type_name(c)} instead.", param, "invalid_type")
    cid = c.get("id")
    if not isinstance(cid, str) or not cid:
        return (f"Missing required parameter: '{where}.id'.", param + ".id",
                "missing_required_parameter")
    if c.get("type", "function") != "function":
        return (f"Invalid value: '{c.get('type')}'. Supported values are: "
                f"'function'.", param + ".type", "invalid_value")
    fn = c.get("function")
    if not isinstance(fn, dict):
        return (f"Missing required parameter: '{where}.function'.",
                param + ".function", "missing_required_parameter")
    if not isinstance(fn.get("name"), str) or not fn.get("name"):
        return (f"Missing required parameter: '{where}.function.name'.",
                param + ".function.name", "missing_required_parameter")
    if "arguments" not in fn:
        return (f"Missing required parameter: '{where}.function.arguments'.",
                param + ".function.arguments", "missing_required_parameter")
    if not isinstance(fn["arguments"], str):
        return (f"Invalid type for '{where}.function.arguments': expected a "
                f"string, but got {_type_name(fn['arguments'])} instead.",
                param + ".function.arguments", "invalid_type")
    if cid in seen_ids:
        return (f"Duplicate tool call id '{cid}' in '{where}.id': tool call ids "
                f"must be unique across the conversation.", param + ".id",
                "duplicate_tool_call_id")
    seen_ids.add(cid)
    return None


def _check_openai_tool_calls(i, calls, seen_ids):
    """(None, [ids in call order]) when the tool_calls of assistant message i are
    well-formed, else ((message, param, code), None)."""
    if not isinstance(calls, list):
        return ((f"Invalid type for 'messages[{i}].tool_calls': expected an array, but got "
                 f"{_type_name(calls)} instead.", f"messages.[{i}].tool_calls",
                 "invalid_type"), None)
    if not calls:
        return ((f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with "
                 f"minimum length 1, but got an empty array instead.",
                 f"messages.[{i}].tool_calls", "empty_array"), None)
    ids = []
    for k, c in enumerate(calls):
        err = _check_openai_tool_call(i, k, c, seen_ids)
        if err:
            return err, None
        ids.append(c["id"])
    return None, ids


def validate_openai(body):
    """None when the request is valid, else (message, param, code)."""
    if not isinstance(body, dict):
        return ("Invalid type for request body: expected an object.", None, "invalid_type")
    if not isinstance(body.get("model"), str) or not body.get("model"):
        return ("you must provide a model parameter", None, None)
    if "messages" not in body:
        return ("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    messages = body["messages"]
    if not isinstance(messages, list):
        return (f"Invalid type for 'messages': expected an array, but got "
                f"{_type_name(messages)} instead.", "messages", "invalid_type")
    if not messages:
        return ("[] is too short - 'messages'", "messages", None)

    seen_ids = set()
    pending = None  # (assistant index, [ids in call order], set of answered ids)

    def unanswered():
        idx, ids, answered = pending
        missing = [i for i in ids if i not in answered]
        if not missing:
            return None
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                "response messages: " + ", ".join(missing),
                f"messages.[{idx}].role", None)

    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            return (f"Invalid type for 'messages[{i}]': expected an object, but got "
                    f"{_type_name(m)} instead.", f"messages.[{i}]", "invalid_type")
        role = m.get("role")
        if role not in OPENAI_ROLES:
            if "role" not in m:
                return (f"Missing required parameter: 'messages[{i}].role'.",
                        f"messages.[{i}].role", "missing_required_parameter")
            return (f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                    f"'user', 'function', 'tool', and 'developer'.",
                    f"messages.[{i}].role", "invalid_value")

        if role in ("user", "assistant") and pending is not None:
            err = unanswered()
            if err:
                return err
            pending = None

        if role == "tool":
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str):
                return (f"Missing parameter 'tool_call_id': messages with role 'tool' must have "
                        f"a 'tool_call_id'.", f"messages.[{i}].tool_call_id", None)
            if pending is None or call_id not in pending[1] or call_id in pending[2]:
                return ("Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.", f"messages.[{i}].role", None)
            pending[2].add(call_id)
            if "content" not in m or m["content"] is None:
                return (f"Missing required parameter: 'messages[{i}].content'.",
                        f"messages.[{i}].content", "missing_required_parameter")
            continue

        if role == "assistant":
            calls = m.get("tool_calls")
            if calls is not None:
                err, ids = _check_openai_tool_calls(i, calls, seen_ids)
                if err:
                    return err
                pending = (i, ids, set())
            elif m.get("content") is None:
                return ("Invalid value for 'content': expected a string, got null.",
                        f"messages.[{i}].content", None)
            continue

        # system / developer / user / function
        if m.get("content") is None and role != "function":
            return (f"Missing required parameter: 'messages[{i}].content'.",
                    f"messages.[{i}].content", "missing_required_parameter")

    if pending is not None:
        return unanswered()
    return None


def _check_anthropic_tool_use(i, k, b, role, seen_ids):
    """None when tool_use block k of message i is well-formed (its id then joins seen_ids),
    else the message text."""
    if role != "assistant":
        return f"messages.{i}.content.{k}: tool_use blocks can only be in `assistant` messages"
    tid = b.get("id")
    if not isinstance(tid, str) or not tid:
        return f"messages.{i}.content.{k}.tool_use.id: Field required"
    if not isinstance(b.get("name"), str) or not b.get("name"):
        return f"messages.{i}.content.{k}.tool_use.name: Field required"
    if not isinstance(b.get("input"), dict):
        return f"messages.{i}.content.{k}.tool_use.input: Input should be a valid dictionary"
    if tid in seen_ids:
        return f"messages.{i}.content.{k}: `tool_use` ids must be unique"
    seen_ids.add(tid)
    return None


def validate_anthropic(body):
    """None when the request is valid, else the message text."""
    if not isinstance(body, dict):
        return "Input should be a valid dictionary"
    if not isinstance(body.get("model"), str) or not body.get("model"):
        return "model: Field required"
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    if "messages" not in body:
        return "messages: Field required"
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"

    seen_ids = set()
    prev_tool_use = []  # ids of the tool_use blocks of the previous message
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        role = m.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = m.get("content")
        if isinstance(content, str):
            blocks = []
        elif isinstance(content, list):
            blocks = content
        else:
            return f"messages.{i}.content: Input should be a valid list"

        results = {}
        tool_uses = []
        for k, b in enumerate(blocks):
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                return f"messages.{i}.content.{k}: Input should be a valid dictionary"
            t = b["type"]
            if t == "tool_use":
                err = _check_anthropic_tool_use(i, k, b, role, seen_ids)
                if err:
                    return err
                tool_uses.append(b["id"])
            elif t == "tool_result":
                if role != "user":
                    return (f"messages.{i}.content.{k}: tool_result blocks can only be in "
                            f"`user` messages")
                rid = b.get("tool_use_id")
                if not isinstance(rid, str):
                    return f"messages.{i}.content.{k}.tool_result.tool_use_id: Field required"
                if rid not in prev_tool_use:
                    return (f"messages.{i}.content.{k}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {rid}. Each `tool_result` block must have a "
                            f"corresponding `tool_use` block in the previous message.")
                if rid in results:
                    return (f"messages.{i}.content.{k}: each tool_use must have a single result. "
                            f"Found multiple `tool_result` blocks with id: {rid}")
                results[rid] = k

        if prev_tool_use:
            missing = [t for t in prev_tool_use if t not in results]
            if missing:
                return (f"messages.{i - 1}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block "
                        f"must have a corresponding `tool_result` block in the next message.")
        prev_tool_use = tool_uses

    if prev_tool_use:
        return (f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(prev_tool_use)}. Each `tool_use` block "
                f"must have a corresponding `tool_result` block in the next message.")
    return None


def validate_responses(body):
    """None when a Responses request is valid, else (message, param, code): every
    function_call answered by exactly one function_call_output after it, no output without its
    call, unique call ids, and (store false) reasoning items that carry their encrypted_content.
    The texts are OpenAI's."""
    if not isinstance(body, dict):
        return ("Invalid type for request body: expected an object.", None, "invalid_type")
    if not isinstance(body.get("model"), str) or not body.get("model"):
        return ("Missing required parameter: 'model'.", "model", "missing_required_parameter")
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return (f"Invalid type for 'input': expected a string or an array, but got "
                f"{_type_name(items)} instead.", "input", "invalid_type")
    calls, answered = {}, set()
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            return (f"Invalid type for 'input[{i}]': expected an object, but got "
                    f"{_type_name(it)} instead.", f"input[{i}]", "invalid_type")
        t = it.get("type", "message")
        if t == "function_call":
            cid = it.get("call_id")
            for k in ("call_id", "name", "arguments"):
                if not isinstance(it.get(k), str) or (k != "arguments" and not it.get(k)):
                    return (f"Missing required parameter: 'input[{i}].{k}'.", f"input[{i}].{k}",
                            "missing_required_parameter")
            if cid in calls:
                return (f"Duplicate value for 'call_id' of {cid} in 'input[{i}]'.",
                        f"input[{i}].call_id", "duplicate_call_id")
            calls[cid] = i
        elif t == "function_call_output":
            cid = it.get("call_id")
            if not isinstance(cid, str) or not cid:
                return (f"Missing required parameter: 'input[{i}].call_id'.",
                        f"input[{i}].call_id", "missing_required_parameter")
            if cid not in calls:
                return (f"No tool call found for function call output with call_id {cid}.",
                        "input", None)
            if cid in answered:
                return (f"Duplicate function call output for call_id {cid}.", "input", None)
            if not isinstance(it.get("output"), (str, list)):
                return (f"Missing required parameter: 'input[{i}].output'.",
                        f"input[{i}].output", "missing_required_parameter")
            answered.add(cid)
        elif t == "reasoning":
            if body.get("store") is False and not it.get("encrypted_content"):
                return (f"Item with id '{it.get('id', '')}' not found. Items are not persisted "
                        f"when `store` is set to false. Try again with `store` set to true, or "
                        f"remove this item from your input.", "input", None)
        elif t == "message":
            if it.get("role") not in ("user", "assistant", "system", "developer"):
                return (f"Invalid value: '{it.get('role')}'. Supported values are: 'assistant', "
                        f"'system', 'developer', and 'user'.", f"input[{i}].role",
                        "invalid_value")
        else:
            return (f"Invalid value: '{t}'.", f"input[{i}].type", "invalid_value")
    for cid in calls:
        if cid not in answered:
            return (f"No tool output found for function call {cid}.", "input", None)
    return None


def responses_view(body):
    """A Responses body seen as a chat one ({"model", "messages"}), for the checks written for
    chat requests (expect, summary requests, agent markers)."""
    if not isinstance(body, dict):
        return body
    messages = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        t = it.get("type", "message")
        if t == "message":
            messages.append({"role": it.get("role"), "content": _content_text(it.get("content"))})
        elif t == "function_call_output":
            out = it.get("output")
            messages.append({"role": "tool", "tool_call_id": it.get("call_id"),
                             "content": out if isinstance(out, str) else _content_text(out)})
        elif t == "function_call":
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": it.get("call_id"), "type": "function",
                 "function": {"name": it.get("name"), "arguments": it.get("arguments")}}]})
    view = dict(body)
    view.pop("input", None)
    view["messages"] = messages
    return view


# ---------------------------------------------------------------------------------------
# Helpers for building replies.

def _content_text(content):
    """Text of an OpenAI or Anthropic message content (string or list of parts/blocks)."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif part.get("type") == "tool_result":
                    out.append(_content_text(part.get("content")))
            elif isinstance(part, str):
                out.append(part)
    return "\n".join(out)


def check_expect(expect, body):
    """None when the request meets the reply's expectations, else a message."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        messages = []
    messages = [m for m in messages if isinstance(m, dict)]
    if "last_user_contains" in expect:
        want = expect["last_user_contains"]
        users = [m for m in messages if m.get("role") == "user"]
        got = _content_text(users[-1].get("content")) if users else None
        if got is None or want not in got:
            return (f"scripted model: expected the last user message to contain {want!r}, "
                    f"but it was {got!r}")
    last = _content_text(messages[-1].get("content")) if messages else None
    if "last_message_contains" in expect:
        want = expect["last_message_contains"]
        if last is None or want not in last:
            return (f"scripted model: expected the last message to contain {want!r}, "
                    f"but it was {last!r}")
    if "last_message_not_contains" in expect:
        unwanted = expect["last_message_not_contains"]
        if last is not None and unwanted in last:
            return (f"scripted model: expected the last message not to contain {unwanted!r}, "
                    f"but it was {last!r}")
    if "last_role" in expect:
        got = messages[-1].get("role") if messages else None
        if got != expect["last_role"]:
            return (f"scripted model: expected the last message to have role "
                    f"{expect['last_role']!r}, but it was {got!r}")
    return None


def split_chars(text, size):
    """Pieces of `size` characters (code points, so UTF-8 is never cut)."""
    return [text[i:i + size] for i in range(0, len(text), size)]


def split_in_three(text):
    """About three pieces, cutting inside the JSON text."""
    if len(text) <= 1:
        return [text] if text else []
    size = max(1, -(-len(text) // 3))
    return split_chars(text, size)


# Stands in for the raw bytes of "random_bytes" while an event is built as JSON; replaced in
# the encoded event, so the bytes cross the wire unescaped (and mostly not valid UTF-8).
RAW_MARKER = "\u0001scripted-random-bytes\u0001"
RAW_MARKER_JSON = json.dumps(RAW_MARKER).encode()[1:-1]


def random_bytes(count, n):
    """`count` bytes for request `n`, the same in every run: anything but the bytes that would
    end the JSON string or the SSE line (", \\, and control bytes)."""
    out = bytearray()
    state = (n * 2654435761 + 12345) & 0xFFFFFFFF
    while len(out) < count:
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        b = 0x20 + (state >> 8) % 0xE0
        if b not in (0x22, 0x5C, 0x7F):
            out.append(b)
    return bytes(out)


def with_random_bytes(event, reply, n):
    if RAW_MARKER_JSON not in event:
        return event
    return event.replace(RAW_MARKER_JSON, random_bytes(reply["random_bytes"], n))


def reply_text(reply):
    """The reply's text, `text_times` times over."""
    return reply.get("text", "") * reply.get("text_times", 1)


def call_arguments(call):
    if "arguments_raw" in call:
        return call["arguments_raw"]
    args = call.get("arguments", {})
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def cache_split(reply, prompt):
    """(read, written) tokens of `prompt` for the reply: the script's usage when it names
    them, else the emulated prompt cache's (clamped to the prompt)."""
    usage = reply.get("usage", {})
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        return usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
    if "prompt_tokens_details" in usage:
        return usage["prompt_tokens_details"].get("cached_tokens", 0), 0
    cache = reply.get("_cache")
    if not cache:
        return 0, 0
    read = min(cache[0], prompt)
    return read, min(cache[1], prompt - read)


def compute_usage(reply, raw_body_len):
    text_len = len(reply_text(reply)) + len(reply.get("reasoning", ""))
    for c in reply.get("tool_calls", []):
        text_len += len(c.get("name", "")) + len(call_arguments(c))
    usage = reply.get("usage", {})
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", max(1, raw_body_len // 4)))
    completion = usage.get("completion_tokens",
                           usage.get("output_tokens", max(1, text_len // 4)))
    return int(prompt), int(completion)


OPENAI_ERRORS = {
    400: ("Invalid request.", "invalid_request_error", None),
    401: ("Incorrect API key provided: sk-****. You can find your API key at "
          "https://platform.openai.com/account/api-keys.", "invalid_request_error",
          "invalid_api_key"),
    403: ("You are not allowed to sample from this model", "invalid_request_error",
          "permission_denied"),
    404: ("The model `scripted-model` does not exist or you do not have access to it.",
          "invalid_request_error", "model_not_found"),
    429: ("Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
          "Please try again in 1s.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!",
          "server_error", None),
    502: ("Bad gateway.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}

ANTHROPIC_ERRORS = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified "
                              "resource."),
    404: ("not_found_error", "model: scripted-model"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate "
                              "limit."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


def openai_error_body(status, message=None, param=None, code=None, etype=None):
    dm, dt, dc = OPENAI_ERRORS.get(status, (f"Scripted error {status}.",
                                            "server_error" if status >= 500
                                            else "invalid_request_error", None))
    return {"error": {"message": message if message is not None else dm,
                      "type": etype or dt, "param": param,
                      "code": code if message is not None else dc}}


def anthropic_error_body(status, message=None, etype=None):
    dt, dm = ANTHROPIC_ERRORS.get(status, ("api_error" if status >= 500
                                           else "invalid_request_error",
                                           f"Scripted error {status}."))
    return {"type": "error",
            "error": {"type": etype or dt, "message": message if message is not None else dm},
            "request_id": "req_scripted"}


def wire_json(obj):
    # Compact like the real APIs; raw UTF-8 so multi-byte characters really cross the wire.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sse_data(obj):
    return b"data: " + wire_json(obj) + b"\n\n"


def sse_event(name, obj):
    return b"event: " + name.encode() + b"\ndata: " + wire_json(obj) + b"\n\n"


# ---------------------------------------------------------------------------------------
# Building the event lists. Each list element is one SSE event (= one HTTP chunk); the
# reset/error/no_done knobs count these elements.

def openai_events(reply, n, body, prompt, completion):
    """(content events, finish events) for /v1/chat/completions streaming."""
    model = body.get("model") if isinstance(body.get("model"), str) else "scripted-model"
    include_usage = isinstance(body.get("stream_options"), dict) and \
        body["stream_options"].get("include_usage") is True
    base = {"id": f"chatcmpl-scripted-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model,
            "system_fingerprint": "fp_scripted", "service_tier": "default"}

    def chunk(delta, finish=None):
        c = dict(base)
        c["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        if include_usage:
            c["usage"] = None
        return sse_data(c)

    size = reply.get("chunk_size", 4)
    text = reply_text(reply)
    reasoning = reply.get("reasoning", "")
    calls = reply.get("tool_calls", [])
    field = reply.get("reasoning_field", "reasoning_content")

    content = []
    tool_only = not text and not reasoning and not reply.get("random_bytes") and calls
    if not tool_only:
        content.append(chunk({"role": "assistant", "content": "", "refusal": None}))
    for piece in split_chars(reasoning, size):
        content.append(chunk({"content": None, field: piece}))
    for piece in split_chars(text, size):
        content.append(chunk({"content": piece}))
    if reply.get("random_bytes"):
        content.append(with_random_bytes(chunk({"content": RAW_MARKER}), reply, n))
    for i, c in enumerate(calls):
        cid = c.get("id") or f"call_{n}_{i}"
        first = {"index": i, "id": cid, "type": "function",
                 "function": {"name": c["name"], "arguments": ""}}
        if tool_only and i == 0:
            content.append(chunk({"role": "assistant", "content": None,
                                  "tool_calls": [first], "refusal": None}))
        else:
            content.append(chunk({"tool_calls": [first]}))
        for piece in split_in_three(call_arguments(c)):
            content.append(chunk({"tool_calls": [{"index": i,
                                                  "function": {"arguments": piece}}]}))

    finish = reply.get("finish_reason", "tool_calls" if calls else "stop")
    tail = [chunk({}, finish)]
    if include_usage:
        u = dict(base)
        u["choices"] = []
        u["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}
        read, _ = cache_split(reply, prompt)
        if read:
            u["usage"]["prompt_tokens_details"] = {"cached_tokens": read}
        tail.append(sse_data(u))
    tail.append(b"data: [DONE]\n\n")
    return content, tail


def openai_completion(reply, n, body, prompt, completion):
    model = body.get("model") if isinstance(body.get("model"), str) else "scripted-model"
    calls = reply.get("tool_calls", [])
    msg = {"role": "assistant", "content": reply_text(reply) or None,
           "refusal": None}
    if not calls and msg["content"] is None:
        msg["content"] = ""
    if reply.get("reasoning"):
        msg[reply.get("reasoning_field", "reasoning_content")] = reply["reasoning"]
    if calls:
        msg["tool_calls"] = [{"id": c.get("id") or f"call_{n}_{i}", "type": "function",
                              "function": {"name": c["name"], "arguments": call_arguments(c)}}
                             for i, c in enumerate(calls)]
    return {"id": f"chatcmpl-scripted-{n}", "object": "chat.completion",
            "created": int(time.time()), "model": model, "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "message": msg, "logprobs": None,
                         "finish_reason": reply.get("finish_reason",
                                                    "tool_calls" if calls else "stop")}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}


STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def anthropic_signature(reply):
    if "signature" in reply:
        return reply["signature"]
    digest = hashlib.sha256(reply.get("reasoning", "").encode("utf-8")).digest()
    return base64.b64encode(b"scripted-signature:" + digest).decode("ascii")


def anthropic_blocks(reply, n):
    """The content blocks of the reply as complete Anthropic blocks."""
    blocks = []
    if reply.get("reasoning"):
        blocks.append({"type": "thinking", "thinking": reply["reasoning"],
                       "signature": anthropic_signature(reply)})
    if reply.get("text") or reply.get("random_bytes") or not reply.get("tool_calls"):
        blocks.append({"type": "text", "text": reply_text(reply)})
    for i, c in enumerate(reply.get("tool_calls", [])):
        blocks.append({"type": "tool_use", "id": c.get("id") or f"toolu_{n}_{i}",
                       "name": c["name"], "_raw": call_arguments(c)})
    return blocks


def anthropic_stop_reason(reply):
    default = "tool_calls" if reply.get("tool_calls") else "stop"
    fr = reply.get("finish_reason", default)
    return STOP_REASONS.get(fr, fr)


def anthropic_usage(reply, prompt, output):
    read, written = cache_split(reply, prompt)
    return {"input_tokens": prompt - read - written, "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read, "output_tokens": output}


def anthropic_events(reply, n, body, prompt, completion):
    model = body.get("model") if isinstance(body.get("model"), str) else "scripted-model"
    size = reply.get("chunk_size", 4)
    content = [sse_event("message_start", {
        "type": "message_start",
        "message": {"id": f"msg_scripted_{n}", "type": "message", "role": "assistant",
                    "model": model, "content": [], "stop_reason": None,
                    "stop_sequence": None,
                    "usage": anthropic_usage(reply, prompt, 1)}})]
    for idx, b in enumerate(anthropic_blocks(reply, n)):
        def delta(d, idx=idx):
            return sse_event("content_block_delta",
                             {"type": "content_block_delta", "index": idx, "delta": d})
        if b["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
        elif b["type"] == "text":
            start = {"type": "text", "text": ""}
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
        content.append(sse_event("content_block_start", {
            "type": "content_block_start", "index": idx, "content_block": start}))
        if idx == 0:
            content.append(sse_event("ping", {"type": "ping"}))
        if b["type"] == "thinking":
            for piece in split_chars(b["thinking"], size):
                content.append(delta({"type": "thinking_delta", "thinking": piece}))
            content.append(delta({"type": "signature_delta", "signature": b["signature"]}))
        elif b["type"] == "text":
            for piece in split_chars(b["text"], size):
                content.append(delta({"type": "text_delta", "text": piece}))
            if reply.get("random_bytes"):
                content.append(with_random_bytes(
                    delta({"type": "text_delta", "text": RAW_MARKER}), reply, n))
        else:
            content.append(delta({"type": "input_json_delta", "partial_json": ""}))
            for piece in split_in_three(b["_raw"]):
                content.append(delta({"type": "input_json_delta", "partial_json": piece}))
        content.append(sse_event("content_block_stop",
                                 {"type": "content_block_stop", "index": idx}))
    tail = [
        sse_event("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": anthropic_stop_reason(reply), "stop_sequence": None},
            "usage": {"output_tokens": completion}}),
        sse_event("message_stop", {"type": "message_stop"}),
    ]
    return content, tail


def anthropic_message(reply, n, body, prompt, completion):
    model = body.get("model") if isinstance(body.get("model"), str) else "scripted-model"
    blocks = []
    for b in anthropic_blocks(reply, n):
        if b["type"] == "tool_use":
            raw = b.pop("_raw")
            try:
                b["input"] = json.loads(raw) if raw else {}
            except ValueError:
                b["input"] = {"_unparsable_arguments": raw}
        blocks.append(b)
    return {"id": f"msg_scripted_{n}", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": anthropic_stop_reason(reply),
            "stop_sequence": None,
            "usage": anthropic_usage(reply, prompt, completion)}


def responses_encrypted(reply, n):
    """The reply's encrypted reasoning: the script's "signature" or one derived from the text."""
    if "signature" in reply:
        return reply["signature"]
    digest = hashlib.sha256(reply.get("reasoning", "").encode("utf-8")).digest()
    return base64.b64encode(b"scripted-encrypted-reasoning:%d:" % n + digest).decode("ascii")


def responses_usage(reply, prompt, completion):
    read, _ = cache_split(reply, prompt)
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": read},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion}


def responses_items(reply, n):
    """The complete output items of the reply, in order."""
    items = []
    if reply.get("reasoning"):
        items.append({"id": f"rs_scripted_{n}", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": reply["reasoning"]}],
                      "encrypted_content": responses_encrypted(reply, n)})
    calls = reply.get("tool_calls", [])
    if reply.get("text") or reply.get("random_bytes") or not calls:
        items.append({"id": f"msg_scripted_{n}", "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "text": reply_text(reply),
                                   "annotations": [], "logprobs": []}]})
    for i, c in enumerate(calls):
        items.append({"id": f"fc_scripted_{n}_{i}", "type": "function_call",
                      "status": "completed", "arguments": call_arguments(c),
                      "call_id": c.get("id") or f"call_{n}_{i}", "name": c["name"]})
    return items


def responses_object(reply, n, body, prompt, completion, status, output):
    model = body.get("model") if isinstance(body.get("model"), str) else "scripted-model"
    obj = {"id": f"resp_scripted_{n}", "object": "response", "created_at": int(time.time()),
           "status": status, "error": None, "incomplete_details": None, "model": model,
           "output": output, "store": body.get("store", True),
           "usage": responses_usage(reply, prompt, completion) if status != "in_progress"
           else None}
    if status == "incomplete":
        obj["incomplete_details"] = {"reason": "max_output_tokens"}
    return obj


def responses_events(reply, n, body, prompt, completion):
    """(content events, finish events) for a streamed POST /v1/responses."""
    size = reply.get("chunk_size", 4)
    seq = [0]

    def ev(obj):
        obj["sequence_number"] = seq[0]
        seq[0] += 1
        return sse_event(obj["type"], obj)

    content = [ev({"type": "response.created",
                   "response": responses_object(reply, n, body, prompt, completion,
                                                "in_progress", [])}),
               ev({"type": "response.in_progress",
                   "response": responses_object(reply, n, body, prompt, completion,
                                                "in_progress", [])})]
    items = responses_items(reply, n)
    for idx, item in enumerate(items):
        base = {"output_index": idx, "item_id": item["id"]}
        if item["type"] == "reasoning":
            content.append(ev({"type": "response.output_item.added", "output_index": idx,
                               "item": {"id": item["id"], "type": "reasoning", "summary": []}}))
            part = {"type": "summary_text", "text": ""}
            content.append(ev(dict(base, type="response.reasoning_summary_part.added",
                                   summary_index=0, part=part)))
            text = item["summary"][0]["text"]
            for piece in split_chars(text, size):
                content.append(ev(dict(base, type="response.reasoning_summary_text.delta",
                                       summary_index=0, delta=piece)))
            content.append(ev(dict(base, type="response.reasoning_summary_text.done",
                                   summary_index=0, text=text)))
            content.append(ev(dict(base, type="response.reasoning_summary_part.done",
                                   summary_index=0,
                                   part={"type": "summary_text", "text": text})))
        elif item["type"] == "message":
            content.append(ev({"type": "response.output_item.added", "output_index": idx,
                               "item": dict(item, status="in_progress", content=[])}))
            content.append(ev(dict(base, type="response.content_part.added", content_index=0,
                                   part={"type": "output_text", "text": "", "annotations": []})))
            text = item["content"][0]["text"]
            for piece in split_chars(reply.get("text", "") * reply.get("text_times", 1), size):
                content.append(ev(dict(base, type="response.output_text.delta", content_index=0,
                                       delta=piece, logprobs=[])))
            if reply.get("random_bytes"):
                content.append(with_random_bytes(
                    ev(dict(base, type="response.output_text.delta", content_index=0,
                            delta=RAW_MARKER, logprobs=[])), reply, n))
            content.append(ev(dict(base, type="response.output_text.done", content_index=0,
                                   text=text, logprobs=[])))
            content.append(ev(dict(base, type="response.content_part.done", content_index=0,
                                   part=item["content"][0])))
        else:
            content.append(ev({"type": "response.output_item.added", "output_index": idx,
                               "item": dict(item, status="in_progress", arguments="")}))
            for piece in split_in_three(item["arguments"]):
                content.append(ev(dict(base, type="response.function_call_arguments.delta",
                                       delta=piece)))
            content.append(ev(dict(base, type="response.function_call_arguments.done",
                                   arguments=item["arguments"])))
        content.append(ev({"type": "response.output_item.done", "output_index": idx,
                           "item": item}))
    length = reply.get("finish_reason") == "length"
    status = "incomplete" if length else "completed"
    tail = [ev({"type": f"response.{status}",
                "response": responses_object(reply, n, body, prompt, completion, status,
                                             items)})]
    return content, tail


def responses_response(reply, n, body, prompt, completion):
    status = "incomplete" if reply.get("finish_reason") == "length" else "completed"
    return responses_object(reply, n, body, prompt, completion, status,
                            responses_items(reply, n))


# ---------------------------------------------------------------------------------------
# HTTP layer.

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Small SSE chunks must leave at once, not wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True
    server_version = "scripted-model/1"

    def version_string(self):
        return self.server_version

    def setup(self):
        super().setup()
        st = self.server.state
        with st.lock:
            st.tcp_connections += 1
        self.conn_generation = -1
        self.conn_number = 0

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("scripted_model: " + (fmt % args) + "\n")

    # --- small writers ---

    def send_json(self, status, obj, headers=None):
        data = obj if isinstance(obj, bytes) else json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", "req_scripted")
        self.end_headers()

    def write_chunk(self, data):
        if data:
            self.wfile.write(b"%X\r\n" % len(data) + data + b"\r\n")

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")

    def abort_connection(self):
        """Cuts the TCP connection with no further byte (no terminating chunk)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.connection.close()
        except OSError:
            pass

    def read_body(self):
        """The request's body. A body that ends before its length (the client died or hung up
        while sending it) raises ConnectionAbortedError: like a provider, the server never saw
        that request, so it is neither answered nor counted, let alone rejected."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            for _ in range(1 << 20):
                line = self.rfile.readline(65537)
                if not line:
                    raise ConnectionAbortedError("the body ended before its last chunk")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                part = self.rfile.read(size)
                if len(part) < size:
                    raise ConnectionAbortedError("the body ended inside a chunk")
                parts.append(part)
                self.rfile.readline(65537)
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length > 0 else b""
        if len(data) < length:
            raise ConnectionAbortedError("the body ended before its Content-Length")
        return data

    # --- routing ---

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        st = self.server.state
        if path == "/stats":
            with st.lock:
                stats = st.stats()
            self.send_json(200, stats)
        elif path == "/v1/models":
            with st.lock:
                st.models_auth.append({  # which auth came, never its value
                    "bearer": self.headers.get("Authorization", "").startswith("Bearer "),
                    "x_api_key": bool(self.headers.get("x-api-key")),
                    "anthropic_version": self.headers.get("anthropic-version", "")})
                models = st.models
            if models is None:
                self.send_json(404, openai_error_body(404, f"Invalid URL (GET {path})",
                                                      code="unknown_url"))
                return
            self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
                for m in models]})
        else:
            self.send_json(404, openai_error_body(404, f"Invalid URL (GET {path})",
                                                  code="unknown_url"))

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        try:
            raw = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        if path == "/reset-stats":
            st = self.server.state
            with st.lock:
                st.reset_stats()
            self.send_json(200, {"ok": True})
            return
        if path == "/script":
            # Replaces the replies and starts over from the first (tests that crash the agent
            # mid-script load what comes next this way).
            try:
                new = json.loads(raw.decode("utf-8"))
                replies = new["replies"]
                if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
                    raise ValueError("replies must be a list of objects")
            except (ValueError, KeyError, UnicodeDecodeError) as e:
                self.send_json(400, {"error": {"message": f"bad script: {e}"}})
                return
            st = self.server.state
            with st.lock:
                st.replies = replies
                st.cursor = 0
                st.used = 0
                if "summary" in new:
                    st.summary = new["summary"]
                if "models" in new:  # a list of ids, or null for a provider without /models
                    st.models = new["models"]
                if "agents" in new:
                    st.set_agents(new["agents"])
            self.send_json(200, {"ok": True})
            return
        if path not in ("/v1/chat/completions", "/v1/messages", "/v1/responses"):
            self.send_json(404, openai_error_body(404, f"Invalid URL (POST {path})",
                                                  code="unknown_url"))
            return
        try:
            self.model_request(path, raw)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        except OSError:
            self.close_connection = True

    def model_request(self, path, raw):
        st = self.server.state
        anthropic = path == "/v1/messages"
        self.responses_api = path == "/v1/responses"
        has_auth = bool(self.headers.get("Authorization") or self.headers.get("x-api-key"))
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
            parse_error = None
        except (UnicodeDecodeError, ValueError) as e:
            body, parse_error = None, str(e)

        rejection = None
        if parse_error is None and anthropic:
            msg = prompt_cache.check_anthropic(body)
            rejection = None if msg is None else (msg, None, None)
        if rejection is None and parse_error is None and st.strict:
            if anthropic:
                msg = validate_anthropic(body)
                rejection = None if msg is None else (msg, None, None)
            elif self.responses_api:
                rejection = validate_responses(body)
            else:
                rejection = validate_openai(body)
        # The chat-shaped checks below read a Responses body through its chat view.
        view = responses_view(body) if self.responses_api and parse_error is None else body

        with st.lock:
            st.request_number += 1
            n = st.request_number
            st.requests += 1
            if self.conn_generation != st.generation:
                self.conn_generation = st.generation
                st.connections += 1
                self.conn_number = st.connections
            entry = {"n": n, "path": path, "connection": self.conn_number,
                     "has_auth": has_auth, "body": body}
            if st.log_raw:
                entry["raw"] = raw.decode("utf-8", "replace")
            if parse_error is not None:
                entry["invalid_json"] = True
            reply = None
            if rejection is not None:
                st.rejected += 1
                entry["rejected"] = rejection[0]
            elif parse_error is None and st.summary is not None and is_summary_request(view):
                st.summaries += 1
                entry["summary"] = True
                reply = st.summary
            elif parse_error is None:
                marker = st.marker_of(view)
                if marker is not None:
                    entry["agent"] = marker
                reply = st.next_reply() if marker is None else st.next_agent_reply(marker)
                if reply is None:
                    reply = {"text": EXHAUSTED_TEXT, "finish_reason": "stop"}
                    entry["exhausted"] = True
                elif "expect" in reply:
                    failed = check_expect(reply["expect"], view)
                    if failed is not None:
                        st.expect_failed += 1
                        entry["expect_failed"] = failed
                        rejection = (failed, None, "script_expectation_failed")
                        reply = None
            if reply is not None and isinstance(body, dict) and "usage" not in reply:
                if anthropic:
                    _, read, written = st.cache.anthropic(body)
                elif self.responses_api:
                    (_, read), written = st.cache.openai(body, key="input"), 0
                else:
                    (_, read), written = st.cache.openai(body), 0
                reply = dict(reply, _cache=(read, written))
                entry["cache"] = {"read": read, "written": written}
            st.write_log(entry)

        if reply is not None and "wait_for" in reply and not st.wait_for(
                reply["wait_for"], reply.get("wait_for_ms", WAIT_FOR_LIMIT_S * 1000) / 1000):
            rejection = (f"wait_for {reply['wait_for']!r}: no such request came", None,
                         "script_expectation_failed")
        if parse_error is not None:
            msg = ("We could not parse the JSON body of your request. (HINT: This likely means "
                   "you aren't using your HTTP library correctly. The API expects a JSON "
                   "payload, but what was sent was not valid JSON.)")
            self.send_json(400, anthropic_error_body(400, msg) if anthropic
                           else openai_error_body(400, msg))
            return
        if rejection is not None:
            msg, param, code = rejection
            self.send_json(400, anthropic_error_body(400, msg) if anthropic
                           else openai_error_body(400, msg, param, code,
                                                  "invalid_request_error"))
            return
        self.answer(reply, n, body if isinstance(body, dict) else {}, len(raw), anthropic)

    def answer(self, reply, n, body, raw_len, anthropic):
        if "status" in reply and reply["status"] >= 300:
            self.answer_error(reply, anthropic)
            return
        if reply.get("reset_after_chunks") == 0:
            self.abort_connection()
            return
        stream = body.get("stream") is True
        prompt, completion = compute_usage(reply, raw_len)
        delay = Delay(reply.get("delay_ms", 0))

        if "raw_sse" in reply:
            self.answer_raw(reply, delay)
            return
        if reply.get("hang"):
            if stream:
                self.start_stream()
            else:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
            self.hang()
            return
        if not stream:
            self.answer_plain(reply, n, body, prompt, completion, anthropic, delay)
            return

        build = anthropic_events if anthropic else openai_events
        if getattr(self, "responses_api", False):
            build = responses_events
        content, tail = build(reply, n, body, prompt, completion)
        events = content + tail
        # Where the stream stops being the normal one: (index, what happens there).
        cut = None
        if "reset_after_chunks" in reply:
            cut = (reply["reset_after_chunks"], "reset")
        if "error_in_stream" in reply:
            at = reply.get("error_after_chunks", len(content))
            if cut is None or at < cut[0]:
                cut = (at, "error")
        if reply.get("no_done") and (cut is None or len(content) < cut[0]):
            cut = (len(content), "no_done")
        if "stall_after_chunks" in reply and (cut is None or reply["stall_after_chunks"] < cut[0]):
            cut = (reply["stall_after_chunks"], "stall")

        self.start_stream()
        limit = len(events) if cut is None else min(cut[0], len(events))
        for ev in events[:limit]:
            delay.wait()
            self.write_chunk(ev)
        if cut is None:
            self.end_chunks()
            return
        kind = cut[1]
        if kind == "stall":
            self.hang()
        elif kind == "reset":
            self.abort_connection()
        elif kind == "error":
            delay.wait()
            self.write_chunk(self.stream_error(reply["error_in_stream"], anthropic))
            self.end_chunks()
            self.close_connection = True
        else:  # no_done: the body ends cleanly but the stream is incomplete
            self.end_chunks()

    def stream_error(self, err, anthropic):
        if not isinstance(err, dict):
            err = {}
        if getattr(self, "responses_api", False):
            # The Responses API's `error` event: code, message and param at the top level.
            out = {"type": "error", "code": "server_error",
                   "message": "The server had an error while processing your request. "
                              "Sorry about that!", "param": None}
            out.update({k: v for k, v in err.items() if k != "type"})
            return sse_event("error", out)
        if anthropic:
            inner = {"type": err.get("type", "overloaded_error"),
                     "message": err.get("message", "Overloaded")}
            for k, v in err.items():
                inner.setdefault(k, v)
            return sse_event("error", {"type": "error", "error": inner})
        inner = {"message": "The server had an error while processing your request. "
                            "Sorry about that!", "type": "server_error", "param": None,
                 "code": None}
        inner.update(err)
        return sse_data({"error": inner})

    def answer_error(self, reply, anthropic):
        status = reply["status"]
        headers = {}
        if "retry_after" in reply:
            headers["Retry-After"] = str(reply["retry_after"])
        for k, v in reply.get("headers", {}).items():
            headers[str(k)] = str(v)
        if "body" in reply:
            b = reply["body"]
            data = b.encode("utf-8") if isinstance(b, str) else json.dumps(b).encode("utf-8")
        else:
            obj = anthropic_error_body(status) if anthropic else openai_error_body(status)
            data = json.dumps(obj).encode("utf-8")
        Delay(reply.get("delay_ms", 0)).wait()
        self.send_json(status, data, headers)

    def answer_raw(self, reply, delay):
        data = reply["raw_sse"].encode("utf-8")
        # With an explicit chunk_size the bytes go out in pieces of that many bytes, so a
        # piece may end inside a UTF-8 character or between CR and LF on purpose.
        size = reply.get("chunk_size", len(data) or 1)
        self.start_stream()
        pieces = [data[i:i + size] for i in range(0, len(data), size)]
        if "reset_after_chunks" in reply:
            for p in pieces[:reply["reset_after_chunks"]]:
                delay.wait()
                self.write_chunk(p)
            self.abort_connection()
            return
        for p in pieces:
            delay.wait()
            self.write_chunk(p)
        self.end_chunks()

    def answer_plain(self, reply, n, body, prompt, completion, anthropic, delay):
        build = anthropic_message if anthropic else openai_completion
        if getattr(self, "responses_api", False):
            build = responses_response
        data = json.dumps(build(reply, n, body, prompt, completion),
                          ensure_ascii=False).encode("utf-8")
        delay.wait()
        if "reset_after_chunks" in reply:
            # Headers and half the body, then the cut.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.abort_connection()
            return
        self.send_json(200, data)

    def hang(self):
        """Sends nothing until the peer disconnects, the server stops, or 120 s pass."""
        self.close_connection = True
        deadline = time.monotonic() + HANG_LIMIT_S
        sock = self.connection
        stop = self.server.stopping
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                readable, _, _ = select.select([sock], [], [], min(left, 0.25))
                if readable and not sock.recv(4096):
                    break  # peer closed
            except OSError:
                break
        self.abort_connection()


class Delay:
    """Sleeps delay_ms before each chunk, at most MAX_DELAY_PER_REPLY_MS in total."""

    def __init__(self, ms):
        self.ms = ms
        self.left = MAX_DELAY_PER_REPLY_MS

    def wait(self):
        step = min(self.ms, self.left)
        if step > 0:
            self.left -= step
            time.sleep(step / 1000.0)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"scripted_model: error serving {client_address}: {exc!r}\n")


def write_port_file(path, port):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{port}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Scripted OpenAI/Anthropic-compatible model "
                                             "server for tests.")
    ap.add_argument("--script", required=True, help="JSON file {\"replies\": [...]}")
    ap.add_argument("--strict", action="store_true",
                    help="reject transcripts that break the tool-call rule with HTTP 400")
    ap.add_argument("--port-file", help="write the port number here (atomically)")
    ap.add_argument("--log", help="append one JSON line per model request here")
    ap.add_argument("--log-raw", action="store_true",
                    help="log entries also carry each request body's exact text (\"raw\")")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
    ap.add_argument("--verbose", action="store_true", help="access log on stderr")
    args = ap.parse_args(argv)

    try:
        replies = load_script(args.script)
    except ScriptError as e:
        sys.stderr.write(f"scripted_model: {e}\n")
        return 2

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        server = Server(("127.0.0.1", args.port), Handler)
    except OSError as e:
        sys.stderr.write(f"scripted_model: cannot listen on 127.0.0.1:{args.port}: {e}\n")
        return 2
    try:
        server.state = State(replies, args.strict, args.log, args.log_raw)
        server.state.summary = load_summary(args.script)
        server.state.set_agents(load_agents(args.script))
    except OSError as e:
        sys.stderr.write(f"scripted_model: cannot open log {args.log}: {e}\n")
        return 2
    server.verbose = args.verbose
    server.stopping = stop
    port = server.server_address[1]

    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    if args.port_file:
        write_port_file(args.port_file, port)
    sys.stdout.write(f"PORT {port}\n")
    sys.stdout.flush()

    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    with server.state.lock:
        if server.state.log is not None:
            server.state.log.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    # Handler threads may be stuck in a hung stream or a delay; do not wait for them.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
