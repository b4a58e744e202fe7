"""Text cut to size: prompts carry context, not contents, and messages stay readable."""

from __future__ import annotations

__all__ = ["clip", "TRUNCATED"]

TRUNCATED = " ...(truncated)"


def clip(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, saying so when it was cut.

    For values in error messages, clip their ``repr``: ``clip(repr(value), 60)``.
    """
    return text if len(text) <= limit else text[:limit] + TRUNCATED
