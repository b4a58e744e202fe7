"""Candidate models for a task type: filtered by the backends a run may use and by
availability, ranked by backend preference and then by model-card facts. Choosing among
close candidates is the select node's job."""

from __future__ import annotations

from dataclasses import dataclass

from tools.catalog import Catalog, ModelCard
from tools.dry_run import DRY_RUN_BACKEND
from tools.registry import ANY_TASK, Tool, registered_tools

__all__ = ["RankedCandidate", "rank_candidates", "backend_order", "model_cards", "HYBRID_ORDER"]

HYBRID_ORDER: tuple[str, ...] = ("local", "hf-inference", "lite")
"""The default preference of ``auto``/``hybrid``: models on this machine, then Hugging
Face endpoints, then the lite engines; backends that plugins add come last."""


@dataclass(frozen=True)
class RankedCandidate:
    model: str
    backend: str
    score: float
    card: ModelCard | None

    @property
    def expected_latency_s(self) -> float:
        return self.card.expected_latency_s if self.card else 1.0


def backend_order(mode: str, known: list[str]) -> list[str]:
    """The backends a run may use, most preferred first.

    ``auto``/``hybrid``: every real backend, in :data:`HYBRID_ORDER` then the others;
    ``dry-run``: the simulated experts; ``a,b``: those, in that order.
    """
    if mode in ("auto", "hybrid"):
        return [b for b in HYBRID_ORDER if b in known] + sorted(
            b for b in known if b not in HYBRID_ORDER and b != DRY_RUN_BACKEND)
    return [b.strip() for b in mode.split(",") if b.strip()]


def _cards(task: str, catalog: Catalog, tools: list[Tool]) -> dict[str, ModelCard | None]:
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
    return [c for c in _cards(task, catalog, tools).values() if c is not None]


def rank_candidates(task: str, catalog: Catalog, mode: str) -> list[RankedCandidate]:
    """Every available (model, backend) that can run ``task``, best first.

    Models come from the catalog and from the tools (named models and their cards); a
    model is a candidate on a backend when a tool there serves it and says it can run it
    now. Backends are ordered by the run's preference, then candidates by card score.
    """
    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK)]
    order = backend_order(mode, sorted({t.backend for t in tools}))
    tools = [t for t in tools if t.backend in order and t.simulated == (mode == DRY_RUN_BACKEND)]
    found: list[RankedCandidate] = []
    for model, card in _cards(task, catalog, tools).items():
        score = round(card.popularity(), 3) if card else 0.0
        backends = dict.fromkeys(
            t.backend for t in tools if t.serves(task, model) and t.can_run(model))
        found += [RankedCandidate(model, b, score, card) for b in backends]
    return sorted(found, key=lambda c: (order.index(c.backend), -c.score))
