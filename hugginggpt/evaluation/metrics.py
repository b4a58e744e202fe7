"""TaskBench's metrics on one plan: its shape, and the node, edge and argument counts.

Everything here works on :class:`~hugginggpt.evaluation.datasets.PlanNode` lists, gold
or predicted alike; how the items are matched, and where that differs from TaskBench,
is in the package doc (:mod:`hugginggpt.evaluation`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hugginggpt.evaluation.datasets import PlanNode
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import fill_refs, generated_ref, generated_refs, kind_of_literal

__all__ = [
    "Shape",
    "METRICS",
    "Counts",
    "PlanScore",
    "plan_shape",
    "score_plan",
]

Shape = Literal["empty", "single", "chain", "dag"]
"""A gold plan's shape: no node; one node; one path (each node at most one dependency
and one dependent, all connected); anything else."""

METRICS: tuple[str, ...] = ("node", "edge", "arg_name", "arg_value")

_QUOTES = ("'", '"', "`")


def _edges(nodes: Sequence[PlanNode]) -> list[tuple[int, int]]:
    ids = {node.id for node in nodes}
    return [
        (dep, node.id)
        for node in nodes
        for dep in dict.fromkeys(node.dep)
        if dep in ids and dep != node.id
    ]


def plan_shape(nodes: Sequence[PlanNode]) -> Shape:
    """``single`` for one node, ``chain`` for one connected path, ``dag`` otherwise.

    A chain needs every node to have at most one dependency and one dependent *and* the
    nodes to be connected: two independent subtasks are a ``dag`` (TaskBench's sampler
    only makes connected graphs, so it never has to say).
    """
    if not nodes:
        return "empty"
    if len(nodes) == 1:
        return "single"
    edges = _edges(nodes)
    deps = Counter(target for _, target in edges)
    dependents = Counter(source for source, _ in edges)
    if (
        len(edges) != len(nodes) - 1
        or max(deps.values(), default=0) > 1
        or max(dependents.values(), default=0) > 1
    ):
        return "dag"
    neighbours: dict[int, set[int]] = {node.id: set() for node in nodes}
    for source, target in edges:
        neighbours[source].add(target)
        neighbours[target].add(source)
    seen = {nodes[0].id}
    stack = [nodes[0].id]
    while stack:
        for nxt in neighbours[stack.pop()] - seen:
            seen.add(nxt)
            stack.append(nxt)
    return "chain" if len(seen) == len(neighbours) else "dag"


@dataclass
class Counts:
    """True positives, false positives and false negatives of one metric."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @classmethod
    def of(cls, gold: Counter[Any], predicted: Counter[Any]) -> Counts:
        tp = sum((gold & predicted).values())
        return cls(tp=tp, fp=sum(predicted.values()) - tp, fn=sum(gold.values()) - tp)

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def empty(self) -> bool:
        return self.tp + self.fp + self.fn == 0

    @property
    def precision(self) -> float | None:
        if self.empty:
            return None
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float | None:
        if self.empty:
            return None
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float | None:
        if self.empty:
            return None
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    def to_json(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Counts:
        return cls(tp=int(data["tp"]), fp=int(data["fp"]), fn=int(data["fn"]))


@dataclass
class PlanScore:
    """The counts of one prediction against its gold plan, one per metric."""

    node: Counts = field(default_factory=Counts)
    edge: Counts = field(default_factory=Counts)
    arg_name: Counts = field(default_factory=Counts)
    arg_value: Counts = field(default_factory=Counts)

    def __add__(self, other: PlanScore) -> PlanScore:
        return PlanScore(*(getattr(self, m) + getattr(other, m) for m in METRICS))

    def to_json(self) -> dict[str, Any]:
        return {m: getattr(self, m).to_json() for m in METRICS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanScore:
        return cls(*(Counts.from_json(data[m]) for m in METRICS))


def _normalise_literal(value: str) -> str:
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in _QUOTES:
        text = text[1:-1].strip()
    return text.casefold()


def _argument_keys(
    nodes: Sequence[PlanNode], by_value: bool
) -> tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]:
    task_of = {node.id: node.task for node in nodes}
    names: Counter[tuple[str, ...]] = Counter()
    values: Counter[tuple[str, ...]] = Counter()
    for node in nodes:
        for name, value in node.args:
            ref = generated_ref(value)
            if ref is not None and ref in task_of:
                source = get_task_type(task_of[ref])
                kind = source.outputs[0].kind if source else "other"
                normalised = f"<node:{task_of[ref]}>"
            elif generated_refs(value):  # outputs combined with text: the text is compared
                kind = "text"
                normalised = _normalise_literal(fill_refs(
                    value, lambda k: f"<node:{task_of.get(k, k)}>"))
            else:
                kind = kind_of_literal(value)
                normalised = _normalise_literal(value)
            if by_value:
                names[(node.task, kind)] += 1
                values[(node.task, normalised)] += 1
            else:
                names[(node.task, str(name))] += 1
                values[(node.task, str(name), normalised)] += 1
    return names, values


def score_plan(gold: Sequence[PlanNode], predicted: Sequence[PlanNode]) -> PlanScore:
    """Count matches between one prediction and its gold plan (see the package doc).

    Node and edge items are task names and ``(source task, target task)`` pairs, so
    subtask ids never need to agree. Arguments are scored by name when every gold
    argument has one, else by value.
    """
    by_value = any(name is None for node in gold for name, _ in node.args)
    gold_names, gold_values = _argument_keys(gold, by_value)
    pred_names, pred_values = _argument_keys(predicted, by_value)

    def edge_pairs(nodes: Sequence[PlanNode]) -> Counter[tuple[str, str]]:
        task_of = {node.id: node.task for node in nodes}
        return Counter((task_of[s], task_of[t]) for s, t in _edges(nodes))

    return PlanScore(
        node=Counts.of(Counter(n.task for n in gold), Counter(n.task for n in predicted)),
        edge=Counts.of(edge_pairs(gold), edge_pairs(predicted)),
        arg_name=Counts.of(gold_names, pred_names),
        arg_value=Counts.of(gold_values, pred_values),
    )
