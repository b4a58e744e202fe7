"""A chat model run in this process: ``transformers:REPO`` (no server, no key).

The model is LangChain's ``ChatHuggingFace`` over a ``HuggingFacePipeline`` built from
the model's snapshot in the Hugging Face cache (or a local folder,
``transformers:/path``). Its weights get there as the experts' do, on consent: the front
door asks before a run (size, license, ``--download ask|yes|no``) and
``hugginggpt models download REPO`` fetches them; this module never downloads. A
pipeline is loaded once per process and model.

A structured request (a plan, the selector's choice, a JSON answer) is generated under
a grammar (:mod:`.grammar`): each call gets a fresh xgrammar logits processor through
``pipeline_kwargs``, so the reply parses whatever the model. Every call is bounded by
the run's LLM timeout inside ``generate`` itself (``max_time``). Importing this module
imports neither torch nor transformers.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggpt.tools.errors import Control, Fix, LLMNotConfiguredError, setting
from hugginggpt.tools.llm.grammar import bounded, logits_processor
from hugginggpt.tools.llm.providers import LOCAL_PREFIX

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable

__all__ = ["local_chat", "constrained", "weights_folder", "MAX_NEW_TOKENS", "repo_of",
           "SAMPLING"]

MAX_NEW_TOKENS = 1024
"""Tokens a reply may have (a reply under a plan's grammar ends well before)."""
SAMPLING: dict[str, Any] = {"do_sample": False}
"""How every call picks its tokens: greedily, as a provider at temperature 0 does. (A
random model, greedy, writes the same reply to every request; the tests and the
benchmark sample, to see many replies.)"""

_LOADED: dict[str, BaseChatModel] = {}
_LOCK = threading.Lock()


def repo_of(model: str) -> str:
    """``Qwen/Qwen3-1.7B`` for ``transformers:Qwen/Qwen3-1.7B``."""
    return model[len(LOCAL_PREFIX):] if model.startswith(LOCAL_PREFIX) else model


def weights_folder(repo: str) -> Path:
    """The folder the model loads from: a local folder as it is, else the model's
    snapshot in the Hugging Face cache.

    Raises:
        LLMNotConfiguredError: the model is not in the cache (nothing is downloaded
            here); the message says how to get it.
    """
    if repo.startswith("/"):
        folder = Path(repo)
        if not (folder / "config.json").is_file():
            raise LLMNotConfiguredError(f"the LLM transformers:{repo} has no config.json")
        return folder
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(repo, "config.json")
    found = Path(config).parent if isinstance(config, str) else None
    if found is None:
        raise LLMNotConfiguredError(
            f"the LLM transformers:{repo} is not in the local cache", fix=Fix(
                say="download it with {}, or run with {}",
                controls=[Control(kind="models", name="download", value=repo),
                          setting("download", "yes|ask")]))
    return found


def local_chat(model: str) -> BaseChatModel:
    """The chat model for ``transformers:REPO``, loaded once per process.

    Raises:
        LLMNotConfiguredError: see :func:`weights_folder`.
    """
    repo = repo_of(model)
    with _LOCK:
        if repo not in _LOADED:
            _LOADED[repo] = _load(weights_folder(repo))
        return _LOADED[repo]


def _load(folder: Path) -> BaseChatModel:
    from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline

    pipeline = HuggingFacePipeline.from_model_id(
        str(folder), task="text-generation", model_kwargs={"dtype": "auto"},
        pipeline_kwargs={"return_full_text": False, "max_new_tokens": MAX_NEW_TOKENS})
    return ChatHuggingFace(llm=pipeline, model_id=str(folder))


def constrained(chat: BaseChatModel, schema: dict[str, Any] | None, grammar: dict[str, Any]
                | None, timeout_s: float) -> Runnable[Any, Any]:
    """``chat`` for one call: under the grammar of ``grammar`` (a bounded schema), else
    of ``schema`` bounded by :func:`~.grammar.bounded`, else free; stopped after
    ``timeout_s`` either way.

    Raises:
        GrammarUnavailableError: a schema without xgrammar installed.
    """
    options: dict[str, Any] = {"max_time": max(timeout_s, 0.1), **SAMPLING}
    target = grammar if grammar is not None else bounded(schema) if schema is not None \
        else None
    if target is not None:
        pipe = chat.llm.pipeline  # type: ignore[attr-defined]
        vocab = int(getattr(pipe.model.config, "vocab_size", len(pipe.tokenizer)))
        options["logits_processor"] = logits_processor(pipe.tokenizer, vocab, target)
    return chat.bind(pipeline_kwargs=options)
