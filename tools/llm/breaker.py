"""A circuit breaker for LLM endpoints that do not answer, and each run's LLM wait.

An endpoint that timed out or refused the connection is "not answering". Before this
breaker, the next role (the selector, the responder) and the ``llm`` expert each asked
it again and waited out the timeout again, with the client's own retries: a hung
endpoint held a run for minutes. Now one such failure opens the breaker:

- for the rest of the run (a run is a thread and a turn: a resume of the same run in
  the same process knows too), the endpoint is not asked again, by any role;
- for a cool-down in the process (the UI and the server run many runs per process):
  ``cooldown_s`` of the routing configuration, doubling while it keeps not answering,
  up to ten minutes. A run that starts after the cool-down asks it again, once.

The breaker also keeps what each run has waited for LLM replies, so that the run's
total wait stays within its ``max_run_s``.

Whether the endpoint was *slow* (it answered before, or began this reply, but not in
time) or *silent* (no byte came back, or the connection was refused) decides the
advice: a longer timeout helps the first, not the second.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_core.runnables.config import ensure_config

from hugginggpt.tools.errors import Control, Fix, LLMBudgetError, LLMCallError
from hugginggpt.tools.llm.config import Endpoint, RoutingConfig
from hugginggpt.tools.llm.errors import REACH, not_answering
from hugginggpt.tools.llm.records import LLMCall
from hugginggpt.tools.llm.settings import LLMSettings

__all__ = ["Breaker", "BREAKER", "Down", "LLMNotAnsweringError", "NotAnswering",
           "bounded_timeout", "not_answered", "refuse_if_down", "run_key"]

NotAnswering = Literal["refused", "silent", "slow"]
"""How an endpoint did not answer: the connection was refused or failed; it sent
nothing within the timeout; it answered before, or began to, but not in time."""

_MAX_COOLDOWN_S = 600.0
_RUNS_KEPT = 1024


@dataclass(frozen=True)
class Down:
    """What the breaker knows of an endpoint that did not answer.

    Attributes:
        llm: the endpoint as shown to people (``model @ base URL``).
        kind: how it did not answer (see :data:`NotAnswering`).
        timeout_s: how long the call waited before it gave up.
        cause: the client's own words (``Request timed out.``, ``Connection error.``).
    """

    llm: str
    kind: NotAnswering
    timeout_s: float
    cause: str
    cooling_s: float | None = None
    """Set when the failure was in an earlier run in this process: the seconds of
    cool-down left, after which the endpoint is asked again."""

    def what(self) -> str:
        """What happened, for a sentence that begins with the endpoint's name."""
        if self.kind == "refused":
            return f"could not be reached: {self.cause.rstrip('.')}"
        if self.kind == "slow":
            return f"gave no complete reply within {self.timeout_s:g} s"
        return f"did not answer within {self.timeout_s:g} s"

    def advice(self) -> str:
        """What to do, told apart for a slow and a silent endpoint (for one that refused
        the connection, a setting to check: :attr:`fix`)."""
        if self.kind == "refused":
            return ""
        if self.kind == "slow":
            return ("it answers, but slowly: raise HUGGINGGPT_LLM_TIMEOUT (now "
                    f"{self.timeout_s:g} s), use a smaller model, or try later")
        return ("not a byte came back: is the server up and serving the model? A longer "
                f"HUGGINGGPT_LLM_TIMEOUT (now {self.timeout_s:g} s) helps only if it is "
                "still loading")

    @property
    def fix(self) -> Fix | None:
        """The setting to check, for an endpoint that refused the connection."""
        return REACH if self.kind == "refused" else None

    def said(self) -> str:
        """What happened and, in brackets, what to do when that is not a setting."""
        advice = self.advice()
        return f"{self.what()} ({advice})" if advice else self.what()


class LLMNotAnsweringError(LLMCallError):
    """The role's endpoints did not answer (timed out, or refused the connection), now
    or earlier in the run; the message is the client's own words, ``description`` the
    sentence for the user."""

    def __init__(self, role: str, down: Down, *, earlier: bool) -> None:
        super().__init__(down.cause, fix=down.fix)
        self.role = role
        self.down = down
        self.earlier = earlier
        """True when no request was made: the endpoint had not answered earlier in
        the run (or within its cool-down in this process)."""

    @property
    def description(self) -> str:
        if self.earlier:
            down = self.down
            when = ("earlier in this run" if down.cooling_s is None else
                    f"in an earlier run; it is asked again in {down.cooling_s:.0f} s")
            advice = f" ({down.advice()})" if down.advice() else ""
            return f"the LLM {self.role} was not asked: {down.llm} {down.what()} {when}{advice}"
        return f"the LLM {self.role} failed: {self.down.llm} {self.down.said()}"


@dataclass
class _Open:
    down: Down
    until: float
    cooldown_s: float


