"""Which (model, backend) pairs can run a task type now, and why none can.

A model is a candidate on a backend when a tool registered there serves it and says it
can run it now (weights cached, endpoint configured, ...). Models come from the catalog
and from the tools themselves (engines shipped in packages bring their own cards).
"""

from __future__ import annotations

from hugginggpt.tools.experts.catalog import Catalog, ModelCard
from hugginggpt.tools.experts.dry_run import DRY_RUN_BACKEND
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.experts.local.hub_cache import download_hint as _local_download_hint
from hugginggpt.tools.experts.registry import ANY_TASK, Tool, registered_tools
from hugginggpt.tools.experts.tasks import get_task_type

__all__ = ["HYBRID_ORDER", "MODES", "check_backend", "backend_order", "candidate_cards",
           "model_cards", "explain_unavailable", "availability", "download_hint"]

HYBRID_ORDER: tuple[str, ...] = ("local", "hf-inference", "lite")
"""The default preference of ``auto``/``hybrid``: models on this machine, then Hugging
Face endpoints, then the lite engines; backends that plugins add come last."""


MODES = ("auto", "hybrid")
"""The backend settings that are not backends: every real backend, preferred in
:data:`HYBRID_ORDER`."""


def check_backend(mode: str) -> str:
    """The backend setting, checked: ``auto``, ``hybrid``, a registered backend
    (``dry-run`` included; plugins register their own) or an order of them such as
    ``lite,hf-inference``.

    Raises:
        ValueError: naming the unknown backends and the valid choices.
    """
    if mode in MODES:
        return mode
    known = sorted({t.backend for t in registered_tools()})
    names = [name.strip() for name in mode.split(",")]
    if unknown := [name for name in names if name not in known]:
        raise ValueError(
            f"no backend named {', '.join(repr(n) for n in unknown)}; expected "
            f"{', '.join(MODES)}, a registered backend ({', '.join(known)}; a plugin "
            "adds its own with --plugin) or an order of them such as lite,hf-inference")
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


def model_cards(task: str, catalog: Catalog) -> list[ModelCard]:
    """The catalog's cards for ``task`` and those that registered tools bring."""
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK)]
    return [c for c in candidate_cards(task, catalog, tools).values() if c is not None]


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
    reasons = []
    for backend in order:
        here = [t for t in tools if t.backend == backend]
        models = list(candidate_cards(task, catalog, here)) if here else []
        if not here:
            reasons.append(f"{backend}: no tool for {task}")
        elif not models:
            reasons.append(f"{backend}: no {task} model in the catalog")
        else:
            why = [] if simulated else ["can run now"]
            why += ["writes the target language"] if by_language else []
            reasons.append(f"{backend}: none of {len(models)} model(s) "
                           + (" or ".join(why) or "can run now")
                           + (" (weights not cached, or no endpoint or token)"
                              if backend in ("local", "hf-inference") else ""))
    return "; ".join(reasons)


def availability(task: str, model: str) -> dict[str, bool]:
    """Per real backend with a tool for ``task``: whether ``model`` can run there now."""
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK) and not t.simulated]
    backends = sorted({t.backend for t in tools})
    return {b: any(t.backend == b and t.serves(task, model) and t.can_run(model)
                   for t in tools) for b in backends}


def download_hint(task: str, catalog: Catalog, mode: str) -> str | None:
    """With downloads off, when this mode may use the local backend: the catalog's best
    model for ``task`` that is not cached, the command that downloads it and its size
    (from the card; nothing touches the network)."""
    known = sorted({t.backend for t in registered_tools()})
    if LOCAL_BACKEND not in backend_order(mode, known):
        return None
    return _local_download_hint(task, catalog)
