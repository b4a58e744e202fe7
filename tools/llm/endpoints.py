"""The LLM endpoints a configuration lists, and how calls are spread over them: pydantic
models, checked as they are read.

Each role (planner, selector, responder) may name several endpoints, each with a
capability tier (1 small, 2 medium, 3 large), optionally a price and the roles it
serves. A configuration is one TOML, YAML or JSON file (:func:`load_config`) or a list
of endpoints (:func:`parse_config`); a bad one is refused with a :class:`ConfigError`
that names the source, the endpoint and the problem. Keys are never part of it:
``api_key_env`` names the environment variables to read them from.

Which endpoints a run calls is :mod:`hugginggpt.tools.llm.config`'s job; how calls are
spread over them is :mod:`hugginggpt.tools.llm.router`'s.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from hugginggpt.tools.errors import HuggingGPTError
from hugginggpt.tools.llm.providers import (
    ProviderError,
    check_model,
    is_chat_model,
    is_hf,
    is_local,
)
from hugginggpt.tools.redact import redact

__all__ = ["ROLES", "EXPERT_ROLE", "ENDPOINT_ROLES", "TIERS", "Role", "Endpoint",
           "RoutingConfig", "ConfigError", "Strategy", "STRATEGIES", "load_config",
           "parse_config", "checked_model", "is_url"]

ROLES = ("planner", "selector", "responder")
"""The stages that call an LLM."""
EXPERT_ROLE: Literal["expert"] = "expert"
"""The role of the ``llm`` backend's calls: the controller LLM doing a text task itself
(:mod:`hugginggpt.tools.experts.llm`). Not a stage: a subtask's expert."""
ENDPOINT_ROLES = (*ROLES, EXPERT_ROLE)
"""The roles an endpoint may serve (all of them unless its ``roles`` say otherwise)."""
Role = Literal["planner", "selector", "responder", "expert"]
TIERS = {"small": 1, "medium": 2, "large": 3}
Strategy = Literal["peak-ewma", "least-busy", "lowest-latency", "round-robin", "strongest"]
"""How calls are spread over a role's endpoints (see :mod:`hugginggpt.tools.llm.router`)."""
STRATEGIES: tuple[Strategy, ...] = ("peak-ewma", "least-busy", "lowest-latency", "round-robin",
                                    "strongest")
_NEEDS_A_MODEL = "needs a model (MODEL, PROVIDER:MODEL or hf:REPO_OR_URL)"


class ConfigError(HuggingGPTError, ValueError):
    """The LLM configuration (file or environment) is invalid; the message says where."""


