"""Scoring planners against gold plans, with TaskBench's metrics (arXiv 2311.18760).

A dataset is JSON Lines in one of two formats, mixed freely:

- this project's: ``{"id", "request", "files"?, "plan": [subtasks] | {"subtasks": [...]}}``;
- TaskBench's: ``{"id", "user_request", "task_nodes": [{"task", "arguments"}],
  "task_links": [{"source", "target"}]}``, where an argument ``<node-j>`` is the output
  of node j (0-based). It becomes ``<GENERATED>-j`` and j joins the node's ``dep``; a
  task link that no argument expresses is added as a dependency too.

Task names go through :func:`canonical_task`, so TaskBench's "Automatic Speech
Recognition" is this project's ``automatic-speech-recognition``; a name the registry does
not know is kept (lower-cased) and can never be matched by a valid prediction.

:func:`evaluate` runs a planner on every sample, validates each prediction with
:func:`~hugginggpt.nodes.planning.validation.validate_plan`, and scores it with :func:`score_plan`. A
planner that raises, or a plan with any problem, scores as an EMPTY plan: the sample
stays in the report and all its gold counts as false negatives. TaskBench instead drops
such samples from its supports, which flatters a planner that often fails.

The metrics follow TaskBench's ``taskbench/evaluate.py`` (microsoft/JARVIS), resource
dependency mode, the one for the Hugging Face domain:

- node: task types;
- edge (TaskBench's "link"): ``(source task, target task)`` pairs, one per dependency;
- argument name: ``(task, name)`` pairs;
- argument value: ``(task, name, value)`` pairs.

Differences from TaskBench, on purpose:

- Matching is by multiset (:class:`collections.Counter`): a plan with two translations
  against a gold with one gets one true and one false positive. TaskBench's ``flatten``
  takes the *set* of items per sample, so a repeated tool, edge or argument counts once.
- Every count is micro-averaged over the dataset: true and false positives and false
  negatives are summed over the samples, then precision, recall and F1 are computed once
  (TaskBench's "binary" F1 for edges and arguments is this micro average; for nodes it
  reports micro and macro, the macro one averaging per tool type; only micro is kept).
- TaskBench's node F1 ignores tool names outside its tool list (true negatives); here an
  unknown task is a wrong node.
- Edges come from ``dep``; TaskBench reads them from ``<node-j>`` arguments, which the
  reader turns into ``dep``, so the two agree on its data.
- A reference ``<GENERATED>-k`` is compared as ``<node:TASK>``, ``TASK`` being node k's
  task, so plans that number their subtasks differently still match (TaskBench compares
  the source tool's name). A literal value is compared stripped of white space and of
  one pair of surrounding quotes, case-insensitively (TaskBench compares it as is).
- When a gold sample has an argument without a name (TaskBench's Hugging Face data gives
  a list of values), the sample is scored by value: each argument's "name", on both
  sides, is the kind of its value (the primary output kind of a referenced node's task,
  or the kind of a literal: image, audio, video, table, text), which is what TaskBench
  does; the value pair is ``(task, value)``, the name playing no part. TaskBench reads a
  ``{"name", "value"}`` argument as its first dict value, i.e. the name; here it is a
  named argument.
- Precision with nothing predicted is 0, recall with nothing to find is 0 (scikit-learn's
  ``zero_division=0``, as TaskBench gets); when a group has no item on either side (no
  edges in single-node plans) the scores are ``None``, shown as ``-``.

Report groups: overall, by the gold plan's shape (:func:`plan_shape`) and by the number
of gold subtasks, plus the rate of invalid (failed or rejected) predictions.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from hugginggpt.graph.state import Subtask
from hugginggpt.nodes.planning.validation import PlanParseError, plan_items, validate_plan
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import generated_ref, kind_of_literal

__all__ = [
    "Shape",
    "METRICS",
    "DatasetError",
    "PlanNode",
    "Sample",
    "Counts",
    "PlanScore",
    "GroupMetrics",
    "SampleRecord",
    "Report",
    "Planner",
    "canonical_task",
    "parse_sample",
    "read_samples",
    "plan_shape",
    "score_plan",
    "evaluate",
]

Shape = Literal["empty", "single", "chain", "dag"]
"""A gold plan's shape: no node; one node; one path (each node at most one dependency
and one dependent, all connected); anything else."""

METRICS: tuple[str, ...] = ("node", "edge", "arg_name", "arg_value")

_NODE_REF_RE = re.compile(r"<node-(\d+)>")
_QUOTES = ("'", '"', "`")
_MAX_LISTED_FAILURES = 20


class DatasetError(ValueError):
    """A dataset line that cannot be read as a sample (the message names the line)."""


def canonical_task(name: str) -> str:
    """This project's name for a task type, or ``name`` lower-cased when it is unknown
    (TaskBench writes "Visual Question Answering"; get_task_type reads that too)."""
    task_type = get_task_type(name)
    return task_type.name if task_type else name.strip().lower()


@dataclass(frozen=True)
class PlanNode:
    """One subtask as scored: a gold node or a validated prediction.

    ``args`` keeps the order given; a name is ``None`` for a TaskBench argument given as
    a bare value. ``<GENERATED>-k`` values refer to the node whose ``id`` is k.
    """

    id: int
    task: str
    dep: tuple[int, ...] = ()
    args: tuple[tuple[str | None, str], ...] = ()

    @classmethod
    def from_subtask(cls, subtask: Subtask) -> PlanNode:
        return cls(
            id=subtask.id,
            task=canonical_task(subtask.task),
            dep=tuple(dict.fromkeys(subtask.dep)),
            args=tuple(subtask.args.items()),
        )


@dataclass
class Sample:
    """One request and its gold plan."""

    id: str
    request: str
    files: list[str] = field(default_factory=list)
    gold: list[PlanNode] = field(default_factory=list)


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return value if isinstance(value, str) else str(value)


def _taskbench_arguments(raw: Any, where: str) -> list[tuple[str | None, str]]:
    if isinstance(raw, Mapping):
        return [(str(k), _text(v)) for k, v in raw.items()]
    if not isinstance(raw, list):
        raise DatasetError(f"{where}: arguments must be a list or an object, not {raw!r:.60}")
    args: list[tuple[str | None, str]] = []
    for item in raw:
        if isinstance(item, Mapping):
            if "name" in item and "value" in item:
                args.append((str(item["name"]), _text(item["value"])))
            elif len(item) == 1:
                ((name, value),) = item.items()
                args.append((str(name), _text(value)))
            else:
                raise DatasetError(f"{where}: cannot read argument {item!r:.80}")
        else:
            args.append((None, _text(item)))
    return args


def _taskbench_plan(data: Mapping[str, Any], where: str) -> list[PlanNode]:
    raw_nodes = data["task_nodes"]
    if not isinstance(raw_nodes, list):
        raise DatasetError(f"{where}: task_nodes must be a list")
    tasks: list[str] = []
    for index, node in enumerate(raw_nodes):
        if not isinstance(node, Mapping) or not isinstance(node.get("task"), str):
            raise DatasetError(f"{where}: task node {index} has no task name")
        tasks.append(canonical_task(node["task"]))

    deps: list[list[int]] = [[] for _ in raw_nodes]
    args: list[list[tuple[str | None, str]]] = [[] for _ in raw_nodes]
    for index, node in enumerate(raw_nodes):
        node_where = f"{where}: task node {index} ({node['task']})"
        for name, value in _taskbench_arguments(node.get("arguments", []), node_where):
            refs = [int(j) for j in _NODE_REF_RE.findall(value)]
            if index in refs:
                continue  # TaskBench drops an argument that refers to its own node
            for ref in refs:
                if ref >= len(raw_nodes):
                    raise DatasetError(f"{node_where}: <node-{ref}> does not exist")
                if ref not in deps[index]:
                    deps[index].append(ref)
            args[index].append((name, _NODE_REF_RE.sub(r"<GENERATED>-\1", value)))

    for link in data.get("task_links") or []:
        if not isinstance(link, Mapping) or "source" not in link or "target" not in link:
            raise DatasetError(f"{where}: cannot read task link {link!r:.80}")
        source, target = canonical_task(str(link["source"])), canonical_task(str(link["target"]))
        sources = [i for i, task in enumerate(tasks) if task == source]
        targets = [i for i, task in enumerate(tasks) if task == target]
        if not sources or not targets:
            raise DatasetError(
                f"{where}: task link {link['source']} -> {link['target']} names a task "
                "that is not among the task nodes"
            )
        if any(s in deps[t] for t in targets for s in sources):
            continue
        pairs = [(s, t) for t in targets for s in sources if s < t] or [
            (s, t) for t in targets for s in sources if s != t
        ]
        if pairs:  # a link from a node to itself is dropped, as TaskBench drops self-refs
            s, t = pairs[0]
            deps[t].append(s)

    return [
        PlanNode(id=i, task=tasks[i], dep=tuple(deps[i]), args=tuple(args[i]))
        for i in range(len(raw_nodes))
    ]


def _project_plan(data: Mapping[str, Any], where: str) -> list[PlanNode]:
    try:
        items = plan_items(data["plan"])
    except PlanParseError as exc:
        raise DatasetError(f"{where}: plan: {exc}") from exc
    nodes = []
    for position, item in enumerate(items):
        try:
            subtask = Subtask.model_validate(item)
        except ValidationError as exc:
            raise DatasetError(f"{where}: plan subtask #{position}: {exc}") from exc
        nodes.append(PlanNode.from_subtask(subtask))
    return nodes


def parse_sample(data: Mapping[str, Any], *, where: str = "sample") -> Sample:
    """Read one decoded dataset line, in either format.

    Raises:
        DatasetError: the line is neither format, or its plan cannot be read.
    """
    if not isinstance(data, Mapping):
        raise DatasetError(f"{where}: expected a JSON object, got {type(data).__name__}")
    request = data.get("request", data.get("user_request"))
    if not isinstance(request, str) or not request.strip():
        raise DatasetError(f"{where}: no request (expected 'request' or 'user_request')")
    if "task_nodes" in data:
        gold = _taskbench_plan(data, where)
    elif "plan" in data:
        gold = _project_plan(data, where)
    else:
        raise DatasetError(f"{where}: no gold plan (expected 'plan' or 'task_nodes')")
    files = data.get("files") or []
    if not isinstance(files, list):
        raise DatasetError(f"{where}: files must be a list")
    return Sample(
        id=str(data.get("id", where)), request=request, files=[str(f) for f in files], gold=gold
    )


def read_samples(path: str | Path, *, limit: int | None = None) -> list[Sample]:
    """Read a JSON Lines dataset; blank lines are skipped; at most ``limit`` samples.

    Raises:
        DatasetError: a line is not JSON or not a sample; the message names the line.
    """
    samples: list[Sample] = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if limit is not None and len(samples) >= limit:
                break
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{where}: not JSON: {exc}") from exc
            samples.append(parse_sample(data, where=where))
    return samples


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
    """Count matches between one prediction and its gold plan (see the module doc).

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


