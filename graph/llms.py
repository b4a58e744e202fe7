"""LLM calls for the three roles (planner, selector, responder), routed and recorded.

An endpoint's ``model`` names an OpenAI-compatible server through ``langchain-openai``
(OpenAI, or vLLM, Ollama, TGI, LM Studio with a ``base_url``) or, as ``hf:REPO_ID`` or
``hf:URL``, a Hugging Face model or endpoint through ``langchain-huggingface``.

:func:`complete` is the one way the nodes call an LLM: the :mod:`graph.routing` router
orders the role's endpoints, a failure falls back to the next one, and every attempt is
recorded as an :class:`~graph.state.LLMCall` (endpoint, tier, tokens, time to first
token, latency, cost, outcome, and the request and reply for the thread's trace). With a
:class:`~graph.replay.Recording` in the context, replies come from the recording and no
endpoint is called.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import lru_cache
from typing import Any, Literal, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables.config import ensure_config, merge_configs

from graph.context import Context, env
from graph.routing import (
    ROLES,
    ROUTER,
    STRATEGIES,
    ConfigError,
    Endpoint,
    RoutingConfig,
    load_config,
    parse_config,
)
from graph.state import LLMCall
from nodes.llm_errors import LLM_CALL_ERRORS, describe_llm_error
from tools.errors import LLMBudgetError, LLMCallError, LLMNotConfiguredError
from tools.redact import install_log_redaction, redact

__all__ = [
    "Role",
    "complete",
    "has_llm",
    "routing_config",
    "describe_llm",
    "request_digest",
    "recorded_request",
    "stable_text",
    "reply_text",
    "run_spend",
    "NOT_CONFIGURED_HELP",
]

Role = Literal["planner", "selector", "responder"]

NOT_CONFIGURED_HELP = """\
No LLM is configured (the built-in offline planner only handles requests like its
examples). Configure one of:
  - OpenAI:            export OPENAI_API_KEY=sk-...   (optionally --llm gpt-4o)
  - any OpenAI-compatible server (vLLM, Ollama, TGI, LM Studio):
                       --llm MODEL --llm-base-url http://localhost:11434/v1
                       (or HUGGINGGPT_LLM and HUGGINGGPT_LLM_BASE_URL)
  - Hugging Face:      --llm hf:meta-llama/Llama-3.1-8B-Instruct with HF_TOKEN set,
                       or --llm hf:https://your-endpoint.endpoints.huggingface.cloud
  - several endpoints, routed by capability and latency: --llm-config llms.toml
                       (see the README, "Several LLMs")
Or check a plan without any LLM: hugginggpt run "..." --dry-run --plan PLAN.json"""

_LEGACY_KEYS = ("HUGGINGGPT_LLM_API_KEY", "OPENAI_API_KEY")
_MAX_RECORDED_CHARS = 20_000


# ------------------------------------------------------------------ configuration

def routing_config(context: Context) -> RoutingConfig | None:
    """The run's endpoints: the configuration file, else ``llm_endpoints``, else the
    single ``llm`` (per role ``planner_llm``...). None when no LLM is configured.

    Raises:
        ConfigError: the configuration is invalid.
    """
    if context.offline:
        return None
    if context.llm_config:
        config = load_config(context.llm_config)
    elif context.llm_endpoints:
        config = parse_config(context.llm_endpoints, "llm_endpoints")
    else:
        by_spec: dict[str, list[str]] = {}
        for role in ROLES:
            spec = context.role_llm(cast(Role, role))
            if spec is not None:
                by_spec.setdefault(spec, []).append(role)
        if not by_spec:
            return None
        endpoints = []
        for spec, roles in by_spec.items():
            base_url = None if spec.startswith("hf:") else context.llm_base_url
            endpoints.append(Endpoint(
                name=f"{spec} @ {base_url}" if base_url else spec, model=spec,
                base_url=base_url, roles=tuple(roles), api_key_env=_LEGACY_KEYS,
                max_retries=context.llm_max_retries,
            ))
        config = RoutingConfig(endpoints=tuple(endpoints))
    if context.llm_routing:
        if context.llm_routing not in STRATEGIES:
            raise ConfigError(f"llm_routing (HUGGINGGPT_LLM_ROUTING) must be one of "
                              f"{list(STRATEGIES)}, not {context.llm_routing!r}")
        config = replace(config, strategy=cast(Any, context.llm_routing))
    return config


def has_llm(context: Context, role: Role) -> bool:
    """Whether the role has an endpoint (or a recording to replay)."""
    if context.replay is not None:
        return True
    try:
        config = routing_config(context)
    except ConfigError:
        return True  # misconfigured is not "not configured": the call says what is wrong
    return bool(config and config.for_role(role))


def describe_llm(context: Context, role: Role) -> str:
    """A short label of the role's endpoints for state and logs (never a key)."""
    if context.replay is not None:
        return "replay of a recorded thread"
    try:
        config = routing_config(context)
    except ConfigError as exc:
        return f"misconfigured ({exc})"
    endpoints = config.for_role(role) if config else []
    if not endpoints:
        return "none"
    if len(endpoints) == 1:
        return endpoints[0].label
    names = ", ".join(e.name for e in endpoints)
    return f"{config.strategy if config else ''} over {names}"


