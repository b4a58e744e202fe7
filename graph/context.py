"""Per-run settings, passed to the graph as its ``context``.

This is the one place that reads settings from the environment (pydantic-settings:
``HUGGINGGPT_`` and the setting's name, ``HUGGINGGPT_MAX_SUBTASKS``, unless its
declaration names its variables), so ``Context(backend="dry-run")`` keeps the user's
configured LLM. A value given for a run wins over the environment.

Every setting is checked where it enters, by its declaration here and in
:class:`~hugginggpt.tools.llm.settings.LLMSettings` (types, choices and ranges), whether
it comes from a keyword, the environment, a saved settings file or the ``context`` of a
server run (LangGraph builds a ``Context`` from that dict): a bad one raises
:class:`SettingsError` naming the setting, the value, where it came from and what it may
be, before anything runs (:mod:`hugginggpt.graph.refusals`).

Secrets (API keys, tokens) are not settings: they stay in the environment and are read
only where a client is built (:mod:`hugginggpt.tools.llm.credentials`, as ``SecretStr``),
so they never reach a run's settings, state or checkpoints.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from hugginggpt.graph.refusals import refusal
from hugginggpt.tools.env import Environment, env, variables
from hugginggpt.tools.errors import SettingsError
from hugginggpt.tools.experts.availability import check_backend
from hugginggpt.tools.experts.dry_run import DRY_RUN_BACKEND
from hugginggpt.tools.experts.faults import fault_spec
from hugginggpt.tools.experts.hf_inference import HF_INFERENCE_BACKEND
from hugginggpt.tools.experts.llm import LLM_BACKEND
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.experts.ray import RAY_BACKEND
from hugginggpt.tools.experts.ray.handle import check_ray_address
from hugginggpt.tools.llm.expert import expert_settings
from hugginggpt.tools.llm.settings import (
    AtLeastOne,
    Count,
    LLMSettings,
    NonNegative,
    Seconds,
    Url,
    from_json,
)

__all__ = ["Context", "SettingsError", "context_of", "env_names", "Caller", "NOT_RECORDED"]

Caller = Literal["cli", "python", "served", "ui"]
"""Who asked for a run, so that an answer's advice names what that caller can change: a
flag of the ``hugginggpt`` command, a keyword of ``hugginggpt.run``, a key of a served
run's ``context``, or a control of the web UI (else its operator's setting)."""


def _subtasks(value: Any) -> Any:
    """A plan in either of HuggingGPT's forms, a list or ``{"subtasks": [...]}`` (as a
    server's client may send it), as its list of subtasks; anything else is left for
    the type to refuse (JSON text is not a plan)."""
    if isinstance(value, dict) and isinstance(value.get("subtasks"), list):
        return value["subtasks"]
    return value


PlanItems = Annotated[list[Any], BeforeValidator(_subtasks)]
Megabytes = Annotated[float, Field(gt=0)]
Backend = Annotated[str, AfterValidator(check_backend)]
_PREFIX = "HUGGINGGPT_"
NOT_RECORDED = {"replay"}
"""Settings a run is given but does not record, nor take from a served run's context."""


