"""Reading a plan while it streams: each subtask object as soon as its JSON is complete.

The planner's reply arrives a few characters at a time (tool-call argument deltas, or
content). :class:`SubtaskScanner` is fed the reply's text so far, finds the list of
subtasks in it (the value of ``"subtasks"``, or a reply that is itself a list, bare or
in a code fence after prose) and yields each element of that list once its closing brace has
arrived. It is a small string-aware bracket counter, not a JSON parser: an element is
decoded with :func:`json.loads` only once it is complete, and what it decodes to is
left for the plan validator to judge. Text it cannot place (prose before the list, a
reply that is not a plan) yields nothing; the whole reply is still read and validated
when it ends, as for a plan that did not stream.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["SubtaskScanner"]

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
