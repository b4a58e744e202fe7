"""A run's settings as they are recorded: in its trace, for a replay of the run, and as
the thread's saved settings that ``resume`` starts from.

Settings hold no keys (those stay in the environment); URLs lose any credentials, and a
chat-model object is recorded as its class and model, never itself.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.graph.context import NOT_RECORDED, Context
from hugginggpt.tools.llm.providers import SAVED_OBJECT, chat_model_label, is_chat_model
from hugginggpt.tools.redact import redact

__all__ = ["settings_of"]


def _redact(value: Any) -> Any:
    """Strings without secrets (see :func:`hugginggpt.tools.redact.redact`), in nested
    settings; a chat-model object as its class and model (it is never saved)."""
    if is_chat_model(value):
        return SAVED_OBJECT + redact(chat_model_label(value))
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def settings_of(context: Context) -> dict[str, Any]:
    """The run's settings as plain data, for the trace, a replay of the run and the
    thread's saved settings (``resume``).

    Settings hold no keys (those stay in the environment); URLs lose any credentials."""
    return {name: _redact(value) for name, value in context if name not in NOT_RECORDED}
