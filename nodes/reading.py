"""Why no model can read a subtask's text, and which one could: the failure selection
gives when every runnable candidate was ruled out by the text's language.

"lite/vader-sentiment reads English only; this text is Spanish" says what went wrong;
the fix names a catalog model whose card lists the language (its id, its size from the
card, and how to get it), phrased like the other download advice. A translation fix
must also write the target language: a model that cannot do the pair is never offered.
"""

from __future__ import annotations

from dataclasses import replace

from hugginggpt.nodes.intent import intent_part
from hugginggpt.nodes.ranking import Query, rank_candidates
from hugginggpt.tools.errors import Control, Fix, joined, setting, verbatim
from hugginggpt.tools.experts.catalog import Catalog, ModelCard
from hugginggpt.tools.experts.lite.languages import described, reads
from hugginggpt.tools.experts.llm import LLM_BACKEND, unavailable_reason
from hugginggpt.tools.experts.local.hub_cache import is_cached, is_hub_id
from hugginggpt.tools.experts.registry import registered_tools
from hugginggpt.tools.languages import name_of

__all__ = ["unreadable", "reading_fix", "fits"]


def _reads_what(card: ModelCard) -> str:
    """"English only", "English and Chinese only"."""
    names = [name_of(code) for code in card.source_languages or card.languages]
    return " and ".join(names) + " only" if len(names) < 3 else ", ".join(names) + " only"


def _writes(card: ModelCard, language: str | None) -> bool:
    """Whether the card lists ``language`` (or "multilingual"; any card when None)."""
    return language is None or language in card.languages or "multilingual" in card.languages


def fits(query: Query, card: ModelCard) -> bool:
    """Whether a model could serve the subtask's text: it reads the text's language
    (a translation model: translates from it) and writes the target language."""
    return (_writes(card, query.target_language)
            and reads(card.source_languages or card.languages, query.text_languages))


def reading_fix(task: str, catalog: Catalog, query: Query) -> Fix | None:
    """The catalog's most downloaded model for ``task`` that reads the text (and writes
    the target language, and answers what was asked), with its size and how to get it;
    None when the catalog has none."""
    likeliest = query.text_languages[0][0] if query.text_languages else None
    for card in sorted(catalog.for_task(task), key=lambda c: -c.downloads):
        if not (is_hub_id(card.id) and _writes(card, likeliest) and fits(query, card)
                and intent_part(card, query.intent) is not None):
            continue
        reads_it = verbatim(f"local: {card.id} reads it")
        size = f", {card.size_mb:g} MB" if card.size_mb else ""
        if is_cached(card.id, card.revision):
            return Fix(say=f"{reads_it} and is downloaded{size}; run with {{}}",
                       controls=[setting("backend", "auto|local")])
        return Fix(say=f"{reads_it}{size} ({{}}; or run with {{}})",
                   controls=[Control(kind="models", name="download", value=card.id),
                             setting("download", "ask|yes")])
    return None


def unreadable(task: str, catalog: Catalog, backend: str, query: Query
               ) -> tuple[str, Fix | None] | None:
    """Why no candidate is left, when the text's language ruled out every model that
    could otherwise run ("this text is Spanish; lite/vader-sentiment reads English
    only"), and the fix (a model that reads it, an LLM) when there is one; None when the
    language was not the cause."""
    if not query.text_languages:
        return None
    others = rank_candidates(task, catalog, backend, replace(query, text_languages=()))
    if not others:
        return None
    cards = {c.model: c.card for c in others if c.card is not None}
    what = ", ".join(f"{model} reads {_reads_what(card)}"
                     for model, card in list(cards.items())[:3])
    reason = f"this text is {described(query.text_languages)}; {what}"
    found = reading_fix(task, catalog, query)
    if found is None:
        reason += "; no model in the catalog reads it"
    return reason, joined([found, _llm_reads(task)])


def _llm_reads(task: str) -> Fix | None:
    """The LLM expert, where it does ``task`` and no LLM is configured: it reads most
    languages, and it is how a text no catalog model reads gets done."""
    if unavailable_reason() is None or not any(
            t.backend == LLM_BACKEND and t.task == task for t in registered_tools()):
        return None
    return Fix(say="an LLM reads most languages: {}, and it does this step",
               controls=[Control(kind="llm")])