# ------------------------------------------------------------------ clients

def _api_key(endpoint: Endpoint) -> str | None:
    for name in endpoint.api_key_env or (() if endpoint.base_url else ("OPENAI_API_KEY",)):
        if key := env(name):
            return key
    return "not-needed" if endpoint.base_url else None  # the client insists on one


@lru_cache(maxsize=64)
def _build(endpoint: Endpoint, timeout_s: float, max_retries: int) -> BaseChatModel:
    if endpoint.model.startswith("hf:"):
        from langchain_huggingface import ChatHuggingFace, HuggingFaceEndpoint

        target = endpoint.model[3:]
        is_url = target.startswith(("http://", "https://"))
        token = next((v for n in (*endpoint.api_key_env, "HF_TOKEN",
                                  "HUGGINGFACEHUB_API_TOKEN") if (v := env(n))), None)
        hf = HuggingFaceEndpoint(  # type: ignore[call-arg]  # model is derived
            endpoint_url=target if is_url else None,
            repo_id=None if is_url else target,
            task="text-generation",
            max_new_tokens=1024,
            temperature=0.01,
            timeout=int(timeout_s),
            huggingfacehub_api_token=token,
        )
        return ChatHuggingFace(llm=hf)

    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    api_key = _api_key(endpoint)
    return ChatOpenAI(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=SecretStr(api_key) if api_key else None,
        timeout=timeout_s,
        max_retries=max_retries,
        temperature=0,
        streaming=endpoint.streams,
        stream_usage=True,
    )


def _client(endpoint: Endpoint, context: Context, several: bool) -> BaseChatModel:
    retries = endpoint.max_retries
    if retries is None:  # with somewhere else to go, fail over rather than retry
        retries = 0 if several else context.llm_max_retries
    return _build(endpoint, endpoint.timeout_s or context.llm_timeout_s, retries)


def _probe(endpoint: Endpoint) -> None:
    """A minimal call that shows whether a cooled-down endpoint answers again."""
    llm = _build(endpoint, min(10.0, endpoint.timeout_s or 10.0), 0)
    extra: dict[str, Any] = {} if endpoint.model.startswith("hf:") else {"max_tokens": 1}
    llm.invoke([HumanMessage("ping")], **extra)


ROUTER.prober = _probe
install_log_redaction()


class _Timer(BaseCallbackHandler):
    """Notes when the first streamed token arrives, and keeps the tool-call arguments
    exactly as streamed (LangChain completes truncated JSON when it merges chunks)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.tool_args: dict[int, str] = {}

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        if self.first is None:
            self.first = time.monotonic()
        message = getattr(chunk, "message", None)
        for piece in getattr(message, "tool_call_chunks", None) or []:
            index = piece.get("index") or 0
            self.tool_args[index] = self.tool_args.get(index, "") + (piece.get("args") or "")


def _as_streamed(raw: AIMessage, timer: _Timer) -> AIMessage:
    """The reply with tool calls whose streamed arguments are not complete JSON marked
    invalid (as a whole reply would have them), so a truncated plan reads as one."""
    if not raw.tool_calls or not timer.tool_args:
        return raw
    valid, invalid = [], list(raw.invalid_tool_calls)
    for index, call in enumerate(raw.tool_calls):
        streamed = timer.tool_args.get(index)
        try:
            if streamed is not None:
                json.loads(streamed)
            valid.append(call)
        except ValueError:
            invalid.append({"name": call["name"], "args": streamed, "id": call.get("id"),
                            "error": "the streamed arguments are not complete JSON",
                            "type": "invalid_tool_call"})
    if not invalid or len(invalid) == len(raw.invalid_tool_calls):
        return raw
    return raw.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


# ------------------------------------------------------------------ records

def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, default=str)


def recorded_request(messages: list[BaseMessage]) -> list[dict[str, str]]:
    """A prompt as the trace keeps it: role and content, clipped, without secrets."""
    return [{"role": m.type, "content": redact(_text(m.content)[:_MAX_RECORDED_CHARS])}
            for m in messages]


_VOLATILE = re.compile(r"\b\d+(?:\.\d+)?s\b|artifacts/[^/\s]+/")


def stable_text(text: str) -> str:
    """Text with what differs between two runs of the same thing masked: timings
    ("0.42s") and the thread's artifact folder."""
    return _VOLATILE.sub(lambda m: "artifacts/*/" if m.group(0).startswith("a") else "#s",
                         text)