class Context(BaseSettings, LLMSettings):
    """Settings of one run: the LLMs it calls and what they may spend
    (:class:`~hugginggpt.tools.llm.settings.LLMSettings`), and how it plans, selects,
    approves and runs."""

    model_config = SettingsConfigDict(
        env_prefix=_PREFIX, enable_decoding=False, extra="forbid", validate_default=True,
        validate_by_name=True)

    caller: Caller = "python"
    """Who asks (set by each front door: the CLI, the web UI; a served run's default is
    ``served``): an answer's fixes are phrased for that interface."""

    planner: Literal["auto", "llm", "offline"] = "auto"
    """``auto``: the LLM when one is configured, else the built-in offline planner."""
    plan_bank: str | None = None
    """The example bank (JSON lines of request -> plan); None: the shipped one."""
    few_shot: Count = 4
    """How many of the bank's nearest examples the LLM planner is shown."""

    backend: Backend = "auto"
    """Inference mode: ``auto``/``hybrid`` (every real backend, preferring local, then
    hf-inference, then the controller LLM for text tasks (``llm``), then lite),
    ``dry-run`` (simulated experts), one backend (``local``, ``hf-inference``, ``llm``,
    ``lite``, or one a plugin registers), or a comma-separated order of backends such
    as ``llm,local`` (a backend left out is never used)."""
    dry_run_latency_scale: NonNegative = Field(1.0, validation_alias="HUGGINGGPT_DRY_RUN_SCALE")
    """dry-run: the simulated experts sleep their catalog latency times this (0: not at
    all)."""
    plan: PlanItems | None = None
    """A fixed plan (HuggingGPT format: a list of subtasks, or ``{"subtasks": [...]}``)
    to run instead of asking the planner. Its subtasks are checked by the plan
    validator, which names every problem."""

    approval: Literal["never", "plan", "risky"] = "never"
    """``plan``: a human approves, edits or rejects the plan and models before anything
    runs; ``risky``: only when a selected tool does more than read (network calls to
    endpoints, paid providers, writes outside the workspace); ``never``: no approval."""

    stream_execution: bool = True
    """Start each subtask while the planner's reply is still streaming, as soon as its
    JSON is complete and valid and its dependencies allow (``--no-stream-execution`` or
    ``HUGGINGGPT_STREAM_EXECUTION=0``: plan first, then run). Only for the LLM planner
    on a streaming endpoint with ``approval`` ``never`` or ``risky`` (a risky subtask
    still waits for approval); ``plan`` approval shows the whole plan first."""

    max_subtasks: AtLeastOne = 10
    """The most subtasks a plan may have; a larger one is refused (the planner is asked
    again, then the run aborts)."""
    max_plan_retries: Count = Field(2, validation_alias="HUGGINGGPT_PLAN_RETRIES")
    """How many times the planner is asked again with the problems of a plan the validator
    refused, before the run aborts."""
    subtask_timeout_s: Seconds = Field(300.0, validation_alias="HUGGINGGPT_SUBTASK_TIMEOUT")
    """Seconds one model call of a subtask may take before it counts as failed."""
    subtask_retries: Count = 2
    """Retries of a subtask's model call after a transient error, before the next
    candidate model is tried."""
    retry_backoff_s: NonNegative = Field(1.0, validation_alias="HUGGINGGPT_RETRY_BACKOFF")
    """Seconds before the first retry of a subtask; each further retry waits twice as
    long."""
    latency_budget_s: Seconds | None = Field(None, validation_alias="HUGGINGGPT_LATENCY_BUDGET")
    """Expected seconds per subtask that model selection aims for (None: no budget)."""
    max_models_per_subtask: AtLeastOne = 3
    """How many candidate models a subtask may try before it fails."""
    selection_margin: NonNegative = 0.15
    """Candidates whose rank scores differ by less than this are 'close': the selector
    LLM, when configured, chooses among them."""

    hf_endpoints: Annotated[dict[str, Url], BeforeValidator(from_json)] = {}
    """hf-inference: model id -> URL of a dedicated Inference Endpoint or a TGI server
    (``HUGGINGGPT_HF_ENDPOINTS`` as a JSON object). The Hugging Face token is sent only to
    Hugging Face hosts."""
    hf_timeout_s: Seconds | None = None
    """hf-inference: per-request timeout (None: the backend's own, 60 s)."""

    experts_url: Url | None = Field(None, validation_alias="HUGGINGGPT_EXPERTS_URL")
    """ray: the expert tier's HTTP address (``hugginggpt experts serve`` prints it), for
    ``--backend ray``; its key is the secret ``HUGGINGGPT_EXPERTS_KEY``."""
    ray_address: Annotated[str, AfterValidator(check_ray_address)] | None = Field(
        None, validation_alias="HUGGINGGPT_RAY_ADDRESS")
    """ray: the Ray cluster the tier runs on (``HOST:6379``, ``ray://HOST:10001`` or
    ``auto``), for a graph worker inside it: the worker joins it (about a second, once;
    it needs the ``ray`` extra) and calls the tier through a Ray Serve handle, without
    HTTP or key. It wins over ``experts_url`` when both are set."""
    experts_shared_dir: str | None = None
    """ray: a folder the graph workers and the tier's replicas both see; inputs larger
    than ``experts_inline_max_mb`` go through it instead of inside the request."""
    experts_inline_max_mb: NonNegative = 1.0
    """ray: the largest input file sent inside the request when there is a shared folder."""

    allow_private_urls: bool = False
    """Let URL inputs point at private, loopback or link-local addresses."""
    max_download_mb: Megabytes = 50.0
    """The largest file a URL input may download, in megabytes."""
    download_timeout_s: Seconds = 30.0
    """Seconds a URL input's whole download may take."""
    max_file_mb: Megabytes = 100.0
    """The largest local input file (attached or in the workspace) a subtask may read."""

    workspace: Annotated[str, Field(min_length=1)] = "hugginggpt-workspace"
    """The folder of a run's artifacts and inputs (and of the CLI's checkpoints and
    saved settings); a relative one is under the current folder."""
    catalog: str | None = None
    """The local backend's model catalog, a JSON file (None: the shipped one)."""

    max_download_total_mb: Megabytes = 200.0
    """Megabytes that all URL inputs and model downloads of one run may take together
    (``--max-download-total-mb``; ``max_download_mb`` bounds each URL)."""
    download: Literal["ask", "yes", "no"] | None = None
    """Whether the local backend may download a model missing from the Hugging Face cache
    (``--download``): ``ask`` (the user sees each model's size, license and gating first,
    on the terminal or through the approval interrupt), ``yes`` (within
    ``max_download_total_mb``; a model that runs its own code is still asked about), or
    ``no`` (nothing touches the network). None: not set, ``no`` wherever nobody can be
    asked (the CLI asks on a terminal)."""
    max_loaded_models: AtLeastOne = 3
    """Local models held in memory when this run loads one, in use or cached
    (``--max-loaded-models``): before each of the run's loads the least recently used
    idle models are dropped until it fits, and a load waits while all are in use. The
    bound is the run's: another run in the process keeps its own."""
    artifact_url: str | None = None
    """Where a served run's artifacts can be downloaded: the URL prefix of the server's
    ``/artifacts`` route (``https://host/artifacts``, or ``/artifacts`` relative to the
    server), so that an output reference and a chat message carry ``url`` beside
    ``path``. None (a run in-process): messages link the files themselves
    (``file://``)."""
    dry_run_faults: Annotated[dict[str, Any] | None, BeforeValidator(from_json),
                              AfterValidator(fault_spec)] = None
    """dry-run: faults the simulated experts inject (see
    :class:`hugginggpt.tools.experts.faults.FaultSpec`), e.g. ``{"rates": {"transient":
    0.1, "hang": 0.05}, "seed": 7}``; None: no faults. Checked as it enters: unknown
    keys or fault kinds, and rates that are not probabilities, are refused."""

    cache: bool = True
    """Serve a subtask from the result cache (``<workspace>/cache.sqlite``) when the same
    tool already ran on the same inputs (files by content), in any run or thread on this
    workspace; store what succeeds (``--no-cache`` or ``HUGGINGGPT_CACHE=0``: neither).
    Failures and tools that declare themselves nondeterministic are never cached."""
    cache_ttl_s: Seconds = Field(7 * 24 * 3600.0, validation_alias="HUGGINGGPT_CACHE_TTL")
    """How long a cached result may be served, in seconds (a week; ``inf``: for ever)."""
    cache_max_entries: AtLeastOne = 10_000
    """Results the cache holds at most; the least recently used go first."""

    def __init__(self, **settings: Any) -> None:
        """The settings given, and the environment's for the rest, checked.

        Raises:
            SettingsError: naming every refused setting, where its value came from
                and what it may be (outside pydantic's validation, where a ``ValueError``
                would be wrapped again: the LangGraph server shows its clients the
                message of a ``ValueError`` only).
        """
        try:
            super().__init__(**settings)
        except ValidationError as exc:
            raise refusal(exc, type(self), lambda key: _entered(key, set(settings))) from None

    @classmethod
    def settings_customise_sources(
            cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """A run's keywords, then the environment (no ``.env`` or secrets files)."""
        return init_settings, Environment(settings_cls)

    @classmethod
    def model_json_schema(cls, by_alias: bool | None = False, *args: Any,
                          **kwargs: Any) -> dict[str, Any]:
        """The settings by their names, not their environment variables (the LangGraph
        server keeps only the keys of a run's ``context`` that this schema names)."""
        return super().model_json_schema(by_alias, *args, **kwargs)

    def replace(self, **changes: Any) -> Self:
        """These settings with ``changes``, checked as they enter."""
        return type(self)(**{**dict(self), **changes})

    def backend_settings(self) -> dict[str, dict[str, Any]]:
        """Per-backend settings handed to tools for this run (see
        :func:`hugginggpt.tools.experts.registry.run_settings`): hf-inference's endpoints,
        provider, timeout and billed organisation; the local backend's catalog, model bound
        and download mode; the expert tier's address and file rules (``ray``); whether
        this run's LLM can be the ``llm`` backend's expert, and on
        which endpoints; the faults the simulated experts inject."""
        hf: dict[str, Any] = {"endpoints": dict(self.hf_endpoints),
                              "provider": self.hf_provider, "timeout_s": self.hf_timeout_s,
                              "bill_to": self.hf_bill_to}
        local: dict[str, Any] = {"max_loaded": self.max_loaded_models,
                                 "download": self.download or "no"}
        if self.catalog:
            local["catalog"] = self.catalog
        tier = {"url": self.experts_url, "ray_address": self.ray_address,
                "shared_dir": self.experts_shared_dir,
                "inline_max_mb": self.experts_inline_max_mb, "catalog": self.catalog}
        settings = {HF_INFERENCE_BACKEND: {k: v for k, v in hf.items() if v},
                    LOCAL_BACKEND: local, LLM_BACKEND: expert_settings(self),
                    RAY_BACKEND: {k: v for k, v in tier.items() if v is not None}}
        if self.dry_run_faults:
            settings[DRY_RUN_BACKEND] = {"faults": self.dry_run_faults}
        return settings


def env_names(setting: str) -> tuple[str, ...]:
    """The environment variables a setting is read from (first set wins); () for a name
    that is no setting."""
    return variables(Context, setting) if setting in Context.model_fields else ()


def _entered(key: str, given: Iterable[str]) -> tuple[str, str | None]:
    """The setting a finding's key names, and the variable its value came from (None: it
    was given for the run)."""
    if key in given:
        return key, None
    return key, next((n for n in env_names(key) if env(n) is not None), None)


def context_of(runtime: Any) -> Context:
    """The run's context, or the environment's defaults when the caller gave none."""
    context = getattr(runtime, "context", None)
    if context is None:
        return Context()
    if isinstance(context, dict):  # from a client of the server: settings only
        return Context(**{k: v for k, v in context.items() if k not in NOT_RECORDED})
    return context
