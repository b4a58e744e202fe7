"""Advice for the interface that asked: an answer's fixes name what that caller can
change.

A failure raised with a :class:`~hugginggpt.tools.errors.Fix` is said here from its
fields (:func:`said`): each control (a setting, a limit, a file to attach, a variable,
a ``hugginggpt models`` command, an LLM to configure) as the caller names it.

What follows is for the failure texts that still name a flag in their words (see
``for_caller``); they are next to carry a fix instead.

Failure texts are written where the failure happens (a tool, a limit, the model choice)
and say what to do as the ``hugginggpt run`` flag (``--download yes``,
``--subtask-timeout``, ``--file``). The answer is the edge where they meet the caller, so
:func:`for_caller` rewrites each flag there, from the setting it sets
(:func:`~hugginggpt.graph.callers.setting_of_flag`: the settings' own declarations and
the CLI's names for them):

- ``cli``: the flag, as written;
- ``python``: the keyword of ``hugginggpt.run`` (``download="yes"``);
- ``served`` (the OpenAI endpoint, a chat message, ``langgraph_sdk``): the key of the
  run's ``context`` when a caller may set it, else the server's environment variable,
  for its operator;
- ``ui``: the page's own control (the approval choice, the upload box), else the
  operator's environment variable.

The few flags that set no setting (``--file``, ``--json``, ``--verbose``, ``--plugin``),
the ``hugginggpt models`` commands and a shell's ``export NAME=...`` are named here,
once.
"""

from __future__ import annotations

import functools
import json
import re
import typing

from hugginggpt.graph.callers import caller_settings, flag_of, setting_of_flag
from hugginggpt.graph.context import Caller, Context, env_names
from hugginggpt.graph.state import Failure
from hugginggpt.tools.errors import Control, Fix
from hugginggpt.tools.llm.config import CONFIGURE_IN_BRIEF

__all__ = ["for_caller", "setting_named", "configure_llm", "said", "reason_and_fix",
           "fallen_back", "NO_FLAG"]

_VALUE = r"hf:[\w/.:-]+|(?!or\b)(?:[a-z][\w-]*\|)*[a-z][\w-]*|[A-Z][A-Z_]+|\d+(?:\.\d+)?"
_FLAG = re.compile(
    rf"(?<![\w-])(?P<flag>--[a-z][a-z-]*[a-z])(?:[ =](?P<value>{_VALUE}))?"
    r"(?P<tail> \(or (?P<env1>[A-Z][A-Z0-9_]+)\)| or (?P<env2>[A-Z][A-Z0-9_]+)(?![\w=]))?")
_MODELS_COMMAND = re.compile(r"hugginggpt models (?P<verb>download|list)"
                             r"(?: (?P<model>\w[\w./-]*))?(?: --task(?: (?P<task>[\w-]+))?)?")
_EXPORT_IN_BRACKETS = re.compile(r"\(export [A-Z][A-Z0-9_]*=[^)\s]*\)")
_EXPORT = re.compile(r"\bexport ([A-Z][A-Z0-9_]*)=[^\s,;)]*")
_ENVIRONMENT = {"served": "the server's environment (ask its operator)",
                "ui": "the environment this UI runs in (ask whoever runs it)"}
_OPERATOR = {"served": "ask the server's operator", "ui": "ask whoever runs this UI"}
_OTHER_FLAGS: dict[str, dict[str, str]] = {
    "--file": {"python": "the files argument of hugginggpt.run",
               "served": "a file block in the request's chat message",
               "ui": "the Images and audio box"},
    "--json": {"python": "the RunResult", "served": "the run's state (its results)",
               "ui": "the run's details"},
    "--verbose": {"python": "the RunResult", "served": "the run's state (its results)",
                  "ui": "the run's details"},
    "--plugin": {"python": "importing the plugin's module",
                 "served": "a plugin the server loads (ask its operator)",
                 "ui": "a plugin this UI loads (ask whoever runs it)"},
}
"""The flags that set no run setting, as each interface says them."""
_CONFIGURE_BY_OPERATOR = {
    "served": "ask the server's operator to configure one (OPENAI_API_KEY, or "
              "HUGGINGGPT_LLM with HUGGINGGPT_LLM_BASE_URL, in its environment)",
    "ui": "ask whoever runs this UI to configure one (OPENAI_API_KEY, or HUGGINGGPT_LLM "
          "with HUGGINGGPT_LLM_BASE_URL, in its environment)"}
