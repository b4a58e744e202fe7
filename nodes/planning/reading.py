"""Reading a request: its quoted texts, the files and URLs it names, target languages,
candidate labels, a question, and the clauses where a new step starts.

The offline planner (:mod:`hugginggpt.nodes.planning.offline`) adapts a bank example with
these facts; the example bank compares requests by their :func:`request_shape`; model
selection and the LLM call estimates split requests into clauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from hugginggpt.tools.kinds import DATA_KINDS, is_url, kind_of_literal
from hugginggpt.tools.languages import BY_NAME

__all__ = ["QUOTE_RE", "FILE_RE", "LANGUAGES", "RequestFacts", "read_request",
           "request_shape", "split_clauses", "unquote_files", "url_kind"]

QUOTE_RE = re.compile(r'"([^"]+)"|“([^”]+)”|«\s*([^»]+?)\s*»|(?<![\w])\'([^\']{2,})\'(?![\w])')
"""Quoted text: "double", “curly”, «guillemets» or 'single' quotes."""
FILE_RE = re.compile(
    r"(?:https?://\S+?|[\w./-]+\.[A-Za-z0-9]{2,5})(?=[\s,;:!?)'\"]|\.(?:\s|$)|$)")
"""A URL, or a token that looks like a file name with a suffix."""


def unquote_files(text: str) -> str:
    """Drop the quotes around quoted file names and URLs ("'example.jpg'" names a file,
    it is not a text to work on)."""
    def keep(match: re.Match[str]) -> str:
        inner = next(g for g in match.groups() if g).strip()
        return f" {inner} " if FILE_RE.fullmatch(inner) else match.group(0)

    return QUOTE_RE.sub(keep, text)


def url_kind(value: str) -> str:
    """The kind of a file name or URL by its suffix; ``url`` for a URL without one."""
    kind = kind_of_literal(value)
    return "url" if kind == "text" and is_url(value) else kind


def request_shape(request: str) -> str:
    """The request with its particulars masked: quoted texts, file names and URLs, and a
    long text after a colon become placeholders. Examples are matched on this shape, so
    that "Translate 'good night' to Spanish" finds "Translate 'hello world' to Italian"
    whatever the quoted words are."""
    shape = QUOTE_RE.sub(' "TEXT" ', unquote_files(request))
    shape = FILE_RE.sub(lambda m: f"{url_kind(m.group(0).rstrip('.')).upper()}_FILE", shape)
    head, colon, tail = shape.partition(": ")
    if colon and len(tail) > 40:
        shape = f"{head}: TEXT"
    return " ".join(shape.split())


LANGUAGES = BY_NAME
"""Language names a request may use ("into French") -> code."""
_TARGET_RE = re.compile(
    r"\b(?:to|into|in)\s+(" + "|".join(LANGUAGES) + r")\b", re.IGNORECASE)
_LABELS_RE = re.compile(
    r"(?:\b(?:labels?|categories|classes|topics|as|into|between|among|one of|about)\s*:?|:)\s+"
    r"([\w -]+(?:\s*,\s*[\w -]+)+|[\w-]+\s+or\s+[\w-]+)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class RequestFacts:
    """What adaptation takes from a request."""

    files: dict[str, list[str]] = field(default_factory=dict)
    quotes: list[str] = field(default_factory=list)
    target_language: str | None = None
    more_languages: list[str] = field(default_factory=list)
    """Further target languages ("into Ukrainian and Chinese")."""
    labels: str | None = None
    question: str | None = None
    body: str = ""


def quotes(text: str) -> list[str]:
    return [next(g for g in m.groups() if g).strip() for m in QUOTE_RE.finditer(text)]


def read_request(request: str, attached: Sequence[str] = ()) -> RequestFacts:
    """Files (attached first, then named in the request, in order), quoted texts, the
    target language, candidate labels, a question and the text to work on."""
    request = unquote_files(request)
    facts = RequestFacts(quotes=quotes(request))
    unquoted = QUOTE_RE.sub(" ", request)
    for value in [*attached, *(m.group(0).rstrip(".") for m in FILE_RE.finditer(unquoted))]:
        kind = kind_of_literal(value) if not is_url(value) else url_kind(value)
        names = facts.files.setdefault(kind, [])
        if kind in DATA_KINDS - {"text"} and value not in names and not any(
            PurePosixPath(value).name == PurePosixPath(n).name for n in names
        ):
            names.append(value)
    if match := _TARGET_RE.search(unquoted):
        facts.target_language = LANGUAGES[match.group(1).lower()]
        tail = re.match(r"(?:\s*(?:,|and|or|&)\s*(?:in|into|to)?\s*(" + "|".join(LANGUAGES)
                        + r")\b)+", unquoted[match.end():], re.IGNORECASE)
        if tail:
            facts.more_languages = [LANGUAGES[w.lower()] for w in re.findall(
                "|".join(LANGUAGES), tail.group(0), re.IGNORECASE)]
    if match := _LABELS_RE.search(unquoted):
        words = re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+", match.group(1))
        labels = [w.strip() for w in words if w.strip()]
        facts.labels = ", ".join(labels) if len(labels) > 1 else None
    questions = [q for q in facts.quotes if q.endswith("?")] or [
        s for s in _SENTENCE_END.split(unquoted) if s.strip().endswith("?")]
    facts.question = questions[0].strip() if questions else None
    parts = re.split(r":\s+", request, maxsplit=1)  # "Summarise this: <text>"
    after = parts[1].strip() if len(parts) == 2 else ""
    facts.body = (" ".join(facts.quotes) or (after if len(after) > 20 else request)).strip()
    return facts


_VERBS = (
    "analy[sz]e|answer|caption|change|check|classify|clean|compare|compute|convert|count|"
    "create|denoise|describe|detect|determine|draw|edit|embed|enhance|estimate|explain|"
    "extract|find|generate|give|identify|label|list|make|measure|paint|paraphrase|produce|"
    "read|recogni[sz]e|remove|render|rewrite|say|segment|separate|speak|summari[sz]e|tag|"
    "tell|transcribe|translate|turn|voice|write|show|also|finally|afterwards|next"
)
_CLAUSE_SPLIT = re.compile(
    r"(?:,?\s+and then\s+|,?\s+then\s+|;\s*|(?<=[.!?])\s+"
    rf"|,?\s+and\s+(?=(?:please\s+|also\s+)?(?:{_VERBS})\b)"
    rf"|,\s+(?=(?:please\s+|also\s+)?(?:{_VERBS})\b))", re.IGNORECASE)
def split_clauses(request: str) -> list[str]:
    """The request cut where a new step starts ("..., then ...", "... and ...", ". ")."""
    masked = QUOTE_RE.sub(lambda m: "\x00" * len(m.group(0)), request)  # never cut quotes
    cuts = [0]
    for match in _CLAUSE_SPLIT.finditer(masked):
        cuts += [match.start(), match.end()]
    cuts.append(len(request))
    return [request[a:b].strip(" ,.") for a, b in zip(cuts[::2], cuts[1::2], strict=True)
            if request[a:b].strip(" ,.")]
