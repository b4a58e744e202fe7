"""Which LLM endpoints a run may call: the configuration, checked.

Each role (planner, selector, responder) may name several endpoints, each with a
capability tier (1 small, 2 medium, 3 large), optionally a price and the roles it
serves. Configuration is one TOML or YAML file (``llm_config``), or
a JSON list of endpoints (``llm_endpoints``); without either, the single ``llm`` endpoint
(per role ``planner_llm``, ...) is the whole configuration. Keys are never part of it:
``api_key_env`` names the environment variables to read them from.

How calls are spread over the endpoints is :mod:`hugginggpt.tools.llm.router`'s job.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, cast

from hugginggpt.tools.env import env
from hugginggpt.tools.errors import HuggingGPTError
from hugginggpt.tools.llm.providers import (
    ProviderError,
    chat_model_label,
    check_model,
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

ROLES = ("planner", "selector", "responder")
"""The stages that call an LLM."""
EXPERT_ROLE: Literal["expert"] = "expert"
"""The role of the ``llm`` backend's calls: the controller LLM doing a text task itself
(:mod:`hugginggpt.tools.experts.llm`). Not a stage: a subtask's expert."""
ENDPOINT_ROLES = (*ROLES, EXPERT_ROLE)
"""The roles an endpoint may serve (all of them unless its ``roles`` say otherwise)."""
Role = Literal["planner", "selector", "responder", "expert"]
TIERS = {"small": 1, "medium": 2, "large": 3}
Strategy = Literal["least-busy", "lowest-latency", "round-robin", "strongest"]
"""How calls are spread over a role's endpoints (see :mod:`hugginggpt.tools.llm.router`)."""
STRATEGIES: tuple[Strategy, ...] = ("least-busy", "lowest-latency", "round-robin", "strongest")


class ConfigError(HuggingGPTError, ValueError):
    """The LLM configuration (file or environment) is invalid; the message says where."""


@dataclass(frozen=True)
class Endpoint:
    """One LLM endpoint a role may use.

    ``model`` is ``MODEL`` (an OpenAI-compatible server at ``base_url``, or OpenAI when
    None), LangChain's ``PROVIDER:MODEL`` (``anthropic:claude-...``, ``ollama:qwen3:4b``;
    ``base_url`` then overrides the provider's) or ``hf:REPO_OR_URL`` (Hugging Face).
    Keys are never part of the configuration: ``api_key_env`` names the environment
    variables to read them from.
    """

    name: str
    """How the endpoint is shown (labels, records, logs): never with URL credentials."""
    model: str
    base_url: str | None = None
    tier: int = 3
    roles: tuple[str, ...] = ENDPOINT_ROLES
    cost_per_1m_input: float = 0.0
    """Price in your currency per million prompt tokens (for the run's cost estimate)."""
    cost_per_1m_output: float = 0.0
    timeout_s: float | None = None
    max_retries: int | None = None
    """Retries on this endpoint before falling back (None: 0 with several endpoints,
    else the run's ``llm_max_retries``)."""
    api_key_env: tuple[str, ...] = ()
    stream: bool = True
    """Stream replies (needed to measure time to first token and to tell a reply cut
    short), on OpenAI-compatible and Hugging Face (``hf:``) endpoints alike."""
    provider: str | None = None
    """``hf:REPO`` only: the Inference Provider that serves the model (``together``,
    ``hf-inference``, ...; None: the run's ``hf_provider``, else huggingface_hub's
    choice)."""
    bill_to: str | None = None
    """``hf:`` only: the Hugging Face organisation billed (None: the run's
    ``hf_bill_to``, else the token's owner)."""
    chat: Any = field(default=None, compare=False, repr=False)
    """A LangChain chat model the caller built (``llm=ChatAnthropic(...)``): called as it
    is, with its own client, keys, timeout and retries. Never configured from a file,
    never saved with a thread."""

    @property
    def streams(self) -> bool:
        """Whether replies arrive streamed (and so can be timed and checked for an end)."""
        return self.stream and not is_local(self.model)  # a local model: whole replies

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.name, self.model, self.base_url)

    @property
    def label(self) -> str:
        where = f" @ {redact(self.base_url)}" if self.base_url else ""
        shown = f"{self.model}{where}"
        return shown if self.name == shown else f"{self.name} ({shown})"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.cost_per_1m_input
                + completion_tokens * self.cost_per_1m_output) / 1e6


@dataclass(frozen=True)
class RoutingConfig:
    endpoints: tuple[Endpoint, ...]
    strategy: Strategy = "least-busy"
    failure_threshold: int = 5
    """Consecutive failures that take an endpoint out (an endpoint failing now and then
    stays in, ranked lower by its error rate)."""
    cooldown_s: float = 30.0
    """How long an endpoint stays out before it is probed (doubles per failed probe)."""

    def for_role(self, role: str) -> list[Endpoint]:
        return [e for e in self.endpoints if role in e.roles]


# ------------------------------------------------------------------ configuration

_ENDPOINT_FIELDS = {f.name for f in fields(Endpoint)} - {"chat"}
_ROUTING_FIELDS = {"strategy", "failure_threshold", "cooldown_s"}


