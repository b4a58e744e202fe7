"""Which (model, backend) pairs can run a task type now, and why none can.

A model is a candidate on a backend when a tool registered there serves it and says it
can run it now (weights cached, endpoint configured, ...). Models come from the catalog
and from the tools themselves (engines shipped in packages bring their own cards).
"""

from __future__ import annotations

from collections.abc import Callable

from hugginggpt.tools.errors import Fix
from hugginggpt.tools.experts.catalog import Catalog, ModelCard
from hugginggpt.tools.experts.dry_run import DRY_RUN_BACKEND
from hugginggpt.tools.experts.llm import LLM_BACKEND, unavailable_reason
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.experts.local.hub_cache import download_hint as _local_download_hint
from hugginggpt.tools.experts.registry import ANY_TASK, Tool, missing_extra, registered_tools
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.extras import install_command

__all__ = ["HYBRID_ORDER", "MODES", "NOT_OFFERED", "check_backend", "backend_order",
           "candidate_cards", "model_cards", "runnable", "explain_unavailable", "availability",
           "reasons", "download_hint"]

HYBRID_ORDER: tuple[str, ...] = ("local", "hf-inference", "llm", "lite")
"""The default preference of ``auto``/``hybrid``; backends that plugins add come last.

- ``local`` first: models on this machine cost nothing per call and keep the data here.
- ``hf-inference`` next: a Hugging Face model made for the task type, which is what
  HuggingGPT is for.
- ``llm`` (the controller LLM doing a text task itself) after the dedicated experts:
  each of its calls spends the run's LLM budget, which the planner and the responder
  need too, and a model made for the task is the better tool where one can run.
- ``lite`` last: where it overlaps with ``llm`` its engines are stand-ins (an extractive
  TextRank summary, VADER's lexicon sentiment, zero-shot by embedding cosine), which an
  LLM does better; ``lite`` stays the offline last resort, and the fallback when the
  LLM fails or the budget is spent. (It serves OCR, embeddings and similarity, which
  ``llm`` does not, so the order costs it nothing there.)"""


NOT_OFFERED = "not one of its models"
"""The reason :func:`reasons` gives for a backend whose tools do not offer the model."""

MODES = ("auto", "hybrid")
"""The backend settings that are not backends: every real backend, preferred in
:data:`HYBRID_ORDER`."""


def check_backend(mode: str) -> str:
    """The backend setting, checked: ``auto``, ``hybrid``, a registered backend
    (``dry-run`` included; plugins register their own) or an order of them such as
    ``lite,hf-inference``, each installed (``auto`` uses those that are).

    Raises:
        ValueError: naming the unknown backends and the valid choices, or a backend whose
            extra is not installed and the command that installs it.
    """
    if mode in MODES:
        return mode
    known = sorted({t.backend for t in registered_tools()})
    names = [name.strip() for name in mode.split(",")]
    if unknown := [name for name in names if name not in known]:
        raise ValueError(
            f"no backend named {', '.join(repr(n) for n in unknown)}; expected "
            f"{', '.join(MODES)}, a registered backend ({', '.join(known)}; a plugin "
            "module adds its own once imported) or an order of them such as "
            "lite,hf-inference")
    if absent := [(name, extra) for name in names if (extra := missing_extra(name))]:
        raise ValueError("; ".join(
            f"the {name} backend is not installed: {install_command(extra)}"
            for name, extra in absent))
    return mode


def backend_order(mode: str, known: list[str]) -> list[str]:
    """The backends a run may use, most preferred first.

    ``auto``/``hybrid``: every real backend, in :data:`HYBRID_ORDER` then the others;
    ``dry-run``: the simulated experts; ``a,b``: those, in that order.
    """
    if mode in MODES:
        return [b for b in HYBRID_ORDER if b in known] + sorted(
            b for b in known if b not in HYBRID_ORDER and b != DRY_RUN_BACKEND)
    return [b.strip() for b in mode.split(",") if b.strip()]


def candidate_cards(task: str, catalog: Catalog, tools: list[Tool]) -> dict[str, ModelCard | None]:
    cards: dict[str, ModelCard | None] = {c.id: c for c in catalog.for_task(task)}
    for t in tools:
        for card in t.cards:
            if card.task == task:
                cards.setdefault(card.id, card)
        for model in t.models or ():
            cards.setdefault(model, None)
    return cards


def _offers(tool: Tool, task: str, model: str, listed: set[str]) -> bool:
    """Whether ``tool`` offers ``model`` for ``task``: a tool for any catalog model offers
    the catalog's (not the engines another backend brings with their own cards)."""
    return tool.serves(task, model) and (tool.models is not None or model in listed
                                         or tool.simulated)


