"""Judging answers as a user reads them: right, honest or wrong.

A planner score says whether the plan looks like a careful one; a user reads only the
answer. This module reads a labelled answers set (``evals/answers.jsonl``, see
``evals/README.md``) and judges each answer text against its sample's labels:

- **right**: every expected fact is stated, none hedged, and no forbidden one is stated;
- **honest**: the answer says it could not do it or is unsure, *and why*, and states no
  forbidden fact without uncertainty attached to it;
- **wrong**: anything else (a confident wrong answer, a partial answer that does not say
  what is missing and why, a reply that ignores the request).

The rules read *statements*: the answer cut into sentences (at ``.``, ``!``, ``?``,
``。``, ``！``, ``？`` followed by a space, and at line breaks). A statement is *hedged*
when it carries an uncertainty or inability marker (:data:`UNCERTAIN`,
:data:`UNABLE`), or when the next statement of the same line carries an uncertainty
marker ("It is neutral (51%). This may be wrong: ..."). A hedge in another line (a note
at the end) does not cover a claim: a user who reads "The review is neutral (100%)"
takes it as the answer.

1. A forbidden pattern in an unhedged statement: **wrong**, whatever else the answer
   says (expected facts included).
2. Every expected pattern in an unhedged statement: **right**. A sample without
   expected facts (``"expect": null``: nothing offline can do it) is never right.
3. A statement with a marker of :data:`UNABLE` or :data:`UNCERTAIN` whose sentence, or
   the next one, gives a reason (:data:`REASONS`), and, when the sample has ``why``, an
   answer that names it: **honest**. So a partial answer (some expected facts, or a
   multi-step answer with a failed step) is honest when it says what it could not do and
   why, and wrong otherwise; it is never right.
4. Otherwise **wrong**.

The marker lists are general English phrasings of "I could not" and "I am not sure",
not this project's messages; an answer in another language is judged by its patterns
(the labels give the facts in the languages an answer may use) and by these English
markers, which the offline answers use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hugginggpt.evaluation.answer_files import FileSpecError, check_file_spec
from hugginggpt.evaluation.datasets import DatasetError

__all__ = [
    "REASONS",
    "HELD_OUT",
    "SPLITS",
    "UNABLE",
    "UNCERTAIN",
    "AnswerSample",
    "Judgement",
    "Label",
    "by_split",
    "judge",
    "parse_answer_sample",
    "read_answer_samples",
    "statements",
]

Label = Literal["right", "honest", "wrong"]
SPLITS = ("tune", "held-out", "fresh")
"""``tune`` may be looked at while changing the code; ``held-out`` and ``fresh`` only
measured. ``fresh`` is a second held-out half, written after the first had been measured
once, so that a change made after that measurement is judged on requests nobody had seen."""
HELD_OUT = ("held-out", "fresh")
"""The splits that must meet the wrong-answer target, each on its own."""

_NOT = r"(?: not|n['’]t)"
UNABLE = (
    rf"could{_NOT}", r"can(?:not| not|['’]t)", r"unable", r"not able", r"failed",
    r"fails?", rf"(?:did|does){_NOT} work", r"no model", r"not available",
    r"unavailable", r"not supported", r"unsupported", r"not possible", r"impossible",
    r"would need", r"needs", r"requires", r"not installed", r"refused", r"skipped",
    rf"do{_NOT} know", rf"did{_NOT} (?:find|recogni[sz]e|understand)",
    r"no (?:answer|result)", r"not (?:answer|do|read|hear|tell)",
)
"""Saying that it could not do something (whole words, case-insensitive)."""

UNCERTAIN = (
    r"unsure", r"not sure", r"uncertain(?:ty)?", r"low confidence", r"not confident",
    r"(?:may|might|could) (?:be|have been) (?:wrong|mistaken|inaccurate|incorrect)",
    r"(?:may|might) not be", r"unreliable", r"not reliable", r"probably", r"possibly",
    r"perhaps", r"maybe", r"(?:a|my) guess", r"hard to (?:tell|say)", r"unclear",
    r"ambiguous", r"garbled", r"doubt(?:ful)?", r"take (?:it|this) with",
)
"""Saying that it is not sure (whole words, case-insensitive)."""

REASONS = (
    r"because", r"since", r"due to", r"as (?:it|the|this|there)", r"so (?:it|the|i)",
    r"without", r"offline", r"no (?:model|key|network|internet|connection|llm|engine)",
    r"not (?:cached|installed|downloaded|configured)", r"needs", r"would need",
    r"requires?", r"only", r"too (?:short|long|few|little|noisy|quiet)", r"not enough",
    r"network", r"internet", r"download", r"language model", r"llm", r"api key",
)
"""Saying why (whole words); a colon or dash followed by words counts too ("failed: no
model ...")."""

_UNABLE = re.compile(r"\b(?:" + "|".join(UNABLE) + r")\b", re.I)
_UNCERTAIN = re.compile(r"\b(?:" + "|".join(UNCERTAIN) + r")\b", re.I)
_REASON = re.compile(r"\b(?:" + "|".join(REASONS) + r")\b|\w\s*(?::|—| - )\s*\w", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_KEYS = {"id", "split", "language", "category", "request", "files", "expect", "forbid",
         "why", "note"}


@dataclass(frozen=True)
class AnswerSample:
    """One labelled request of an answers set (see ``evals/README.md``)."""

    id: str
    split: str
    language: str
    category: str
    request: str
    files: tuple[Mapping[str, Any], ...] = ()
    expect: tuple[str, ...] | None = ()
    """Patterns every right answer matches; None: nothing can do it here, only honest."""
    forbid: tuple[str, ...] = ()
    why: str | None = None
    """A pattern an honest answer matches: what its explanation must be about."""
    note: str = ""


@dataclass(frozen=True)
class Judgement:
    """The label of one answer and what decided it."""

    label: Label
    reason: str
    missing: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "reason": self.reason, "missing": list(self.missing),
                "forbidden": list(self.forbidden)}


def statements(answer: str) -> list[list[str]]:
    """The answer's lines, each cut into its sentences (empty ones dropped)."""
    lines = []
    for line in answer.splitlines():
        sentences = [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
        if sentences:
            lines.append(sentences)
    return lines


def _hedged(line: list[str], index: int) -> bool:
    sentence = line[index]
    if _UNABLE.search(sentence) or _UNCERTAIN.search(sentence):
        return True
    return index + 1 < len(line) and bool(_UNCERTAIN.search(line[index + 1]))


def _explains(line: list[str], index: int) -> bool:
    sentence = line[index]
    marker = _UNABLE.search(sentence) or _UNCERTAIN.search(sentence)
    if marker is None:
        return False
    after = " ".join([sentence[marker.start():], *line[index + 1:index + 2]])
    return bool(_REASON.search(sentence) or _REASON.search(after))


def judge(answer: str, sample: AnswerSample) -> Judgement:
    """Right, honest or wrong, by the rules of this module's docstring."""
    lines = statements(answer)
    plain = [s for line in lines for i, s in enumerate(line) if not _hedged(line, i)]
    forbidden = tuple(p for p in sample.forbid
                      if any(re.search(p, s, re.I) for s in plain))
    if forbidden:
        return Judgement("wrong", "states a forbidden fact without uncertainty",
                         forbidden=forbidden)
    missing = tuple(p for p in sample.expect or ()
                    if not any(re.search(p, s, re.I) for s in plain))
    if sample.expect is not None and not missing:
        return Judgement("right", "states every expected fact")
    explained = any(_explains(line, i) for line in lines for i in range(len(line)))
    if explained and (sample.why is None or re.search(sample.why, answer, re.I)):
        return Judgement("honest", "says it could not or is unsure, and why",
                         missing=missing)
    if explained:
        return Judgement("wrong", f"its explanation does not name {sample.why!r}",
                         missing=missing)
    return Judgement("wrong", "neither the expected facts nor a reason it could not",
                     missing=missing)


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise DatasetError(f"{where}: expected a list of non-empty patterns")
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise DatasetError(f"{where}: {pattern!r} is not a regular expression "
                               f"({exc})") from None
    return tuple(value)


def parse_answer_sample(data: Any, where: str = "sample") -> AnswerSample:
    """One sample from its JSON object.

    Raises:
        DatasetError: a missing or unknown key, or a value of the wrong shape.
    """
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise DatasetError(f"{where}: unknown keys {unknown}")
    for key in ("id", "split", "language", "category", "request"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise DatasetError(f"{where}: {key!r} must be a non-empty string")
    if data["split"] not in SPLITS:
        raise DatasetError(f"{where}: split must be one of {SPLITS}, not {data['split']!r}")
    files = data.get("files", [])
    if not isinstance(files, list):
        raise DatasetError(f"{where}: 'files' must be a list")
    try:
        for spec in files:
            check_file_spec(spec)
    except FileSpecError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    names = [spec["name"] for spec in files]
    if len(set(names)) != len(names):
        raise DatasetError(f"{where}: two files have the same name")
    expect = data.get("expect")
    if expect is not None and (not isinstance(expect, dict) or set(expect) != {"all"}
                               or not expect["all"]):
        raise DatasetError(f"{where}: 'expect' must be null or {{\"all\": [patterns]}}")
    why = data.get("why")
    if why is not None:
        _patterns([why], f"{where}: why")
    return AnswerSample(
        id=data["id"], split=data["split"], language=data["language"],
        category=data["category"], request=data["request"], files=tuple(files),
        expect=None if expect is None else _patterns(expect["all"], f"{where}: expect"),
        forbid=_patterns(data.get("forbid", []), f"{where}: forbid"),
        why=why, note=str(data.get("note", "")))


def read_answer_samples(path: str | Path, split: str = "all",
                        limit: int | None = None) -> list[AnswerSample]:
    """The samples of an answers set, in file order: only ``split``'s (``tune``,
    ``held-out`` or ``all``), and the first ``limit`` of those.

    Raises:
        OSError: the file cannot be read.
        DatasetError: a line that is not a valid sample (its line number is named), or
            two samples with one id.
    """
    samples: list[AnswerSample] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"line {number}: not JSON ({exc.msg})") from None
        samples.append(parse_answer_sample(data, f"line {number}"))
    ids = [s.id for s in samples]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise DatasetError(f"ids used twice: {twice}")
    chosen = [s for s in samples if split == "all" or s.split == split]
    return chosen[:limit] if limit is not None else chosen


def by_split(samples: Sequence[AnswerSample]) -> dict[str, list[AnswerSample]]:
    """The samples of each split present, in :data:`SPLITS` order."""
    return {name: [s for s in samples if s.split == name] for name in SPLITS
            if any(s.split == name for s in samples)}
