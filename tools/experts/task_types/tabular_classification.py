"""tabular-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import TABLE, Cue, Output, TaskType
from hugginggpt.tools.experts.words import (
    MAX_LISTED,
    Finished,
    label_items,
    label_name,
    plural,
    shown_score,
)


def _tabular(done: Finished) -> str:
    rows = label_items(done.outputs.get("labels"))
    if not rows:
        return "No row was classified."
    counts: dict[str, int] = {}
    for row in rows:
        counts[label_name(row)] = counts.get(label_name(row), 0) + 1
    tally = ", ".join(f"{n} {label}" for label, n in counts.items())
    each = [f"row {int(r.get('row', i)) + 1}: {label_name(r)}"
            + (f" {shown_score(r['score'], True)}" if isinstance(r.get("score"), float) else "")
            for i, r in enumerate(rows[:MAX_LISTED])]
    more = (f", and {len(rows) - MAX_LISTED} more in the run's results"
            if len(rows) > MAX_LISTED else "")
    return f"Classified {plural('row', len(rows))}: {tally} ({', '.join(each)}{more})."


TASK = TaskType(
    "tabular-classification",
    "Classify the rows of a table (a CSV file).",
    args=(TABLE,),
    outputs=(Output("labels", "labels"),),
    cues=(Cue(
        r"\bclassify|\bpredict|\bfor each row|\beach row|\bevery row|\bcategori[sz]e|\bmodel\b"
        r"|\blikely to|\bwill (?:leave|churn|default|buy|pay)|\bchurn|\bfraud",
        needs="table", rank=220),),
    picks_one=True,
    noun="classifying the table",
    say=_tabular,
)
