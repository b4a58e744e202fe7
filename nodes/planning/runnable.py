"""A question about an image, planned as a task that can run here.

The offline planner reads "any faces in this picture?" or "how much did I pay?" with an
upload as visual question answering: the task that asks an image a question. Offline,
with no VQA model cached, that step can only fail, while a task that can run answers
the question: the face detector says whether there are faces and how many, OCR with a
look-up finds the total on a receipt. The planning node knows what can run (the
backend, the catalog, what is cached); :func:`runnable_instead` uses it.

A question is moved only when no model can run its task, and only to a task that
answers that kind of question:

- about the presence or the number of things ("any faces", "how many people") ->
  object detection, when a detector can run whose card serves the words asked about
  (the lite face detector serves faces and people, see
  :attr:`~hugginggpt.tools.experts.catalog.ModelCard.subjects`) or a general one can;
- about what is written ("how much did I pay", "the total", "the date", "what does it
  say") -> document question answering, when it can run.

Anything else keeps its task, and its failure says what would run it (the model, its
size and how to get it, from selection).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.tasks import get_task_type, task_types

__all__ = ["asks_an_image", "Runnable", "runnable_instead"]


def asks_an_image(task: str) -> bool:
    """Whether the task asks an image a question in words (moved only when none of its
    models can run), as its declaration says."""
    declared = get_task_type(task)
    return declared is not None and declared.planning.image_question

Runnable = Callable[[str], Mapping[str, tuple[ModelCard | None, list[str]]]]
"""Task type -> the models that can run it now (model -> its card and backends), as
:func:`~hugginggpt.tools.experts.availability.runnable` gives them."""

_PRESENCE = re.compile(
    r"\b(?:any|how many|is there|are there|was there|were there|count|number of|anyone|"
    r"anybody|someone|somebody|who is in|who's in|hay|alg[uú]n[oa]?|alguien|cu[aá]nt[oa]s|"
    r"il y a|y a-t-il|combien|quelqu'un|h[aá]|algu[eé]m|quant[oa]s|gibt es|wie viele|jemand|"
    r"zijn er|staat er|hoeveel|iemand|c'[eè]|ci sono|qualcuno)(?!\w)|有没有|有几|多少",
    re.IGNORECASE)
"""A question about whether things are in the image, or how many."""
_WRITTEN = re.compile(
    r"\b(?:how much|total|paid|pay|price|prices|cost|costs|amount|sum|due|balance|vat|tax|"
    r"date|dated|when was|invoice|receipt|bill|number|phone|address|what does (?:it|this|"
    r"that|the \w+) say|what is written|what's written|written|says?)\b", re.IGNORECASE)
"""A question whose answer is written in the image: an amount, a date, a line of text."""
_WORD = re.compile(r"[^\W\d_]+")


def runnable_instead(items: list[dict[str, Any]], can_run: Runnable
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """``items`` with each image question that cannot run moved to a task that can
    answer it (see the module's docstring), and a note for each move.

    Only the step's task and its arguments change; its id, dependencies and the steps
    that use its output stay (a detector's and a document answer's outputs have a text
    form too).
    """
    moved, notes = [], []
    for item in items:
        task = str(item.get("task", ""))
        args = dict(item.get("args") or {})
        question = str(args.get("question") or args.get("text") or "")
        image = args.get("image")
        if not asks_an_image(task) or not image or not question or can_run(task):
            moved.append(item)
            continue
        instead = _answering_task(question, image, can_run)
        if instead is None:
            moved.append(item)
            continue
        new_task, new_args = instead
        moved.append({**item, "task": new_task, "args": new_args})
        notes.append(f"#{item.get('id')} {new_task} instead of {task}, which no model can "
                     "run here")
    return moved, notes


def _answering_task(question: str, image: str, can_run: Runnable
                    ) -> tuple[str, dict[str, str]] | None:
    """The first task that answers this kind of question and can run, with its
    arguments (the image, and the question where it takes one)."""
    for kind, pattern in (("presence", _PRESENCE), ("written", _WRITTEN)):
        if not pattern.search(question):
            continue
        for task in task_types():
            if task.planning.answers == kind and _detects(question, can_run(task.name)):
                given = {"image": image, "question": question}
                return task.name, {a.name: given[a.name] for a in task.args if a.name in given}
    return None


def _detects(question: str, models: Mapping[str, tuple[ModelCard | None, list[str]]]
             ) -> bool:
    """Whether a model that can run serves the question: a general one, or a specialist
    whose card names a word the question uses (a face detector: "faces", "people")."""
    words = set(_WORD.findall(question.lower()))
    return any(card is None or not card.subjects or not words.isdisjoint(card.subjects)
               for card, _ in models.values())
