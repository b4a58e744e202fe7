"""How near each sample is to the example bank, measured the way the planners retrieve.

The offline planner adapts the bank example nearest to a request, and the LLM planner is
shown the nearest few as few-shot examples. A sample whose request is very close to one
of them mostly measures how well the planner copies that example; a far one measures how
far it generalises. So the report groups samples by the similarity of their nearest bank
example, computed by the bank's own :meth:`~hugginggpt.nodes.planning.bank.PlanBank.nearest`
(MiniLM embeddings of the request's shape, quoted texts and file names masked), the very
call the planners make.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hugginggpt.evaluation.datasets import Sample
from hugginggpt.nodes.planning.bank import PlanBank

__all__ = ["NEARNESS_BANDS", "Nearest", "Nearness", "nearness_band", "nearest_in"]

NEARNESS_BANDS: tuple[tuple[str, float], ...] = (
    ("<0.6", 0.6),
    ("0.6-0.7", 0.7),
    ("0.7-0.8", 0.8),
    (">=0.8", float("inf")),
)
"""(label, upper bound, exclusive), lowest first. ``>=0.8`` is a near-copy: the shipped
labelled set has none (``tests/test_plan_data.py`` checks it), other datasets may."""


@dataclass(frozen=True)
class Nearest:
    """A sample's nearest bank example and its cosine similarity (of request shapes)."""

    example: str
    similarity: float

    def to_json(self) -> dict[str, Any]:
        return {"example": self.example, "similarity": self.similarity}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Nearest:
        return cls(str(data["example"]), float(data["similarity"]))


Nearness = Callable[[Sample], Nearest | None]
"""Finds a sample's nearest bank example (None: not measured for this sample)."""


def nearness_band(similarity: float) -> str:
    """The label of the band of :data:`NEARNESS_BANDS` that holds ``similarity``."""
    return next(label for label, upper in NEARNESS_BANDS if similarity < upper)


def nearest_in(bank: PlanBank) -> Nearness:
    """A :data:`Nearness` over ``bank``: the first of ``bank.nearest(request)``."""

    def nearest(sample: Sample) -> Nearest:
        ((example, similarity),) = bank.nearest(sample.request, k=1)
        return Nearest(example.id, similarity)

    return nearest
