"""The LLM part of a run's settings: what the LLM client reads, declared once.

:class:`hugginggpt.graph.context.Context` is these settings and the rest of a run's; it
reads them from the environment. The client is typed against this class, so that it
depends on no layer above it. The types here (a time limit, a count, a URL, JSON text)
are the ones Context's other settings use too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias
from urllib.parse import urlsplit

from pydantic import AfterValidator, AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

from hugginggpt.tools.llm.providers import is_chat_model
from hugginggpt.tools.redact import USERINFO

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["LLMSettings", "StructuredOutputMethod", "LLMSpec", "LLM", "Url", "Seconds",
           "Count", "AtLeastOne", "NonNegative", "from_json"]

LLMSpec: TypeAlias = "str | BaseChatModel | None"
"""A role's LLM: a model's name (``gpt-4o-mini``, ``anthropic:claude-...``, ``hf:REPO``),
or a LangChain chat model built by the caller."""

StructuredOutputMethod = Literal["auto", "function_calling", "json_schema", "json_mode"]
"""How a chat model is asked for structure (``with_structured_output``'s method):
``auto`` picks per chat model (:func:`hugginggpt.tools.llm.providers.structured_method`)."""


def from_json(value: Any) -> Any:
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


def _llm_spec(value: Any) -> Any:
    """A model's name, or a LangChain chat model the caller built."""
    if value is None or isinstance(value, str) or is_chat_model(value):
        return value
    raise ValueError("expected a model's name (gpt-4o-mini, anthropic:claude-sonnet-4-5, "
                     "hf:REPO) or a LangChain chat model (a BaseChatModel)")


def _recording(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError("expected a recorded thread (hugginggpt.tools.llm.replay.Recording)")
    return value


LLM = Annotated[Any, AfterValidator(_llm_spec)]
"""A role's LLM (:data:`LLMSpec`). A chat-model object is never saved with the thread:
``settings_of`` records its class and model, and a resume needs it passed again."""
Count = Annotated[int, Field(ge=0)]
AtLeastOne = Annotated[int, Field(ge=1)]
Seconds = Annotated[float, Field(gt=0)]
"""A time limit; ``inf`` is no limit."""
NonNegative = Annotated[float, Field(ge=0)]
Url = Annotated[str, AfterValidator(_http_url)]


class LLMSettings(BaseModel):
    """Which LLMs a run calls, and how much it may call them.

    LLMs are named as ``MODEL`` (an OpenAI-compatible endpoint: OpenAI itself, or vLLM,
    Ollama, TGI, LM Studio through ``llm_base_url``), LangChain's ``PROVIDER:MODEL``
    (``anthropic:claude-sonnet-4-5``, ``ollama:qwen3:4b``, ...: ``init_chat_model``, with
    the provider's extra installed) or ``hf:REPO_OR_URL`` (Hugging Face through
    ``langchain-huggingface``), or given as a LangChain chat model the caller built
    (``llm=ChatAnthropic(...)``: routed, budgeted and recorded like a named one, called
    with its own keys, timeout and retries, never saved with the thread). Each role
    falls back to ``llm``; the expert (the ``llm`` backend) to the responder's.
    """

    model_config = ConfigDict(validate_by_name=True)

    llm: LLM = None
    """The LLM of every role without its own (planner, selector, responder): ``MODEL``,
    ``PROVIDER:MODEL``, ``hf:REPO_OR_URL`` or a LangChain chat model; None: no LLM."""
    llm_base_url: Url | None = Field(
        None, validation_alias=AliasChoices("HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL"))
    """The OpenAI-compatible server of a plain ``MODEL`` (vLLM, Ollama, TGI, LM Studio);
    None: OpenAI's own."""
    planner_llm: LLM = None
    """The LLM that plans (None: ``llm``)."""
    selector_llm: LLM = None
    """The LLM that chooses among close candidate models (None: ``llm``)."""
    responder_llm: LLM = None
    """The LLM that writes the answer from the results (None: ``llm``)."""
    expert_llm: LLM = None
    """The LLM the ``llm`` backend does text subtasks with (None: the responder's)."""
    llm_config: str | None = None
    """A TOML or YAML file of endpoints and routing settings (see
    :mod:`hugginggpt.tools.llm.config`); it replaces ``llm``, ``llm_base_url`` and the
    per-role LLMs."""
    llm_endpoints: Annotated[list[dict[str, Any]] | None, BeforeValidator(from_json)] = None
    """The same endpoints as a list (``HUGGINGGPT_LLM_ENDPOINTS`` as a JSON array)."""
    llm_routing: str | None = None
    """Override the configured strategy (``peak-ewma`` by default; ``least-busy``,
    ``lowest-latency``, ``round-robin``, ``strongest``). Checked with the rest of the LLM
    configuration, by :func:`hugginggpt.tools.llm.config.routing_config` (a
    ``ConfigError``)."""
    replay: Annotated[Any, AfterValidator(_recording)] = None
    """A :class:`hugginggpt.tools.llm.replay.Recording`: LLM replies come from it, no
    endpoint is called (``hugginggpt replay``)."""
    llm_timeout_s: Seconds = Field(60.0, validation_alias="HUGGINGGPT_LLM_TIMEOUT")
    """Seconds an LLM call may take before it is retried or given up."""
    llm_max_retries: Count = Field(2, validation_alias="HUGGINGGPT_LLM_RETRIES")
    """Retries of an LLM call that failed for a passing reason (a timeout, a rate limit,
    a server error)."""
    structured_output: StructuredOutputMethod = "auto"
    """``with_structured_output``'s method for plans, selections and the llm expert's
    answers: ``auto`` (tool calling on an OpenAI-compatible endpoint, where plain
    servers often lack JSON schema; each other provider's own default: Anthropic's tool
    use, Ollama's ``format``, Gemini's JSON schema), or one method for every LLM."""
    offline: bool = False
    """Never call an LLM, even when one is configured (the demo, air-gapped runs)."""
    hf_provider: str | None = None
    """The Inference Provider for hub model ids, of hf-inference experts and of ``hf:``
    LLMs (None: huggingface_hub's choice)."""
    hf_bill_to: str | None = None
    """The Hugging Face organisation billed for hf-inference requests and ``hf:`` LLM
    calls (huggingface_hub's ``bill_to``: the ``X-HF-Bill-To`` header, sent only to
    Hugging Face hosts); None bills the token's owner."""
    max_llm_calls: Count = 40
    """LLM calls a run may make (each endpoint tried counts); then the planner aborts,
    the selector takes the top-ranked model and the responder writes the plain summary."""
    max_llm_tokens: Count = 400_000
    """Prompt and completion tokens a run may use, with the same consequences."""
    max_run_s: Seconds = 1800.0
    """Wall-time limit of the execute stage of a run, in seconds (``--max-run-time``):
    subtasks not finished when it is reached are abandoned (failed, or skipped if they
    had not started) with the limit as the reason, and the run still responds. Each LLM
    call is bounded by ``llm_timeout_s`` and ``llm_max_retries``, and the run's LLM calls
    together wait at most ``max_run_s`` (a call is cut to what is left; then no LLM is
    asked). An endpoint that does not answer is asked once per run
    (:mod:`hugginggpt.tools.llm.breaker`). Time spent waiting for an approval does not
    count; a resumed run gets the limit afresh."""
