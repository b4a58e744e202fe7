"""Per-run settings, passed to the graph as its ``context``.

This is the one place that reads environment variables: every field's default comes
from the environment when there is one, so ``Context(backend="dry-run")`` keeps the
user's configured LLM. A value given for a run wins over the environment.

Every setting is checked where it enters, by its declaration here (a pydantic
dataclass: types, choices and ranges), whether it comes from a keyword, the
environment, a saved settings file or the ``context`` of a server run (LangGraph builds
a ``Context`` from that dict): a bad one raises :class:`SettingsError` naming the
setting, the value, where it came from and what it may be, before anything runs.

Secrets (API keys) are not settings: they stay in the environment and are read only
where a client is built (:mod:`hugginggpt.tools.llm.credentials`), so they never reach
state or checkpoints.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import field, fields
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)
from pydantic.dataclasses import dataclass
from pydantic_core import ErrorDetails

from hugginggpt.tools.env import env
from hugginggpt.tools.errors import SettingProblem, SettingsError
from hugginggpt.tools.experts.availability import check_backend
from hugginggpt.tools.experts.dry_run import DRY_RUN_BACKEND
from hugginggpt.tools.experts.faults import FaultSpec
from hugginggpt.tools.experts.hf_inference import HF_INFERENCE_BACKEND
from hugginggpt.tools.experts.llm import LLM_BACKEND
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.llm.expert import expert_settings
from hugginggpt.tools.llm.providers import SAVED_OBJECT, chat_model_label, is_chat_model
from hugginggpt.tools.llm.settings import StructuredOutputMethod
from hugginggpt.tools.redact import USERINFO, redact

__all__ = ["Context", "ServedContext", "CALLER_SETTINGS", "SettingsError", "context_of",
           "settings_of", "env_names", "caller_settings", "Caller", "FLAG_NAMES", "flag_of",
           "setting_of_flag"]

Caller = Literal["cli", "python", "served", "ui"]
"""Who asked for a run, so that an answer's advice names what that caller can change: a
flag of the ``hugginggpt`` command, a keyword of ``hugginggpt.run``, a key of a served
run's ``context``, or a control of the web UI (else its operator's setting)."""


def _env_factory(*names: str, default: Any = None) -> Any:
    """A field whose default is the first of these environment variables that is set
    (as text: the field's type reads it), else ``default``."""
    def read() -> Any:
        for name in names:
            value = env(name)
            if value is not None:
                return value
        return default

    return field(default_factory=read, metadata={"env": names})


def _json(value: Any) -> Any:
    """Text (from the environment) read as JSON; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at character {exc.pos})") from None


def _http_url(value: str) -> str:
    """An http(s) URL with a host; its credentials, if any, are not looked at (saved
    settings hold ``[redacted]@`` there)."""
    try:
        parts = urlsplit(USERINFO.sub("", value, count=1))
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        ok = ok and (parts.port is None or parts.port > 0)
    except ValueError:  # a malformed host or port
        ok = False
    if not ok:
        raise ValueError("expected an http:// or https:// URL")
    return value


def _subtasks(value: Any) -> Any:
    """A plan in either of HuggingGPT's forms, a list or ``{"subtasks": [...]}`` (as a
    server's client may send it), as its list of subtasks; anything else is left for
    the type to refuse (JSON text is not a plan)."""
    if isinstance(value, dict) and isinstance(value.get("subtasks"), list):
        return value["subtasks"]
    return value


PlanItems = Annotated[list[Any], BeforeValidator(_subtasks)]


def _llm_spec(value: Any) -> Any:
    """A model's name, or a LangChain chat model the caller built."""
    if value is None or isinstance(value, str) or is_chat_model(value):
        return value
    raise ValueError("expected a model's name (gpt-4o-mini, anthropic:claude-sonnet-4-5, "
                     "hf:REPO) or a LangChain chat model (a BaseChatModel)")


LLM = Annotated[Any, AfterValidator(_llm_spec)]
"""A role's LLM (:data:`hugginggpt.tools.llm.settings.LLMSpec`). A chat-model object is
never saved with the thread: :func:`settings_of` records its class and model, and a
resume needs it passed again."""


def _fault_spec(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """The faults setting, once the dry-run backend would accept it."""
    FaultSpec.parse(value)  # raises ValueError saying what is allowed
    return value
Count = Annotated[int, Field(ge=0)]
AtLeastOne = Annotated[int, Field(ge=1)]
Seconds = Annotated[float, Field(gt=0)]
"""A time limit; ``inf`` is no limit."""
NonNegative = Annotated[float, Field(ge=0)]
Megabytes = Annotated[float, Field(gt=0)]
Url = Annotated[str, AfterValidator(_http_url)]
Backend = Annotated[str, AfterValidator(check_backend)]


@dataclass(kw_only=True, config=ConfigDict(
    extra="forbid", validate_default=True))
class Context:
    """Settings of one run.

    LLMs are named as ``MODEL`` (an OpenAI-compatible endpoint: OpenAI itself, or vLLM,
    Ollama, TGI, LM Studio through ``llm_base_url``), LangChain's ``PROVIDER:MODEL``
    (``anthropic:claude-sonnet-4-5``, ``ollama:qwen3:4b``, ...: ``init_chat_model``, with
    the provider's extra installed) or ``hf:REPO_OR_URL`` (Hugging Face through
    ``langchain-huggingface``), or given as a LangChain chat model the caller built
    (``llm=ChatAnthropic(...)``: routed, budgeted and recorded like a named one, called
    with its own keys, timeout and retries, never saved with the thread). Each role
    falls back to ``llm``; the expert (the ``llm`` backend) to the responder's.
    """

    llm: LLM = _env_factory("HUGGINGGPT_LLM")
    llm_base_url: Url | None = _env_factory("HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL")
    planner_llm: LLM = _env_factory("HUGGINGGPT_PLANNER_LLM")
    selector_llm: LLM = _env_factory("HUGGINGGPT_SELECTOR_LLM")
    responder_llm: LLM = _env_factory("HUGGINGGPT_RESPONDER_LLM")
    expert_llm: LLM = _env_factory("HUGGINGGPT_EXPERT_LLM")
    """The LLM the ``llm`` backend does text subtasks with (None: the responder's)."""
    llm_config: str | None = _env_factory("HUGGINGGPT_LLM_CONFIG")
    """A TOML or YAML file of endpoints and routing settings (see
    :mod:`hugginggpt.tools.llm.config`); it replaces ``llm``, ``llm_base_url`` and the
    per-role LLMs."""
    llm_endpoints: Annotated[list[dict[str, Any]] | None, BeforeValidator(_json)] = (
        _env_factory("HUGGINGGPT_LLM_ENDPOINTS"))
    """The same endpoints as a list (``HUGGINGGPT_LLM_ENDPOINTS`` as a JSON array)."""
    llm_routing: str | None = _env_factory("HUGGINGGPT_LLM_ROUTING")
    """Override the configured strategy (``least-busy`` by default; ``lowest-latency``,
    ``round-robin``, ``strongest``). Checked with the rest of the LLM configuration, by
    :func:`hugginggpt.tools.llm.config.routing_config` (a ``ConfigError``)."""
    caller: Caller = "python"
    """Who asks (set by each front door: the CLI, the web UI; a served run's default is
    ``served``): an answer's fixes are phrased for that interface."""
    replay: Any = None
    """A :class:`hugginggpt.tools.llm.replay.Recording`: LLM replies come from it, no
    endpoint is called (``hugginggpt replay``)."""
    llm_timeout_s: Seconds = _env_factory("HUGGINGGPT_LLM_TIMEOUT", default=60.0)
    llm_max_retries: Count = _env_factory("HUGGINGGPT_LLM_RETRIES", default=2)
    structured_output: StructuredOutputMethod = _env_factory(
        "HUGGINGGPT_STRUCTURED_OUTPUT", default="auto"
    )
    """``with_structured_output``'s method for plans, selections and the llm expert's
    answers: ``auto`` (tool calling on an OpenAI-compatible endpoint, where plain
    servers often lack JSON schema; each other provider's own default: Anthropic's tool
    use, Ollama's ``format``, Gemini's JSON schema), or one method for every LLM."""

    planner: Literal["auto", "llm", "offline"] = _env_factory(
        "HUGGINGGPT_PLANNER", default="auto"
    )
    """``auto``: the LLM when one is configured, else the built-in offline planner."""
    plan_bank: str | None = _env_factory("HUGGINGGPT_PLAN_BANK")
    """The example bank (JSON lines of request -> plan); None: the shipped one."""
    few_shot: Count = 4
    """How many of the bank's nearest examples the LLM planner is shown."""

    backend: Backend = _env_factory("HUGGINGGPT_BACKEND", default="auto")
    """Inference mode: ``auto``/``hybrid`` (every real backend, preferring local, then
    hf-inference, then the controller LLM for text tasks (``llm``), then lite),
    ``dry-run`` (simulated experts), one backend (``local``, ``hf-inference``, ``llm``,
    ``lite``, or one a plugin registers), or a comma-separated order of backends such
    as ``llm,local`` (a backend left out is never used)."""
    dry_run_latency_scale: NonNegative = _env_factory("HUGGINGGPT_DRY_RUN_SCALE", default=1.0)
    plan: PlanItems | None = None
    """A fixed plan (HuggingGPT format: a list of subtasks, or ``{"subtasks": [...]}``)
    to run instead of asking the planner. Its subtasks are checked by the plan
    validator, which names every problem."""

    approval: Literal["never", "plan", "risky"] = _env_factory(
        "HUGGINGGPT_APPROVAL", default="never"
    )
    """``plan``: a human approves, edits or rejects the plan and models before anything
    runs; ``risky``: only when a selected tool does more than read (network calls to
    endpoints, paid providers, writes outside the workspace); ``never``: no approval."""

    stream_execution: bool = _env_factory("HUGGINGGPT_STREAM_EXECUTION", default=True)
    """Start each subtask while the planner's reply is still streaming, as soon as its
    JSON is complete and valid and its dependencies allow (``--no-stream-execution`` or
    ``HUGGINGGPT_STREAM_EXECUTION=0``: plan first, then run). Only for the LLM planner
    on a streaming endpoint with ``approval`` ``never`` or ``risky`` (a risky subtask
    still waits for approval); ``plan`` approval shows the whole plan first."""

    max_subtasks: AtLeastOne = _env_factory("HUGGINGGPT_MAX_SUBTASKS", default=10)
    max_plan_retries: Count = _env_factory("HUGGINGGPT_PLAN_RETRIES", default=2)
    max_llm_calls: Count = _env_factory("HUGGINGGPT_MAX_LLM_CALLS", default=40)
    """LLM calls a run may make (each endpoint tried counts); then the planner aborts,
    the selector takes the top-ranked model and the responder writes the plain summary."""
    max_llm_tokens: Count = _env_factory("HUGGINGGPT_MAX_LLM_TOKENS", default=400_000)
    """Prompt and completion tokens a run may use, with the same consequences."""
    subtask_timeout_s: Seconds = _env_factory("HUGGINGGPT_SUBTASK_TIMEOUT", default=300.0)
    subtask_retries: Count = _env_factory("HUGGINGGPT_SUBTASK_RETRIES", default=2)
    retry_backoff_s: NonNegative = _env_factory("HUGGINGGPT_RETRY_BACKOFF", default=1.0)
    latency_budget_s: Seconds | None = _env_factory("HUGGINGGPT_LATENCY_BUDGET")
    """Expected seconds per subtask that model selection aims for (None: no budget)."""
    max_models_per_subtask: AtLeastOne = 3
    """How many candidate models a subtask may try before it fails."""
    selection_margin: NonNegative = 0.15
    """Candidates whose rank scores differ by less than this are 'close': the selector
    LLM, when configured, chooses among them."""

    hf_endpoints: Annotated[dict[str, Url], BeforeValidator(_json)] = _env_factory(
        "HUGGINGGPT_HF_ENDPOINTS", default={})
    """hf-inference: model id -> URL of a dedicated Inference Endpoint or a TGI server
    (``HUGGINGGPT_HF_ENDPOINTS`` as a JSON object). The Hugging Face token is sent only to
    Hugging Face hosts."""
    hf_provider: str | None = _env_factory("HUGGINGGPT_HF_PROVIDER")
    """The Inference Provider for hub model ids, of hf-inference experts and of ``hf:``
    LLMs (None: huggingface_hub's choice)."""
    hf_bill_to: str | None = _env_factory("HUGGINGGPT_HF_BILL_TO")
    """The Hugging Face organisation billed for hf-inference requests and ``hf:`` LLM
    calls (huggingface_hub's ``bill_to``: the ``X-HF-Bill-To`` header, sent only to
    Hugging Face hosts); None bills the token's owner."""
    hf_timeout_s: Seconds | None = None
    """hf-inference: per-request timeout (None: the backend's own, 60 s)."""

    allow_private_urls: bool = False
    """Let URL inputs point at private, loopback or link-local addresses."""
    max_download_mb: Megabytes = _env_factory("HUGGINGGPT_MAX_DOWNLOAD_MB", default=50.0)
    download_timeout_s: Seconds = 30.0
    max_file_mb: Megabytes = _env_factory("HUGGINGGPT_MAX_FILE_MB", default=100.0)
    """The largest local input file (attached or in the workspace) a subtask may read."""

    workspace: Annotated[str, Field(min_length=1)] = _env_factory(
        "HUGGINGGPT_WORKSPACE", default="hugginggpt-workspace")
    catalog: str | None = _env_factory("HUGGINGGPT_CATALOG")

    offline: bool = False
    """Never call an LLM, even when one is configured (the demo, air-gapped runs)."""

    max_run_s: Seconds = _env_factory("HUGGINGGPT_MAX_RUN_S", default=1800.0)
    """Wall-time limit of the execute stage of a run, in seconds (``--max-run-time``):
    subtasks not finished when it is reached are abandoned (failed, or skipped if they
    had not started) with the limit as the reason, and the run still responds. Each LLM
    call is bounded by ``llm_timeout_s`` and ``llm_max_retries``, and the run's LLM calls
    together wait at most ``max_run_s`` (a call is cut to what is left; then no LLM is
    asked). An endpoint that does not answer is asked once per run
    (:mod:`hugginggpt.tools.llm.breaker`). Time spent waiting for an approval does not
    count; a resumed run gets the limit afresh."""
    max_download_total_mb: Megabytes = _env_factory(
        "HUGGINGGPT_MAX_DOWNLOAD_TOTAL_MB", default=200.0)
    """Megabytes that all URL inputs and model downloads of one run may take together
    (``--max-download-total-mb``; ``max_download_mb`` bounds each URL)."""
    download: Literal["ask", "yes", "no"] | None = _env_factory("HUGGINGGPT_DOWNLOAD")
    """Whether the local backend may download a model missing from the Hugging Face cache
    (``--download``): ``ask`` (the user sees each model's size, license and gating first,
    on the terminal or through the approval interrupt), ``yes`` (within
    ``max_download_total_mb``; a model that runs its own code is still asked about), or
    ``no`` (nothing touches the network). None: not set, ``no`` wherever nobody can be
    asked (the CLI asks on a terminal)."""
    max_loaded_models: AtLeastOne = _env_factory("HUGGINGGPT_MAX_LOADED_MODELS", default=3)
    """Local models held in memory when this run loads one, in use or cached
    (``--max-loaded-models``): before each of the run's loads the least recently used
    idle models are dropped until it fits, and a load waits while all are in use. The
    bound is the run's: another run in the process keeps its own."""
    artifact_url: str | None = _env_factory("HUGGINGGPT_ARTIFACT_URL")
    """Where a served run's artifacts can be downloaded: the URL prefix of the server's
    ``/artifacts`` route (``https://host/artifacts``, or ``/artifacts`` relative to the
    server), so that an output reference and a chat message carry ``url`` beside
    ``path``. None (a run in-process): messages link the files themselves
    (``file://``)."""
    dry_run_faults: Annotated[dict[str, Any] | None, BeforeValidator(_json),
                              AfterValidator(_fault_spec)] = _env_factory(
        "HUGGINGGPT_DRY_RUN_FAULTS")
    """dry-run: faults the simulated experts inject (see
    :class:`hugginggpt.tools.experts.faults.FaultSpec`), e.g. ``{"rates": {"transient":
    0.1, "hang": 0.05}, "seed": 7}``; None: no faults. Checked as it enters: unknown
    keys or fault kinds, and rates that are not probabilities, are refused."""

    cache: bool = _env_factory("HUGGINGGPT_CACHE", default=True)
    """Serve a subtask from the result cache (``<workspace>/cache.sqlite``) when the same
    tool already ran on the same inputs (files by content), in any run or thread on this
    workspace; store what succeeds (``--no-cache`` or ``HUGGINGGPT_CACHE=0``: neither).
    Failures and tools that declare themselves nondeterministic are never cached."""
    cache_ttl_s: Seconds = _env_factory("HUGGINGGPT_CACHE_TTL", default=7 * 24 * 3600.0)
    """How long a cached result may be served, in seconds (a week; ``inf``: for ever)."""
    cache_max_entries: AtLeastOne = _env_factory("HUGGINGGPT_CACHE_MAX_ENTRIES",
                                                 default=10_000)
    """Results the cache holds at most; the least recently used go first."""

    def backend_settings(self) -> dict[str, dict[str, Any]]:
        """Per-backend settings handed to tools for this run (see
        :func:`hugginggpt.tools.experts.registry.run_settings`): hf-inference's endpoints,
        provider, timeout and billed organisation; the local backend's catalog, model bound
        and download mode; whether this run's LLM can be the ``llm`` backend's expert, and on
        which endpoints; the faults the simulated experts inject."""
        hf: dict[str, Any] = {"endpoints": dict(self.hf_endpoints),
                              "provider": self.hf_provider, "timeout_s": self.hf_timeout_s,
                              "bill_to": self.hf_bill_to}
        local: dict[str, Any] = {"max_loaded": self.max_loaded_models,
                                 "download": self.download or "no"}
        if self.catalog:
            local["catalog"] = self.catalog
        settings = {HF_INFERENCE_BACKEND: {k: v for k, v in hf.items() if v},
                    LOCAL_BACKEND: local, LLM_BACKEND: expert_settings(self)}
        if self.dry_run_faults:
            settings[DRY_RUN_BACKEND] = {"faults": self.dry_run_faults}
        return settings


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
    known = {f.name for f in fields(Context)}
    if unknown := sorted(extra - known):
        raise SettingsError([SettingProblem(
            setting=name, path=name, shown=repr(name), source="HUGGINGGPT_CALLER_SETTINGS",
            expected="no such setting (the settings are the fields of hugginggpt.Context)")
            for name in unknown])
    return CALLER_SETTINGS | extra


def _refusing(init: Callable[..., None]) -> Callable[..., None]:
    """Context's validating ``__init__``, with pydantic's findings as one
    :class:`SettingsError` that says, per setting, where the value came from and what it
    may be. (Outside pydantic's validation, where a ``ValueError`` would be wrapped
    again: the LangGraph server shows its clients the message of a ``ValueError`` only.)
    """
    @functools.wraps(init)
    def __init__(self: Context, **settings: Any) -> None:
        try:
            init(self, **settings)
        except ValidationError as exc:
            raise SettingsError([_problem(e, set(settings)) for e in exc.errors()]) from None

    return __init__


Context.__init__ = _refusing(Context.__init__)  # type: ignore[method-assign]


@dataclass(kw_only=True, config=ConfigDict(extra="forbid", validate_default=True))
class ServedContext(Context):
    """The settings of a run on the LangGraph server: a caller's ``context`` may hold
    only :func:`caller_settings`; the rest come from the deployment's environment. A run
    whose context sets another is refused before anything runs, naming the settings and
    where they come from instead (the auth handler refuses it earlier, at the request).
    Outputs carry their download URL (``artifact_url``, by default the server's
    ``/artifacts`` route)."""

    artifact_url: str | None = _env_factory("HUGGINGGPT_ARTIFACT_URL", default="/artifacts")
    caller: Caller = "served"


FLAG_NAMES = {"subtask_timeout_s": "--subtask-timeout", "max_run_s": "--max-run-time",
              "dry_run_latency_scale": "--latency-scale", "latency_budget_s": "--latency-budget",
              "hf_endpoints": "--hf-endpoint", "plan": "--plan",
              "stream_execution": "--no-stream-execution", "cache": "--no-cache"}
"""The ``hugginggpt run`` flags whose names are not their settings' (``--max-subtasks``
is ``max_subtasks``)."""


def flag_of(setting: str) -> str:
    """The ``hugginggpt run`` flag of a setting."""
    return FLAG_NAMES.get(setting, "--" + setting.replace("_", "-"))


def setting_of_flag(flag: str) -> str | None:
    """The setting a ``hugginggpt run`` flag sets, or None when it sets none."""
    named = {f: s for s, f in FLAG_NAMES.items()}
    setting = named.get(flag, flag.removeprefix("--").replace("-", "_"))
    return setting if setting in {f.name for f in fields(Context)} else None


def pinned_by_deployment(settings: Iterable[str]) -> list[str]:
    """The given settings that a served run's caller may not set, in order."""
    allowed = caller_settings()
    return [name for name in settings if name not in allowed]


def _served(init: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(init)
    def __init__(self: ServedContext, **settings: Any) -> None:
        if pinned := pinned_by_deployment(settings):
            raise SettingsError([SettingProblem(
                setting=name, path=name, shown=clip_repr(settings[name]),
                expected=deployment_only(name)) for name in pinned])
        init(self, **settings)

    return __init__


def deployment_only(name: str) -> str:
    """Why a served run's caller may not set ``name``, and where it comes from instead."""
    where = ", ".join(env_names(name))
    source = f" (its environment: {where})" if where else ""
    return (f"not a caller's setting: the deployment sets it{source}; a caller may set "
            + ", ".join(sorted(caller_settings())))


def clip_repr(value: Any) -> str:
    shown = redact(repr(value))
    return shown if len(shown) <= 200 else shown[:200] + "..."


ServedContext.__init__ = _served(_refusing(ServedContext.__init__))  # type: ignore[method-assign]

_NOT_RECORDED = {"replay"}
_KINDS = {"integer": "a whole number", "number": "a number", "string": "text",
          "boolean": "true or false", "object": "a mapping (a JSON object)",
          "array": "a list (a JSON array)"}


@functools.cache
def _schema() -> dict[str, Any]:
    return dict(TypeAdapter(Context).json_schema()["properties"])


def _expected(name: str) -> str:
    """What a setting may be, from its declaration: its choices, or its kind and range."""
    options = _schema().get(name, {})
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


def _problem(error: ErrorDetails, given: set[str]) -> SettingProblem:
    """One of pydantic's findings, told in the setting's terms (a default that is not
    ``given`` came from the environment: its variable is named)."""
    first, *inner = error["loc"]
    name = str(first)
    path = name + "".join(f"[{part!r}]" for part in inner)
    shown = redact(repr(error["input"]))
    if len(shown) > 200:
        shown = shown[:200] + "..."
    if error["type"] == "unexpected_keyword_argument":
        return SettingProblem(setting=name, path=path, shown=shown,
                              expected="no such setting (the settings are the fields of "
                                       "hugginggpt.Context)")
    if error["type"] == "value_error":
        expected = str(error.get("ctx", {}).get("error", error["msg"]))
    elif inner:
        expected = error["msg"].replace("Input should be", "expected")
    else:
        expected = f"expected {_expected(name)}"
    source = None
    if name not in given:  # its default: from the environment
        source = next((n for n in env_names(name) if env(n) is not None), None)
    return SettingProblem(setting=name, path=path, shown=shown, expected=expected,
                          source=source)


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


def env_names(setting: str) -> tuple[str, ...]:
    """The environment variables a setting is read from (first set wins); () if none."""
    declared = next((f for f in fields(Context) if f.name == setting), None)
    return tuple(declared.metadata.get("env", ())) if declared else ()


def settings_of(context: Context) -> dict[str, Any]:
    """The run's settings as plain data, for the trace, a replay of the run and the
    thread's saved settings (``resume``).

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
