"""token-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

import re

from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType
from hugginggpt.tools.experts.words import MAX_LISTED, Finished, label_items, listed

_GROUPS = {"per": "person", "loc": "location", "org": "organisation", "misc": "other",
           "gpe": "place", "date": "date", "time": "time", "money": "money",
           "norp": "group", "fac": "building", "event": "event", "product": "product"}


def _entities(done: Finished) -> str:
    found: dict[tuple[str, str], None] = {}
    for item in label_items(done.outputs.get("entities")):
        word = " ".join(str(item.get("word", "")).replace("##", "").split())
        group = str(item.get("entity_group") or item.get("entity") or "")
        group = re.sub(r"^[BIES]-", "", group)
        if word:
            found[(word, _GROUPS.get(group.lower(), group.lower() or "entity"))] = None
    if not found:
        return "No named entities were found."
    shown = [f"{word} ({group})" for word, group in list(found)[:MAX_LISTED]]
    return f"Entities: {listed(shown, max(0, len(found) - MAX_LISTED))}."


TASK = TaskType(
    "token-classification",
    "Find named entities or other token labels in a text.",
    args=(TEXT,),
    outputs=(Output("entities", "labels"),),
    aliases=("ner",),
    cues=(Cue(
        r"\bentit|\bner\b|\bpeople,? (?:and |or )?(?:places|organi[sz]ations|companies)"
        r"|\bnames? of (?:the )?(?:people|persons|places|companies|organi[sz]ations|cities)"
        r"|\bwho and where\b|\bwhich (?:people|persons|names|places|companies|organi[sz]ations"
        r"|cities|countries)|\b(?:people|persons|names|places|locations|companies|"
        r"organi[sz]ations|cities|countries|dates)\b[^.?!]{0,30}\bmentioned|\b(?:extract|list|"
        r"find|pull out|get) (?:all )?(?:the )?(?:names|people|persons|places|locations|"
        r"organi[sz]ations|companies|dates)|\bnoms (?:de personnes|propres|des)|\bpersonnes"
        r"|\blieux\b|\bnombres (?:propios|de)|\bpersonas\b|\blugares\b|\bnamen\b|\bpersonen\b"
        r"|\borte\b|实体|人名|地名|机构名|组织名|公司名"
        r"|\b(?:every|evry|each|all|any) (?:the )?(?:company|companies|person|people|persons|"
        r"organi[sz]ations?|places?|names?|brands?)\b[^.?!]{0,30}\b(?:mention|name|said)"
        r"|\ball the \w+ (?:mentioned|named)\b|\bwho(?:'s| is| was)? mentioned"
        r"|\b(?:wer|wen|welche \w+)\b.{0,40}(?:erwähnt|genannt)|\bmentionn[ée]|\bmencionad"
        r"|\bnombrad|提到了谁|提到的|提及",
        rank=10),),
    planning=Planning(ask="find", told_before=True),
    noun="finding the entities",
    say=_entities,
)
