"""Controller LLMs compared on whole answers (``hugginggpt eval --answers FILE --llm A
--llm B``): each model's answers set run (:func:`run_answers`), judged right, honest or
wrong, with the LLM calls each answer took (tokens, cost), in one table ranked by right
answers, then fewest wrong."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.evaluation.answer_report import AnswerReport
from hugginggpt.evaluation.compare import percentile
from hugginggpt.tools.llm.records import LLMCall

__all__ = ["AnswersRun", "AnswersComparison"]


@dataclass
class AnswersRun:
    """One model's judged answers, and each sample's LLM calls by sample id."""

    label: str
    report: AnswerReport
    calls: dict[str, list[LLMCall]] = field(default_factory=dict)
    priced: bool = False

    def _all_calls(self) -> list[LLMCall]:
        return [call for calls in self.calls.values() for call in calls]

    def figures(self) -> dict[str, Any]:
        counts = AnswerReport.counts(self.report.records)
        seconds = [r.seconds for r in self.report.records]
        calls = self._all_calls()
        return counts | {
            "seconds_median": statistics.median(seconds) if seconds else None,
            "seconds_p95": percentile(seconds, 95),
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "cost": sum(c.cost for c in calls) if self.priced else None,
        }

    def to_json(self) -> dict[str, Any]:
        report = self.report.to_json()
        for sample in report["samples"]:
            calls = self.calls.get(sample["id"], [])
            sample |= {"llm_calls": len(calls),
                       "prompt_tokens": sum(c.prompt_tokens for c in calls),
                       "completion_tokens": sum(c.completion_tokens for c in calls),
                       "cost": sum(c.cost for c in calls) if self.priced else None}
        return {"llm": self.label, "figures": self.figures(), "report": report}


def _rank_key(run: AnswersRun) -> tuple[int, int]:
    counts = AnswerReport.counts(run.report.records)
    return (-counts["right"], counts["wrong"])


@dataclass
class AnswersComparison:
    """Several models' answers to the same samples, best first."""

    runs: list[AnswersRun]

    @property
    def ranked(self) -> list[AnswersRun]:
        return sorted(self.runs, key=_rank_key)  # stable: ties keep the order given

    def to_json(self) -> dict[str, Any]:
        return {"ranking": [run.label for run in self.ranked],
                "models": [run.to_json() | {"rank": rank}
                           for rank, run in enumerate(self.ranked, start=1)]}

    def format(self) -> str:
        samples = len(self.runs[0].report.records) if self.runs else 0
        width = max([len("model"), *(len(run.label) for run in self.runs)])
        header = (f"{'#':>2}  {'model':<{width}}{'right':>7}{'honest':>8}{'wrong':>7}"
                  f"{'median s':>10}{'p95 s':>8}{'prompt tok':>12}{'compl tok':>11}"
                  f"{'cost':>10}")
        lines = [f"Answers compared: {samples} samples each, ranked by right answers, "
                 "then fewest wrong", "", header, "-" * len(header)]
        for rank, run in enumerate(self.ranked, start=1):
            f = run.figures()
            lines.append(
                f"{rank:>2}  {run.label:<{width}}{f['right']:>7}{f['honest']:>8}"
                f"{f['wrong']:>7}{_num(f['seconds_median'], 2):>10}"
                f"{_num(f['seconds_p95'], 2):>8}{f['prompt_tokens']:>12}"
                f"{f['completion_tokens']:>11}{_num(f['cost'], 4):>10}")
        for run in self.ranked:
            wrong = [r for r in run.report.records if r.judgement.label == "wrong"]
            if wrong:
                lines += ["", f"{run.label}: wrong answers:"]
                for record in wrong[:5]:
                    said = " ".join((record.error or record.answer).split())
                    lines.append(f"  {record.sample.id}: {said or '(empty)':.120}")
                if len(wrong) > 5:
                    lines.append(f"  ... and {len(wrong) - 5} more")
        return "\n".join(lines)


def _num(value: float | None, places: int) -> str:
    return "-" if value is None else f"{value:.{places}f}"
