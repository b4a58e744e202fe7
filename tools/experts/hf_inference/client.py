"""Where the hf-inference backend sends a request, and what its failures mean.

The configuration (:func:`configure`, overridden per run by
:func:`~hugginggpt.tools.experts.registry.backend_settings`), which token and billing
header go to which URL, and :func:`_call`: one request on a fresh
:class:`huggingface_hub.InferenceClient` (or, on the async path, an
:class:`~huggingface_hub.AsyncInferenceClient` request on the caller's loop, see
:mod:`.on_loop`), its failures turned into this project's typed errors, so that the
executor can tell a retry (transient) from a fallback to the next model (permanent). The
adapters in :mod:`hugginggpt.tools.experts.hf_inference.tools` make every request
through :func:`_call`.

Failures are classified by huggingface_hub's own types: its HTTP errors, its
``InferenceTimeoutError``, and the transport errors of the HTTP library it uses, taken
from ``huggingface_hub.utils.httpx`` (httpx today, httpx2 in huggingface_hub 2.x), so an
upgrade keeps timeouts and dropped connections retried. They are imported at the first
failure: ``huggingface_hub.errors`` imports httpx (a quarter of a second), which a run
that never calls this backend need not pay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hugginggpt.tools.addresses import is_hf_host
from hugginggpt.tools.errors import ToolExecutionError, ToolTimeoutError, TransientToolError
from hugginggpt.tools.experts.hf_inference.on_loop import Requests, current_requests
from hugginggpt.tools.experts.registry import backend_settings

if TYPE_CHECKING:  # the clients' module takes about 0.7 s to import: on first request
    from huggingface_hub import InferenceClient
    from huggingface_hub.utils import httpx as hub_httpx

__all__ = [
    "HF_INFERENCE_BACKEND",
    "HFInferenceConfig",
    "TRANSIENT_STATUSES",
    "configure",
    "current_config",
]

HF_INFERENCE_BACKEND = "hf-inference"

T = TypeVar("T")

_NO_TOKEN = "no-token-for-third-party-endpoints"

TRANSIENT_STATUSES = frozenset({408, 429, 502, 503, 504})
"""HTTP statuses that may pass on their own: worth a retry on the same model."""


@dataclass(frozen=True)
class HFInferenceConfig:
    """Where the backend sends requests.

    Attributes:
        endpoints: model id -> URL of a dedicated Inference Endpoint or TGI server.
        provider: the Inference Provider for models without an endpoint URL (None:
            huggingface_hub's default, ``"auto"``).
        timeout_s: per-request timeout of the HTTP client.
        bill_to: the Hugging Face organisation billed for the requests (huggingface_hub's
            ``bill_to``, the ``X-HF-Bill-To`` header); sent only where the token goes.
    """

    endpoints: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    provider: str | None = None
    timeout_s: float = 60.0
    bill_to: str | None = None


_config = HFInferenceConfig()


def configure(
    endpoints: Mapping[str, str] | None = None,
    provider: str | None = None,
    timeout_s: float = 60.0,
    bill_to: str | None = None,
) -> HFInferenceConfig:
    """Replace the backend's configuration (process-wide) and return it.

    Args:
        endpoints: model id -> endpoint URL, for dedicated endpoints and TGI servers.
        provider: the Inference Provider for hub model ids (``"hf-inference"``,
            ``"together"``, ...); None lets huggingface_hub choose.
        timeout_s: per-request timeout in seconds.
        bill_to: the organisation to bill (its name on the Hub); None bills the token's
            owner.
    """
    global _config
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s}")
    _config = HFInferenceConfig(
        endpoints=MappingProxyType(dict(endpoints or {})), provider=provider,
        timeout_s=timeout_s, bill_to=bill_to)
    return _config


def current_config() -> HFInferenceConfig:
    """The configuration the tools use now: the process-wide one from :func:`configure`,
    overridden by the current run's settings (``endpoints``, ``provider``, ``timeout_s``,
    ``bill_to`` from :func:`hugginggpt.tools.experts.registry.backend_settings`)."""
    run = backend_settings(HF_INFERENCE_BACKEND)
    if not run:
        return _config
    return HFInferenceConfig(
        endpoints=MappingProxyType({**_config.endpoints, **run.get("endpoints", {})}),
        provider=run.get("provider") or _config.provider,
        timeout_s=float(run.get("timeout_s") or _config.timeout_s),
        bill_to=run.get("bill_to") or _config.bill_to,
    )


def _token_for(url: str) -> str | None:
    """The user's Hugging Face token goes only to Hugging Face hosts (None: the client's
    default token); a third-party server gets a placeholder, never the user's token
    (the client insists on sending some token)."""
    return None if is_hf_host(url) else _NO_TOKEN


# --- the client and its errors -----------------------------------------------------------


def _target(model: str) -> str:
    config = current_config()
    url = config.endpoints.get(model)
    return f"endpoint {url}" if url else f"{model} via provider {config.provider or 'auto'}"


def _server_message(response: hub_httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300]
    if isinstance(body, dict):
        error = body.get("error", body.get("message", body))
        if isinstance(error, dict):
            error = error.get("message", error)
        message = "; ".join(map(str, error)) if isinstance(error, list) else str(error)
        if (eta := body.get("estimated_time")) is not None:
            message += f" (estimated time: {eta}s)"
        return message[:300]
    return str(body)[:300]


def _http_error(status: int, message: str, model: str) -> ToolExecutionError:
    where = _target(model)
    detail = f": {message}" if message else ""
    if status == 503:
        return TransientToolError(f"{where} is unavailable or the model is loading (503){detail}")
    if status == 429:
        return TransientToolError(f"{where} is rate-limited (429){detail}")
    if status in TRANSIENT_STATUSES:
        return TransientToolError(f"{where} is temporarily unavailable (HTTP {status}){detail}")
    if status == 404:
        return ToolExecutionError(
            f"model not found: {where} (404): the model does not exist or is not deployed "
            f"there{detail}")
    if status in (401, 403):
        return ToolExecutionError(
            f"not authorised for {where} (HTTP {status}): check HF_TOKEN and the model's "
            f"access terms{detail}")
    if status in (400, 413, 422):
        return ToolExecutionError(f"bad input rejected by {where} (HTTP {status}){detail}")
    return ToolExecutionError(f"{where} failed (HTTP {status}){detail}")


def _translate(exc: Exception, model: str) -> ToolExecutionError | None:
    """The typed error for a failure of the client, or None for an unexpected one."""
    from huggingface_hub.errors import (
        HfHubHTTPError,
        InferenceTimeoutError,
        OfflineModeIsEnabled,
        OverloadedError,
        TextGenerationError,
    )
    from huggingface_hub.errors import ValidationError as TGIValidationError
    from huggingface_hub.utils import httpx as hub_httpx  # httpx2 in huggingface_hub 2.x

    timeout = current_config().timeout_s
    if isinstance(exc, OfflineModeIsEnabled):
        return ToolExecutionError(
            "huggingface_hub is in offline mode (HF_HUB_OFFLINE) and refuses every request, "
            "even to a local endpoint")
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return _http_error(exc.response.status_code, _server_message(exc.response), model)
    if isinstance(exc, TextGenerationError):  # TGI's typed errors
        if isinstance(exc.__cause__, HfHubHTTPError) and exc.__cause__.response is not None:
            return _http_error(exc.__cause__.response.status_code, str(exc), model)
        if isinstance(exc, OverloadedError):
            return TransientToolError(f"{_target(model)} is overloaded: {exc}")
        if isinstance(exc, TGIValidationError):
            return ToolExecutionError(f"bad input rejected by {_target(model)}: {exc}")
        return ToolExecutionError(f"{_target(model)} failed to generate: {exc}")
    if isinstance(exc, (InferenceTimeoutError, TimeoutError, hub_httpx.TimeoutException)):
        return ToolTimeoutError(f"{_target(model)} sent no reply within {timeout:g}s")
    if isinstance(exc, hub_httpx.TransportError):  # refused, reset, dropped mid-reply
        return TransientToolError(f"cannot reach {_target(model)}: {type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError):  # the client's own checks and response parsing
        return ToolExecutionError(f"{_target(model)}: invalid request or reply: {exc}")
    return None


@contextmanager
def _typed_errors(model: str) -> Iterator[None]:
    """Turn the client's failures into this project's typed errors."""
    try:
        yield
    except Exception as exc:
        typed = _translate(exc, model)
        if typed is None:
            raise
        raise typed from exc


def _client_args(model: str, config: HFInferenceConfig) -> dict[str, Any]:
    """The client's arguments for ``model``: its endpoint URL (the token and the billing
    header only for Hugging Face hosts), else the hub model id with the provider."""
    url = config.endpoints.get(model)
    if url:
        to_hf = is_hf_host(url)
        return {"model": url, "timeout": config.timeout_s, "token": _token_for(url),
                "bill_to": config.bill_to if to_hf else None}
    return {"model": model, "provider": cast(Any, config.provider),
            "timeout": config.timeout_s, "bill_to": config.bill_to}


@dataclass(frozen=True)
class Adapter:
    """One task type's tool in this backend: the function, the ``InferenceClient``
    method it calls, and the task huggingface_hub looks the model's provider up for."""

    tool: Callable[..., Any]
    method: str
    hub_task: str