def _tier(value: Any) -> Any:
    if isinstance(value, str) and value.lower() in TIERS:
        return TIERS[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 3:
        return value
    raise ValueError(f"tier must be small, medium, large or 1-3, not {value!r}")


def _roles(value: Any) -> tuple[str, ...]:
    roles = [value] if isinstance(value, str) else list(value)
    if bad := [r for r in roles if r not in ENDPOINT_ROLES]:
        raise ValueError(f"unknown role(s) {bad}; roles are {list(ENDPOINT_ROLES)}")
    return tuple(roles)


def _key_names(value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if any(str(name).startswith(("sk-", "hf_")) for name in names):
        raise ValueError("api_key_env names an environment variable; never put the key "
                         "itself in the configuration")
    return names


def _timeout(value: Any) -> Any:
    if value is not None and (not isinstance(value, int | float) or value <= 0):
        raise ValueError(f"timeout_s must be a positive number, not {value!r}")
    return value


def _strategy(value: Any) -> Any:
    if value not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}")
    return value


def _chat_model(value: Any) -> Any:
    if value is not None and not is_chat_model(value):
        raise ValueError("chat is a LangChain chat model the caller built (llm=...), "
                         "never configured")
    return value


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


class Endpoint(BaseModel):
    """One LLM endpoint a role may use.

    ``model`` is ``MODEL`` (an OpenAI-compatible server at ``base_url``, or OpenAI when
    None), LangChain's ``PROVIDER:MODEL`` (``anthropic:claude-...``, ``ollama:qwen3:4b``;
    ``base_url`` then overrides the provider's) or ``hf:REPO_OR_URL`` (Hugging Face).
    Keys are never part of the configuration: ``api_key_env`` names the environment
    variables to read them from.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """How the endpoint is shown (labels, records, logs): never with URL credentials;
    the model's name when the configuration gives none."""
    model: str = Field(pattern=r"\S")
    base_url: str | None = None
    tier: Annotated[int, BeforeValidator(_tier)] = 3
    roles: Annotated[tuple[str, ...], BeforeValidator(_roles)] = ENDPOINT_ROLES
    cost_per_1m_input: float = 0.0
    """Price in your currency per million prompt tokens (for the run's cost estimate)."""
    cost_per_1m_output: float = 0.0
    timeout_s: Annotated[float | None, BeforeValidator(_timeout)] = None
    max_retries: int | None = None
    """Retries on this endpoint before falling back (None: 0 with several endpoints,
    else the run's ``llm_max_retries``)."""
    api_key_env: Annotated[tuple[str, ...], BeforeValidator(_key_names)] = ()
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
    chat: Annotated[Any, AfterValidator(_chat_model)] = Field(
        default=None, exclude=True, repr=False)
    """A LangChain chat model the caller built (``llm=ChatAnthropic(...)``): called as it
    is, with its own client, keys, timeout and retries. Never configured from a file,
    never saved with a thread."""

    @model_validator(mode="before")
    @classmethod
    def _named(cls, raw: Any) -> Any:
        """A configured endpoint's name, its model's unless given; never a secret."""
        if isinstance(raw, dict) and isinstance(raw.get("model"), str):
            return {**raw, "name": redact(str(raw.get("name", raw["model"])))}
        return raw

    @field_validator("provider", "bill_to", mode="before")
    @classmethod
    def _a_name(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{info.field_name} must be a name, not {value!r}")
        return value

    @model_validator(mode="after")
    def _servable(self) -> Endpoint:
        """A model an installed package serves; a provider and a billed organisation for
        Hugging Face only, and a provider for a hub model id only."""
        if self.chat is not None:  # the caller's own chat model: served as it is
            return self
        check_model(self.model, self.base_url)  # a ProviderError is a ValueError
        for key in ("provider", "bill_to"):
            if getattr(self, key) is not None and not is_hf(self.model):
                raise ValueError(f"{key} applies to Hugging Face endpoints (hf:...) "
                                 f"only, not to {self.model!r}")
        if self.provider and is_url(self.model.split(":", 1)[1]):
            raise ValueError(f"provider applies to a hub model id (hf:ORG/MODEL); "
                             f"{self.model!r} is a server of its own")
        return self

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


class RoutingConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoints: tuple[Endpoint, ...]
    strategy: Annotated[Strategy, BeforeValidator(_strategy)] = "peak-ewma"
    failure_threshold: int = 5
    """Consecutive failures that take an endpoint out (an endpoint failing now and then
    stays in, ranked lower by its error rate)."""
    cooldown_s: float = 30.0
    """How long an endpoint stays out before it is probed (doubles per failed probe)."""

    def for_role(self, role: str) -> list[Endpoint]:
        return [e for e in self.endpoints if role in e.roles]


_ENDPOINT_KEYS = sorted(name for name, f in Endpoint.model_fields.items() if not f.exclude)
"""What a configuration may set: every field but the caller's own objects."""
_ROUTING_KEYS = sorted(set(RoutingConfig.model_fields) - {"endpoints"})


def checked_model(model: str, base_url: str | None, where: str) -> None:
    """A model an installed package serves, or a :class:`ConfigError` saying where."""
    try:
        check_model(model, base_url)
    except ProviderError as exc:
        raise ConfigError(f"{where}: {exc}", fix=exc.fix) from None


def _endpoint(raw: Any, where: str) -> Endpoint:
    """One configured endpoint, or what is wrong with it as one :class:`ConfigError`."""
    try:
        return Endpoint.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_said(exc.errors(), where)) from None


def _said(errors: list[ErrorDetails], where: str, keys: str = "key(s)",
          known: list[str] = _ENDPOINT_KEYS) -> str:
    """Pydantic's findings on an endpoint or the routing settings, as their user reads
    them: not a mapping, unknown keys, no model, else each value's problem."""
    if errors[0]["type"] == "model_type":
        return f"{where} must be a table/mapping, not {type(errors[0]['input']).__name__}"
    if unknown := sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden"):
        return f"{where}: unknown {keys} {unknown}; known: {known}"
    if any(e["loc"][:1] in (("model",), ("name",)) for e in errors):
        return f"{where} {_NEEDS_A_MODEL}"
    return f"{where}: " + "; ".join(
        str(e["ctx"]["error"]) if e["type"] == "value_error"
        else f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)


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
    endpoints = tuple(_endpoint(e, f"{source}: endpoint {i + 1}")
                      for i, e in enumerate(raw.get("endpoints") or []))
    if not endpoints:
        raise ConfigError(f"{source}: no endpoints configured")
    names = [e.name for e in endpoints]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source}: endpoint names must be unique: {names}")
    try:
        return RoutingConfig(endpoints=endpoints, **(raw.get("routing") or {}))
    except ValidationError as exc:
        raise ConfigError(_said(exc.errors(), source, "routing key(s)", _ROUTING_KEYS)) from None


_FILE_CACHE: dict[str, tuple[float, RoutingConfig]] = {}


def load_config(path: str | Path) -> RoutingConfig:
    """Read a TOML (``.toml``), YAML (``.yaml``/``.yml``) or JSON configuration file;
    cached until the file changes.

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
