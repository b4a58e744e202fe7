"""Pydantic's findings on a run's settings, told in the settings' terms.

:class:`~hugginggpt.graph.context.Context` refuses a bad setting with one
:class:`SettingsError`: per refused value, the setting (or the part of it that is
wrong), the value as given (secrets removed), where it came from and what it may be,
from the setting's declaration (its choices, or its kind and range).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from hugginggpt.tools.errors import SettingProblem, SettingsError
from hugginggpt.tools.redact import redact

__all__ = ["refusal", "clip_repr", "NO_SUCH_SETTING"]

NO_SUCH_SETTING = "no such setting (the settings are the fields of hugginggpt.Context)"
_KINDS = {"integer": "a whole number", "number": "a number", "string": "text",
          "boolean": "true or false", "object": "a mapping (a JSON object)",
          "array": "a list (a JSON array)"}

Entered = Callable[[str], tuple[str, str | None]]
"""Where a finding's key came from: its setting, and the environment variable that gave
the value (None: given for the run)."""


def refusal(exc: ValidationError, settings: type[BaseModel], entered: Entered) -> SettingsError:
    """Every finding of ``exc`` on ``settings``, as one error."""
    return SettingsError(_problem(e, settings, entered) for e in exc.errors())


def clip_repr(value: Any) -> str:
    """A value as the user gave it, without secrets, at most 200 characters."""
    shown = redact(repr(value))
    return shown if len(shown) <= 200 else shown[:200] + "..."


def _problem(error: ErrorDetails, settings: type[BaseModel], entered: Entered) -> SettingProblem:
    first, *inner = error["loc"]
    name, source = entered(str(first))
    path = name + "".join(f"[{part!r}]" for part in inner)
    shown = clip_repr(error["input"])
    if error["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
        return SettingProblem(setting=name, path=path, shown=shown, expected=NO_SUCH_SETTING)
    if error["type"] == "value_error":
        expected = str(error.get("ctx", {}).get("error", error["msg"]))
    elif inner:
        expected = error["msg"].replace("Input should be", "expected")
    else:
        expected = f"expected {_expected(settings, name)}"
    return SettingProblem(setting=name, path=path, shown=shown, expected=expected,
                          source=source)


@functools.cache
def _schema(settings: type[BaseModel]) -> dict[str, Any]:
    return dict(settings.model_json_schema(by_alias=False)["properties"])


def _expected(settings: type[BaseModel], name: str) -> str:
    """What a setting may be, from its declaration: its choices, or its kind and range."""
    options = _schema(settings).get(name, {})
    shown = []
    for option in options.get("anyOf", [options]):
        if "enum" in option:
            shown.append("one of " + ", ".join(str(v) for v in option["enum"]))
        elif option.get("type") in _KINDS:
            bounds = [f"{word} {option[key]:g}" for key, word in (
                ("minimum", "at least"), ("exclusiveMinimum", "greater than"),
                ("maximum", "at most"), ("exclusiveMaximum", "less than"))
                if key in option]
            bounds += ["not empty"] if option.get("minLength") else []
            shown.append(", ".join([_KINDS[option["type"]], *bounds]))
    return " or ".join(shown) or "a valid value"
