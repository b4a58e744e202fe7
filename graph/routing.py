"""Routing LLM calls across several endpoints by capability, latency, load and health.

Each role (planner, selector, responder) may name several endpoints, each with a
capability tier (1 small, 2 medium, 3 large) and optionally a price. For every call the
:class:`Router` orders the role's endpoints:

- the tier the call needs (:func:`tier_needed`: planning a multi-step request needs a
  large model, choosing between two models a small one) filters out weaker endpoints,
  which stay only as a last resort;
- among the capable ones, the expected latency decides: the moving averages of time to
  first token and tokens per second observed on that endpoint, the predicted length of
  the reply, and the work already in flight there (requests and predicted tokens);
- an endpoint that failed ``failure_threshold`` times in a row is taken out for
  ``cooldown_s`` (doubling while it keeps failing), then probed in the background with
  a one-token call and put back when the probe succeeds.

A call that fails on one endpoint goes on to the next (see :func:`graph.llms.complete`).
The statistics are per process, shared by all runs, so concurrent runs see each
other's load. ``round-robin`` and ``strongest`` are the naive strategies, kept for
comparison (``benchmarks/routing.py``) and for users who want them.

Configuration is one TOML or YAML file (``--llm-config``, ``HUGGINGGPT_LLM_CONFIG``), or
a JSON list of endpoints in ``HUGGINGGPT_LLM_ENDPOINTS``; without either, the single
``--llm`` endpoint is the whole configuration.
"""

from __future__ import annotations

import json
import threading
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from tools.errors import HuggingGPTError
from tools.redact import redact

__all__ = [
    "ROLES",
    "TIERS",
    "Endpoint",
    "RoutingConfig",
    "ConfigError",
    "Router",
    "ROUTER",
    "Strategy",
    "STRATEGIES",
    "load_config",
    "parse_config",
    "tier_needed",
    "predicted_tokens",
]

ROLES = ("planner", "selector", "responder")
TIERS = {"small": 1, "medium": 2, "large": 3}
Strategy = Literal["router", "round-robin", "strongest"]
STRATEGIES: tuple[Strategy, ...] = ("router", "round-robin", "strongest")

# Until an endpoint is measured: smaller models answer sooner and faster.
_PRIOR_TTFT_S = {1: 0.3, 2: 0.6, 3: 1.0}
_PRIOR_TOKENS_PER_S = {1: 120.0, 2: 60.0, 3: 30.0}
_DEFAULT_PARALLEL = 8
_MAX_COOLDOWN_S = 600.0


class ConfigError(HuggingGPTError, ValueError):
    """The LLM configuration (file or environment) is invalid; the message says where."""


@dataclass(frozen=True)
class Endpoint:
    """One LLM endpoint a role may use.

    ``model`` is ``MODEL`` (an OpenAI-compatible server at ``base_url``, or OpenAI when
    None) or ``hf:REPO_OR_URL`` (Hugging Face). Keys are never part of the
    configuration: ``api_key_env`` names the environment variables to read them from.
    """

    name: str
    model: str
    base_url: str | None = None
    tier: int = 3
    roles: tuple[str, ...] = ROLES
    cost_per_1m_input: float = 0.0
    """Price in your currency per million prompt tokens (for the run's cost estimate)."""
    cost_per_1m_output: float = 0.0
    max_concurrency: int | None = None
    """Requests the endpoint serves at once (None: unknown); more wait in its queue."""
    timeout_s: float | None = None
    max_retries: int | None = None
    """Retries on this endpoint before falling back (None: 0 with several endpoints,
    else the run's ``llm_max_retries``)."""
    api_key_env: tuple[str, ...] = ()
    stream: bool = True
    """Stream replies (needed to measure time to first token); Hugging Face endpoints
    (``hf:``) are called whole."""
    ttft_s: float | None = None
    """A prior for the time to first token, until it is measured (default by tier:
    0.3 s small, 0.6 s medium, 1 s large)."""
    tokens_per_s: float | None = None
    """A prior for the generation speed, until it is measured (default by tier: 120,
    60, 30 tokens/s)."""

    @property
    def streams(self) -> bool:
        """Whether replies arrive streamed (and so can be timed and checked for an end)."""
        return self.stream and not self.model.startswith("hf:")

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
    strategy: Strategy = "router"
    failure_threshold: int = 5
    """Consecutive failures that take an endpoint out (an endpoint failing now and then
    stays in, ranked lower by its error rate)."""
    cooldown_s: float = 30.0
    """How long an endpoint stays out before it is probed (doubles per failed probe)."""
    cost_weight: float = 0.0
    """Seconds of expected latency one unit of cost is worth (0: latency only)."""

    def for_role(self, role: str) -> list[Endpoint]:
        return [e for e in self.endpoints if role in e.roles]


