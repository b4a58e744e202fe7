"""Text cut to size: prompts carry context, not contents, and messages stay readable."""

from __future__ import annotations

__all__ = ["clip", "TRUNCATED", "MAX_MESSAGE"]

TRUNCATED = " ...(truncated)"
MAX_MESSAGE = 4000
"""The most of a failure message an answer shows: real messages (an exception's, an
endpoint's error, a limit's) are far shorter and are shown whole; the bound only stops a
pathological one (a server's whole HTML page, a dump of a tensor) from filling the answer."""


def clip(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, saying so when it was cut.

    For values in error messages, clip their ``repr``: ``clip(repr(value), 60)``.
    """
    return text if len(text) <= limit else text[:limit] + TRUNCATED