def request_digest(role: str, messages: list[BaseMessage]) -> str:
    """A fingerprint of a call's prompt: a replay matches recorded replies by it (with
    timings and the artifact folder masked, so a replay's prompt matches its original)."""
    body = json.dumps([role, [(m.type, stable_text(_text(m.content))) for m in messages]])
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _reply(raw: AIMessage) -> dict[str, Any]:
    return {
        "content": redact(_text(raw.content)[:_MAX_RECORDED_CHARS]),
        "tool_calls": [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                       for c in raw.tool_calls],
        "invalid_tool_calls": [{k: c.get(k) for k in ("name", "args", "id", "error")}
                               for c in raw.invalid_tool_calls],
    }


def reply_text(raw: AIMessage) -> str:
    """What the model said, wherever it said it: content, or tool-call arguments."""
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"])
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    content = raw.content
    if isinstance(content, list):
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _usage(raw: AIMessage) -> tuple[int, int]:
    usage: dict[str, Any] = dict(raw.usage_metadata or {})
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def _error(exc: BaseException) -> str:
    return redact(f"{type(exc).__name__}: {str(exc)[:300]}")


class StreamInterruptedError(LLMCallError):
    """A streamed reply stopped before its end (the connection dropped mid-stream)."""


# ------------------------------------------------------------------ limits

def run_spend(calls: list[LLMCall], turn: int) -> tuple[int, int]:
    """LLM calls and tokens recorded so far for the run serving request ``turn``."""
    mine = [c for c in calls if c.turn == turn]
    return len(mine), sum(c.prompt_tokens + c.completion_tokens for c in mine)


def _check_budget(context: Context, role: str, calls: list[LLMCall],
                  spent: tuple[int, int]) -> None:
    used_calls = spent[0] + len(calls)
    used_tokens = spent[1] + sum(c.prompt_tokens + c.completion_tokens for c in calls)
    if used_calls >= context.max_llm_calls:
        raise LLMBudgetError(
            f"the run has made {used_calls} LLM calls, its limit (max_llm_calls = "
            f"{context.max_llm_calls}); the {role} was not asked. Raise the limit with "
            "HUGGINGGPT_MAX_LLM_CALLS if the run needs more")
    if used_tokens >= context.max_llm_tokens:
        raise LLMBudgetError(
            f"the run has used {used_tokens} LLM tokens, its limit (max_llm_tokens = "
            f"{context.max_llm_tokens}); the {role} was not asked. Raise the limit with "
            "HUGGINGGPT_MAX_LLM_TOKENS if the run needs more")


# ------------------------------------------------------------------ the call

_TRIES_PER_ENDPOINT = 2


def _attempts(config: RoutingConfig, role: str, need: int, tokens: int) -> Iterator[Endpoint]:
    """The endpoints to try for one call, in turn. The router ranks again after each
    failure, with what the failure taught it: an endpoint that failed fast (an HTTP 500)
    may still be the quickest way to an answer, one that timed out no longer is; each is
    tried at most twice. The naive strategies try each endpoint once, in their order."""
    if config.strategy != "router":
        yield from ROUTER.order(config, role, need, tokens)
        return
    tried: dict[str, int] = {}
    # a lone endpoint's retries are its own (max_retries), not the router's
    tries = _TRIES_PER_ENDPOINT if len(config.for_role(role)) > 1 else 1
    while True:
        left = [e for e in ROUTER.order(config, role, need, tokens)
                if tried.get(e.name, 0) < tries]
        if not left:
            return
        tried[left[0].name] = tried.get(left[0].name, 0) + 1
        yield left[0]


