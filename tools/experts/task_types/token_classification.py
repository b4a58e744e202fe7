"""token-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

import re

from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType
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
    noun="finding the entities",
    say=_entities,
)
