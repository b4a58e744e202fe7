"""Planner LLMs compared side by side on one labelled set (``hugginggpt eval DATA --llm A
--llm B``).

Each model plans every sample as the graph's plan stage would: its plan is validated,
and a rejected plan goes back to it with the problems, at most ``max_plan_retries``
times (the repairs); the plan it ends with is scored by :func:`evaluate`. The LLM calls
of each sample are kept (:class:`~hugginggpt.tools.llm.records.LLMCall`: tokens, latency,
cost), so one table can say, per model: node and edge F1, invalid plans, repairs, median
and 95th-percentile planning latency, tokens, and the estimated cost when the endpoint
has prices. The models are ranked by node F1, then edge F1.

Before it is measured, each model plans the first sample once, untimed and uncounted: the
first model would otherwise pay alone for loading the example bank and the client
library, and a local server for loading its weights.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.evaluation.datasets import Sample
from hugginggpt.evaluation.report import Report, evaluate
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import State
from hugginggpt.nodes.plan import ask_planner
from hugginggpt.nodes.planning.validation import PlanParseError, validate_plan
from hugginggpt.tools.errors import LLMCredentialsError
from hugginggpt.tools.llm.errors import llm_call_errors
from hugginggpt.tools.llm.records import LLMCall

__all__ = ["ModelRun", "Comparison", "run_model", "percentile"]


@dataclass
class ModelRun:
    """One model's plans on the set: the report, and each sample's LLM calls.

    ``calls[i]`` are the calls made for ``report.records[i]`` (the first plan, then each
    repair); ``priced`` says whether the endpoint has prices, so that a cost of 0 is a
    cost and not an unknown.
    """

    label: str
    report: Report
    calls: list[list[LLMCall]] = field(default_factory=list)
    priced: bool = False

    @property
    def repairs(self) -> int:
        return sum(self.sample_repairs(i) for i in range(len(self.calls)))

    def sample_repairs(self, index: int) -> int:
        return max(0, len(self.calls[index]) - 1)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for calls in self.calls for c in calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for calls in self.calls for c in calls)

    @property
    def cost(self) -> float | None:
        return sum(c.cost for calls in self.calls for c in calls) if self.priced else None

    @property
    def latencies(self) -> list[float]:
        return [r.latency_s for r in self.report.records]

    def figures(self) -> dict[str, Any]:
        """The table's row, as numbers (None where there is nothing to measure)."""
        overall = self.report.overall
        latencies = self.latencies
        return {
            "samples": overall.samples,
            "node_f1": overall.score.node.f1,
            "edge_f1": overall.score.edge.f1,
            "invalid": overall.invalid,
            "repairs": self.repairs,
            "latency_median_s": statistics.median(latencies) if latencies else None,
            "latency_p95_s": percentile(latencies, 95),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }

    def to_json(self) -> dict[str, Any]:
        """The figures, and each sample's record with its repairs, tokens and cost."""
        records = []
        for index, record in enumerate(self.report.records):
            calls = self.calls[index] if index < len(self.calls) else []
            records.append(record.to_json() | {
                "repairs": self.sample_repairs(index) if calls else 0,
                "llm_calls": len(calls),
                "prompt_tokens": sum(c.prompt_tokens for c in calls),
                "completion_tokens": sum(c.completion_tokens for c in calls),
                "cost": sum(c.cost for c in calls) if self.priced else None,
            })
        return {"llm": self.label, "figures": self.figures(),
                "report": self.report.to_json() | {"records": records}}