ADAPTERS: dict[str, Adapter] = {}
"""Task type -> its adapter, as :mod:`.tools` registers them (:func:`adapter`)."""


def adapter(task: str, method: str | None = None, hub_task: str | None = None
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as this backend's tool for ``task``; it calls the
    client's ``method`` (the task's name in snake case unless given), whose provider
    look-up is for ``hub_task`` (the method's name with hyphens unless given)."""
    method = method or task.replace("-", "_")

    def register(tool: Callable[..., Any]) -> Callable[..., Any]:
        ADAPTERS[task] = Adapter(tool, method, hub_task or method.replace("_", "-"))
        return tool
    return register


def _hub_task(method: str) -> str:
    return next((a.hub_task for a in ADAPTERS.values() if a.method == method),
                method.replace("_", "-"))


class _OnTheLoop:
    """Stands in for an ``InferenceClient`` in an adapter on the async path: each method
    call is an ``AsyncInferenceClient`` request made on the caller's loop, and the
    adapter's thread waits for it.

    What huggingface_hub does synchronously before a request (it looks a hub model's
    provider mapping up with a blocking HTTP call, cached per process) is done here, in
    the adapter's thread, so the loop never blocks on it.
    """

    def __init__(self, client_args: dict[str, Any], requests: Requests) -> None:
        self._args = client_args
        self._requests = requests

    def __getattr__(self, method: str) -> Callable[..., Any]:
        from huggingface_hub import AsyncInferenceClient

        if not callable(getattr(AsyncInferenceClient, method, None)):
            raise AttributeError(f"AsyncInferenceClient has no method {method!r}")

        def request(*args: Any, **kwargs: Any) -> Any:
            self._resolve_provider(method)
            return self._requests.run(self._request(method, args, kwargs))

        return request

    def _resolve_provider(self, method: str) -> None:
        model = str(self._args["model"])
        if model.startswith(("http://", "https://")):
            return
        from huggingface_hub.inference._providers import get_provider_helper

        task = _hub_task(method)
        helper = get_provider_helper(self._args.get("provider"), task=task, model=model)
        prepare = getattr(helper, "_prepare_mapping_info", None)  # huggingface_hub 1.x
        if prepare is not None:
            prepare(model)

    async def _request(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from huggingface_hub import AsyncInferenceClient

        async with AsyncInferenceClient(**self._args) as client:
            return await getattr(client, method)(*args, **kwargs)


def _call(model: str, run: Callable[[InferenceClient], T]) -> T:
    """Run one request on a fresh client, closed afterwards (it keeps the responses it
    streamed until then). On the async path (:func:`.on_loop.on_the_loop`) the request
    is made on the caller's loop, so cancelling the call cancels it."""
    from huggingface_hub import InferenceClient

    config = current_config()
    client_args = _client_args(model, config)
    with _typed_errors(model):
        requests = current_requests()
        if requests is not None:
            return run(cast(InferenceClient, _OnTheLoop(client_args, requests)))
        with InferenceClient(**client_args) as client:
            return run(client)
