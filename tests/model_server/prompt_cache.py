"""Prompt caching as the providers document it, for the scripted model server.

- Anthropic (Messages): only a prefix that ends at a block marked `cache_control` is cached,
  at most four marks per request (more is a 400 with Anthropic's text). A mark reads the
  longest cached prefix ending at its block or at one of the 20 blocks before it (the
  look-back), and writes the prefix up to itself. Usage then splits the prompt into
  `cache_read_input_tokens`, `cache_creation_input_tokens` (from the read point to the last
  mark) and `input_tokens` (after the last mark). The prefix order is tools, system, messages.
- OpenAI (chat and Responses): automatic; the longest prefix shared with an earlier request,
  counted from 1024 tokens in steps of 128, is `cached_tokens`.

A token is 4 bytes of the canonical JSON of each part (keys sorted, compact), so what counts
is the content, not how the client spelled it. `cache_control` itself is not content.
Thread-compatible: the server calls it under its lock.
"""

import hashlib
import json

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
ANTHROPIC_MIN_TOKENS = 1024
BYTES_PER_TOKEN = 4
MAX_KEPT_PROMPTS = 256


def _canon(obj):
    if isinstance(obj, dict):
        obj = {k: v for k, v in obj.items() if k != "cache_control"}
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _blocks(content):
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def anthropic_parts(body):
    """[(canonical text, cache_control or None, where)] in Anthropic's prefix order."""
    parts = []
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    for i, t in enumerate(tools):
        parts.append((_canon(t), t.get("cache_control") if isinstance(t, dict) else None,
                      f"tools.{i}"))
    system = body.get("system")
    if isinstance(system, str) and system:
        parts.append((_canon({"system": system}), None, "system"))
    elif isinstance(system, list):
        for i, b in enumerate(system):
            parts.append((_canon(b), b.get("cache_control") if isinstance(b, dict) else None,
                          f"system.{i}"))
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        for k, b in enumerate(_blocks(m.get("content"))):
            text = _canon(b)
            if k == 0:
                text = m.get("role", "") + ":" + text
            parts.append((text, b.get("cache_control") if isinstance(b, dict) else None,
                          f"messages.{i}.content.{k}"))
    return parts


def check_anthropic(body):
    """None when the request's cache_control marks are acceptable, else Anthropic's 400 text."""
    if not isinstance(body, dict):
        return None
    marks = [(cc, where) for _, cc, where in anthropic_parts(body) if cc is not None]
    if len(marks) > MAX_BREAKPOINTS:
        return (f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(marks)}.")
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    for i, m in enumerate(messages):
        for k, b in enumerate(_blocks(m.get("content") if isinstance(m, dict) else None)):
            if not isinstance(b, dict) or "cache_control" not in b:
                continue
            if b.get("type") in ("thinking", "redacted_thinking"):
                return (f"messages.{i}.content.{k}.{b['type']}.cache_control: Extra inputs are "
                        f"not permitted")
            if b.get("type") == "text" and not b.get("text"):
                return (f"messages.{i}.content.{k}.text: cache_control cannot be set for empty "
                        f"text blocks")
    seen_short = False
    for cc, where in marks:
        if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
            return f"{where}.cache_control.type: Input should be 'ephemeral'"
        ttl = cc.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            return f"{where}.cache_control.ttl: Input should be '5m' or '1h'"
        if ttl == "5m":
            seen_short = True
        elif seen_short:
            return ("a ttl='1h' cache_control block must not come after a ttl='5m' "
                    "cache_control block. Note that blocks are processed in the following "
                    "order: `tools`, `system`, `messages`.")
    return None


class PromptCache:
    def __init__(self, anthropic_min_tokens=ANTHROPIC_MIN_TOKENS,
                 openai_min_tokens=OPENAI_MIN_TOKENS):
        self.anthropic_min_tokens = anthropic_min_tokens
        self.openai_min_tokens = openai_min_tokens
        self.entries = set()   # Anthropic: digests of cached prefixes
        self.prompts = []      # OpenAI: canonical prompts seen, newest last

    def anthropic(self, body):
        """(prompt tokens, read, written) for this request; records what it writes."""
        parts = anthropic_parts(body)
        digests, ends = [], []
        h, size = hashlib.sha256(), 0
        for text, _, _ in parts:
            data = text.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
            digests.append(h.copy().hexdigest())
            size += len(data)
            ends.append(size // BYTES_PER_TOKEN)
        total = max(1, size // BYTES_PER_TOKEN)
        marks = [i for i, (_, cc, _) in enumerate(parts) if cc is not None]
        read = 0
        for p in marks:
            for j in range(p, max(p - LOOKBACK_BLOCKS, -1), -1):
                if digests[j] in self.entries:
                    read = max(read, ends[j])
                    break
        written = 0
        if marks:
            last = marks[-1]
            for p in marks:
                if ends[p] >= self.anthropic_min_tokens:
                    self.entries.add(digests[p])
            if ends[last] >= self.anthropic_min_tokens:
                written = max(0, ends[last] - read)
        return total, read, written

    def openai(self, body, key="messages"):
        """(prompt tokens, cached tokens) for a chat (`messages`) or Responses (`input`) body."""
        parts = []
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        parts.extend(_canon(t) for t in tools)
        if isinstance(body.get("instructions"), str):
            parts.append(_canon({"instructions": body["instructions"]}))
        items = body.get(key)
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        parts.extend(_canon(m) for m in (items if isinstance(items, list) else []))
        prompt = "\n".join(parts).encode("utf-8")
        best = 0
        new = memoryview(prompt)
        for old in self.prompts:
            old = memoryview(old)
            # The first differing byte, by halving: memoryviews compare with memcmp, uncopied.
            lo, hi = 0, min(len(old), len(new))
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if old[:mid] == new[:mid]:
                    lo = mid
                else:
                    hi = mid - 1
            best = max(best, lo)
        self.prompts.append(prompt)
        del self.prompts[:-MAX_KEPT_PROMPTS]
        tokens = best // BYTES_PER_TOKEN
        cached = 0
        if tokens >= self.openai_min_tokens:
            cached = tokens - tokens % OPENAI_STEP_TOKENS
        return max(1, len(prompt) // BYTES_PER_TOKEN), cached
