"""LLM calls for the three roles (planner, selector, responder), routed and recorded.

An endpoint's ``model`` is LangChain's ``provider:model`` (``anthropic:claude-...``,
``ollama:qwen3:4b``, ...); a bare name is an OpenAI-compatible server (OpenAI, or vLLM,
Ollama, TGI, LM Studio with a ``base_url``); ``hf:REPO_ID`` or ``hf:URL`` is a Hugging
Face model or endpoint; ``transformers:REPO`` runs in this process, its structured
replies generated under a grammar. Each is called through its chat model
(:mod:`hugginggpt.tools.llm.chat_models`).

:func:`complete` is the one way the nodes call an LLM: the router
(:mod:`hugginggpt.tools.llm.router`) orders the role's endpoints, a failure falls back to
the next one, and every attempt is recorded as an
:class:`~hugginggpt.tools.llm.records.LLMCall` (endpoint, tier, tokens, time to first
token, latency, cost, outcome, and the request and reply for the thread's trace). With a
:class:`~hugginggpt.tools.llm.replay.Recording` in the settings, replies come from the
recording and no endpoint is called.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables.config import ensure_config, merge_configs

from hugginggpt.tools.errors import NO_LLM, LLMCallError, LLMNotConfiguredError
from hugginggpt.tools.llm.breaker import (
    BREAKER,
    Down,
    LLMNotAnsweringError,
    bounded_timeout,
    not_answered,
    refuse_if_down,
    run_key,
)
from hugginggpt.tools.llm.chat_models import client_for
from hugginggpt.tools.llm.config import (
    NOT_CONFIGURED,
    ConfigError,
    Endpoint,
    Role,
    RoutingConfig,
    routing_config,
)
from hugginggpt.tools.llm.credentials import missing_credentials, without_missing
from hugginggpt.tools.llm.errors import (
    EndpointFailure,
    describe_llm_error,
    is_endpoint_failure,
    llm_call_errors,
    llm_error_fix,
)
from hugginggpt.tools.llm.local_chat import constrained
from hugginggpt.tools.llm.providers import is_local, structured_method
from hugginggpt.tools.llm.records import (
    LLMCall,
    check_budget,
    recorded_reply,
    recorded_request,
    request_digest,
)
from hugginggpt.tools.llm.retries import backoff_s, retryable, tries_per_endpoint
from hugginggpt.tools.llm.router import ROUTER
from hugginggpt.tools.llm.settings import LLMSettings
from hugginggpt.tools.llm.streams import (
    StreamInterruptedError,
    StreamListener,
    Timer,
    as_streamed,
    ended,
)
from hugginggpt.tools.redact import redact
from hugginggpt.tools.text import MAX_MESSAGE, clip

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["complete", "StreamInterruptedError", "StreamListener"]


def _structured(llm: BaseChatModel, schema: dict[str, Any], setting: str) -> Any:
    """The chat model asked for ``schema`` (its reply and the parsed value): with the
    method the run's setting picks for it (:func:`structured_method`), else (a chat
    model that takes no such method) its own way; a chat model that cannot structure
    its output is asked plainly, and the caller reads the JSON in its reply."""
    method = structured_method(llm, setting)
    for options in ([{"method": method}] if method else []) + [{}]:
        try:
            return llm.with_structured_output(schema, include_raw=True, **options)
        except NotImplementedError:
            break
        except (TypeError, ValueError):
            continue
    return llm


def _within(timeout_s: float, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call``'s result, or TimeoutError after ``timeout_s``: a chat-model object has
    its own client and timeout, which the run's limit must not wait beyond. The call
    is left to end in the background (a thread cannot be stopped)."""
    done = threading.Event()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()  # the graph's stream writer, the run tree

    def run() -> None:
        try:
            box["value"] = context.run(call, *args, **kwargs)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="llm-object-call", daemon=True).start()
    if not done.wait(timeout_s):
        raise TimeoutError(f"no reply within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _progress_writer() -> Callable[[dict[str, Any]], None]:
    """The running graph's stream writer, for ``wait`` events (the progress display says
    what a run waits for, and for how long); a no-op outside a graph."""
    from langgraph.config import get_stream_writer

    try:
        return get_stream_writer()
    except RuntimeError:
        return lambda event: None


def _usage(raw: AIMessage) -> tuple[int, int]:
    usage: dict[str, Any] = dict(raw.usage_metadata or {})
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def _error(exc: BaseException) -> str:
    return redact(f"{type(exc).__name__}: {clip(str(exc), MAX_MESSAGE)}")



# ------------------------------------------------------------------ the call

def _attempts(config: RoutingConfig, role: str, need: int, tries: Callable[[Endpoint], int],
              run: str | None, cheapest: bool = False) -> Iterator[Endpoint]:
    """The endpoints to try for one call, in turn, leaving out those that did not
    answer (:mod:`~hugginggpt.tools.llm.breaker`). ``peak-ewma``, ``least-busy`` and
    ``lowest-latency`` rank again after each failure, with what it changed (the calls in
    flight, an endpoint taken out), and try each endpoint at most ``tries(endpoint)`` times;
    ``round-robin`` and ``strongest`` try each endpoint once, in their order."""
    if config.strategy in ("round-robin", "strongest"):
        for endpoint in ROUTER.order(config, role, need, cheapest=cheapest):
            if BREAKER.down(endpoint, run) is None:
                yield endpoint
        return
    tried: dict[str, int] = {}
    while True:
        left = [e for e in ROUTER.order(config, role, need, cheapest=cheapest)
                if tried.get(e.name, 0) < tries(e) and BREAKER.down(e, run) is None]
        if not left:
            return
        tried[left[0].name] = tried.get(left[0].name, 0) + 1
        yield left[0]


def complete(
    settings: LLMSettings,
    role: Role,
    messages: list[BaseMessage],
    *,
    calls: list[LLMCall],
    need: int = 1,
    schema: dict[str, Any] | None = None,
    grammar: dict[str, Any] | None = None,
    turn: int = 0,
    spent: tuple[int, int] = (0, 0),
    cheapest: bool = False,
    on_stream: StreamListener | None = None,
) -> AIMessage:
    """One LLM call for ``role``: routed, failed over, and recorded in ``calls``.

    Args:
        need: the capability tier the call needs (the caller knows what it asks:
            :func:`hugginggpt.nodes.demand.tier_needed` for the stages).
        schema: a JSON schema for structured output (the reply's tool call or JSON).
        grammar: the bounded schema a local model (``transformers:``) generates under,
            when the caller knows more than ``schema`` says (the planner: task names,
            ids); by default ``schema``, bounded.
        turn: which request on the thread this call serves (for the trace and replay).
        spent: LLM calls and tokens the run used before this node
            (:func:`~hugginggpt.tools.llm.records.run_spend`);
            with this node's ``calls`` they are held to the run's limits.
        cheapest: try the cheapest capable endpoint first (see
            :meth:`~hugginggpt.tools.llm.router.Router.order`).
        on_stream: told the reply's text as it streams (a streaming endpoint only; a
            replayed or whole reply is not told): the planner starts subtasks from it.
            An endpoint that fails mid-stream is followed by the next one's attempt,
            told from the start.

    Returns:
        The raw reply; with a ``schema`` the caller parses it (tool call or content).

    Raises:
        LLMNotConfiguredError: no endpoint for the role, or an invalid configuration.
        LLMBudgetError: the run has used its ``max_llm_calls`` or ``max_llm_tokens``.
        LLMCredentialsError: the role's endpoints lack their keys or tokens (the message
            names the variables); no request was made.
        LLMCallError: every endpoint failed (the message lists each failure), or one of
            ``llm_call_errors()`` when the role has a single endpoint.
    """
    digest = request_digest(role, messages)
    check_budget(settings, role, calls, spent)
    if settings.replay is not None:
        if not settings.replay.serves(role):  # the recorded run had no LLM for it
            raise LLMNotConfiguredError(NOT_CONFIGURED, fix=NO_LLM)
        return settings.replay.reply(role, digest, messages, calls, turn)
    try:
        config = routing_config(settings)
    except ConfigError as exc:
        raise LLMNotConfiguredError(str(exc), fix=exc.fix) from None
    endpoints = config.for_role(role) if config else []
    if config is None or not endpoints:
        raise LLMNotConfiguredError(NOT_CONFIGURED, fix=NO_LLM)
    if missing := {e.name: why for e in endpoints if (why := missing_credentials(e))}:
        config = without_missing(config, role, missing, digest, messages, calls, need, turn)
        endpoints = config.for_role(role)

    run = run_key(turn)
    tell = _progress_writer()
    base: dict[str, Any] = {"role": role, "need": need, "turn": turn, "digest": digest,
                            "request": recorded_request(messages), "at": time.time()}
    refuse_if_down(role, endpoints, run, base, calls)
    several = len(endpoints) > 1

    def tries(endpoint: Endpoint) -> int:
        return tries_per_endpoint(endpoint, settings, several)

    failures: list[tuple[Endpoint, BaseException]] = []
    downs: dict[str, Down] = {}
    for attempt, endpoint in enumerate(_attempts(config, role, need, tries, run, cheapest), 1):
        if attempt > 1:
            check_budget(settings, role, calls, spent)
            previous, last_error = failures[-1]
            if previous.name == endpoint.name:  # the same endpoint again: back off
                if not several and not retryable(last_error):
                    break
                time.sleep(backoff_s(last_error, sum(e.name == endpoint.name for e, _ in failures)))
        timeout_s = bounded_timeout(settings, endpoint, role, run)
        record: dict[str, Any] = base | {"llm": endpoint.label, "endpoint": endpoint.name,
                                         "tier": endpoint.tier, "attempt": attempt,
                                         "at": time.time()}
        llm = client_for(endpoint, timeout_s)
        local = endpoint.chat is None and is_local(endpoint.model)
        if local:  # generated under the grammar; the caller reads the JSON in the reply
            runnable: Any = constrained(llm, schema, grammar, timeout_s)
        else:
            runnable = llm if schema is None else _structured(llm, schema,
                                                              settings.structured_output)
        timer = Timer(on_stream, attempt)
        # the caller's config (LangSmith run tree, graph streaming) plus the timer
        config_ = merge_configs(ensure_config(), {"callbacks": [timer]})
        ticket = ROUTER.begin(endpoint)
        started = time.monotonic()
        waiting = {"type": "wait", "key": f"llm {id(timer)}"}  # unique while it waits
        tell(waiting | {"event": "start", "what": f"the {role} LLM at {endpoint.label}"})
        try:
            if endpoint.chat is None and not local:
                out = runnable.invoke(messages, config=config_)
            else:
                out = _within(timeout_s, runnable.invoke, messages, config=config_)
            raw = cast(AIMessage, out["raw"] if isinstance(out, dict) else out)
            if endpoint.streams and not ended(raw):
                raise StreamInterruptedError(
                    "the endpoint closed the stream before the reply ended")
        except Exception as exc:
            tell(waiting | {"event": "end"})
            latency = time.monotonic() - started
            BREAKER.add_wait(run, latency)
            ROUTER.failed(ticket, config, _error(exc))
            calls.append(LLMCall(**record, ok=False, error=_error(exc),
                                 latency_s=round(latency, 4)))
            if not is_endpoint_failure(exc):
                raise  # a bug, not an endpoint failure
            down = not_answered(exc, endpoint, timeout_s, began=timer.first is not None,
                                answered_before=ROUTER.answered_before(endpoint))
            if down is not None:
                BREAKER.trip(endpoint, config, run, down)
                ROUTER.take_out(endpoint, config)
                downs[endpoint.name] = down
            failures.append((endpoint, exc))
            continue
        tell(waiting | {"event": "end"})
        latency = time.monotonic() - started
        BREAKER.add_wait(run, latency)
        BREAKER.answered(endpoint)
        raw = as_streamed(raw, timer)
        ttft = (timer.first - started) if timer.first is not None else None
        prompt_tokens, completion_tokens = _usage(raw)
        ROUTER.succeeded(ticket, completion_tokens=completion_tokens, latency_s=latency)
        calls.append(LLMCall(
            **record, ok=True, prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, latency_s=round(latency, 4),
            ttft_s=round(ttft, 4) if ttft is not None else None,
            cost=endpoint.cost(prompt_tokens, completion_tokens), reply=recorded_reply(raw),
        ))
        return raw
    if not failures:  # every endpoint went down while this call waited for its turn
        refuse_if_down(role, endpoints, run, base, calls)
        raise LLMCallError(f"no {role} LLM endpoint could be asked")
    names = {e.name for e, _ in failures}
    last_endpoint, last = failures[-1]
    final: BaseException
    if len(names) == 1 and (down := downs.get(last_endpoint.name)) is not None:
        final = LLMNotAnsweringError(role, down, earlier=False)
        final.__cause__ = last
    elif len(names) == 1:
        final = last if isinstance(last, llm_call_errors()) else EndpointFailure(last)
    else:
        final = LLMCallError(
            f"all {len(names)} endpoints failed ({len(failures)} attempts): "
            + "; ".join(f"{e.name}: {_error(exc)}" for e, exc in failures))
    # what the run is told, so that a replay tells it the same
    calls[-1] = calls[-1].model_copy(update={"outcome": describe_llm_error(final, role),
                                             "fix": llm_error_fix(final)})
    raise final
