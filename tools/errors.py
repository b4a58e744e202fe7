"""A typed family of errors.

Errors caused by a model, a tool or the user's input become data in state (a failed
result or an abort reason); these classes say which kind of failure it was, and whether
trying again can help.
"""

from __future__ import annotations

__all__ = [
    "HuggingGPTError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "TransientToolError",
    "ToolTimeoutError",
    "ToolOutputError",
    "ArgumentError",
    "LimitExceededError",
    "LLMNotConfiguredError",
    "LLMCallError",
    "LLMBudgetError",
]


class HuggingGPTError(Exception):
    """Base class of every error this project raises on purpose."""


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


class ArgumentError(HuggingGPTError, ValueError):
    """A subtask argument cannot be resolved: a missing file, a path outside the
    workspace, an output of the wrong kind."""


class LimitExceededError(HuggingGPTError):
    """A per-run limit was reached. The message names the limit, its value and how to
    raise it; trying again within the same run does not help.

    Attributes:
        setting: the :class:`~hugginggpt.graph.context.Context` field of the limit.
        value: its value for this run.
    """

    def __init__(self, what: str, *, setting: str, value: float, unit: str = "",
                 env: str, flag: str | None = None) -> None:
        self.setting, self.value = setting, value
        how = f"{flag} or {env}" if flag else env
        super().__init__(
            f"{what} (limit {setting}={value:g}{unit}; raise it with {how})"
        )


class LLMNotConfiguredError(HuggingGPTError):
    """A stage needs an LLM and none is configured."""


class LLMCallError(HuggingGPTError):
    """An LLM endpoint could not be reached or did not answer in time."""


class LLMBudgetError(LLMCallError):
    """The run has used its LLM calls or tokens; no further call is made."""

    @property
    def description(self) -> str:
        return str(self)
