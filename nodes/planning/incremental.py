"""Reading a plan while it streams: each subtask object as soon as its JSON is complete,
handed over as soon as it is valid with those before it.

The planner's reply arrives a few characters at a time (tool-call argument deltas, or
content). :class:`SubtaskScanner` is fed the reply's text so far, finds the list of
subtasks in it (the value of ``"subtasks"``, or a reply that is itself a list, bare or
in a code fence after prose) and yields each element of that list once its closing brace has
arrived. It is a small string-aware bracket counter, not a JSON parser: an element is
decoded with :func:`json.loads` only once it is complete, and what it decodes to is
left for the plan validator to judge. Text it cannot place (prose before the list, a
reply that is not a plan) yields nothing; the whole reply is still read and validated
when it ends, as for a plan that did not stream.

:class:`HandingOver` is the plan stage's stream listener: it validates each element with
the earlier valid ones and hands the valid ones to a :class:`Handover` (the execute
stage's streamed execution), which selects and runs them while the reply streams on.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from hugginggpt.graph.state import Streamed, Subtask
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.llm.records import LLMCall

__all__ = ["SubtaskScanner", "Handover", "HandingOver"]

_LIST_START = re.compile(r'"(?:subtasks|tasks|plan|task_nodes)"\s*:\s*\[')
_BARE_LIST = re.compile(r"\A\s*\[")
_FENCED_LIST = re.compile(r"```(?:json|JSON)?\s*\[")


class SubtaskScanner:
    """Yields the subtask objects of a streamed plan reply, in order, each once.

    Feed it the whole text received so far (it keeps its place, so each character is
    scanned once); it returns the objects and lists completed since the last call, as
    they decode (or as their text, if they do not), for the validator to name. Scalars
    in the list are not returned: the whole reply's validation names them.
    """

    def __init__(self) -> None:
        self._start: int | None = None  # just after the list's "["
        self._pos = 0
        self._depth = 0  # brackets open inside the list
        self._in_string = False
        self._escaped = False
        self._element_at: int | None = None
        self._ended = False

    def feed(self, text: str) -> list[Any]:
        """The list elements completed in ``text`` (the reply so far) since the last call."""
        if self._ended:
            return []
        if self._start is None:
            found = (_LIST_START.search(text) or _BARE_LIST.match(text)
                     or _FENCED_LIST.search(text))
            if found is None:
                return []
            self._start = self._pos = found.end()
        done: list[Any] = []
        for i in range(self._pos, len(text)):
            ch = text[i]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
                continue
            if ch == '"':
                self._in_string = True
            elif ch in "{[":
                if self._depth == 0:
                    self._element_at = i
                self._depth += 1
            elif ch in "}]":
                if self._depth == 0:  # the list itself closes
                    self._ended = True
                    self._pos = i + 1
                    return done
                self._depth -= 1
                if self._depth == 0 and self._element_at is not None:
                    done.append(_decoded(text[self._element_at:i + 1]))
                    self._element_at = None
        self._pos = len(text)
        return done


def _decoded(piece: str) -> Any:
    try:
        return json.loads(piece)
    except ValueError:
        return piece


class Handover(Protocol):
    """Where the plan stage hands each complete subtask while the plan streams, and what
    was done with them when the reply has ended."""

    def take(self, reply: int, subtask: Subtask) -> None:
        """A subtask of endpoint ``reply``'s reply, valid with those handed before it
        (the reply of another endpoint, after one failed mid-stream, starts over)."""

    def finish(self, plan: list[Subtask]) -> tuple[dict[int, Streamed], list[LLMCall]]:
        """Wait for what was handed over; what it did for ``plan`` (the validated plan, or
        empty when the reply was rejected: then what ran of the last reply), and the LLM
        calls it made."""
        ...


class HandingOver:
    """The stream listener of :func:`~hugginggpt.tools.llm.client.complete`: the reply
    read as it streams, each subtask handed over as soon as its JSON is complete
    (:class:`SubtaskScanner`) and valid with the
    earlier valid ones (the plan validator on the prefix: one set of rules). An invalid
    one is not handed over, nor what depends on it; the whole reply's validation names
    the problem when it ends."""

    def __init__(self, handover: Handover, max_subtasks: int) -> None:
        self.handover = handover
        self.max_subtasks = max_subtasks
        self.reply = 0
        self.scanner = SubtaskScanner()
        self.items: list[Any] = []

    def __call__(self, reply: int, text: str) -> None:
        if reply != self.reply:  # another endpoint's reply, read from its start
            self.reply, self.scanner, self.items = reply, SubtaskScanner(), []
        for item in self.scanner.feed(text):
            if len(self.items) >= self.max_subtasks:
                return
            subtasks, problems = validate_plan([*self.items, item],
                                               max_subtasks=self.max_subtasks)
            if not problems:
                self.items.append(item)
                self.handover.take(reply, subtasks[-1])
