"""Reading what an LLM replied: its text wherever it put it, and JSON inside prose."""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage

__all__ = ["reply_text", "json_candidates"]

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def reply_text(raw: AIMessage) -> str:
    """What the model said, wherever it said it: content, or tool-call arguments."""
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"])
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    content = raw.content
    if isinstance(content, list):
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def json_candidates(text: str) -> list[str]:
    """Texts in a reply that may be JSON, most likely first: the whole reply, the
    contents of code fences, then every JSON value that starts at a ``[`` or ``{``."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE_RE.finditer(text)]
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch in "[{"):
        try:
            _, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        candidates.append(text[start:end])
    return candidates
