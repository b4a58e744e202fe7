"""What the local backend's adapters share about their outputs.

The text, vision and speech adapters bound what they return the same way: how many
tokens a generating task may produce and how many labels a classification lists, in
one shape (label and score, best first).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_NEW_TOKENS", "MAX_TOP_K"]

MAX_NEW_TOKENS = 128
"""Upper bound on generated tokens for every generating task."""
MAX_TOP_K = 5
"""Labels returned by the classification tasks, best first."""


def _labels(predictions: Any) -> list[dict[str, Any]]:
    return [{"label": str(p["label"]), "score": round(float(p["score"]), 6)}
            for p in predictions][:MAX_TOP_K]