"""How a caller without a shell on the machine gets an LLM: :data:`CONFIGURE_IN_BRIEF`'s
words for them."""
_UI_CONTROLS = {"approval": "the Approval choice"}
"""The settings the web UI has a control for."""


@functools.cache
def _choices(setting: str) -> frozenset[str]:
    """A setting's allowed words when it is a choice (``Literal``), else none."""
    hints = typing.get_type_hints(Context, include_extras=False)
    return frozenset(str(a) for a in _literals(hints.get(setting)))


def _literals(hint: object) -> list[object]:
    if typing.get_origin(hint) is typing.Literal:
        return list(typing.get_args(hint))
    return [a for arg in typing.get_args(hint) for a in _literals(arg)]


def _is_bool(setting: str) -> bool:
    declared = Context.model_fields.get(setting)
    return declared is not None and declared.annotation is bool


def _literal(value: str, caller: Caller) -> str:
    """A value as the caller writes it: Python's ``True``, JSON's ``true``, strings quoted."""
    if value in ("True", "False"):
        return value if caller == "python" else value.lower()
    return value if re.fullmatch(r"[A-Z][A-Z_]+|\d+(?:\.\d+)?", value) else json.dumps(value)


def setting_named(setting: str, caller: Caller, value: str | None = None) -> str:
    """How ``caller`` sets ``setting`` (to ``value``, or ``a|b`` for either), e.g.
    ``--download yes``, ``download="yes"``, ``"download": "yes" in the run's context``."""
    values = value.split("|") if value else []
    if caller == "cli":
        return f"{flag_of(setting)} {value}" if value and not _is_bool(setting) \
            else flag_of(setting)
    if caller == "python":
        if not values:
            return f"{setting}=..."
        return " or ".join(f"{setting}={_literal(v, caller)}" for v in values)
    if caller == "ui" and setting in _UI_CONTROLS:
        return _UI_CONTROLS[setting]
    if caller == "served" and setting in caller_settings():
        if not values:
            return f'"{setting}" in the run\'s context'
        return " or ".join(f'"{setting}": {_literal(v, caller)}' for v in values) + \
            " in the run's context"
    names = env_names(setting)
    what = names[0] if names else f"the {setting} setting"
    shown = " or ".join(f"{what}={v.lower() if v in ('True', 'False') else v}"
                        for v in values) if values and names else what
    return f"{shown} ({_OPERATOR[caller]})"


def _takes(setting: str, value: str) -> bool:
    """Whether the word after a flag is its value (else it is the sentence's)."""
    if _is_bool(setting):
        return False
    if choices := _choices(setting):
        return set(value.split("|")) <= choices
    return re.fullmatch(r"[A-Z][A-Z_]+|\d+(?:\.\d+)?|hf:\S+", value) is not None


def _flag(found: re.Match[str], caller: Caller) -> str:
    flag, value, tail = found["flag"], found["value"], found["tail"] or ""
    setting = setting_of_flag(flag)
    switched = "True"
    if flag == "--dry-run":
        setting, switched = "backend", "dry-run"
    elif flag.startswith("--no-"):
        setting = setting or setting_of_flag("--" + flag.removeprefix("--no-"))
        switched = "False"
    if setting is None:
        said = _OTHER_FLAGS.get(flag, {}).get(caller)
        return found[0] if said is None else said + found[0][len(flag):]
    if value and not _takes(setting, value):
        rest, value, tail = found[0][len(flag):], None, ""
    else:
        rest = ""
    if value is None and (_is_bool(setting) or switched != "True"):
        value = switched
    named = setting_named(setting, caller, value)
    return named + (tail if caller == "python" else "") + rest


def _models_command(found: re.Match[str], caller: Caller) -> str:
    if caller in ("cli", "python"):
        return found[0]
    if found["verb"] == "download":
        model = f" {found['model']}" if found["model"] else ""
        where = "the server's" if caller == "served" else "the"
        return f"a download of{model} into {where} model cache ({_OPERATOR[caller]})"
    task = f" for {found['task']}" if found["task"] else ""
    return f"{'the server' if caller == 'served' else 'this UI'}'s catalog of models{task}"


