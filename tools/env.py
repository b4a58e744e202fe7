"""Reading the environment: values stripped, empty ones unset.

Settings are read from the environment in one place, :class:`hugginggpt.graph.context.
Context`, through :class:`Environment` (pydantic-settings' source, reading as :func:`env`
does); secrets (API keys, tokens) are read with :func:`env` only where a client is built,
so they never reach state, checkpoints or traces.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

__all__ = ["env", "Environment", "variables", "cache_dir"]


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with empty values treated as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


@functools.cache
def variables(settings: type[BaseSettings], field: str) -> tuple[str, ...]:
    """The environment variables a field of ``settings`` is read from, first set first:
    those its ``validation_alias`` names, else its ``env_prefix`` and its name."""
    alias = settings.model_fields[field].validation_alias
    if alias is None:
        return (settings.model_config.get("env_prefix", "") + field.upper(),)
    return tuple(map(str, alias.choices)) if isinstance(alias, AliasChoices) else (str(alias),)


class Environment(PydanticBaseSettingsSource):
    """The environment as pydantic-settings' source for a settings class: each field
    from its :func:`variables`, read as :func:`env` reads them (text, for the field's
    type to read; no other variable is looked at)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        found = (env(name) for name in variables(self.settings_cls, field_name))
        return next((value for value in found if value is not None), None), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {name: value for name, field in self.settings_cls.model_fields.items()
                if (value := self.get_field_value(field, name)[0]) is not None}


def cache_dir() -> Path:
    """The per-user folder of what is computed once and kept (the example bank's
    embeddings): ``HUGGINGGPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/hugginggpt``, else
    ``~/.cache/hugginggpt``."""
    if chosen := env("HUGGINGGPT_CACHE_DIR"):
        return Path(chosen).expanduser()
    base = env("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "hugginggpt"