def complete(
    context: Context,
    role: Role,
    messages: list[BaseMessage],
    *,
    calls: list[LLMCall],
    need: int = 1,
    tokens: int = 100,
    schema: dict[str, Any] | None = None,
    turn: int = 0,
    spent: tuple[int, int] = (0, 0),
) -> AIMessage:
    """One LLM call for ``role``: routed, failed over, and recorded in ``calls``.

    Args:
        need: the capability tier the call needs (:func:`graph.routing.tier_needed`).
        tokens: the predicted length of the reply (:func:`graph.routing.predicted_tokens`).
        schema: a JSON schema for structured output (the reply's tool call or JSON).
        turn: which request on the thread this call serves (for the trace and replay).
        spent: LLM calls and tokens the run used before this node (:func:`run_spend`);
            with this node's ``calls`` they are held to the run's limits.

    Returns:
        The raw reply; with a ``schema`` the caller parses it (tool call or content).

    Raises:
        LLMNotConfiguredError: no endpoint for the role, or an invalid configuration.
        LLMBudgetError: the run has used its ``max_llm_calls`` or ``max_llm_tokens``.
        LLMCallError: every endpoint failed (the message lists each failure), or one of
            ``LLM_CALL_ERRORS`` when the role has a single endpoint.
    """
    digest = request_digest(role, messages)
    _check_budget(context, role, calls, spent)
    if context.replay is not None:
        return context.replay.reply(role, digest, messages, calls, turn)
    try:
        config = routing_config(context)
    except ConfigError as exc:
        raise LLMNotConfiguredError(str(exc)) from None
    endpoints = config.for_role(role) if config else []
    if config is None or not endpoints:
        raise LLMNotConfiguredError(NOT_CONFIGURED_HELP)

    predicted = ROUTER.predict(role, tokens)
    failures: list[tuple[Endpoint, BaseException]] = []
    for attempt, endpoint in enumerate(_attempts(config, role, need, predicted), 1):
        if attempt > 1:
            _check_budget(context, role, calls, spent)
        record: dict[str, Any] = {"role": role, "llm": endpoint.label, "endpoint": endpoint.name,
                  "tier": endpoint.tier, "need": need, "turn": turn, "attempt": attempt,
                  "digest": digest, "request": recorded_request(messages), "at": time.time()}
        llm = _client(endpoint, context, len(endpoints) > 1)
        runnable: Any = llm
        if schema is not None:
            runnable = llm.with_structured_output(
                schema, method=context.structured_output, include_raw=True)
        timer = _Timer()
        # the caller's config (LangSmith run tree, graph streaming) plus the timer
        config_ = merge_configs(ensure_config(), {"callbacks": [timer]})
        ticket = ROUTER.begin(endpoint, predicted)
        started = time.monotonic()
        try:
            out = runnable.invoke(messages, config=config_)
            raw = cast(AIMessage, out["raw"] if schema is not None else out)
            if endpoint.streams and not raw.response_metadata.get("finish_reason"):
                raise StreamInterruptedError(
                    "the endpoint closed the stream before the reply ended")
        except Exception as exc:
            latency = time.monotonic() - started
            ROUTER.failed(ticket, config, _error(exc))
            calls.append(LLMCall(**record, ok=False, error=_error(exc),
                                 latency_s=round(latency, 4)))
            if not isinstance(exc, LLM_CALL_ERRORS):
                raise  # a bug, not an endpoint failure
            failures.append((endpoint, exc))
            continue
        latency = time.monotonic() - started
        raw = _as_streamed(raw, timer)
        ttft = (timer.first - started) if timer.first is not None else None
        prompt_tokens, completion_tokens = _usage(raw)
        ROUTER.succeeded(ticket, role=role, ttft_s=ttft, completion_tokens=completion_tokens,
                         latency_s=latency)
        calls.append(LLMCall(
            **record, ok=True, prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, latency_s=round(latency, 4),
            ttft_s=round(ttft, 4) if ttft is not None else None,
            cost=endpoint.cost(prompt_tokens, completion_tokens), reply=_reply(raw),
        ))
        return raw
    names = {e.name for e, _ in failures}
    final = failures[-1][1] if len(names) == 1 else LLMCallError(
        f"all {len(names)} endpoints failed ({len(failures)} attempts): "
        + "; ".join(f"{e.name}: {_error(exc)}" for e, exc in failures))
    # what the run is told, so that a replay tells it the same
    calls[-1] = calls[-1].model_copy(update={"outcome": describe_llm_error(final, role)})
    raise final