def said(fix: Fix, caller: Caller) -> str:
    """A fix as ``caller`` is told it: each control named the caller's way."""
    return fix.say.format(*(_named(control, caller) for control in fix.controls))


def reason_and_fix(failure: Failure, caller: Caller) -> str:
    """A failure's reason with its fix, said for ``caller`` (after a line break when the
    reason runs over several lines). A reason that still names a flag in its words (an
    LLM endpoint's advice) is rewritten for the caller (:func:`for_caller`)."""
    reason = for_caller(failure.reason, caller)
    if failure.fix is None:
        return reason
    fix = said(failure.fix, caller)
    if "\n" in reason:
        return f"{reason}\n{fix[:1].upper()}{fix[1:]}."
    return f"{reason}: {fix}"


def fallen_back(failure: Failure, caller: Caller) -> str:
    """Why the offline planner made the plan, in the one sentence the answer repeats."""
    return f"{reason_and_fix(failure, caller)}; this plan was made offline"


NO_FLAG = frozenset({"max_file_mb", "max_download_mb"})
"""The limits ``hugginggpt run`` has no flag for: the CLI names their environment
variable."""


def _named(control: Control, caller: Caller) -> str:
    name, value = control.name, control.value
    if control.kind == "limit":
        names = env_names(name)
        if caller == "cli" and name in NO_FLAG:
            return names[0] if names else name
        if caller == "cli":
            return flag_of(name) + (f" (or {names[0]})" if names else "")
        return setting_named(name, caller)
    if control.kind == "setting":  # a switch is turned on
        return setting_named(name, caller, value or ("True" if _is_bool(name) else None))
    if control.kind == "file":
        return "--file" if caller == "cli" else _OTHER_FLAGS["--file"][caller]
    if control.kind == "variable":
        if caller in _ENVIRONMENT:
            return f"{name} in {_ENVIRONMENT[caller]}"
        return f"export {name}={value}" if value else name
    if control.kind == "models":
        return _models(name, value, caller)
    return for_caller(CONFIGURE_IN_BRIEF, caller)  # an LLM: each way to give one


def _models(verb: str, what: str, caller: Caller) -> str:
    """A ``hugginggpt models`` command (``download MODEL``, ``list --task TASK``,
    ``cached``), or what it does for a caller who has no shell where the models are."""
    if caller in ("cli", "python"):
        return f"hugginggpt models {verb}" + (
            f" {what}" if verb == "download" else f" --task {what}" if what else "")
    if verb == "cached":
        where = "the server's" if caller == "served" else "this UI's"
        return f"{where} model cache ({_OPERATOR[caller]})"
    if verb == "download":
        where = "the server's" if caller == "served" else "the"
        return f"a download of {what} into {where} model cache ({_OPERATOR[caller]})"
    task = f" for {what}" if what else ""
    return f"{'the server' if caller == 'served' else 'this UI'}'s catalog of models{task}"


def configure_llm(caller: Caller) -> str:
    """How ``caller`` gives the run an LLM, in one clause."""
    if caller in _CONFIGURE_BY_OPERATOR:
        return _CONFIGURE_BY_OPERATOR[caller]
    return "set OPENAI_API_KEY or pass " + ("--llm" if caller == "cli" else "llm=MODEL")


def for_caller(text: str, caller: Caller) -> str:
    """``text`` with each ``hugginggpt`` flag and command phrased for ``caller`` (see
    the module's docstring); the CLI's text is left as it is."""
    if caller == "cli":
        return text
    if caller != "python":
        text = text.replace(CONFIGURE_IN_BRIEF, _CONFIGURE_BY_OPERATOR[caller])
        text = _EXPORT_IN_BRACKETS.sub(f"(in {_ENVIRONMENT[caller]})", text)
        text = _EXPORT.sub(lambda found: f"{found[1]} in {_ENVIRONMENT[caller]}", text)
    text = _MODELS_COMMAND.sub(lambda found: _models_command(found, caller), text)
    return _FLAG.sub(lambda found: _flag(found, caller), text)