def runnable(task: str, catalog: Catalog, mode: str
             ) -> dict[str, tuple[ModelCard | None, list[str]]]:
    """The models that can run ``task`` now in this mode: model -> (its card, the
    backends where it can, most preferred first). The one test of "can run" that
    selection, ``models list`` and the coverage count share."""
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK)]
    order = backend_order(mode, sorted({t.backend for t in tools}))
    tools = [t for t in tools if t.backend in order and t.simulated == (mode == DRY_RUN_BACKEND)]
    listed = {c.id for c in catalog.for_task(task)}
    found = {}
    for model, card in candidate_cards(task, catalog, tools).items():
        backends = sorted({t.backend for t in tools
                           if _offers(t, task, model, listed) and t.can_run(model)},
                          key=order.index)
        if backends:
            found[model] = (card, backends)
    return found


def model_cards(task: str, catalog: Catalog) -> list[ModelCard]:
    """The catalog's cards for ``task`` and those that registered tools bring."""
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK)]
    return [c for c in candidate_cards(task, catalog, tools).values() if c is not None]


def _specialists(task: str, catalog: Catalog, tools: list[Tool],
                 models: list[str]) -> list[ModelCard]:
    """The backend's runnable specialists (cards with ``subjects``), when every model its
    tools serve is one: then the request's words, not the machine, left it out."""
    cards = candidate_cards(task, catalog, tools)
    served = [m for m in models if any(t.serves(task, m) for t in tools)]
    found = [card for model in served if (card := cards.get(model)) is not None
             and card.subjects and any(t.serves(task, model) and t.can_run(model)
                                       for t in tools)]
    return found if served and len(found) == len(served) else []


def explain_unavailable(task: str, catalog: Catalog, mode: str) -> str:
    """Why no model can run ``task`` in this mode, backend by backend."""
    simulated = mode == DRY_RUN_BACKEND  # the simulated experts serve every task type
    tools = [t for t in registered_tools()
             if t.task in (task, ANY_TASK) and t.simulated == simulated]
    order = backend_order(mode, sorted({t.backend for t in tools}))
    if not order:
        return f"no backend is enabled in mode {mode!r}"
    task_type = get_task_type(task)
    by_language = task_type is not None and task_type.arg("tgt_lang") is not None
    listed = {c.id for c in catalog.for_task(task)}
    found = []
    for backend in order:
        here = [t for t in tools if t.backend == backend]
        models = [m for m in candidate_cards(task, catalog, here)
                  if any(_offers(t, task, m, listed) for t in here)] if here else []
        if not here:
            found.append(f"{backend}: no tool for {task}")
        elif not models:
            found.append(f"{backend}: no {task} model in the catalog")
        elif specialists := _specialists(task, catalog, here, models):
            found.append(f"{backend}: " + "; ".join(
                f"{c.id} is offered only for requests about {', '.join(c.subjects[:2])} "
                "and the like"
                for c in specialists))
        elif backend == LLM_BACKEND and (unavailable := unavailable_reason()):
            found.append(f"{backend}: {unavailable}")
        else:
            why = [] if simulated else ["can run now"]
            why += ["writes the target language"] if by_language else []
            causes = list(dict.fromkeys(
                w for m in models for t in here if _offers(t, task, m, listed)
                if (w := t.why_not(m)) is not None))
            found.append(f"{backend}: none of {len(models)} model(s) "
                         + (" or ".join(why) or "can run now")
                         + (f" ({'; '.join(causes[:2])}{'; ...' if len(causes) > 2 else ''})"
                            if causes else ""))
    return "; ".join(found)


def reasons(task: str, model: str, catalog: Catalog) -> dict[str, str | None]:
    """Per real backend with a tool for ``task``: why ``model`` cannot run there now
    (None: it can), in the default order of backends."""
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK) and not t.simulated]
    listed = {c.id for c in catalog.for_task(task)}
    found: dict[str, str | None] = {}
    for backend in backend_order("auto", sorted({t.backend for t in tools})):
        serving = [t for t in tools
                   if t.backend == backend and _offers(t, task, model, listed)]
        if not serving:
            found[backend] = NOT_OFFERED
            continue
        why = [t.why_not(model) for t in serving]
        found[backend] = None if None in why else next(w for w in why if w)
    return found


def availability(task: str, model: str, catalog: Catalog) -> dict[str, bool]:
    """Per real backend with a tool for ``task``: whether ``model`` can run there now."""
    return {backend: why is None for backend, why in reasons(task, model, catalog).items()}


def download_hint(task: str, catalog: Catalog, mode: str,
                  fits: Callable[[ModelCard], bool] | None = None) -> Fix | None:
    """With downloads off, when this mode may use the local backend: the catalog's best
    model for ``task`` that is not cached and ``fits`` the subtask, the command that
    downloads it and its size (from the card; nothing touches the network)."""
    known = sorted({t.backend for t in registered_tools()})
    if LOCAL_BACKEND not in backend_order(mode, known) or missing_extra(LOCAL_BACKEND):
        return None
    return _local_download_hint(task, catalog, fits)
