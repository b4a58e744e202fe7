"""The OpenAI chat API over the served graph, so the ``openai`` clients and the chat
front-ends built on them (Open WebUI, LibreChat, ...) can use it.

- ``GET /v1/models``: the server's assistants, each a "model" (the graph's own by its
  graph id, ``hugginggpt``; others by assistant id).
- ``POST /v1/chat/completions``: a run on a thread, answered as a chat completion
  (``stream: true``: server-sent ``chat.completion.chunk`` events, then ``[DONE]``). The
  messages are the thread's input as they are: a user message's ``image_url``,
  ``input_audio`` and ``file`` parts are its inputs. The answer's text is followed by a
  Markdown link for each output image, recording or video (the ``/artifacts`` route, for
  the same API key). A new thread is made for each call, holding the whole conversation
  sent; send ``X-Thread-Id`` (every response carries one) to go on with a thread, and
  then only the new messages.

Errors are OpenAI's shape, ``{"error": {"message", "type", "code"}}``, with the status a
client expects (400, 401, 404, 502).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from hugginggpt.server.auth import OWNER
from hugginggpt.server.owners import identity, owned_thread
from hugginggpt.tools.artifacts import named_absolutely
from hugginggpt.tools.blocks import MEDIA_KINDS, message_text

__all__ = ["models", "chat_completions", "reply_content"]

_ROLES = {"user": "human", "assistant": "ai", "system": "system", "developer": "system"}
_CHUNK_CHARS = 80


def _error(status: int, message: str, kind: str = "invalid_request_error",
           code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": code,
                                   "param": None}}, status_code=status)


def _model_id(assistant: dict[str, Any]) -> str:
    system = (assistant.get("metadata") or {}).get("created_by") == "system"
    return str(assistant["graph_id"] if system else assistant["assistant_id"])


async def _assistants() -> list[dict[str, Any]]:
    from langgraph_sdk import get_client

    return [dict(a) for a in await get_client().assistants.search(limit=100)]


async def models(request: Request) -> Response:
    """The assistants, as OpenAI's model list."""
    if identity(request) is None:
        return _error(401, "no caller identity: the server's auth is not applied to its "
                      "routes (http.enable_custom_route_auth)", "authentication_error")
    data = []
    for assistant in await _assistants():
        created = str(assistant.get("created_at") or "")
        data.append({"id": _model_id(assistant), "object": "model", "owned_by": "hugginggpt",
                     "created": _timestamp(created), "name": assistant.get("name"),
                     "description": assistant.get("description")})
    return JSONResponse({"object": "list", "data": data})


def _timestamp(iso: str) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def _messages(items: list[Any]) -> list[dict[str, Any]]:
    """OpenAI's messages as LangChain's message dicts (their content kept as sent: the
    graph reads OpenAI's parts); tool messages and empty ones are left out.

    Raises:
        ValueError: a message that is not ``{"role", "content"}``.
    """
    converted = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or item.get("role") not in (*_ROLES, "tool"):
            raise ValueError(f"messages[{number - 1}] needs a role of user, assistant or "
                             "system, and a content")
        content = item.get("content")
        if item["role"] == "tool" or content in (None, "", []):
            continue
        if not isinstance(content, (str, list)):
            raise ValueError(f"messages[{number - 1}].content must be text or a list of parts")
        converted.append({"type": _ROLES[item["role"]], "content": content})
    return converted


