"""Per-run settings, passed to the graph as its ``context``.

This is the one place that reads environment variables: every field's default comes
from the environment when there is one, so ``Context(backend="dry-run")`` keeps the
user's configured LLM. A value given for a run wins over the environment.

Secrets (API keys) are not settings: they stay in the environment and are read only
where a client is built (:mod:`hugginggpt.tools.llm.client`), so they never reach state
or checkpoints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from hugginggpt.tools.env import env
from hugginggpt.tools.experts.dry_run import DRY_RUN_BACKEND
from hugginggpt.tools.experts.hf_inference import HF_INFERENCE_BACKEND
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.llm.config import Strategy
from hugginggpt.tools.llm.settings import StructuredOutputMethod
from hugginggpt.tools.redact import redact

__all__ = ["Context", "context_of", "settings_of"]


def _env_factory(*names: str, default: Any = None, cast: Any = str) -> Any:
    def read() -> Any:
        for name in names:
            value = env(name)
            if value is not None:
                return cast(value)
        return default

    return field(default_factory=read)


@dataclass(kw_only=True)
class Context:
    """Settings of one run.

    LLMs are named as ``MODEL`` (an OpenAI-compatible endpoint: OpenAI itself, or vLLM,
    Ollama, TGI, LM Studio through ``llm_base_url``) or ``hf:REPO_OR_URL`` (Hugging Face
    through ``langchain-huggingface``). Each role falls back to ``llm``.
    """

    llm: str | None = _env_factory("HUGGINGGPT_LLM")
    llm_base_url: str | None = _env_factory("HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL")
    planner_llm: str | None = _env_factory("HUGGINGGPT_PLANNER_LLM")
    selector_llm: str | None = _env_factory("HUGGINGGPT_SELECTOR_LLM")
    responder_llm: str | None = _env_factory("HUGGINGGPT_RESPONDER_LLM")
    llm_config: str | None = _env_factory("HUGGINGGPT_LLM_CONFIG")
    """A TOML or YAML file of endpoints and routing settings (see
    :mod:`hugginggpt.tools.llm.config`); it replaces ``llm``, ``llm_base_url`` and the
    per-role LLMs."""
    llm_endpoints: list[dict[str, Any]] | None = _env_factory(
        "HUGGINGGPT_LLM_ENDPOINTS", cast=json.loads
    )
    """The same endpoints as a list (``HUGGINGGPT_LLM_ENDPOINTS`` as a JSON array)."""
    llm_routing: Strategy | None = _env_factory(
        "HUGGINGGPT_LLM_ROUTING"
    )
    """Override the configured strategy (``least-busy`` by default)."""
    replay: Any = None
    """A :class:`hugginggpt.tools.llm.replay.Recording`: LLM replies come from it, no
    endpoint is called (``hugginggpt replay``)."""
    llm_timeout_s: float = _env_factory("HUGGINGGPT_LLM_TIMEOUT", default=60.0, cast=float)
    llm_max_retries: int = _env_factory("HUGGINGGPT_LLM_RETRIES", default=2, cast=int)
    structured_output: StructuredOutputMethod = _env_factory(
        "HUGGINGGPT_STRUCTURED_OUTPUT", default="function_calling"
    )

    planner: Literal["auto", "llm", "offline"] = _env_factory(
        "HUGGINGGPT_PLANNER", default="auto"
    )
    """``auto``: the LLM when one is configured, else the built-in offline planner."""
    plan_bank: str | None = _env_factory("HUGGINGGPT_PLAN_BANK")
    """The example bank (JSON lines of request -> plan); None: the shipped one."""
    few_shot: int = 4
    """How many of the bank's nearest examples the LLM planner is shown."""

    backend: str = _env_factory("HUGGINGGPT_BACKEND", default="auto")
    """Inference mode: ``auto``/``hybrid`` (every real backend, preferring local, then
    hf-inference, then lite), ``dry-run`` (simulated experts), one backend (``local``,
    ``hf-inference``, ``lite``, or one a plugin registers), or a comma-separated order
    of backends such as ``lite,hf-inference``."""
    dry_run_latency_scale: float = _env_factory(
        "HUGGINGGPT_DRY_RUN_SCALE", default=1.0, cast=float
    )
    plan: list[dict[str, Any]] | None = None
    """A fixed plan (HuggingGPT format) to run instead of asking the planner."""

    approval: Literal["never", "plan", "risky"] = _env_factory(
        "HUGGINGGPT_APPROVAL", default="never"
    )
    """``plan``: a human approves, edits or rejects the plan and models before anything
    runs; ``risky``: only when a selected tool does more than read (network calls to
    endpoints, paid providers, writes outside the workspace); ``never``: no approval."""

    max_subtasks: int = _env_factory("HUGGINGGPT_MAX_SUBTASKS", default=10, cast=int)
    max_plan_retries: int = _env_factory("HUGGINGGPT_PLAN_RETRIES", default=2, cast=int)
    max_llm_calls: int = _env_factory("HUGGINGGPT_MAX_LLM_CALLS", default=40, cast=int)
    """LLM calls a run may make (each endpoint tried counts); then the planner aborts,
    the selector takes the top-ranked model and the responder writes the plain summary."""
    max_llm_tokens: int = _env_factory("HUGGINGGPT_MAX_LLM_TOKENS", default=400_000, cast=int)
    """Prompt and completion tokens a run may use, with the same consequences."""
    subtask_timeout_s: float = _env_factory(
        "HUGGINGGPT_SUBTASK_TIMEOUT", default=300.0, cast=float
    )
    subtask_retries: int = _env_factory("HUGGINGGPT_SUBTASK_RETRIES", default=2, cast=int)
    retry_backoff_s: float = _env_factory("HUGGINGGPT_RETRY_BACKOFF", default=1.0, cast=float)
    latency_budget_s: float | None = _env_factory(
        "HUGGINGGPT_LATENCY_BUDGET", default=None, cast=float
    )
    """Expected seconds per subtask that model selection aims for (None: no budget)."""
    max_models_per_subtask: int = 3
    """How many candidate models a subtask may try before it fails."""
    selection_margin: float = 0.15
    """Candidates whose rank scores differ by less than this are 'close': the selector
    LLM, when configured, chooses among them."""

    hf_endpoints: dict[str, str] = _env_factory(
        "HUGGINGGPT_HF_ENDPOINTS", default={}, cast=json.loads
    )
    """hf-inference: model id -> URL of a dedicated Inference Endpoint or a TGI server
    (``HUGGINGGPT_HF_ENDPOINTS`` as a JSON object). The Hugging Face token is sent only to
    Hugging Face hosts."""
    hf_provider: str | None = _env_factory("HUGGINGGPT_HF_PROVIDER")
    """hf-inference: the Inference Provider for hub model ids (None: huggingface_hub's
    choice)."""
    hf_timeout_s: float | None = None
    """hf-inference: per-request timeout (None: the backend's own, 60 s)."""

    allow_private_urls: bool = False
    """Let URL inputs point at private, loopback or link-local addresses."""
    max_download_mb: float = _env_factory("HUGGINGGPT_MAX_DOWNLOAD_MB", default=50.0, cast=float)
    download_timeout_s: float = 30.0
    max_file_mb: float = _env_factory("HUGGINGGPT_MAX_FILE_MB", default=100.0, cast=float)
    """The largest local input file (attached or in the workspace) a subtask may read."""

    workspace: str = _env_factory("HUGGINGGPT_WORKSPACE", default="hugginggpt-workspace")
    catalog: str | None = _env_factory("HUGGINGGPT_CATALOG")

    offline: bool = False
    """Never call an LLM, even when one is configured (the demo, air-gapped runs)."""

    max_run_s: float = _env_factory("HUGGINGGPT_MAX_RUN_S", default=1800.0, cast=float)
    """Wall-time limit of the execute stage of a run, in seconds (``--max-run-time``):
    subtasks not finished when it is reached are abandoned (failed, or skipped if they
    had not started) with the limit as the reason, and the run still responds. The LLM
    stages are bounded by ``llm_timeout_s`` and ``llm_max_retries``; time spent waiting
    for an approval does not count; a resumed run gets the limit afresh."""
    max_download_total_mb: float = _env_factory(
        "HUGGINGGPT_MAX_DOWNLOAD_TOTAL_MB", default=200.0, cast=float
    )
    """Megabytes that all URL inputs of one run may download together
    (``--max-download-total-mb``; ``max_download_mb`` bounds each URL)."""
    max_loaded_models: int = _env_factory("HUGGINGGPT_MAX_LOADED_MODELS", default=3, cast=int)
    """Local models held in memory at once, in use or cached (``--max-loaded-models``);
    the least recently used is dropped first, and a load waits while all are in use."""
    dry_run_faults: dict[str, Any] | None = _env_factory(
        "HUGGINGGPT_DRY_RUN_FAULTS", default=None, cast=json.loads
    )
    """dry-run: faults the simulated experts inject (see
    :class:`hugginggpt.tools.experts.faults.FaultSpec`), e.g. ``{"rates": {"transient":
    0.1, "hang": 0.05}, "seed": 7}``; None: no faults."""


    def backend_settings(self) -> dict[str, dict[str, Any]]:
        """Per-backend settings handed to tools for this run (see
        :func:`hugginggpt.tools.experts.registry.run_settings`): hf-inference's endpoints,
        provider and timeout; the local backend's catalog and model bound; the faults the
        simulated experts inject."""
        hf: dict[str, Any] = {"endpoints": dict(self.hf_endpoints),
                              "provider": self.hf_provider, "timeout_s": self.hf_timeout_s}
        local: dict[str, Any] = {"max_loaded": self.max_loaded_models}
        if self.catalog:
            local["catalog"] = self.catalog
        settings = {HF_INFERENCE_BACKEND: {k: v for k, v in hf.items() if v},
                    LOCAL_BACKEND: local}
        if self.dry_run_faults:
            settings[DRY_RUN_BACKEND] = {"faults": self.dry_run_faults}
        return settings


_NOT_RECORDED = {"replay"}


def _redact(value: Any) -> Any:
    """Strings without secrets (see :func:`hugginggpt.tools.redact.redact`), in nested settings."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def settings_of(context: Context) -> dict[str, Any]:
    """The run's settings as plain data, for the trace and for a replay of the run.

    Settings hold no keys (those stay in the environment); URLs lose any credentials."""
    return {f.name: _redact(getattr(context, f.name)) for f in fields(context)
            if f.name not in _NOT_RECORDED}


def context_of(runtime: Any) -> Context:
    """The run's context, or the environment's defaults when the caller gave none."""
    context = getattr(runtime, "context", None)
    if context is None:
        return Context()
    if isinstance(context, dict):  # from a client of the server: settings only
        return Context(**{k: v for k, v in context.items() if k not in _NOT_RECORDED})
    return context
