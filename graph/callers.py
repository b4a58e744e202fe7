"""Who sets a run's settings, and how each caller names them.

A served run's caller (a client of the LangGraph server) may set only how a request is
planned, approved and run (:class:`ServedContext`); the rest is the deployment's. The
``hugginggpt run`` command sets a setting by its flag (:func:`flag_of`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hugginggpt.graph.context import Caller, Context, env_names
from hugginggpt.graph.refusals import NO_SUCH_SETTING, clip_repr
from hugginggpt.tools.env import env
from hugginggpt.tools.errors import SettingProblem, SettingsError

__all__ = ["ServedContext", "CALLER_SETTINGS", "caller_settings", "pinned_by_deployment",
           "deployment_only", "FLAG_NAMES", "flag_of"]

CALLER_SETTINGS = frozenset({
    "planner", "few_shot", "backend", "plan", "approval", "stream_execution", "max_subtasks",
    "max_plan_retries", "subtask_timeout_s", "subtask_retries", "retry_backoff_s",
    "latency_budget_s", "max_models_per_subtask", "selection_margin", "hf_timeout_s",
    "download_timeout_s", "offline", "structured_output", "llm_timeout_s",
    "llm_max_retries", "caller",
})
"""The settings a caller of a served graph may give in a run's ``context``: how to plan,
approve and run a request. Everything else belongs to the deployment and is read from
its environment: where files live (``workspace``, ``catalog``, ``plan_bank``), which
LLMs and endpoints its keys are sent to (``llm*``, ``hf_*``), what its network and disk
may be used for (``allow_private_urls``, ``download``, the size limits), what a run may
spend (``max_llm_calls``, ``max_llm_tokens``, ``max_run_s``) and the test knobs
(``dry_run_*``). ``HUGGINGGPT_CALLER_SETTINGS`` (comma-separated) opens more."""


def caller_settings() -> frozenset[str]:
    """:data:`CALLER_SETTINGS` and those the deployment opened
    (``HUGGINGGPT_CALLER_SETTINGS``; unknown names are refused)."""
    extra = {name.strip() for name in (env("HUGGINGGPT_CALLER_SETTINGS") or "").split(",")
             if name.strip()}
    if unknown := sorted(extra - set(Context.model_fields)):
        raise SettingsError([SettingProblem(
            setting=name, path=name, shown=repr(name), source="HUGGINGGPT_CALLER_SETTINGS",
            expected=NO_SUCH_SETTING) for name in unknown])
    return CALLER_SETTINGS | extra


def pinned_by_deployment(settings: Iterable[str]) -> list[str]:
    """The given settings that a served run's caller may not set, in order."""
    allowed = caller_settings()
    return [name for name in settings if name not in allowed]


def deployment_only(name: str) -> str:
    """Why a served run's caller may not set ``name``, and where it comes from instead."""
    where = ", ".join(env_names(name))
    source = f" (its environment: {where})" if where else ""
    return (f"not a caller's setting: the deployment sets it{source}; a caller may set "
            + ", ".join(sorted(caller_settings())))


class ServedContext(Context):
    """The settings of a run on the LangGraph server: a caller's ``context`` may hold
    only :func:`caller_settings`; the rest come from the deployment's environment. A run
    whose context sets another is refused before anything runs, naming the settings and
    where they come from instead (the auth handler refuses it earlier, at the request).
    Outputs carry their download URL (``artifact_url``, by default the server's
    ``/artifacts`` route)."""

    artifact_url: str | None = "/artifacts"
    caller: Caller = "served"

    def __init__(self, **settings: Any) -> None:
        if pinned := pinned_by_deployment(settings):
            raise SettingsError([SettingProblem(
                setting=name, path=name, shown=clip_repr(settings[name]),
                expected=deployment_only(name)) for name in pinned])
        super().__init__(**settings)


FLAG_NAMES = {"subtask_timeout_s": "--subtask-timeout", "max_run_s": "--max-run-time",
              "dry_run_latency_scale": "--latency-scale", "latency_budget_s": "--latency-budget",
              "hf_endpoints": "--hf-endpoint", "plan": "--plan",
              "stream_execution": "--no-stream-execution", "cache": "--no-cache"}
"""The ``hugginggpt run`` flags whose names are not their settings' (``--max-subtasks``
is ``max_subtasks``)."""


def flag_of(setting: str) -> str:
    """The ``hugginggpt run`` flag of a setting."""
    return FLAG_NAMES.get(setting, "--" + setting.replace("_", "-"))
