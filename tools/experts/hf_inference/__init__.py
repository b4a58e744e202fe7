"""The hf-inference backend: Hugging Face models behind an HTTP endpoint.

Three kinds of endpoint, all through :class:`huggingface_hub.InferenceClient`:

- **Inference Providers**: a hub model id, routed by huggingface_hub to a provider
  (``provider`` in :func:`configure`, huggingface_hub's ``"auto"`` when unset). The token
  is huggingface_hub's own: ``HF_TOKEN`` or the one ``hf auth login`` saved.
- **Dedicated Inference Endpoints** and **self-hosted TGI servers**: a model id mapped to
  the endpoint's URL with :func:`configure`; the client posts to that exact URL.

One tool per task type the installed client supports. Failures are typed: a model that
is loading (503), rate limits (429), gateway errors, dropped connections and timeouts
are :class:`~hugginggpt.tools.errors.TransientToolError` (the executor retries them with backoff);
a missing model (404), a refused token (401/403) and rejected input (400/422) are
:class:`~hugginggpt.tools.errors.ToolExecutionError` (the executor moves on to the next model).

Nothing here reads the environment; whoever builds a run calls :func:`configure`.

Four modules: :mod:`.on_loop` (the async path: requests on the caller's event loop,
cancelled with the call), :mod:`.client` (the configuration, the client and its typed
errors) over it, :mod:`.providers` (which models can be called now: an endpoint URL, or a
token and a provider that serves the model for the task) and :mod:`.tools` (one adapter
per task type, each registered with its task type and client method by
``@adapter(...)`` where it is defined) over them. This package registers each adapter
in its async form (:func:`.on_loop.on_the_loop`), so the executor awaits it and its
timeout cancels the request; the adapters themselves stay plain functions, callable
directly with the sync client.
"""

from __future__ import annotations

import functools

from hugginggpt.tools.experts.hf_inference import tools  # noqa: F401  (adapters register)
from hugginggpt.tools.experts.hf_inference.client import (
    ADAPTERS,
    HF_INFERENCE_BACKEND,
    HFInferenceConfig,
    configure,
    current_config,
)
from hugginggpt.tools.experts.hf_inference.on_loop import on_the_loop
from hugginggpt.tools.experts.hf_inference.providers import available, unavailable_reason
from hugginggpt.tools.experts.registry import Tool, register_tool
from hugginggpt.tools.redact import install_log_redaction

__all__ = [
    "HF_INFERENCE_BACKEND",
    "HFInferenceConfig",
    "configure",
    "current_config",
    "available",
    "unavailable_reason",
    "REGISTERED_TASKS",
]


@functools.cache
def _client_methods() -> frozenset[str]:
    """The installed ``InferenceClient``'s methods (its module takes about 0.7 s to
    import, so it is asked only when a model of this backend could otherwise run)."""
    from huggingface_hub import InferenceClient

    return frozenset(m for m in dir(InferenceClient) if callable(getattr(InferenceClient, m)))


def _why_not(task: str, method: str, model: str) -> str | None:
    reason = unavailable_reason(task, model)
    if reason is None and method not in _client_methods():
        return f"the installed huggingface_hub's InferenceClient has no {method}"
    return reason


def _register() -> dict[str, Tool]:
    return {
        task: register_tool(on_the_loop(a.tool), task, backend=HF_INFERENCE_BACKEND,
                            unavailable=functools.partial(_why_not, task, a.method),
                            name=f"{HF_INFERENCE_BACKEND}:{task}", risk="network")
        for task, a in ADAPTERS.items()
    }


REGISTERED_TASKS: tuple[str, ...] = tuple(_register())
"""The task types this backend has an adapter for; one whose client method the installed
huggingface_hub lacks is registered but never available (:func:`_why_not`)."""


install_log_redaction()  # huggingface_hub's loggers carry request URLs and errors
