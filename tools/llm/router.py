"""Routing LLM calls across several endpoints by capability, latency, load and health.

For every call the :class:`Router` orders the role's endpoints:

- the tier the call needs (estimated by the caller: planning a multi-step request needs
  a large model, choosing between two models a small one) filters out weaker endpoints,
  which stay only as a last resort;
- among the capable ones, the expected latency decides: the moving averages of time to
  first token and tokens per second observed on that endpoint, the predicted length of
  the reply, and the work already in flight there (requests and predicted tokens);
- an endpoint that failed ``failure_threshold`` times in a row is taken out for
  ``cooldown_s`` (doubling while it keeps failing), then probed in the background with
  a one-token call and put back when the probe succeeds.

A call that fails on one endpoint goes on to the next (see
:func:`hugginggpt.tools.llm.client.complete`). The statistics are per process, shared by
all runs, so concurrent runs see each other's load.

The other strategies are what a user would otherwise pick, kept for comparison
(``benchmarks/routing.py``) and for users who want them. ``least-busy`` and
``lowest-latency`` keep the router's tier filter and health checks and only rank
differently: by the calls in flight on each endpoint, or (LiteLLM's latency-based
routing) by the mean latency per completion token of the endpoint's last
:data:`LATENCY_WINDOW` replies, an endpoint not yet measured first; ties are broken at
random. ``round-robin`` (the next endpoint for every call) and ``strongest`` (the
strongest endpoint for every call) know neither tiers nor health.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.llm.config import Endpoint, RoutingConfig

__all__ = ["Router", "ROUTER", "Ticket", "LATENCY_WINDOW"]

# Until an endpoint is measured: smaller models answer sooner and faster.
_PRIOR_TTFT_S = {1: 0.3, 2: 0.6, 3: 1.0}
_PRIOR_TOKENS_PER_S = {1: 120.0, 2: 60.0, 3: 30.0}
_DEFAULT_PARALLEL = 8
_MAX_COOLDOWN_S = 600.0
LATENCY_WINDOW = 10
"""Replies per endpoint that ``lowest-latency`` averages (LiteLLM's default)."""


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
    per_token_s: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))
    """Latency per completion token of the last replies (``lowest-latency``)."""


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
        self._random = random.Random()
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

            def score(e: Endpoint) -> tuple[float, float]:
                stats = self._get(e)
                if config.strategy == "least-busy":
                    return stats.in_flight, self._random.random()
                if config.strategy == "lowest-latency":
                    recent = stats.per_token_s
                    return statistics.fmean(recent) if recent else 0.0, self._random.random()
                return (self._expected(e, stats, tokens)
                        + config.cost_weight * e.cost(0, tokens)), 0.0

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
            if completion_tokens > 0:
                stats.per_token_s.append(latency_s / completion_tokens)
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
