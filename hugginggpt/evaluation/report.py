"""Running a planner over a dataset, and the report of what it scored.

:func:`evaluate` keeps one :class:`SampleRecord` per sample, invalid predictions
included (scored as empty plans), so that a :class:`Report` can regroup the records
(overall, by shape, by size, by the similarity of the nearest bank example) and be rebuilt
from its JSON without running anything again.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from hugginggpt.evaluation.datasets import PlanNode, Sample
from hugginggpt.evaluation.metrics import PlanScore, Shape, plan_shape, score_plan
from hugginggpt.evaluation.nearness import NEARNESS_BANDS, Nearest, Nearness, nearness_band
from hugginggpt.graph.state import Subtask
from hugginggpt.nodes.planning.validation import PlanParseError, plan_items, validate_plan

__all__ = [
    "GroupMetrics",
    "SampleRecord",
    "Report",
    "Planner",
    "evaluate",
]

_MAX_LISTED_FAILURES = 20


@dataclass
class SampleRecord:
    """What happened to one sample.

    ``predicted`` lists the tasks the planner proposed, even when the plan was invalid;
    an invalid plan (``valid`` false: ``error`` or ``problems``) is scored as empty.
    ``nearest`` is the bank example nearest to the request, when the run measured it.
    """

    id: str
    valid: bool
    error: str | None
    problems: list[str]
    predicted: list[str]
    gold: list[str]
    shape: Shape
    latency_s: float
    score: PlanScore
    nearest: Nearest | None = None

    @property
    def size(self) -> int:
        return len(self.gold)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "valid": self.valid,
            "error": self.error,
            "problems": list(self.problems),
            "predicted": list(self.predicted),
            "gold": list(self.gold),
            "shape": self.shape,
            "size": self.size,
            "latency_s": self.latency_s,
            "score": self.score.to_json(),
            "nearest": self.nearest.to_json() if self.nearest else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleRecord:
        shape = data["shape"]
        if shape not in get_args(Shape):
            raise ValueError(f"unknown shape {shape!r}")
        nearest = data.get("nearest")  # absent in reports written before it was measured
        return cls(
            id=str(data["id"]),
            valid=bool(data["valid"]),
            error=data["error"],
            problems=list(data["problems"]),
            predicted=list(data["predicted"]),
            gold=list(data["gold"]),
            shape=shape,
            latency_s=float(data["latency_s"]),
            score=PlanScore.from_json(data["score"]),
            nearest=Nearest.from_json(nearest) if nearest else None,
        )


@dataclass
class GroupMetrics:
    """The micro-averaged metrics of a group of samples."""

    samples: int
    invalid: int
    score: PlanScore

    @classmethod
    def of(cls, records: Iterable[SampleRecord]) -> GroupMetrics:
        group = cls(0, 0, PlanScore())
        for record in records:
            group.samples += 1
            group.invalid += 0 if record.valid else 1
            group.score += record.score
        return group

    @property
    def invalid_rate(self) -> float | None:
        return self.invalid / self.samples if self.samples else None

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "invalid": self.invalid,
            "invalid_rate": self.invalid_rate,
            **self.score.to_json(),
        }


@dataclass
class Report:
    """Per-sample records and the metrics derived from them."""

    records: list[SampleRecord]
    total_time_s: float
    max_subtasks: int

    @property
    def overall(self) -> GroupMetrics:
        return GroupMetrics.of(self.records)

    @property
    def by_shape(self) -> dict[str, GroupMetrics]:
        """Groups by the gold plan's shape, in the order single, chain, dag (and empty)."""
        present = {r.shape for r in self.records}
        return {
            shape: GroupMetrics.of(r for r in self.records if r.shape == shape)
            for shape in ("single", "chain", "dag", "empty")
            if shape in present
        }

    @property
    def by_size(self) -> dict[int, GroupMetrics]:
        """Groups by the number of gold subtasks, smallest first."""
        return {
            size: GroupMetrics.of(r for r in self.records if r.size == size)
            for size in sorted({r.size for r in self.records})
        }

    @property
    def by_nearness(self) -> dict[str, GroupMetrics]:
        """Groups by the similarity of each sample's nearest bank example, in the bands of
        :data:`~hugginggpt.evaluation.nearness.NEARNESS_BANDS` (lowest first, the bands
        that hold a sample); samples that were not measured are left out."""
        bands: dict[str, list[SampleRecord]] = {label: [] for label, _ in NEARNESS_BANDS}
        for record in self.records:
            if record.nearest is not None:
                bands[nearness_band(record.nearest.similarity)].append(record)
        return {label: GroupMetrics.of(group) for label, group in bands.items() if group}

    @property
    def invalid_rate(self) -> float | None:
        return self.overall.invalid_rate

    def to_json(self) -> dict[str, Any]:
        """A plain dict (JSON-ready; sizes become string keys)."""
        return {
            "max_subtasks": self.max_subtasks,
            "total_time_s": self.total_time_s,
            "overall": self.overall.to_json(),
            "by_shape": {k: v.to_json() for k, v in self.by_shape.items()},
            "by_size": {str(k): v.to_json() for k, v in self.by_size.items()},
            "by_nearness": {k: v.to_json() for k, v in self.by_nearness.items()},
            "records": [r.to_json() for r in self.records],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Report:
        """Rebuild a report from :meth:`to_json`; the metrics are recomputed."""
        return cls(
            records=[SampleRecord.from_json(r) for r in data["records"]],
            total_time_s=float(data["total_time_s"]),
            max_subtasks=int(data["max_subtasks"]),
        )

    def format(self) -> str:
        """A text table: one row per group, then the invalid predictions."""
        overall = self.overall
        lines = [
            f"Planning evaluation: {overall.samples} samples, {overall.invalid} invalid "
            f"({_percent(overall.invalid_rate)}), {self.total_time_s:.2f} s",
            *self._nearness_line(),
            "",
        ]
        header = (
            f"{'group':<16}{'n':>5}{'invalid':>9}"
            f"{'node P':>8}{'node R':>8}{'node F1':>9}"
            f"{'edge P':>8}{'edge R':>8}{'edge F1':>9}"
            f"{'name F1':>9}{'value F1':>10}"
        )
        lines += [header, "-" * len(header)]
        groups: list[tuple[str, GroupMetrics]] = [("overall", overall)]
        groups += [(f"shape {k}", v) for k, v in self.by_shape.items()]
        groups += [(f"size {k}", v) for k, v in self.by_size.items()]
        groups += [(f"nearest {k}", v) for k, v in self.by_nearness.items()]
        for label, group in groups:
            s = group.score
            lines.append(
                f"{label:<16}{group.samples:>5}{_percent(group.invalid_rate):>9}"
                f"{_num(s.node.precision):>8}{_num(s.node.recall):>8}{_num(s.node.f1):>9}"
                f"{_num(s.edge.precision):>8}{_num(s.edge.recall):>8}{_num(s.edge.f1):>9}"
                f"{_num(s.arg_name.f1):>9}{_num(s.arg_value.f1):>10}"
            )
        failed = [r for r in self.records if not r.valid]
        if failed:
            lines += ["", "Invalid predictions (scored as empty plans):"]
            for record in failed[:_MAX_LISTED_FAILURES]:
                why = record.error or "; ".join(record.problems)
                lines.append(f"  {record.id}: {why:.160}")
            if len(failed) > _MAX_LISTED_FAILURES:
                lines.append(f"  ... and {len(failed) - _MAX_LISTED_FAILURES} more")
        return "\n".join(lines)

    def _nearness_line(self) -> list[str]:
        measured = [(r.nearest.similarity, r.id, r.nearest.example)
                    for r in self.records if r.nearest is not None]
        if not measured:
            return []
        top, sample, example = max(measured)
        median = statistics.median(similarity for similarity, _, _ in measured)
        return [f"Nearest bank example (cosine of request shapes, as the planner retrieves): "
                f"median {median:.3f}, max {top:.3f} ({sample} ~ {example})"]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


Planner = Callable[[Sample], list[dict[str, Any]]]
"""Returns a sample's raw plan items; raises (an :class:`Exception`) when it fails."""


def _run_one(sample: Sample, planner: Planner, max_subtasks: int,
             nearness: Nearness | None) -> SampleRecord:
    error: str | None = None
    problems: list[str] = []
    proposed: list[Subtask] = []
    started = time.perf_counter()
    try:
        raw = planner(sample)
    except Exception as exc:  # the planner's failure is data: recorded, scored as empty
        error = f"{type(exc).__name__}: {exc}"
    latency = time.perf_counter() - started
    if error is None:
        try:
            items = plan_items(raw)
        except PlanParseError as exc:
            error = f"PlanParseError: {exc}"
        else:
            proposed, problems = validate_plan(items, max_subtasks=max_subtasks)
    valid = error is None and not problems
    predicted = [PlanNode.from_subtask(s) for s in proposed] if valid else []
    return SampleRecord(
        id=sample.id,
        valid=valid,
        error=error,
        problems=problems,
        predicted=[s.task for s in proposed],
        gold=[node.task for node in sample.gold],
        shape=plan_shape(sample.gold),
        latency_s=latency,
        score=score_plan(sample.gold, predicted),
        nearest=nearness(sample) if nearness is not None else None,
    )


def evaluate(samples: Iterable[Sample], planner: Planner, *, max_subtasks: int = 10,
             nearness: Nearness | None = None) -> Report:
    """Run ``planner`` on each sample and score its plan against the gold one; with
    ``nearness``, also record each sample's nearest bank example (for
    :attr:`Report.by_nearness`).

    Every prediction goes through ``validate_plan(items, max_subtasks=max_subtasks)``.
    An exception from the planner (an :class:`Exception`; ``KeyboardInterrupt`` and the
    like still stop the run), an unreadable result or any validation problem makes the
    sample invalid and its prediction an empty plan; the sample is never dropped.
    """
    started = time.perf_counter()
    records = [_run_one(sample, planner, max_subtasks, nearness) for sample in samples]
    return Report(
        records=records, total_time_s=time.perf_counter() - started, max_subtasks=max_subtasks
    )
