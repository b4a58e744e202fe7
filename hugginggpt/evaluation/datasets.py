"""Reading evaluation datasets: JSON Lines of requests with their gold plans.

Two formats, mixed freely in one file (the package doc, :mod:`hugginggpt.evaluation`,
describes both): this project's plans and TaskBench's ``task_nodes``/``task_links``.
Either becomes a :class:`Sample` whose gold plan is a list of :class:`PlanNode`, the one
form :mod:`hugginggpt.evaluation.metrics` scores, so the metrics never see a format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hugginggpt.graph.state import Subtask
from hugginggpt.nodes.planning.validation import PlanParseError, plan_items
from hugginggpt.tools.experts.tasks import get_task_type

__all__ = [
    "DatasetError",
    "PlanNode",
    "Sample",
    "canonical_task",
    "parse_sample",
    "read_samples",
]

_NODE_REF_RE = re.compile(r"<node-(\d+)>")


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
