"""What the task types' declarations say that the plan reader asks of them: which task
reads a kind of file into text, which translates, what input a task works on, whether
it takes labels or a question, and which task does an ask on an input of some kind
(:attr:`~hugginggpt.tools.experts.tasks.Planning.ask`)."""

from __future__ import annotations

from hugginggpt.nodes.planning.clauses import planning
from hugginggpt.tools.experts.tasks import get_task_type, task_types

__all__ = ["asks_question", "doing", "input_kind", "read_as", "reader", "readers",
           "takes_labels", "translator"]


def readers() -> list[tuple[str, str]]:
    """(kind, task): the steps that turn a file into text (OCR or a caption, a
    transcript), images first."""
    return sorted(((t.planning.reads, t.name) for t in task_types() if t.planning.reads),
                  key=lambda found: found[0] != "image")


def reader(kind: str) -> str | None:
    return next((task for read, task in readers() if read == kind), None)


def translator() -> str:
    """The task a language named as a target asks for."""
    return next(t.name for t in task_types() if t.planning.into_language)


def input_kind(task: str) -> str | None:
    """The kind of input ``task`` works on: its first required argument's, a question
    aside ("text" for question answering, "table" for a question about a table)."""
    task_type = get_task_type(task)
    return next((str(a.kind) for a in task_type.args if a.required and a.name != "question"),
                None) if task_type else None


def takes_labels(task: str) -> bool:
    task_type = get_task_type(task)
    return task_type is not None and any(a.name == "labels" for a in task_type.args)


def asks_question(task: str) -> bool:
    task_type = get_task_type(task)
    return task_type is not None and any(a.name == "question" for a in task_type.args)


def doing(ask: str | None, kind: str, *, labelled: bool | None = None,
          documents: bool = False) -> str | None:
    """The task type that does ``ask`` on an input of ``kind`` (with labels or without,
    when ``labelled`` says), as the declarations say (:attr:`Planning.ask`)."""
    return next((t.name for t in task_types() if ask and t.planning.ask == ask
                 and input_kind(t.name) == kind and t.planning.documents == documents
                 and (labelled is None or takes_labels(t.name) == labelled)), None)


def read_as(task: str) -> set[str]:
    """What the plan reader may make of a cue's task with the inputs at hand (see
    :meth:`~hugginggpt.nodes.planning.steps.PlanReader._refine`): the task types of its
    ask that take labels as it does (a labelled ask with none is the text's
    classification), and for one that answers questions about an image in another's
    place, the questions and the readers."""
    how, labelled = planning(task), takes_labels(task)
    same = {t.name for t in task_types() if how.ask and t.planning.ask == how.ask
            and takes_labels(t.name) == labelled}
    if labelled:
        same.add(doing(how.ask, "text", labelled=False) or task)
    return same | {t.name for t in task_types() if how.answers and (
        t.planning.ask == "question" or t.planning.reads)}
