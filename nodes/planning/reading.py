"""Reading a request: the texts it quotes or pastes, the files and URLs it names, target
languages, candidate labels, a question, and the clauses where a new step starts.

Everything is read from the *instruction*: the request with its quoted and pasted texts
masked (:func:`mask`). A pasted article is never split into clauses, searched for file
names or embedded, so reading a 100 KB request costs about what reading its first line
does. Requests in English, French, Spanish, German and Chinese are read alike.

The offline planner (:mod:`hugginggpt.nodes.planning.offline`) builds plans from these
facts; the example bank compares requests by their :func:`request_shape`; model
selection and the LLM call estimates split requests into clauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from hugginggpt.tools.kinds import DATA_KINDS, is_text_file, is_url, kind_of_literal
from hugginggpt.tools.languages import BY_NAME
from hugginggpt.tools.lexicon import LANGUAGE_CHOICE, LANGUAGE_NAMES, NAME_RE, POLAR_CHOICE

__all__ = ["QUOTE_RE", "FILE_RE", "LANGUAGES", "Masked", "RequestFacts", "mask",
           "read_request", "request_shape", "text_files_in", "split_clauses",
           "unquote_files", "url_kind",
           "target_languages", "mentioned_language", "languages_named", "is_question",
           "LANGUAGE_CHOICE", "POLAR_CHOICE", "told_before", "named_labels"]

QUOTE_RE = re.compile(r'"([^"]+)"|“([^”]+)”|„([^“”]+)[“”]|«\s*([^»]+?)\s*»|「([^」]+)」'
                      r"|『([^』]+)』|(?<![\w])'((?:[^']|'(?=\w)){2,}?)'(?![\w])")
"""Quoted text: "double", “curly”, „German“, «guillemets», 「corner」 or 'single' quotes."""
FILE_RE = re.compile(
    r"(?:https?://\S+?|[\w./-]+\.[A-Za-z0-9]{2,5})(?=[\s,;:!?)'\"，。；：？！]|\.(?:\s|$)|$)")
"""A URL, or a token that looks like a file name with a suffix."""
PLACEHOLDER = re.compile(r"⟨(\d+)⟩")
"""Where a masked text stood in the instruction: ⟨0⟩ for the first."""
_PASTE = re.compile(r"(?<!\d)(?::(?!//|\d)|：)\s*|\n\s*\n|(?<=[?？])\s+")
"""Where a pasted text starts: after a colon, a blank line or a question."""
PASTE_MIN = 24
"""A colon's tail is a pasted text when it has at least this many characters outside
quotes ("Summarise this: <article>"), and does not read as more instructions: it starts
with a verb ("Restyle old_house.jpg: make it look like...") or names a file."""
_PASTE_LOOK = 20_000
"""How much of a tail is read for those characters, so that a long pasted text does not
slow planning down. A shorter look misreads a few words before a long quote ("The input
text is: '<1,500 characters>'") as the pasted text."""


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


@dataclass(frozen=True)
class Masked:
    """A request with its texts taken out.

    ``instruction`` is the request with each quoted text and the pasted text replaced by
    a placeholder ``⟨i⟩`` for ``texts[i]``; ``pasted`` is the index of the pasted text
    (the tail after a colon or a blank line), which belongs to the whole request rather
    than to the clause it ends.
    """

    instruction: str
    texts: tuple[str, ...] = ()
    pasted: int | None = None

    def restore(self, text: str) -> str:
        """``text`` (a part of the instruction) with its placeholders put back."""
        return PLACEHOLDER.sub(lambda m: self.texts[int(m.group(1))], text)


def _unquoted_length(text: str) -> int:
    """Characters outside quotes, a Chinese character counting as three (a word)."""
    rest = QUOTE_RE.sub("", text).strip(" .,;\n")
    return len(rest) + 2 * len(_CJK.findall(rest))


_CJK = re.compile(r"[\u4e00-\u9fff]")


_POINTS_AT_TEXT = re.compile(
    r"\b(?:this|these|the following|below|text|passage|article|paragraph|story|according|based"
    r" on|d'après|selon|según|laut)\b|根据|这段|以下", re.IGNORECASE)


def _is_pasted(tail: str) -> bool:
    """Whether the tail of a request is a text to work on rather than more instructions
    (a verb first, a file name, a short question, a quote)."""
    return (_unquoted_length(tail[:_PASTE_LOOK]) >= PASTE_MIN and not _INSTRUCTION.match(tail)
            and not FILE_RE.search(tail[:300]) and not (len(tail) < 120 and is_question(tail))
            and not QUOTE_RE.match(tail))


def mask(request: str) -> Masked:
    """Take the pasted text and the quoted texts out of ``request``.

    The pasted text is looked for first, so the quotes inside an article are part of it
    (and it is kept as written); only the instruction before it is searched for quotes
    and quoted file names, so planning time does not grow with the pasted text.
    """
    texts: list[str] = []
    head, pasted = request, None
    for match in _PASTE.finditer(request):
        tail = request[match.end():].strip()
        head_text = request[:match.start()]
        if match.group(0).strip() == "" and not match.group(0).count("\n") and not (
                len(tail) >= 100 and _POINTS_AT_TEXT.search(head_text)):
            continue  # after a question: only a long text the question points at
        if _is_pasted(tail) and _unquoted_length(head_text) >= 2:
            head, pasted = request[:match.start()], 0
            texts.append(tail)
            break

    def hide(match: re.Match[str]) -> str:
        inner = next(g for g in match.groups() if g).strip()
        texts.append(inner)
        return f" ⟨{len(texts) - 1}⟩ "

    instruction = QUOTE_RE.sub(hide, unquote_files(head))
    if pasted is not None:
        instruction = f"{instruction.rstrip()}: ⟨0⟩"
    return Masked(" ".join(instruction.split()), tuple(texts), pasted)


def request_shape(request: str) -> str:
    """The request with its particulars masked: quoted and pasted texts, file names and
    URLs become placeholders. Examples are matched on this shape, so that "Translate
    'good night' to Spanish" finds "Translate 'hello world' to Italian" whatever the
    quoted words are."""
    shape = PLACEHOLDER.sub(' "TEXT" ', mask(request).instruction)
    shape = FILE_RE.sub(lambda m: f"{url_kind(m.group(0).rstrip('.')).upper()}_FILE", shape)
    return " ".join(shape.split())


LANGUAGES = BY_NAME
"""Language names a request may use ("into French") -> code."""
_NAMES, _NAME_RE = LANGUAGE_NAMES, NAME_RE
_TARGET_RE = re.compile(
    r"(?:\b(?:to|into|in|en|vers l'|vers le|al|a|ins|auf|nach)\s*|(?:成|为|為|到|用|译|譯)\s*)"
    rf"({_NAME_RE})(?![a-zà-ÿ])", re.IGNORECASE)
_NOT_TARGET = re.compile(r"\b(?:written|spoken|said|is|it's|écrit|escrito|geschrieben|from|"
                         r"de l'|del|aus dem|aus)\s*$", re.IGNORECASE)
_SOURCE_NOUNS = (r"(?:sentence|text|paragraph|article|message|review|document|email|letter"
                 r"|phrase|words|speech|recording|audio|poem|song|lyrics|note|sign|menu|book"
                 r"|story|tweet|post|written|spoken)s?")
_SOURCE_NOUN = re.compile(rf"\b{_SOURCE_NOUNS}\s*$", re.IGNORECASE)
"""A noun before "in <language>" says what the text is in ("a sentence in Spanish"), not
what it is wanted in."""
_SOURCE_RE = re.compile(rf"\b(?:from|de l'|du|del|aus dem|aus)\s*({_NAME_RE})(?![a-zà-ÿ])|"
                        rf"\b({_NAME_RE})\s+{_SOURCE_NOUNS}\b|"
                        rf"\b{_SOURCE_NOUNS}\s+in\s+({_NAME_RE})(?![a-zà-ÿ])|"
                        rf"(?:从)\s*({_NAME_RE})", re.IGNORECASE)
_LABELS_RE = re.compile(
    r"(?:\b(?:labels?|categories|classes|topics|as|into|between|among|one of|about|under|"
    r"belong to|fits?|comme|como|entre|als|zwischen|parmi)\b\s*:?|:|为)\s*"
    r"([\w -]+(?:\s*[,、，]\s*[\w -]+)+|[\w-]+\s+(?:or|ou|o|oder|还是|或)\s+[\w-]+)",
    re.IGNORECASE)
_ASKED_LABELS = re.compile(
    r"\b(?:is|are|was) (?:it|this|that|they|these)(?: \w+)? ([\w-]+(?:\s*,\s*[\w -]+)+,?\s+or\s+"
    r"[\w-]+)\s*\?", re.IGNORECASE)
"""Labels asked as a question with three or more choices ("is this email spam, work or
personal?"); two ("positive or negative?") are read by the cue words."""
_PAREN_LABELS = re.compile(
    r"\(\s*([\w -]+(?:\s*[,、，]\s*[\w -]+)*\s*,?\s+(?:or|ou|o|oder|of)\s+[\w -]+)\s*\)",
    re.IGNORECASE)
"""Labels listed in brackets as choices ("sort this ticket (billing, shipping or login)")."""
_LABEL_SPLIT = re.compile(r"\s*[,、，]\s*(?:(?:or|and|ou|et|o|y|oder|und)\s+)?|"
                          r"\s+(?:or|and|ou|et|o|y|oder|und)\s+|还是|或者|或|和")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


def target_languages(instruction: str) -> list[str]:
    """The languages ``instruction`` asks for, as codes in order: "into French and
    German", "en anglais", "auf Englisch", "翻译成英文". A language the text is said to
    be written in ("written in French", "from German") is not a target."""
    found: list[str] = []
    matches = [m for m in _TARGET_RE.finditer(instruction)
               if not _NOT_TARGET.search(instruction[:m.start()])]
    strong = [m for m in matches if not re.match(r"in\b", m.group(0), re.IGNORECASE)]
    for match in strong or [m for m in matches if not _SOURCE_NOUN.search(
            instruction[:m.start()])]:
        code = _NAMES[match.group(1).lower()]
        if code not in found:
            found.append(code)
        tail = re.match(rf"(?:\s*(?:,|and|or|&|et|y|und|和|、)\s*(?:in|into|to|en|al|ins)?\s*"
                        rf"({_NAME_RE})(?![a-zà-ÿ]))+", instruction[match.end():],
                        re.IGNORECASE)
        for name in re.findall(_NAME_RE, tail.group(0), re.IGNORECASE) if tail else []:
            if _NAMES[name.lower()] not in found:
                found.append(_NAMES[name.lower()])
    return found


def source_language(instruction: str) -> str | None:
    """A source language the request names ("from German"), or None."""
    match = _SOURCE_RE.search(instruction)
    name = match and next((g for g in match.groups() if g), None)
    return _NAMES[name.lower()] if name else None


def mentioned_language(instruction: str) -> str | None:
    """A language named anywhere in ``instruction`` ("Italian for 'good night'") that is
    not a source ("from German"), or None."""
    for match in re.finditer(rf"(?<![a-zà-ÿ])({_NAME_RE})(?![a-zà-ÿ])", instruction,
                             re.IGNORECASE):
        if not _NOT_TARGET.search(instruction[:match.start()]):
            return _NAMES[match.group(1).lower()]
    return None


def languages_named(text: str) -> list[str]:
    """Every language ``text`` names, as codes, in order."""
    found = [_NAMES[m.group(1).lower()] for m in re.finditer(
        rf"(?<![a-zà-ÿ])({_NAME_RE})(?![a-zà-ÿ])", text, re.IGNORECASE)]
    return list(dict.fromkeys(found))


_REFERS_BACK = re.compile(
    r"\b(?:that|thats|this|it|those|these|above|ça|cela|ceci|esto|eso|esta|este|isso|isto|"
    r"essa|esse|das|dies|dit|dat|deze)\b|这|那|以上", re.IGNORECASE)


def told_before(request: str) -> str | None:
    """The request "<a text>. is that positive?" retold with its text quoted after the
    question ('is that positive? "<a text>."'), or None when it is not of that form: no
    quoted or pasted text, two sentences or more, and a last sentence that points back
    ("that", "ça", "isso", ...) or offers the choices of a question ("good or bad")."""
    if mask(request).texts or '"' in request:
        return None
    sentences = [s for s in _SENTENCE_END.split(" ".join(request.split())) if s.strip()]
    if len(sentences) < 2:
        return None
    ask, head = sentences[-1].strip(), " ".join(sentences[:-1]).strip()
    asks_back = (_REFERS_BACK.search(ask) or POLAR_CHOICE.search(ask)
                 or LANGUAGE_CHOICE.search(ask))
    if len(head.split()) < 4 or not asks_back:
        return None
    return f'{ask} "{head}"'


def is_question(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


@dataclass
class RequestFacts:
    """What planning takes from a request (or from one clause of it)."""

    files: dict[str, list[str]] = field(default_factory=dict)
    quotes: list[str] = field(default_factory=list)
    target_language: str | None = None
    more_languages: list[str] = field(default_factory=list)
    """Further target languages ("into Ukrainian and Chinese")."""
    labels: str | None = None
    question: str | None = None
    body: str = ""
    source_language: str | None = None
    text_files: list[str] = field(default_factory=list)
    """Files whose content is text (``notes.txt``, ``data.json``): attached, then named."""


def files_in(instruction: str, attached: Sequence[str] = ()) -> dict[str, list[str]]:
    """Files by kind: attached first, then named in the instruction, in order."""
    files: dict[str, list[str]] = {}
    for value in [*attached, *(m.group(0).rstrip(".") for m in FILE_RE.finditer(
            PLACEHOLDER.sub(" ", instruction)))]:
        kind = kind_of_literal(value) if not is_url(value) else url_kind(value)
        names = files.setdefault(kind, [])
        if kind in DATA_KINDS - {"text"} and value not in names and not any(
            PurePosixPath(value).name == PurePosixPath(n).name for n in names
        ):
            names.append(value)
    return {kind: names for kind, names in files.items() if names}


def text_files_in(instruction: str, attached: Sequence[str] = ()) -> list[str]:
    """Files whose content is text (:func:`~hugginggpt.tools.kinds.is_text_file`):
    attached first, then named in the instruction, each file name once. A text task
    with no text of its own works on such a file: "summarize my notes" with
    ``--file notes.txt``."""
    found: list[str] = []
    for value in [*attached, *(m.group(0).rstrip(".") for m in FILE_RE.finditer(
            PLACEHOLDER.sub(" ", instruction)))]:
        if is_text_file(value) and not any(
                PurePosixPath(value).name == PurePosixPath(n).name for n in found):
            found.append(value)
    return found


def labels_in(instruction: str) -> str | None:
    """Candidate labels ("as sports, politics or science"), comma-separated, or None."""
    plain = PLACEHOLDER.sub(" ", instruction)
    match = _LABELS_RE.search(plain) or _PAREN_LABELS.search(plain) or _ASKED_LABELS.search(
        plain)
    if not match:
        return None
    labels = [w.strip() for w in _LABEL_SPLIT.split(match.group(1)) if w and w.strip()]
    return ", ".join(labels) if len(labels) > 1 else None


_ARTICLES = re.compile(r"^(?:(?:the|a|an|any|all|every|each|my|our|your|le|la|les|l'|un|une|"
                       r"el|los|las|una|der|die|das|den|dem|ein|eine|einen|o|os|as|um|uma)"
                       r"\s+)+", re.IGNORECASE)


def named_labels(phrase: str) -> str | None:
    """The things a phrase names, comma-separated, their articles left out ("the red mug
    and a blue cup": "red mug, blue cup"); None when it names none."""
    labels = [_ARTICLES.sub("", w.strip()) for w in _LABEL_SPLIT.split(phrase) if w and w.strip()]
    return ", ".join(label for label in labels if label) or None


_TRAILING = re.compile(r"(?:[:：]?\s*⟨\d+⟩)+\s*$")


def question_in(masked: Masked, instruction: str) -> str | None:
    """The question asked: a quoted one, else the instruction's sentence ending in '?'."""
    quoted = [masked.texts[int(i)] for i in PLACEHOLDER.findall(instruction)]
    sentences = [_TRAILING.sub("", s) for s in _SENTENCE_END.split(instruction)]
    asked = [q for q in quoted if is_question(q)] or [
        s for s in sentences if is_question(s) and not PLACEHOLDER.fullmatch(s.strip(" ?？"))]
    return masked.restore(asked[0]).strip() if asked else None


def read_request(request: str, attached: Sequence[str] = ()) -> RequestFacts:
    """Files (attached first, then named in the request, in order), quoted texts, the
    target language, candidate labels, a question and the text to work on."""
    masked = mask(request)
    instruction = masked.instruction
    targets = target_languages(PLACEHOLDER.sub(" ", instruction))
    quoted = [t for i, t in enumerate(masked.texts) if i != masked.pasted]
    pasted = masked.texts[masked.pasted] if masked.pasted is not None else ""
    return RequestFacts(
        files=files_in(instruction, attached),
        quotes=[*quoted, *([pasted] if pasted else [])],
        target_language=targets[0] if targets else None,
        more_languages=targets[1:],
        labels=labels_in(instruction),
        question=question_in(masked, instruction),
        body=(" ".join([*quoted, pasted]).strip() or masked.restore(instruction)).strip(),
        source_language=source_language(PLACEHOLDER.sub(" ", instruction)),
        text_files=text_files_in(instruction, attached),
    )


_VERBS = (
    "analy[sz]e|answer|caption|change|check|classify|clean|compare|compute|convert|count|"
    "create|denoise|describe|detect|determine|draw|edit|embed|enhance|estimate|explain|"
    "extract|find|generate|give|identify|label|list|make|measure|paint|paraphrase|produce|"
    "read|recogni[sz]e|remove|render|rewrite|say|segment|separate|speak|summari[sz]e|tag|"
    "tell|transcribe|translate|turn|voice|write|show|also|finally|afterwards|next|"
    "tradui[sr]e?|traduisez|résume[rz]?|lis|lisez|décri[sr]e?|transcri[sr]e?|dessine|"
    "détecte|écri[sr]e?|donne|dis|traduce|traducir|resume|resumir|lee|leer|describe|"
    "dibuja|detecta|escribe|dime|übersetze|übersetzen|fasse|lies|beschreibe|"
    "transkribiere|zeichne|erkenne|schreibe|sag"
)
_INSTRUCTION = re.compile(rf"(?:please\s+|then\s+|and\s+)?(?:{_VERBS})\b", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(
    r"(?:,?\s+and then\s+|,?\s+then\s+|(?<!\btl);\s*|(?<=[.!?])\s+"
    r"|,?\s+(?:et |puis |ensuite |y luego |luego |después |y después |und dann |dann |"
    r"danach |anschließend )\s*"
    r"|\s*(?:，|,)?\s*(?:然后|接着|之后|最后|再把|再将|并且|并把|并将)\s*|[。；！]\s*|(?<=[？])\s*"
    rf"|,?\s+(?:and|y|und|et)\s+(?=(?:please\s+|also\s+)?(?:{_VERBS})\b)"
    rf"|,\s+(?=(?:please\s+|also\s+)?(?:{_VERBS})\b))", re.IGNORECASE)


def clause_spans(instruction: str) -> list[tuple[int, int]]:
    """Where the clauses of a masked instruction are: cut at "..., then ...",
    "... and <verb> ...", ". ", "puis", "luego", "dann", "然后" and the like."""
    cuts = [0]
    for match in _CLAUSE_SPLIT.finditer(instruction):
        cuts += [match.start(), match.end()]
    cuts.append(len(instruction))
    return [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True)
            if instruction[a:b].strip(" ,.")]


def split_clauses(request: str) -> list[str]:
    """The request cut where a new step starts ("..., then ...", "... and ...", ". "),
    never inside a quoted or pasted text; each clause with its texts put back."""
    masked = mask(request)
    text = masked.instruction
    return [masked.restore(text[a:b]).strip(" ,.") for a, b in clause_spans(text)]
