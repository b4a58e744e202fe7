"""Which models the hf-inference backend can call now, and why not the others.

A model mapped to an endpoint URL (a dedicated Inference Endpoint, a TGI server) can be
called whenever huggingface_hub is online. A hub model id goes through Inference
Providers, so it needs a token and a provider that serves the model for the task: the
Hub's ``inferenceProviderMapping``, looked up once per process and kept for a while
(:func:`hugginggpt.tools.experts.hub.serving`). A model no provider serves is no
candidate, so a run never discovers at run time what the Hub already said. The task types
of this project are the Hub's task names, which the mapping uses too.
"""

from __future__ import annotations

from huggingface_hub import constants

from hugginggpt.tools.experts.hf_inference.client import current_config
from hugginggpt.tools.experts.hub import serving

__all__ = ["available", "unavailable_reason"]


def unavailable_reason(task: str | None, model: str) -> str | None:
    """Why ``model`` cannot be called for ``task`` now (None: it can). With no task, any
    task a provider serves it for will do.

    Decided without a request for a model with an endpoint URL; for a hub model, the
    first question per process asks the Hub (``HF_ENDPOINT``) which providers serve it.
    """
    if constants.HF_HUB_OFFLINE:  # huggingface_hub refuses every request, even to a local endpoint
        return "offline: huggingface_hub refuses every request (HF_HUB_OFFLINE is set)"
    config = current_config()
    if model in config.endpoints:
        return None
    from huggingface_hub import get_token  # its module imports httpx: when first asked

    if get_token() is None:
        return "no Hugging Face token (set HF_TOKEN or run `hf auth login`)"
    found = serving(model)
    if found.error is not None:
        return found.error
    providers = (found.providers(task) if task is not None
                 else sorted({m.provider for m in found.mappings if m.status == "live"}))
    if not providers:
        return f"no inference provider serves it{f' for {task}' if task else ''}"
    wanted = config.provider
    if wanted and wanted != "auto" and wanted not in providers:
        return (f"provider {wanted} does not serve it{f' for {task}' if task else ''} "
                f"(served by {', '.join(providers)})")
    return None


def available(model: str, task: str | None = None) -> bool:
    """Whether ``model`` can be called for ``task`` now (see :func:`unavailable_reason`)."""
    return unavailable_reason(task, model) is None