def _tier(value: Any, where: str) -> int:
    if isinstance(value, str) and value.lower() in TIERS:
        return TIERS[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 3:
        return value
    raise ConfigError(f"{where}: tier must be small, medium, large or 1-3, not {value!r}")


def _endpoint(raw: Any, index: int, source: str) -> Endpoint:
    where = f"{source}: endpoint {index + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table/mapping, not {type(raw).__name__}")
    unknown = set(raw) - _ENDPOINT_FIELDS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; "
                          f"known: {sorted(_ENDPOINT_FIELDS)}")
    if not isinstance(raw.get("model"), str) or not raw["model"].strip():
        raise ConfigError(f"{where} needs a model (MODEL, PROVIDER:MODEL or hf:REPO_OR_URL)")
    values = dict(raw)
    # the name is shown everywhere (labels, records, logs): never with a secret in it
    values["name"] = redact(str(values.get("name", raw["model"])))
    if "tier" in values:
        values["tier"] = _tier(values["tier"], where)
    roles = values.get("roles", ENDPOINT_ROLES)
    roles = [roles] if isinstance(roles, str) else list(roles)
    if bad := [r for r in roles if r not in ENDPOINT_ROLES]:
        raise ConfigError(f"{where}: unknown role(s) {bad}; roles are {list(ENDPOINT_ROLES)}")
    values["roles"] = tuple(roles)
    keys = values.get("api_key_env", ())
    values["api_key_env"] = (keys,) if isinstance(keys, str) else tuple(keys)
    if any(k.startswith(("sk-", "hf_")) for k in values["api_key_env"]):
        raise ConfigError(f"{where}: api_key_env names an environment variable; "
                          "never put the key itself in the configuration")
    try:
        endpoint = Endpoint(**values)
    except TypeError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    _check_model(endpoint.model, endpoint.base_url, where)
    timeout = endpoint.timeout_s
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise ConfigError(f"{where}: timeout_s must be a positive number, not {timeout!r}")
    for key in ("provider", "bill_to"):
        value = getattr(endpoint, key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: {key} must be a name, not {value!r}")
        if not is_hf(endpoint.model):
            raise ConfigError(f"{where}: {key} applies to Hugging Face endpoints (hf:...) "
                              f"only, not to {endpoint.model!r}")
    if endpoint.provider and _is_url(endpoint.model.split(":", 1)[1]):
        raise ConfigError(f"{where}: provider applies to a hub model id (hf:ORG/MODEL); "
                          f"{endpoint.model!r} is a server of its own")
    return endpoint


def parse_config(raw: Any, source: str = "configuration") -> RoutingConfig:
    """Check and build a configuration from parsed TOML/YAML/JSON.

    Accepts ``{"endpoints": [...], "routing": {...}}`` or a bare list of endpoints.

    Raises:
        ConfigError: naming the source, the endpoint and the problem.
    """
    if isinstance(raw, list):
        raw = {"endpoints": raw}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected endpoints and routing settings")
    if unknown := set(raw) - {"endpoints", "routing"}:
        raise ConfigError(f"{source}: unknown section(s) {sorted(unknown)}; "
                          "expected 'endpoints' and optionally 'routing'")
    endpoints = tuple(_endpoint(e, i, source) for i, e in enumerate(raw.get("endpoints") or []))
    if not endpoints:
        raise ConfigError(f"{source}: no endpoints configured")
    names = [e.name for e in endpoints]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source}: endpoint names must be unique: {names}")
    routing = raw.get("routing") or {}
    if unknown := set(routing) - _ROUTING_FIELDS:
        raise ConfigError(f"{source}: unknown routing key(s) {sorted(unknown)}; "
                          f"known: {sorted(_ROUTING_FIELDS)}")
    if routing.get("strategy", "least-busy") not in STRATEGIES:
        raise ConfigError(f"{source}: strategy must be one of {list(STRATEGIES)}")
    return RoutingConfig(endpoints=endpoints, **routing)


_FILE_CACHE: dict[str, tuple[float, RoutingConfig]] = {}


def load_config(path: str | Path) -> RoutingConfig:
    """Read a TOML (``.toml``) or YAML (``.yaml``/``.yml``) configuration file; cached
    until the file changes.

    Raises:
        ConfigError: the file is missing, unreadable, or invalid.
    """
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise ConfigError(f"LLM configuration {path}: {exc.strerror or exc}") from None
    cached = _FILE_CACHE.get(str(path))
    if cached and cached[0] == mtime:
        return cached[1]
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".toml":
            raw: Any = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            raw = yaml.safe_load(text)
        elif path.suffix.lower() == ".json":
            raw = json.loads(text)
        else:
            raise ConfigError(f"LLM configuration {path}: use a .toml, .yaml or .json file")
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"LLM configuration {path} does not parse: {exc}") from None
    except Exception as exc:  # yaml.YAMLError, without importing yaml eagerly
        raise ConfigError(f"LLM configuration {path} does not parse: {exc}") from None
    config = parse_config(raw, str(path))
    _FILE_CACHE[str(path)] = (mtime, config)
    return config


# ------------------------------------------------------------------ a run's endpoints

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
                       (see the README, "Several LLMs")
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
            _check_model(spec, base_url, "--llm")
            openai = not hf and provider_of(spec, base_url)[0] == "openai"
            endpoints.append(Endpoint(
                name=f"{spec} @ {redact(base_url)}" if base_url else spec, model=spec,
                base_url=base_url, roles=tuple(roles),
                api_key_env=LLM_KEYS if openai else LLM_KEYS[:1],
                max_retries=settings.llm_max_retries,
            ))
        config = RoutingConfig(endpoints=tuple(endpoints))
    if settings.llm_routing:
        config = replace(config, strategy=cast(Any, settings.llm_routing))
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
    kept = tuple(replace(e, roles=tuple(r for r in e.roles if r not in taken))
                 for e in config.endpoints)
    return replace(config, endpoints=(*objects, *(e for e in kept if e.roles)))


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
        replace(e, provider=e.provider or (
                    None if _is_url(e.model.split(":", 1)[1]) else provider),
                bill_to=e.bill_to or bill_to)
        if is_hf(e.model) else e
        for e in config.endpoints)
    return replace(config, endpoints=endpoints)


def _check_model(model: str, base_url: str | None, where: str) -> None:
    try:
        check_model(model, base_url)
    except ProviderError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


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
