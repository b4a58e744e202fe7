"""Which LLM endpoints a run may call, from its settings.

The configuration is one TOML or YAML file (``llm_config``), or a JSON list of endpoints
(``llm_endpoints``), checked by :mod:`hugginggpt.tools.llm.endpoints` (whose names this
module also offers); without either, the single ``llm`` endpoint (per role
``planner_llm``, ...) is the whole configuration. Keys are never part of it:
``api_key_env`` names the environment variables to read them from.

How calls are spread over the endpoints is :mod:`hugginggpt.tools.llm.router`'s job.
"""

from __future__ import annotations

from typing import Any, cast

from hugginggpt.tools.env import env
from hugginggpt.tools.llm.endpoints import (
    ENDPOINT_ROLES,
    EXPERT_ROLE,
    ROLES,
    STRATEGIES,
    TIERS,
    ConfigError,
    Endpoint,
    Role,
    RoutingConfig,
    Strategy,
    checked_model,
    is_url,
    load_config,
    parse_config,
)
from hugginggpt.tools.llm.providers import (
    chat_model_label,
    is_chat_model,
    is_hf,
    is_local,
    provider_of,
    saved_object,
)
from hugginggpt.tools.llm.settings import LLMSettings, LLMSpec
from hugginggpt.tools.redact import redact

__all__ = [
    "ROLES",
    "EXPERT_ROLE",
    "ENDPOINT_ROLES",
    "TIERS",
    "Role",
    "Endpoint",
    "RoutingConfig",
    "ConfigError",
    "Strategy",
    "STRATEGIES",
    "NOT_CONFIGURED_HELP",
    "CONFIGURE_IN_BRIEF",
    "LLM_KEYS",
    "load_config",
    "parse_config",
    "routing_config",
    "role_llm",
    "has_llm",
    "describe_llm",
]

NOT_CONFIGURED = ("No LLM is configured (the built-in offline planner only handles requests "
                  "like its examples)")
"""The first sentence of :data:`NOT_CONFIGURED_HELP`, for an answer whose fix says the
rest the caller's way."""

NOT_CONFIGURED_HELP = """\
No LLM is configured (the built-in offline planner only handles requests like its
examples). Configure one of:
  - OpenAI:            export OPENAI_API_KEY=sk-...   (optionally --llm gpt-4o)
  - any OpenAI-compatible server (vLLM, Ollama, TGI, LM Studio):
                       --llm MODEL --llm-base-url http://localhost:11434/v1
                       (or HUGGINGGPT_LLM and HUGGINGGPT_LLM_BASE_URL)
  - another provider:  --llm anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY set,
                       or ollama:qwen3:4b, google_genai:..., mistralai:..., groq:...
                       (pip install 'hugginggpt[anthropic]', [ollama], [google], ...)
  - Hugging Face:      --llm hf:meta-llama/Llama-3.1-8B-Instruct with HF_TOKEN set,
                       or --llm hf:https://your-endpoint.endpoints.huggingface.cloud
  - several endpoints, routed by capability and load: --llm-config llms.toml
                       (docs/guides/llms.md, "Several LLMs")
Or check a plan without any LLM: hugginggpt run "..." --dry-run --plan PLAN.json"""

CONFIGURE_IN_BRIEF = (
    "set OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or give --llm MODEL --llm-base-url "
    "URL for an OpenAI-compatible server (vLLM, Ollama, ...), or --llm hf:REPO with HF_TOKEN "
    "set")
"""The how-to of :data:`NOT_CONFIGURED_HELP` in one clause, for answers that mention it."""

LLM_KEYS = ("HUGGINGGPT_LLM_API_KEY", "OPENAI_API_KEY")
"""Where the key of the ``llm`` endpoint (``--llm``) is read from; optional for a server
at a base URL. A Hugging Face ``llm`` reads ``HUGGINGGPT_LLM_API_KEY``, then ``HF_TOKEN``
(never the OpenAI key)."""
_DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


def _own_llm(settings: LLMSettings, role: Role) -> LLMSpec:
    """The role's own setting; the expert's, else the responder's (it writes text for a
    subtask as the responder does for the user)."""
    if role == EXPERT_ROLE:
        return settings.expert_llm or settings.responder_llm
    return {"planner": settings.planner_llm, "selector": settings.selector_llm,
            "responder": settings.responder_llm}[role]


def role_llm(settings: LLMSettings, role: Role) -> LLMSpec:
    """The LLM a role uses when no endpoint file or list is given: its own setting
    (a name or a chat-model object), else ``llm``, else OpenAI's default model when an
    OpenAI key or a base URL is set, else None (not configured, or ``offline``)."""
    if settings.offline:
        return None
    specific = _own_llm(settings, role)
    if specific or settings.llm:
        return specific or settings.llm
    if settings.llm_base_url or env("OPENAI_API_KEY"):
        return _DEFAULT_OPENAI_MODEL
    return None