@dataclass
class SampleRecord:
    """What happened to one sample.

    ``predicted`` lists the tasks the planner proposed, even when the plan was invalid;
    an invalid plan (``valid`` false: ``error`` or ``problems``) is scored as empty.
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
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleRecord:
        shape = data["shape"]
        if shape not in get_args(Shape):
            raise ValueError(f"unknown shape {shape!r}")
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
            "",
        ]
        header = (
            f"{'group':<14}{'n':>5}{'invalid':>9}"
            f"{'node P':>8}{'node R':>8}{'node F1':>9}"
            f"{'edge P':>8}{'edge R':>8}{'edge F1':>9}"
            f"{'name F1':>9}{'value F1':>10}"
        )
        lines += [header, "-" * len(header)]
        groups: list[tuple[str, GroupMetrics]] = [("overall", overall)]
        groups += [(f"shape {k}", v) for k, v in self.by_shape.items()]
        groups += [(f"size {k}", v) for k, v in self.by_size.items()]
        for label, group in groups:
            s = group.score
            lines.append(
                f"{label:<14}{group.samples:>5}{_percent(group.invalid_rate):>9}"
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


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


Planner = Callable[[Sample], list[dict[str, Any]]]
"""Returns a sample's raw plan items; raises (an :class:`Exception`) when it fails."""


def _run_one(sample: Sample, planner: Planner, max_subtasks: int) -> SampleRecord:
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
    )


def evaluate(samples: Iterable[Sample], planner: Planner, *, max_subtasks: int = 10) -> Report:
    """Run ``planner`` on each sample and score its plan against the gold one.

    Every prediction goes through ``validate_plan(items, max_subtasks=max_subtasks)``.
    An exception from the planner (an :class:`Exception`; ``KeyboardInterrupt`` and the
    like still stop the run), an unreadable result or any validation problem makes the
    sample invalid and its prediction an empty plan; the sample is never dropped.
    """
    started = time.perf_counter()
    records = [_run_one(sample, planner, max_subtasks) for sample in samples]
    return Report(
        records=records, total_time_s=time.perf_counter() - started, max_subtasks=max_subtasks
    )
