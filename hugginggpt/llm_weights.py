"""A local LLM's weights (``--llm transformers:REPO``), downloaded on consent before a run.

The planner needs its LLM before any stage could ask, so the question comes first, from
the front door, with the same answers as the experts' downloads (``download``): ``no``
refuses with the command that gets the model and its size; ``ask`` shows what the Hub
says the download costs (size, files, license, gating) and asks; ``yes`` downloads.
A download counts against the run's ``max_download_total_mb``, as a model an expert
needs does. A model already in the cache, or a local folder (``transformers:/path``),
asks nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from hugginggpt.graph.context import Context
from hugginggpt.nodes.responding.advice import said
from hugginggpt.tools.errors import (
    Control,
    Fix,
    HuggingGPTError,
    LimitExceededError,
    TransientToolError,
    setting,
)
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, ModelCard, load_catalog
from hugginggpt.tools.experts.local.download import (
    DownloadError,
    Progress,
    download,
    plan_download,
)
from hugginggpt.tools.experts.local.hub_cache import is_cached, is_hub_id
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.config import ConfigError, routing_config
from hugginggpt.tools.llm.local_chat import repo_of
from hugginggpt.tools.llm.providers import is_local

__all__ = ["LLMWeightsError", "missing_llm_weights", "fetch_llm_weights"]

Ask = Callable[[str], bool]
"""Shown what a download costs (one line), says whether to go ahead."""


class LLMWeightsError(HuggingGPTError):
    """A local LLM's weights are not in the cache and will not be downloaded; the
    message says why and how to get them."""


def _card(repo: str, context: Context) -> ModelCard | None:
    return load_catalog(context.catalog or DEFAULT_CATALOG).llm(repo)


def missing_llm_weights(context: Context) -> list[str]:
    """The Hub models of the run's local LLMs that the cache does not hold."""
    try:
        config = routing_config(context)
    except ConfigError:
        return []  # said where the run starts
    repos = dict.fromkeys(repo_of(e.model) for e in (config.endpoints if config else ())
                          if e.chat is None and is_local(e.model))
    missing = []
    for repo in repos:
        card = _card(repo, context)
        if is_hub_id(repo) and not is_cached(repo, card.revision if card else None):
            missing.append(repo)
    return missing


def _get_it(repo: str, size: str, agree: str, context: Context) -> str:
    """How to get a local LLM's weights, said for the run's caller."""
    return said(Fix(say=f"download it with {{}}{size}, or run with {{}}",
                    controls=[Control(kind="models", name="download", value=repo),
                              setting("download", agree)]), context.caller)


def fetch_llm_weights(context: Context, ask: Ask | None = None,
                      progress: Progress | None = None) -> list[str]:
    """Download the run's missing local LLMs as its ``download`` setting allows;
    returns the models downloaded.

    Args:
        ask: asks the user (``download`` ``ask``); None: nobody to ask, so ``ask``
            refuses, saying how to agree.

    Raises:
        LLMWeightsError: downloads are off, the download was refused, or it failed.
    """
    done = []
    budget = DownloadBudget(int(context.max_download_total_mb * 1024 * 1024))
    for repo in missing_llm_weights(context):
        card = _card(repo, context)
        size = f" ({card.size_mb:g} MB)" if card and card.size_mb else ""
        mode = context.download or "no"
        if mode == "no":
            raise LLMWeightsError(f"the LLM transformers:{repo} is not in the local cache and "
                                  f"downloads are off: {_get_it(repo, size, 'yes|ask', context)}")
        try:
            plan = plan_download(repo, card)
        except (DownloadError, TransientToolError) as exc:
            raise LLMWeightsError(f"the LLM transformers:{repo} cannot be downloaded: "
                                  f"{exc}") from None
        if mode == "ask":
            if ask is None:
                raise LLMWeightsError(
                    f"the LLM transformers:{repo} is not in the local cache and nobody is "
                    f"here to agree to its download: {plan.describe()}; "
                    f"{_get_it(repo, size, 'yes', context)}")
            if not ask(plan.describe()):
                raise LLMWeightsError(f"the download of the LLM transformers:{repo} was "
                                      f"refused: {_get_it(repo, size, 'yes', context)}")
        try:
            download(plan, budget, progress)
        except (DownloadError, TransientToolError, LimitExceededError) as exc:
            raise LLMWeightsError(f"the LLM transformers:{repo} was not downloaded: "
                                  f"{exc}") from None
        done.append(repo)
    return done