def _since_last_answer(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages after the last assistant message (what a thread does not have yet)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["type"] == "ai":
            return messages[index + 1:]
    return messages


def _absolute(url: str, request: Request) -> str:
    return str(request.base_url).rstrip("/") + url if url.startswith("/") else url


def reply_content(values: dict[str, Any], request: Request) -> tuple[str, list[str]]:
    """The run's answer as chat text, with a Markdown link per output file, and those
    links' URLs. A file the text names by the server's own path (``/artifacts/...``) is
    named by its absolute URL, as its link is."""
    messages = values.get("messages") or []
    last = messages[-1] if messages else {}
    if not isinstance(last, dict) or last.get("type") != "ai":
        text = str(values.get("response") or values.get("abort_reason") or "")
        if values.get("status") == "waiting":
            text = ("The plan is waiting for approval; answer it on the thread (Studio, "
                    "the web UI or langgraph_sdk's runs with command={'resume': ...}).")
        return text, []
    content = last.get("content")
    text = message_text(content)
    urls, links = [], []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") in MEDIA_KINDS and block.get("url"):
            url = _absolute(str(block["url"]), request)
            text = named_absolutely(text, str(block["url"]), url)
            urls.append(url)
            links.append(f"![{block['type']}]({url})" if block["type"] == "image"
                         else f"[{block['type']}: {url.rsplit('/', 1)[-1]}]({url})")
    return "\n\n".join([text, *links]) if links else text, urls


def _usage(values: dict[str, Any]) -> dict[str, int]:
    calls = [c for c in values.get("llm_calls") or [] if isinstance(c, dict)]
    turn = max((c.get("turn", 0) for c in calls), default=0)
    prompt = sum(c.get("prompt_tokens", 0) for c in calls if c.get("turn", 0) == turn)
    completion = sum(c.get("completion_tokens", 0) for c in calls if c.get("turn", 0) == turn)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


async def chat_completions(request: Request) -> Response:
    """A chat completion: one run of the graph on a thread."""
    from langgraph_sdk import get_client

    who = identity(request)
    if who is None:
        return _error(401, "no caller identity: the server's auth is not applied to its "
                      "routes (http.enable_custom_route_auth)", "authentication_error")
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, "the request body is not JSON")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) \
            or not body["messages"]:
        return _error(400, "give 'messages', a list of {role, content}", code="messages")
    try:
        messages = _messages(body["messages"])
    except ValueError as exc:
        return _error(400, str(exc), code="messages")
    model = str(body.get("model") or "hugginggpt")
    assistant = next((a for a in await _assistants()
                      if model in (_model_id(a), a["assistant_id"], a.get("name"))), None)
    if assistant is None:
        return _error(404, f"the model {model!r} does not exist: GET /v1/models lists them",
                      code="model_not_found")

    client = get_client()
    thread_id = request.headers.get("x-thread-id")
    if thread_id:
        if await owned_thread(request, thread_id) is None:
            return _error(404, f"thread {thread_id!r} not found", code="thread_not_found")
        messages = _since_last_answer(messages)
    else:
        thread_id = str((await client.threads.create(metadata={OWNER: who}))["thread_id"])
    if not messages or messages[-1]["type"] != "human":
        return _error(400, "the last message must be the user's request", code="messages")

    graph_input: dict[str, Any] = {"messages": messages}
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    headers = {"X-Thread-Id": thread_id}
    created = int(time.time())
    if body.get("stream"):
        return StreamingResponse(
            _stream(client, thread_id, assistant["assistant_id"], graph_input, request,
                    completion_id, model, created, {OWNER: who}),
            media_type="text/event-stream", headers=headers)
    try:
        values = await client.runs.wait(thread_id, assistant["assistant_id"],
                                        input=graph_input, metadata={OWNER: who})
    except Exception as exc:  # the SDK raises the run's failure as a plain Exception
        return _error(502, f"the run failed: {exc}", "server_error")
    if not isinstance(values, dict):
        return _error(502, "the run returned no state", "server_error")
    text, urls = reply_content(values, request)
    return JSONResponse({
        "id": completion_id, "object": "chat.completion", "created": created,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": _usage(values),
        "hugginggpt": {"thread_id": thread_id, "status": values.get("status"),
                       "artifacts": urls},
    }, headers=headers)


def _progress(event: dict[str, Any]) -> str:
    words = [str(event.get(key)) for key in ("stage", "task", "id", "event", "status")
             if event.get(key) is not None]
    return " ".join(words).replace("\n", " ")[:200] or "progress"


def _chunk(completion_id: str, model: str, created: int, delta: dict[str, Any],
           finish: str | None = None, **extra: Any) -> str:
    payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
               "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(payload)}\n\n"


async def _stream(client: Any, thread_id: str, assistant_id: str, graph_input: Any,
                  request: Request, completion_id: str, model: str, created: int,
                  metadata: dict[str, str]) -> AsyncIterator[str]:
    """The run's answer as chunks: the role at once, the text when the run ends (the
    graph writes its answer in one piece), then the end. In between, each stage and
    subtask event is an SSE comment line (``: plan start``), which OpenAI clients skip
    and which keeps proxies from closing a long run's connection."""
    yield _chunk(completion_id, model, created, {"role": "assistant", "content": ""})
    values: dict[str, Any] = {}
    failure = None
    try:
        async for part in client.runs.stream(thread_id, assistant_id, input=graph_input,
                                             stream_mode=["values", "custom"],
                                             metadata=metadata):
            if part.event == "values" and isinstance(part.data, dict):
                values = part.data
            elif part.event == "custom" and isinstance(part.data, dict):
                # progress as an SSE comment: clients skip it, the connection stays alive
                yield f": {_progress(part.data)}\n\n"
            elif part.event == "error":
                failure = part.data
    except Exception as exc:  # the connection to the run broke
        failure = str(exc)
    if failure is not None:
        message = failure.get("message") if isinstance(failure, dict) else failure
        text, urls = f"The run failed: {message}", list[str]()
    else:
        text, urls = reply_content(values, request)
    for start in range(0, len(text), _CHUNK_CHARS):
        yield _chunk(completion_id, model, created, {"content": text[start:start + _CHUNK_CHARS]})
    yield _chunk(completion_id, model, created, {}, "stop", usage=_usage(values),
                 hugginggpt={"thread_id": thread_id, "status": values.get("status"),
                             "artifacts": urls})
    yield "data: [DONE]\n\n"
