"""Reading the environment: empty values count as unset.

Settings are read from the environment in one place, :class:`hugginggpt.graph.context.
Context`, through :func:`env`; secrets (API keys, tokens) are read with it only where a
client is built, so they never reach state, checkpoints or traces.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["env", "cache_dir"]


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with empty values treated as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


def cache_dir() -> Path:
    """The per-user folder of what is computed once and kept (the example bank's
    embeddings): ``HUGGINGGPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/hugginggpt``, else
    ``~/.cache/hugginggpt``."""
    if chosen := env("HUGGINGGPT_CACHE_DIR"):
        return Path(chosen).expanduser()
    base = env("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "hugginggpt"
