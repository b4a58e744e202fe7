"""Running an answers set and reporting it per half: right, honest and wrong counts, and
every wrong answer with what the user read.

:func:`run_answers` makes each sample's files in a fresh folder of its own, asks an
``Answerer`` (the whole graph, in the CLI; an older tree's, in the benchmark) for the
answer, and judges it with :func:`~hugginggpt.evaluation.answers.judge`. A sample whose
run raises counts as wrong, with the error as its answer, and the run goes on: a crash
is what the user would have got.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.evaluation.answer_files import materialise
from hugginggpt.evaluation.answers import HELD_OUT, SPLITS, AnswerSample, Judgement, judge

__all__ = ["WRONG_TARGET", "Answerer", "AnswerRecord", "AnswerReport", "run_answers",
           "record_of"]

WRONG_TARGET = 1 / 30
"""At most one confidently wrong answer in 30 on each held-out split (issue 25)."""

Answerer = Callable[[AnswerSample, list[Path], Path], tuple[str, str]]
"""Answers a sample: (its request and files, a fresh workspace) -> (answer, run status)."""

_SHOWN = 400
"""Characters of a wrong answer shown in the text report (the JSON keeps it whole)."""


@dataclass(frozen=True)
class AnswerRecord:
    """One sample's answer and its judgement."""

    sample: AnswerSample
    answer: str
    status: str
    judgement: Judgement
    seconds: float
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        s = self.sample
        return {"id": s.id, "split": s.split, "category": s.category,
                "language": s.language, "request": s.request, "status": self.status,
                "answer": self.answer, "error": self.error,
                "seconds": round(self.seconds, 2)} | self.judgement.to_json()


def record_of(sample: AnswerSample, answer: str, status: str, seconds: float = 0.0,
              error: str = "") -> AnswerRecord:
    """The judged record of an answer (an error: wrong, whatever the answer says)."""
    verdict = Judgement("wrong", f"the run crashed: {error}") if error else judge(answer, sample)
    return AnswerRecord(sample, answer, status, verdict, seconds, error)


def run_answers(samples: Sequence[AnswerSample], answer: Answerer,
                on_record: Callable[[AnswerRecord], None] | None = None) -> AnswerReport:
    """Answer and judge every sample, each in a temporary folder of its own (its files
    in ``files/``, the run's workspace in ``workspace/``), removed afterwards."""
    records = []
    for sample in samples:
        begin = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"answers-{sample.id}-") as scratch:
            try:
                files = materialise(sample.files, Path(scratch) / "files")
                text, status = answer(sample, files, Path(scratch) / "workspace")
                error = ""
            except Exception as exc:  # noqa: BLE001  (a crash is an answer: wrong, and the eval goes on)
                text, status, error = "", "crashed", f"{type(exc).__name__}: {exc}"
        record = record_of(sample, text, status, time.perf_counter() - begin, error)
        records.append(record)
        if on_record is not None:
            on_record(record)
    return AnswerReport(records)


def _one_line(text: str, limit: int = _SHOWN) -> str:
    flat = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[:limit] + " ..."


@dataclass(frozen=True)
class AnswerReport:
    """The judged records of one run, in sample order."""

    records: list[AnswerRecord]

    def halves(self) -> dict[str, list[AnswerRecord]]:
        """The records of each split present, in :data:`SPLITS` order, then ``all`` when
        there are two."""
        found = {name: [r for r in self.records if r.sample.split == name] for name in SPLITS}
        present = {name: rs for name, rs in found.items() if rs}
        return present | {"all": list(self.records)} if len(present) > 1 else present

    @staticmethod
    def counts(records: Sequence[AnswerRecord]) -> dict[str, int]:
        labels = Counter(r.judgement.label for r in records)
        return {"total": len(records), "right": labels["right"],
                "honest": labels["honest"], "wrong": labels["wrong"]}

    def held_out_meets_target(self) -> bool | None:
        """Whether each held-out split present has at most :data:`WRONG_TARGET` wrong
        (None: the run has no held-out sample)."""
        held = [[r for r in self.records if r.sample.split == name] for name in HELD_OUT]
        held = [records for records in held if records]
        if not held:
            return None
        return all(self.counts(rs)["wrong"] <= WRONG_TARGET * len(rs) for rs in held)

    def to_json(self) -> dict[str, Any]:
        halves = self.halves()
        return {
            "counts": {name: self.counts(rs) for name, rs in halves.items()},
            "by_category": {name: {c: self.counts([r for r in rs if r.sample.category == c])
                                   for c in sorted({r.sample.category for r in rs})}
                            for name, rs in halves.items()},
            "held_out_wrong_at_most_1_in_30": self.held_out_meets_target(),
            "samples": [r.to_json() for r in self.records],
        }

    def format(self) -> str:
        lines = []
        for name, records in self.halves().items():
            c = self.counts(records)
            share = c["wrong"] / c["total"] if c["total"] else 0.0
            lines.append(f"{name}: {c['total']} answers: {c['right']} right, {c['honest']} "
                         f"honest, {c['wrong']} wrong ({share:.1%} wrong)")
            for category in sorted({r.sample.category for r in records}):
                k = self.counts([r for r in records if r.sample.category == category])
                lines.append(f"  {category:<16} {k['right']:>3} right {k['honest']:>3} "
                             f"honest {k['wrong']:>3} wrong")
        target = self.held_out_meets_target()
        if target is not None:
            lines.append("each held-out split wrong at most 1 in 30: "
                         f"{'yes' if target else 'no'}")
        wrong = [r for r in self.records if r.judgement.label == "wrong"]
        if wrong:
            lines.append("\nwrong answers:")
        for r in wrong:
            lines.append(f"- {r.sample.id} ({r.sample.split}, {r.sample.category}, "
                         f"{r.sample.language}) {r.sample.request!r}")
            lines.append(f"    answer: {_one_line(r.error or r.answer) or '(empty)'}")
            why = r.judgement.reason
            if r.judgement.forbidden:
                why += f"; forbidden: {', '.join(r.judgement.forbidden)}"
            elif r.judgement.missing:
                why += f"; missing: {', '.join(r.judgement.missing)}"
            lines.append(f"    why: {why}")
        return "\n".join(lines)