# ------------------------------------------------------------------ configuration

_ENDPOINT_FIELDS = {f.name for f in fields(Endpoint)}
_ROUTING_FIELDS = {"strategy", "failure_threshold", "cooldown_s", "cost_weight"}


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
        raise ConfigError(f"{where} needs a model (MODEL, or hf:REPO_OR_URL)")
    values = dict(raw)
    values.setdefault("name", raw["model"])
    if "tier" in values:
        values["tier"] = _tier(values["tier"], where)
    roles = values.get("roles", ROLES)
    roles = [roles] if isinstance(roles, str) else list(roles)
    if bad := [r for r in roles if r not in ROLES]:
        raise ConfigError(f"{where}: unknown role(s) {bad}; roles are {list(ROLES)}")
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
    for name in ("max_concurrency", "timeout_s", "ttft_s", "tokens_per_s"):
        value = getattr(endpoint, name)
        if value is not None and (not isinstance(value, int | float) or value <= 0):
            raise ConfigError(f"{where}: {name} must be a positive number, not {value!r}")
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
    if routing.get("strategy", "router") not in STRATEGIES:
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


# ------------------------------------------------------------------ what a call needs

def tier_needed(role: str, *, request: str = "", files: Iterable[str] = (),
                plan_size: int = 0, failures: int = 0, attempt: int = 1) -> int:
    """The capability tier a call needs, estimated from what it is asked to do.

    Planning always needs a medium model and a large one for a request with several
    steps, several or mixed attachments, a long text, or a repair of a rejected plan.
    Choosing between close candidate models needs a small one. Writing the answer needs
    a small one for up to two subtasks that all finished, else a medium one.
    """
    if role == "planner":
        from graph.offline_planner import split_clauses
        from tools.kinds import kind_of_literal

        files = list(files)
        hard = (len(split_clauses(request)) > 1 or len(files) > 1
                or len({kind_of_literal(f) for f in files}) > 1
                or len(request.split()) > 40 or attempt > 1)
        return 3 if hard else 2
    if role == "responder":
        return 1 if plan_size <= 2 and failures == 0 else 2
    return 1


def predicted_tokens(role: str, *, request: str = "", plan_size: int = 0) -> int:
    """A prior for the reply's length in tokens (the router corrects it per role by
    what it observes)."""
    if role == "planner":
        from graph.offline_planner import split_clauses

        return 30 + 45 * max(1, len(split_clauses(request)))
    if role == "responder":
        return 80 + 50 * plan_size
    return 30


# ------------------------------------------------------------------ the router

@dataclass
class _Stats:
    ttft_s: float | None = None
    tokens_per_s: float | None = None
    in_flight: int = 0
    in_flight_tokens: int = 0
    calls: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    error_rate: float | None = None
    open_until: float = 0.0
    cooldown_s: float = 0.0
    probing: bool = False
    last_error: str = ""


@dataclass
class Ticket:
    """One call in flight on one endpoint."""

    endpoint: Endpoint
    tokens: int
    started: float = field(default_factory=time.monotonic)