class Breaker:
    """Endpoints that did not answer, per run and per process, and each run's LLM wait.

    Thread-safe; runs are kept in a bounded table (the oldest forgotten first).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: dict[tuple[str, str, str | None], _Open] = {}
        self._runs: OrderedDict[str, dict[tuple[str, str, str | None], Down]] = OrderedDict()
        self._waited: OrderedDict[str, float] = OrderedDict()

    def reset(self) -> None:
        """Forget everything (tests start afresh)."""
        with self._lock:
            self._process.clear()
            self._runs.clear()
            self._waited.clear()

    def trip(self, endpoint: Endpoint, config: RoutingConfig, run: str | None,
             down: Down) -> None:
        """Open the breaker on ``endpoint``: for ``run``, and for a cool-down."""
        with self._lock:
            if run is not None:
                self._run(run)[endpoint.key] = down
            previous = self._process.get(endpoint.key)
            cooldown = (min(_MAX_COOLDOWN_S, previous.cooldown_s * 2) if previous
                        else config.cooldown_s)
            self._process[endpoint.key] = _Open(down, time.monotonic() + cooldown, cooldown)

    def down(self, endpoint: Endpoint, run: str | None) -> Down | None:
        """Why ``endpoint`` is not to be asked in ``run``, or None when it may be."""
        with self._lock:
            if run is not None and (down := self._runs.get(run, {}).get(endpoint.key)):
                return down
            opened = self._process.get(endpoint.key)
            now = time.monotonic()
            if opened is None or opened.until <= now:
                return None
            return replace(opened.down, cooling_s=opened.until - now)

    def answered(self, endpoint: Endpoint) -> None:
        """The endpoint answered: its cool-down starts from the beginning next time."""
        with self._lock:
            self._process.pop(endpoint.key, None)

    def waited(self, run: str | None) -> float:
        """Seconds ``run`` has waited for LLM replies so far."""
        with self._lock:
            return self._waited.get(run, 0.0) if run is not None else 0.0

    def add_wait(self, run: str | None, seconds: float) -> None:
        if run is None:
            return
        with self._lock:
            self._waited[run] = self._waited.get(run, 0.0) + seconds
            self._waited.move_to_end(run)
            while len(self._waited) > _RUNS_KEPT:
                self._waited.popitem(last=False)

    def _run(self, run: str) -> dict[tuple[str, str, str | None], Down]:
        table = self._runs.setdefault(run, {})
        self._runs.move_to_end(run)
        while len(self._runs) > _RUNS_KEPT:
            self._runs.popitem(last=False)
        return table


BREAKER = Breaker()
"""The process's breaker: every run in the process shares its cool-downs."""


def refuse_if_down(role: str, endpoints: list[Endpoint], run: str | None,
                   record: dict[str, Any], calls: list[LLMCall]) -> None:
    """Raise :class:`LLMNotAnsweringError` when none of the role's endpoints may be
    asked (each did not answer earlier in the run, or is cooling down), each recorded
    in ``calls`` as a call not made (``record``: the request's fields), so that the
    trace shows it and a replay tells the same."""
    downs = [d for e in endpoints if (d := BREAKER.down(e, run)) is not None]
    if not endpoints or len(downs) < len(endpoints):
        return
    error = LLMNotAnsweringError(role, downs[0], earlier=True)
    for attempt, endpoint in enumerate(endpoints, 1):
        calls.append(LLMCall(**record, llm=endpoint.label, endpoint=endpoint.name,
                             tier=endpoint.tier, attempt=attempt, ok=False,
                             error=f"not called: it did not answer earlier ({downs[0].cause})"))
    calls[-1] = calls[-1].model_copy(update={"outcome": error.description, "fix": error.fix})
    raise error


def bounded_timeout(settings: LLMSettings, endpoint: Endpoint, role: str,
                    run: str | None) -> float:
    """The call's timeout: the endpoint's, within what is left of the run's
    ``max_run_s`` for LLM replies."""
    timeout = endpoint.timeout_s or settings.llm_timeout_s
    left = settings.max_run_s - BREAKER.waited(run)
    if left <= 0:
        raise LLMBudgetError(
            f"the run has waited {BREAKER.waited(run):.0f} s for LLM replies, its time limit "
            f"(max_run_s = {settings.max_run_s:g}); the {role} was not asked", fix=Fix(
                say="raise it with {} if the run needs more",
                controls=[Control(kind="limit", name="max_run_s")]))
    return min(timeout, float(math.ceil(left)))


def run_key(turn: int) -> str | None:
    """The run a call serves: the graph's thread and the turn (None outside a graph
    run, which then has the process's cool-downs only)."""
    thread = ensure_config().get("configurable", {}).get("thread_id")
    return f"{thread}:{turn}" if thread else None


def not_answered(exc: BaseException, endpoint: Endpoint, timeout_s: float, *, began: bool,
                 answered_before: bool) -> Down | None:
    """How the endpoint did not answer, when it did not (else None): refused, silent,
    or slow (it had answered before in this process, or ``began`` this reply)."""
    kind = not_answering(exc)
    if kind is None:
        return None
    cause = " ".join(str(exc).split()) or type(exc).__name__
    if kind == "connect":
        return Down(endpoint.label, "refused", timeout_s, cause)
    slow = began or answered_before
    return Down(endpoint.label, "slow" if slow else "silent", timeout_s, cause)