def percentile(values: Sequence[float], pct: float) -> float | None:
    """The ``pct``-th percentile, interpolated between the two nearest values (the one
    value of a single sample; None for none)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * pct / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _rank_key(run: ModelRun) -> tuple[float, float]:
    score = run.report.overall.score
    return (score.node.f1 if score.node.f1 is not None else -1.0,
            score.edge.f1 if score.edge.f1 is not None else -1.0)


@dataclass
class Comparison:
    """Several models' runs on the same samples, best first."""

    runs: list[ModelRun]

    @property
    def ranked(self) -> list[ModelRun]:
        return sorted(self.runs, key=_rank_key, reverse=True)  # stable: ties keep order

    def to_json(self) -> dict[str, Any]:
        return {"ranking": [run.label for run in self.ranked],
                "models": [run.to_json() | {"rank": rank}
                           for rank, run in enumerate(self.ranked, start=1)]}

    def format(self) -> str:
        """One row per model, best first, then each model's invalid plans."""
        samples = self.runs[0].report.overall.samples if self.runs else 0
        width = max([len("model"), *(len(run.label) for run in self.runs)])
        header = (f"{'#':>2}  {'model':<{width}}{'node F1':>9}{'edge F1':>9}{'invalid':>9}"
                  f"{'repairs':>9}{'median s':>10}{'p95 s':>8}{'prompt tok':>12}"
                  f"{'compl tok':>11}{'cost':>10}")
        lines = [f"Planner LLMs compared: {samples} samples each, ranked by node F1, "
                 "then edge F1", "", header, "-" * len(header)]
        for rank, run in enumerate(self.ranked, start=1):
            f = run.figures()
            lines.append(
                f"{rank:>2}  {run.label:<{width}}{_num(f['node_f1']):>9}"
                f"{_num(f['edge_f1']):>9}{f['invalid']:>9}{f['repairs']:>9}"
                f"{_num(f['latency_median_s'], 2):>10}{_num(f['latency_p95_s'], 2):>8}"
                f"{f['prompt_tokens']:>12}{f['completion_tokens']:>11}"
                f"{_num(f['cost'], 4):>10}")
        for run in self.ranked:
            failed = [r for r in run.report.records if not r.valid]
            if failed:
                lines += ["", f"{run.label}: invalid plans (scored as empty plans):"]
                for record in failed[:5]:
                    why = record.error or "; ".join(record.problems)
                    lines.append(f"  {record.id}: {why:.120}")
                if len(failed) > 5:
                    lines.append(f"  ... and {len(failed) - 5} more")
        return "\n".join(lines)


def _num(value: float | None, places: int = 3) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def run_model(label: str, samples: Sequence[Sample], context: Context, *,
              priced: bool = False) -> ModelRun:
    """Plan every sample with ``context``'s planner LLM, repairing rejected plans as the
    plan stage does, and score the plans (see the module docstring).

    Raises:
        LLMCredentialsError: the endpoint lacks its key or token.
    """
    calls: list[list[LLMCall]] = []
    if samples:
        _warm_up(samples[0], context)

    def planner(sample: Sample) -> list[dict[str, Any]]:
        made: list[LLMCall] = []
        calls.append(made)
        return _plan_with_repairs(sample, context, made)

    report = evaluate(samples, planner, max_subtasks=context.max_subtasks)
    return ModelRun(label=label, report=report, calls=calls, priced=priced)


def _warm_up(sample: Sample, context: Context) -> None:
    """One untimed plan, its outcome dropped: a failure here is measured again, with
    the sample, in the run that counts; but a model without its key is not run at all.

    Raises:
        LLMCredentialsError: the endpoint lacks its key or token (no request was made).
    """
    try:
        ask_planner(State(request=sample.request, files=sample.files), context, [])
    except LLMCredentialsError:
        raise
    except PlanParseError:
        return
    except llm_call_errors():
        return


def _plan_with_repairs(sample: Sample, context: Context,
                       calls: list[LLMCall]) -> list[dict[str, Any]]:
    """The plan the model ends with: its first, or its last repair. Raises the last
    :class:`PlanParseError` when no reply could be read as a plan."""
    state = State(request=sample.request, files=sample.files)
    attempts = context.max_plan_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            items, reply = ask_planner(state, context, calls)
        except PlanParseError as exc:
            if attempt == attempts:
                raise
            problems, reply = [str(exc)], exc.reply
        else:
            problems = validate_plan(items, max_subtasks=context.max_subtasks)[1]
            if not problems or attempt == attempts:
                return items
        state = state.model_copy(update={"plan_errors": problems, "plan_reply": reply[:4000],
                                         "plan_attempts": attempt})
    raise AssertionError("unreachable: the last attempt returns or raises")
