"""A reply as it streams: when its first token came, its tool-call arguments exactly as
streamed, the text so far for a listener, and whether it ended or was cut short."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage

from hugginggpt.tools.errors import LLMCallError

__all__ = ["StreamListener", "Timer", "as_streamed", "ended", "StreamInterruptedError"]


StreamListener = Callable[[int, str], None]
"""Told, as a reply streams, the attempt (1 for the first endpoint tried) and the reply's
text so far: the first tool call's arguments, or else the content."""


class Timer(BaseCallbackHandler):
    """Notes when the first streamed token arrives, and keeps the tool-call arguments
    exactly as streamed (LangChain completes truncated JSON when it merges chunks); tells
    a :data:`StreamListener`, if there is one, the text so far after each token."""

    def __init__(self, listener: StreamListener | None = None, attempt: int = 1) -> None:
        self.first: float | None = None
        self.tool_args: dict[int, str] = {}
        self.content = ""
        self.listener = listener
        self.attempt = attempt
        self.raise_error = listener is not None  # a listener's error is not swallowed

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        if self.first is None:
            self.first = time.monotonic()
        message = getattr(chunk, "message", None)
        for piece in getattr(message, "tool_call_chunks", None) or []:
            index = piece.get("index") or 0
            self.tool_args[index] = self.tool_args.get(index, "") + (piece.get("args") or "")
        if self.listener is None:
            return
        content = getattr(message, "content", token)
        self.content += content if isinstance(content, str) else str(token or "")
        streamed = self.tool_args.get(0) if self.tool_args else self.content
        if streamed:
            self.listener(self.attempt, streamed)


def as_streamed(raw: AIMessage, timer: Timer) -> AIMessage:
    """The reply with tool calls whose streamed arguments are not complete JSON marked
    invalid (as a whole reply would have them), so a truncated plan reads as one."""
    if not raw.tool_calls or not timer.tool_args:
        return raw
    valid, invalid = [], list(raw.invalid_tool_calls)
    for index, call in enumerate(raw.tool_calls):
        streamed = timer.tool_args.get(index)
        try:
            if streamed is not None:
                json.loads(streamed)
            valid.append(call)
        except ValueError:
            invalid.append({"name": call["name"], "args": streamed, "id": call.get("id"),
                            "error": "the streamed arguments are not complete JSON",
                            "type": "invalid_tool_call"})
    if not invalid or len(invalid) == len(raw.invalid_tool_calls):
        return raw
    return raw.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


def ended(raw: AIMessage) -> bool:
    """Whether a streamed reply says why it ended (``finish_reason``, ``stop_reason``,
    ``done_reason``: each provider names it its own way), as a whole reply does."""
    return any(key.endswith("_reason") and value
               for key, value in raw.response_metadata.items())


class StreamInterruptedError(LLMCallError):
    """A streamed reply stopped before its end (the connection dropped mid-stream)."""