def routing_config(settings: LLMSettings) -> RoutingConfig | None:
    """The run's endpoints: the configuration file, else ``llm_endpoints``, else the
    single ``llm`` (per role ``planner_llm``...). None when no LLM is configured.

    Raises:
        ConfigError: the configuration is invalid.
    """
    if settings.llm_routing and settings.llm_routing not in STRATEGIES:
        raise ConfigError(f"llm_routing (HUGGINGGPT_LLM_ROUTING) must be one of "
                          f"{list(STRATEGIES)}, not {settings.llm_routing!r}")
    if settings.offline:
        return None
    objects = _object_endpoints(settings)
    if settings.llm_config or settings.llm_endpoints:
        config = (load_config(settings.llm_config) if settings.llm_config
                  else parse_config(settings.llm_endpoints or [], "llm_endpoints"))
        config = _with_objects(config, objects)
    else:
        by_spec: dict[str, list[str]] = {}
        for role in ENDPOINT_ROLES:
            spec = role_llm(settings, cast(Role, role))
            if isinstance(spec, str):  # objects are endpoints of their own
                _refuse_saved_object(spec, role)
                by_spec.setdefault(spec, []).append(role)
        if not by_spec and not objects:
            return None
        endpoints = list(objects)
        for spec, roles in by_spec.items():
            hf = is_hf(spec) or is_local(spec)
            base_url = None if hf else settings.llm_base_url
            checked_model(spec, base_url, "--llm")
            openai = not hf and provider_of(spec, base_url)[0] == "openai"
            endpoints.append(Endpoint(
                name=f"{spec} @ {redact(base_url)}" if base_url else spec, model=spec,
                base_url=base_url, roles=tuple(roles),
                api_key_env=LLM_KEYS if openai else LLM_KEYS[:1],
                max_retries=settings.llm_max_retries,
            ))
        config = RoutingConfig(endpoints=tuple(endpoints))
    if settings.llm_routing:
        config = config.model_copy(update={"strategy": settings.llm_routing})
    return _with_hf_defaults(config, settings)


def _object_endpoints(settings: LLMSettings) -> list[Endpoint]:
    """An endpoint per chat-model object the roles use (one for an object several roles
    share), serving those roles."""
    by_object: dict[int, tuple[Any, list[str]]] = {}
    for role in ENDPOINT_ROLES:
        llm = _own_llm(settings, cast(Role, role)) or settings.llm
        if not settings.offline and is_chat_model(llm):
            by_object.setdefault(id(llm), (llm, []))[1].append(role)
    endpoints = []
    for llm, roles in by_object.values():
        label = chat_model_label(llm)
        endpoints.append(Endpoint(name=label, model=label, roles=tuple(roles), chat=llm,
                                  stream=False))
    return endpoints


def _with_objects(config: RoutingConfig, objects: list[Endpoint]) -> RoutingConfig:
    """The configured endpoints, with the roles a chat-model object serves taken from
    them: an object passed for a role is that role's LLM."""
    if not objects:
        return config
    taken = {role for e in objects for role in e.roles}
    kept = tuple(e.model_copy(update={"roles": tuple(r for r in e.roles if r not in taken)})
                 for e in config.endpoints)
    return config.model_copy(update={"endpoints": (*objects, *(e for e in kept if e.roles))})


def _refuse_saved_object(spec: str, role: str) -> None:
    """A thread's saved setting that held a chat-model object cannot be called."""
    label = saved_object(spec)
    if label is None:
        return
    raise ConfigError(
        f"the {role} LLM of this thread was a chat model passed as an object, {label}: "
        "objects are never saved with a thread, so pass it again (llm=... in Python), "
        "or name an LLM to go on with")


def _with_hf_defaults(config: RoutingConfig, settings: LLMSettings) -> RoutingConfig:
    """The run's ``hf_provider`` and ``hf_bill_to`` for the ``hf:`` endpoints that do
    not name their own (a provider only for hub model ids: a URL is its own server)."""
    provider, bill_to = settings.hf_provider, settings.hf_bill_to
    if not (provider or bill_to):
        return config
    endpoints = tuple(
        e.model_copy(update={
            "provider": e.provider or (None if is_url(e.model.split(":", 1)[1]) else provider),
            "bill_to": e.bill_to or bill_to})
        if is_hf(e.model) else e
        for e in config.endpoints)
    return config.model_copy(update={"endpoints": endpoints})


def has_llm(settings: LLMSettings, role: Role) -> bool:
    """Whether the role has an endpoint (or a recording that answers it)."""
    if settings.replay is not None:
        return bool(settings.replay.serves(role))
    try:
        config = routing_config(settings)
    except ConfigError:
        return True  # misconfigured is not "not configured": the call says what is wrong
    return bool(config and config.for_role(role))


def describe_llm(settings: LLMSettings, role: Role) -> str:
    """A short label of the role's endpoints for state and logs (never a key)."""
    if settings.replay is not None:
        return "replay of a recorded thread"
    try:
        config = routing_config(settings)
    except ConfigError as exc:
        return f"misconfigured ({exc})"
    endpoints = config.for_role(role) if config else []
    if not endpoints:
        return "none"
    if len(endpoints) == 1:
        return endpoints[0].label
    names = ", ".join(e.name for e in endpoints)
    return f"{config.strategy if config else ''} over {names}"