Prober = Callable[[Endpoint], None]
"""Makes a minimal call to an endpoint; raises when it fails."""


class Router:
    """Per-process endpoint statistics and the policy that orders endpoints per call.

    Thread-safe; the state is tiny (numbers per endpoint), so one lock is enough.
    """

    def __init__(self, alpha: float = 0.3) -> None:
        self.alpha = alpha
        self._lock = threading.Lock()
        self._stats: dict[tuple[str, str, str | None], _Stats] = {}
        self._length_ratio: dict[str, float] = {}
        self._turn = 0
        self.prober: Prober | None = None

    def reset(self) -> None:
        """Forget all observations (tests and benchmarks start from the priors)."""
        with self._lock:
            self._stats.clear()
            self._length_ratio.clear()
            self._turn = 0

    def _get(self, endpoint: Endpoint) -> _Stats:
        return self._stats.setdefault(endpoint.key, _Stats())

    # -- policy

    def expected_s(self, endpoint: Endpoint, tokens: int) -> float:
        """Expected seconds for a reply of ``tokens`` tokens, with the load in flight."""
        with self._lock:
            return self._expected(endpoint, self._get(endpoint), tokens)

    @staticmethod
    def _expected(endpoint: Endpoint, stats: _Stats, tokens: int) -> float:
        ttft = stats.ttft_s or endpoint.ttft_s or _PRIOR_TTFT_S[endpoint.tier]
        speed = stats.tokens_per_s or endpoint.tokens_per_s or _PRIOR_TOKENS_PER_S[endpoint.tier]
        parallel = endpoint.max_concurrency or _DEFAULT_PARALLEL
        # decoding already queued ahead, shared over the endpoint's parallel slots, and a
        # first-token wait for every full round of requests ahead of this one
        backlog = stats.in_flight_tokens / (speed * parallel)
        rounds = stats.in_flight // parallel
        # a call that fails costs its time and then the fallback's: recent errors weigh
        return (ttft * (1 + rounds) + tokens / speed + backlog) * (1 + 2 * (stats.error_rate or 0))

    def predict(self, role: str, prior: int) -> int:
        """The prior length corrected by what this role's replies turned out to be."""
        with self._lock:
            return max(1, round(prior * self._length_ratio.get(role, 1.0)))

    def order(self, config: RoutingConfig, role: str, need: int, tokens: int) -> list[Endpoint]:
        """The role's endpoints in the order to try them for one call."""
        endpoints = config.for_role(role)
        now = time.monotonic()
        with self._lock:
            if config.strategy == "round-robin":
                start = self._turn % len(endpoints) if endpoints else 0
                self._turn += 1
                return endpoints[start:] + endpoints[:start]
            if config.strategy == "strongest":
                return sorted(endpoints, key=lambda e: -e.tier)  # stable: config order

            live, out = [], []
            for endpoint in endpoints:
                stats = self._get(endpoint)
                if stats.open_until > now:
                    out.append(endpoint)
                    continue
                if stats.cooldown_s > 0 and self.prober is not None:
                    out.append(endpoint)  # cooled down: put back once a probe succeeds
                    self._probe(endpoint, stats, config)
                    continue
                live.append(endpoint)

            def score(e: Endpoint) -> float:
                return (self._expected(e, self._get(e), tokens)
                        + config.cost_weight * e.cost(0, tokens))

            top = max((e.tier for e in live), default=0)
            capable = sorted((e for e in live if e.tier >= min(need, top)), key=score)
            weaker = sorted((e for e in live if e not in capable),
                            key=lambda e: (-e.tier, score(e)))
            out.sort(key=lambda e: self._get(e).open_until)
            return capable + weaker + out

    # -- observations

    def begin(self, endpoint: Endpoint, tokens: int) -> Ticket:
        with self._lock:
            stats = self._get(endpoint)
            stats.in_flight += 1
            stats.in_flight_tokens += tokens
        return Ticket(endpoint, tokens)

    def _end(self, ticket: Ticket) -> _Stats:
        stats = self._get(ticket.endpoint)
        stats.in_flight = max(0, stats.in_flight - 1)
        stats.in_flight_tokens = max(0, stats.in_flight_tokens - ticket.tokens)
        stats.calls += 1
        return stats

    def succeeded(self, ticket: Ticket, *, role: str, ttft_s: float | None,
                  completion_tokens: int, latency_s: float) -> None:
        """Record a reply: fold its timing into the endpoint's moving averages."""
        with self._lock:
            stats = self._end(ticket)
            stats.consecutive_failures = 0
            stats.cooldown_s = 0.0
            stats.error_rate = self._ema(stats.error_rate or 0.0, 0.0)
            first = ttft_s if ttft_s is not None else latency_s
            stats.ttft_s = self._ema(stats.ttft_s, first)
            if completion_tokens > 1 and latency_s > first:
                stats.tokens_per_s = self._ema(stats.tokens_per_s,
                                               completion_tokens / (latency_s - first))
            if completion_tokens > 0 and ticket.tokens > 0:
                ratio = self._length_ratio.get(role, 1.0) * completion_tokens / ticket.tokens
                self._length_ratio[role] = self._ema(self._length_ratio.get(role), ratio)

    def failed(self, ticket: Ticket, config: RoutingConfig, error: str) -> None:
        """Record a failure; enough of them in a row take the endpoint out. A failure
        that took longer than the endpoint usually needs to start answering (a timeout,
        a hang) counts as that slow, so a hanging endpoint stops looking fast."""
        with self._lock:
            stats = self._end(ticket)
            waited = time.monotonic() - ticket.started
            if waited > (stats.ttft_s or 0.0):
                stats.ttft_s = self._ema(stats.ttft_s, waited)
            stats.failures += 1
            stats.last_error = error
            stats.error_rate = self._ema(stats.error_rate or 0.0, 1.0)
            stats.consecutive_failures += 1
            if stats.consecutive_failures >= config.failure_threshold:
                self._open(stats, config)

    def _open(self, stats: _Stats, config: RoutingConfig) -> None:
        stats.cooldown_s = min(_MAX_COOLDOWN_S, stats.cooldown_s * 2 or config.cooldown_s)
        stats.open_until = time.monotonic() + stats.cooldown_s

    def _ema(self, old: float | None, new: float) -> float:
        return new if old is None else (1 - self.alpha) * old + self.alpha * new

    # -- health

    def _probe(self, endpoint: Endpoint, stats: _Stats, config: RoutingConfig) -> None:
        """Start one background probe of a cooled-down endpoint (lock held)."""
        if stats.probing or self.prober is None:
            return
        stats.probing = True
        prober = self.prober

        def run() -> None:
            try:
                prober(endpoint)
            except Exception as exc:  # any failure keeps it out: recorded, not raised
                with self._lock:
                    stats.last_error = f"probe: {type(exc).__name__}: {str(exc)[:200]}"
                    self._open(stats, config)
            else:
                with self._lock:
                    stats.consecutive_failures = 0
                    stats.cooldown_s = 0.0
                    stats.error_rate = self._ema(stats.error_rate or 0.0, 0.0)
            finally:
                with self._lock:
                    stats.probing = False

        threading.Thread(target=run, name=f"probe-{endpoint.name}", daemon=True).start()

    def health(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: state (up, out, probing), averages, load, failures."""
        with self._lock:
            report = {}
            for (name, _, _), s in self._stats.items():
                state = "probing" if s.probing else "out" if s.cooldown_s > 0 else "up"
                report[name] = {
                    "state": state, "ttft_s": s.ttft_s, "tokens_per_s": s.tokens_per_s,
                    "in_flight": s.in_flight, "calls": s.calls, "failures": s.failures,
                    "error_rate": s.error_rate,
                    "last_error": s.last_error,
                }
            return report


ROUTER = Router()
"""The process's router: every run in the process shares its observations."""
