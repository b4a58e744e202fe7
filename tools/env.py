"""Reading the environment: empty values count as unset.

Settings are read from the environment in one place, :class:`hugginggpt.graph.context.
Context`, through :func:`env`; secrets (API keys, tokens) are read with it only where a
client is built, so they never reach state, checkpoints or traces.
"""

from __future__ import annotations

import os

__all__ = ["env"]


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with empty values treated as unset."""
    value = os.environ.get(name, "").strip()
    return value or default
