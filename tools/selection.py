"""Candidate models for a task type: filtered by the enabled backends, ranked by
model-card facts. Choosing among close candidates is the select node's job."""

from __future__ import annotations

from dataclasses import dataclass

from tools.catalog import Catalog, ModelCard
from tools.dry_run import DRY_RUN_BACKEND
from tools.registry import ANY_TASK, registered_tools

__all__ = ["RankedCandidate", "rank_candidates", "enabled_backends"]


@dataclass(frozen=True)
class RankedCandidate:
    model: str
    backend: str
    score: float
    card: ModelCard | None

    @property
    def expected_latency_s(self) -> float:
        return self.card.expected_latency_s if self.card else 1.0


def enabled_backends(mode: str) -> set[str] | None:
    """Backends a run may use: ``auto`` means every real (non-simulated) backend."""
    if mode == "auto":
        return None
    if mode == "dry-run":
        return {DRY_RUN_BACKEND}
    return {mode}


def rank_candidates(task: str, catalog: Catalog, mode: str) -> list[RankedCandidate]:
    """Every (model, backend) that can run ``task``, best first.

    Models come from the catalog and from tools registered for named models; a model is
    available on a backend when a tool for it is registered there. In ``dry-run`` mode
    every catalog model is available through the simulated experts.
    """
    allowed = enabled_backends(mode)
    simulate = allowed == {DRY_RUN_BACKEND}
    tools = [
        t for t in registered_tools()
        if t.task in (task, ANY_TASK)
        and t.simulated == simulate
        and (allowed is None or t.backend in allowed)
    ]
    model_ids = [c.id for c in catalog.for_task(task)]
    for t in tools:
        model_ids += [m for m in t.models or () if m not in model_ids]

    found: list[RankedCandidate] = []
    for model in model_ids:
        card = catalog.get(task, model)
        score = card.popularity() if card else 0.0
        for backend in dict.fromkeys(t.backend for t in tools if t.serves(task, model)):
            found.append(RankedCandidate(model, backend, round(score, 3), card))
    return sorted(found, key=lambda c: -c.score)
