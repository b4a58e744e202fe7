"""Routing LLM calls across several endpoints by capability, load and health.

For every call the :class:`Router` orders the role's endpoints:

- the tier the call needs (estimated by the caller: planning a multi-step request needs
  a large model, choosing between two models a small one) filters out weaker endpoints,
  which stay only as a last resort;
- among the capable ones, the strategy decides. ``peak-ewma``, the default, is the peak
  EWMA load balancing of Finagle and Linkerd: the lowest cost, the endpoint's recent
  latency times its calls in flight plus this one (its expected wait), ties by the
  calls in flight. The latency is per completion token, so that the endpoint that wrote
  the long answers does not look slow, and one for all roles, so that the first slow
  reply of any role warns for all (kept per role, each role's first burst of calls after
  a slowdown was spread before a slow reply of that role was back). It is a moving
  average with time constant :data:`DECAY_S` that a slower reply sets at once (a peak),
  decaying towards zero since it was set: an endpoint that became slow gets calls only
  when the others are that much busier, and while they keep answering its peak decays
  until it is tried again. An endpoint not measured yet costs nothing while idle (it is
  tried), and while its calls are in flight it counts as the average of the measured
  ones. ``least-busy`` takes the endpoint with the fewest calls in flight from this
  process. ``lowest-latency`` is LiteLLM's latency-based routing: the lowest mean
  latency per completion token over the endpoint's last :data:`LATENCY_WINDOW` replies,
  an endpoint not measured yet first. Ties are broken at random (by tier, then the
  configuration's order, the p95 on ``benchmarks/routing.py``'s slowdown fleet was
  5.6-6.5 s against 5.0-5.2 s in three paired runs);
- an endpoint that failed ``failure_threshold`` times in a row is taken out for
  ``cooldown_s`` (doubling while it keeps failing), then probed in the background with
  a one-token call and put back when the probe succeeds.

``peak-ewma`` replaced ``least-busy`` as the default: least-busy kept sending a quarter
of the calls to a replica that had become five times slower (the slowdown fleet of
``benchmarks/routing.py``; see "Several LLMs" in docs/guides/llms.md for the figures).
Least-busy had replaced a latency model (expected time from measured time to first
token, tokens per second, predicted reply length, tokens in flight and error rates, with
settings per endpoint) that never met its target; peak EWMA has one number per endpoint
and no settings, and until the first replies it is least-busy. In
``benchmarks/routing.py``, on the mixed fleet least-busy's p95 was 0.91x to 1.30x the
model's (eight paired runs, median 1.02x); on the slowdown fleet the model's was 1.13x
to 1.44x least-busy's (five runs). ``least-busy``, ``lowest-latency``, ``round-robin``
(the next endpoint for every call) and ``strongest`` (the strongest endpoint for every
call; neither of the last two knows tiers or health) are kept for comparison and for
users who want them.

A call that fails on one endpoint goes on to the next (see
:func:`hugginggpt.tools.llm.client.complete`); a failure does not count as a latency
(a fast error would look fast), the health checks deal with it. The statistics are per
process, shared by all runs, so concurrent runs see each other's load.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.tools.llm.config import Endpoint, RoutingConfig

__all__ = ["Router", "ROUTER", "Ticket", "LATENCY_WINDOW", "DECAY_S"]

LATENCY_WINDOW = 10
"""Replies per endpoint that ``lowest-latency`` averages (LiteLLM's default)."""
DECAY_S = 10.0
"""``peak-ewma``'s time constant, in seconds (Finagle's and Linkerd's default)."""
_MAX_COOLDOWN_S = 600.0


@dataclass
class _Stats:
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    open_until: float = 0.0
    cooldown_s: float = 0.0
    probing: bool = False
    last_error: str = ""
    per_token_s: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))
    """Latency per completion token of the last replies (``lowest-latency``)."""
    peak_s: float | None = None
    """``peak-ewma``'s latency per completion token as of ``peak_at``; None until the
    first reply."""
    peak_at: float = 0.0


@dataclass
class Ticket:
    """One call in flight on one endpoint."""

    endpoint: Endpoint
    started: float = field(default_factory=time.monotonic)


Prober = Callable[[Endpoint], None]
"""Makes a minimal call to an endpoint; raises when it fails."""


