"""Reading the environment: values stripped, empty ones unset.

Settings are read from the environment in one place, :class:`hugginggpt.graph.context.
Context`, through :class:`Environment` (pydantic-settings' source, reading as :func:`env`
does); secrets (API keys, tokens) are read with :func:`env` only where a client is built,
so they never reach state, checkpoints or traces.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import EnvSettingsSource

__all__ = ["env", "Environment", "cache_dir"]


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with empty values treated as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


class Environment(EnvSettingsSource):
    """The environment as pydantic-settings reads it for a settings class, each value
    as :func:`env` reads it."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        value, key, is_complex = super().get_field_value(field, field_name)
        return (value.strip() or None if isinstance(value, str) else value), key, is_complex


def cache_dir() -> Path:
    """The per-user folder of what is computed once and kept (the example bank's
    embeddings): ``HUGGINGGPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/hugginggpt``, else
    ``~/.cache/hugginggpt``."""
    if chosen := env("HUGGINGGPT_CACHE_DIR"):
        return Path(chosen).expanduser()
    base = env("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "hugginggpt"
