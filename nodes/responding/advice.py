"""Advice for the interface that asked: an answer's fixes name what that caller can
change.

A failure is raised with a :class:`~hugginggpt.tools.errors.Fix` where it happens; it is
said here from its fields (:func:`said`), each control (a setting, a limit, a file to
attach, a variable, a ``hugginggpt models`` command, an LLM to configure) as the caller
names it:

- ``cli``: the ``hugginggpt run`` flag (``--download yes``), from the settings' own
  declarations and the CLI's names for them (:func:`~hugginggpt.graph.callers.flag_of`);
- ``python``: the keyword of ``hugginggpt.run`` (``download="yes"``);
- ``served`` (the OpenAI endpoint, a chat message, ``langgraph_sdk``): the key of the
  run's ``context`` when a caller may set it, else the server's environment variable,
  for its operator;
- ``ui``: the page's own control (the approval choice, the upload box), else the
  operator's environment variable.
"""

from __future__ import annotations

import json
import re

from hugginggpt.graph.callers import caller_settings, flag_of
from hugginggpt.graph.context import Caller, Context, env_names
from hugginggpt.graph.state import Failure
from hugginggpt.tools.errors import Control, Fix, HuggingGPTError
from hugginggpt.tools.llm.config import CONFIGURE_LLM

__all__ = ["setting_named", "configure_llm", "said", "told", "reason_and_fix",
           "fallen_back", "NO_FLAG"]

_ENVIRONMENT = {"served": "the server's environment (ask its operator)",
               "ui": "the environment this UI runs in (ask whoever runs it)"}
_OPERATOR = {"served": "ask the server's operator", "ui": "ask whoever runs this UI"}
_ATTACH = {"cli": "--file", "python": "the files argument of hugginggpt.run",
           "served": "a file block in the request's chat message",
           "ui": "the Images and audio box"}
"""Where each interface takes a file."""
_CONFIGURE_BY_OPERATOR = {
    "served": "ask the server's operator to configure one (OPENAI_API_KEY, or "
              "HUGGINGGPT_LLM with HUGGINGGPT_LLM_BASE_URL, in its environment)",
    "ui": "ask whoever runs this UI to configure one (OPENAI_API_KEY, or HUGGINGGPT_LLM "
          "with HUGGINGGPT_LLM_BASE_URL, in its environment)"}
"""How a caller without a shell on the machine gets an LLM: :data:`CONFIGURE_LLM`'s
words for them."""
_UI_CONTROLS = {"approval": "the Approval choice"}
"""The settings the web UI has a control for."""


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


def said(fix: Fix, caller: Caller) -> str:
    """A fix as ``caller`` is told it: each control named the caller's way."""
    return fix.say.format(*(_named(control, caller) for control in fix.controls))


def told(error: HuggingGPTError, caller: Caller) -> str:
    """An error raised before a run (a setting, the LLM configuration) with its fix,
    said for ``caller``."""
    return f"{error}; {said(error.fix, caller)}" if error.fix else str(error)


def reason_and_fix(failure: Failure, caller: Caller) -> str:
    """A failure's reason with its fix, said for ``caller``: a sentence of its own after
    a reason that runs over several lines or ends one, else after a colon."""
    reason = failure.reason
    if failure.fix is None:
        return reason
    fix = said(failure.fix, caller)
    if "\n" in reason or reason.endswith("."):
        between = "\n" if "\n" in reason else " "
        end = "" if fix.endswith((".", "?")) else "."
        return f"{reason}{between}{fix[:1].upper()}{fix[1:]}{end}"
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
        return _ATTACH[caller]
    if control.kind == "variable":
        if caller in _ENVIRONMENT:
            return f"{name} in {_ENVIRONMENT[caller]}"
        return f"export {name}={value}" if value else name
    if control.kind == "models":
        return _models(name, value, caller)
    if caller in _CONFIGURE_BY_OPERATOR:  # an LLM: each way to give one
        return _CONFIGURE_BY_OPERATOR[caller]
    return said(CONFIGURE_LLM, caller)


def _models(verb: str, what: str, caller: Caller) -> str:
    """A ``hugginggpt models`` command (``download MODEL``, ``list --task TASK``,
    ``cached``), or what it does for a caller who has no shell where the models are (a
    Python caller runs it, and is not told the flags of a command line)."""
    if caller == "cli":
        return f"hugginggpt models {verb}" + (
            f" {what}" if verb == "download" else f" --task {what}" if what else "")
    if caller == "python":  # a shell command still, without the flags of one
        return f"hugginggpt models {verb}" + (
            f" {what}" if verb == "download" else f", for {what}" if what else "")
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