class Router:
    """Per-process endpoint statistics and the policy that orders endpoints per call.

    Thread-safe; the state is tiny (numbers per endpoint), so one lock is enough.
    """

    def __init__(self, tie_break: Callable[[], float] = random.random,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._stats: dict[tuple[str, str, str | None], _Stats] = {}
        self._turn = 0
        self.tie_break = tie_break
        """Orders equally ranked endpoints (tests make it count up: configuration order)."""
        self.prober: Prober | None = None
        self.clock = clock
        """What the decay and the cool-downs count time by (tests turn it by hand)."""

    def reset(self) -> None:
        """Forget all observations (tests and benchmarks start afresh)."""
        with self._lock:
            self._stats.clear()
            self._turn = 0

    def _get(self, endpoint: Endpoint) -> _Stats:
        return self._stats.setdefault(endpoint.key, _Stats())

    # -- policy

    def order(self, config: RoutingConfig, role: str, need: int, *,
              cheapest: bool = False) -> list[Endpoint]:
        """The role's endpoints in the order to try them for one call.

        Args:
            cheapest: among the capable endpoints, the cheapest first (by price per
                token, then the lowest tier that suffices, then the strategy), as the
                ``llm`` expert wants: a text task should not occupy the strongest
                model when a small one does it. ``round-robin`` and ``strongest`` keep
                their own order.
        """
        endpoints = config.for_role(role)
        now = self.clock()
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

            known = [x for x in (self._latency(self._get(e), now) for e in live)
                     if x is not None]
            prior = statistics.fmean(known) if known else 1.0  # being measured: average

            def score(e: Endpoint) -> tuple[float, float, float]:
                stats = self._get(e)
                if config.strategy == "lowest-latency":
                    recent = stats.per_token_s
                    return statistics.fmean(recent) if recent else 0.0, 0, self.tie_break()
                if config.strategy == "peak-ewma":
                    latency = self._latency(stats, now)
                    if latency is None and not stats.in_flight:
                        return 0.0, 0, self.tie_break()  # never measured: try it
                    cost = (prior if latency is None else latency) * (stats.in_flight + 1)
                    return cost, stats.in_flight, self.tie_break()
                return stats.in_flight, 0, self.tie_break()

            def price(e: Endpoint) -> tuple[float, int, tuple[float, float, float]]:
                return e.cost_per_1m_input + e.cost_per_1m_output, e.tier, score(e)

            top = max((e.tier for e in live), default=0)
            capable = sorted((e for e in live if e.tier >= min(need, top)),
                             key=price if cheapest else score)
            weaker = sorted((e for e in live if e not in capable),
                            key=lambda e: (-e.tier, score(e)))
            out.sort(key=lambda e: self._get(e).open_until)
            return capable + weaker + out

    def _latency(self, stats: _Stats, now: float) -> float | None:
        """``peak-ewma``'s latency per token now, decayed since it was set; None before
        the endpoint's first reply."""
        if stats.peak_s is None:
            return None
        return stats.peak_s * math.exp(-(now - stats.peak_at) / DECAY_S)

    # -- observations

    def begin(self, endpoint: Endpoint) -> Ticket:
        with self._lock:
            self._get(endpoint).in_flight += 1
        return Ticket(endpoint)

    def _end(self, ticket: Ticket) -> _Stats:
        stats = self._get(ticket.endpoint)
        stats.in_flight = max(0, stats.in_flight - 1)
        stats.calls += 1
        return stats

    def succeeded(self, ticket: Ticket, *, completion_tokens: int, latency_s: float) -> None:
        """Record a reply: the endpoint is healthy, and its latency per token counts."""
        with self._lock:
            stats = self._end(ticket)
            stats.consecutive_failures = 0
            stats.cooldown_s = 0.0
            if completion_tokens > 0:
                per_token = latency_s / completion_tokens
                stats.per_token_s.append(per_token)
                self._observe(stats, per_token)

    def _observe(self, stats: _Stats, per_token: float) -> None:
        """``peak-ewma``: a reply slower than the (decayed) latency sets it at once; a
        faster one is averaged in, weighing more the longer since it was set."""
        now = self.clock()
        current = self._latency(stats, now)
        if current is None or per_token > current:
            stats.peak_s = per_token
        else:
            kept = math.exp(-(now - stats.peak_at) / DECAY_S)
            stats.peak_s = current * kept + per_token * (1 - kept)
        stats.peak_at = now

    def failed(self, ticket: Ticket, config: RoutingConfig, error: str) -> None:
        """Record a failure; enough of them in a row take the endpoint out."""
        with self._lock:
            stats = self._end(ticket)
            stats.failures += 1
            stats.last_error = error
            stats.consecutive_failures += 1
            if stats.consecutive_failures >= config.failure_threshold:
                self._open(stats, config)

    def take_out(self, endpoint: Endpoint, config: RoutingConfig) -> None:
        """Take the endpoint out now, whatever the threshold: it did not answer
        (see :mod:`~hugginggpt.tools.llm.breaker`)."""
        with self._lock:
            self._open(self._get(endpoint), config)

    def _open(self, stats: _Stats, config: RoutingConfig) -> None:
        stats.cooldown_s = min(_MAX_COOLDOWN_S, stats.cooldown_s * 2 or config.cooldown_s)
        stats.open_until = self.clock() + stats.cooldown_s

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
            finally:
                with self._lock:
                    stats.probing = False

        threading.Thread(target=run, name=f"probe-{endpoint.name}", daemon=True).start()

    def answered_before(self, endpoint: Endpoint) -> bool:
        """Whether the endpoint has replied to a call in this process (a timeout after
        that is a slow endpoint, not a silent one)."""
        with self._lock:
            stats = self._stats.get(endpoint.key)
            return stats is not None and stats.calls > stats.failures

    def health(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: state (up, out, probing), load, failures, recent latency (per
        token: ``lowest-latency``'s mean and ``peak-ewma``'s)."""
        now = self.clock()
        with self._lock:
            report = {}
            for (name, _, _), s in self._stats.items():
                state = "probing" if s.probing else "out" if s.cooldown_s > 0 else "up"
                report[name] = {
                    "state": state, "in_flight": s.in_flight, "calls": s.calls,
                    "failures": s.failures, "last_error": s.last_error,
                    "per_token_s": statistics.fmean(s.per_token_s) if s.per_token_s else None,
                    "peak_s": self._latency(s, now),
                }
            return report


ROUTER = Router()
"""The process's router: every run in the process shares its observations."""
