"""The local backend's table tools: questions about a table (TAPAS, through the
transformers pipeline) and classifying its rows (scikit-learn models saved with skops).

Tables come in as CSV files. A scikit-learn model is never unpickled: it loads with
``skops.io``, which rebuilds only the types it is told to trust. The types of
scikit-learn, NumPy and SciPy are trusted; a file that needs any other type (code
shipped with the model) loads only when its catalog card says ``trust_remote_code``.
Pickle and joblib files are refused.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.local.models import Loading, _running, adapter

__all__ = ["MAX_TABLE_ROWS", "TRUSTED_PREFIXES", "read_table", "table_question_answering",
           "tabular_classification"]

MAX_TABLE_ROWS = 10_000
"""Longer tables are refused rather than run for minutes."""
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.", "builtins.", "collections.")
"""The modules whose types a skops file may rebuild without ``trust_remote_code``."""


def read_table(table: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV file's header and rows, as text.

    Raises:
        ToolExecutionError: not a readable CSV, no header or rows, ragged rows, or more
            than :data:`MAX_TABLE_ROWS` rows.
    """
    try:
        with table.open(newline="", encoding="utf-8-sig") as handle:
            rows = [row for row in csv.reader(handle) if any(cell.strip() for cell in row)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ToolExecutionError(f"cannot read the table {table.name}: {exc}") from exc
    if len(rows) < 2:
        raise ToolExecutionError(f"the table {table.name} needs a header row and data rows")
    header, body = [h.strip() for h in rows[0]], rows[1:]
    if len(body) > MAX_TABLE_ROWS:
        raise ToolExecutionError(
            f"the table {table.name} has {len(body)} rows; at most {MAX_TABLE_ROWS}")
    if ragged := next((i for i, row in enumerate(body, 2) if len(row) != len(header)), None):
        raise ToolExecutionError(
            f"row {ragged} of {table.name} has a different number of cells than its header")
    return header, [[cell.strip() for cell in row] for row in body]


@adapter("table-question-answering", Loading(pipeline="table-question-answering"))
def table_question_answering(table: Path, question: str, model: str) -> str:
    """The answer to a question about a CSV table: the cells the model selects, or
    their count, sum or average when the model says so (TAPAS fine-tuned on WTQ)."""
    header, rows = read_table(table)
    columns = {name: [row[i] for row in rows] for i, name in enumerate(header)}
    with _running("table-question-answering", model) as pipe:
        out = pipe(table=columns, query=question, truncation=True)
    answer = out[0] if isinstance(out, list) else out
    return str(answer.get("answer", "")).strip()


# ----------------------------------------------------------------------------- scikit-learn


@dataclass
class _Estimator:
    """A scikit-learn model and the columns it was trained on, in order."""

    model: Any
    columns: list[str]


def _load_skops(model_id: str, path: str, trust: bool) -> _Estimator:
    """A skops repo (``config.json`` naming the ``.skops`` file and the columns), loaded
    with only trusted types rebuilt."""
    from skops import io as skops_io

    config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    sklearn = config.get("sklearn") or {}
    filename = (sklearn.get("model") or {}).get("file", "")
    if sklearn.get("model_format", "skops") != "skops" or not filename.endswith(".skops"):
        raise ToolExecutionError(
            f"{model_id} is saved as {filename or 'an unknown format'}: only skops files "
            "load here (pickle and joblib files can run any code)")
    file = Path(path) / filename
    untrusted = skops_io.get_untrusted_types(file=file)
    foreign = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
    if foreign and not trust:
        raise ToolExecutionError(
            f"{model_id} needs types outside scikit-learn, NumPy and SciPy "
            f"({', '.join(foreign[:5])}); its catalog card must say trust_remote_code")
    model = skops_io.load(file, trusted=untrusted)
    columns = [str(c) for c in sklearn.get("columns") or getattr(model, "feature_names_in_", [])]
    return _Estimator(model, columns)




def _number(cell: str) -> Any:
    try:
        return float(cell)
    except ValueError:
        return cell


@adapter("tabular-classification",
         Loading(loader=_load_skops, libraries=frozenset({"sklearn"})))
def tabular_classification(table: Path, model: str) -> list[dict[str, Any]]:
    """One predicted label per row of a CSV table (with its probability when the model
    gives one). The table needs the columns the model was trained on; others are ignored.

    Raises:
        ToolExecutionError: a column the model needs is missing.
    """
    header, rows = read_table(table)
    with _running("tabular-classification", model) as estimator:
        columns = estimator.columns or header
        if missing := [c for c in columns if c not in header]:
            raise ToolExecutionError(
                f"the table {table.name} lacks the column(s) {', '.join(missing)} that "
                f"{model} needs")
        index = [header.index(c) for c in columns]
        values = [[_number(row[i]) for i in index] for row in rows]
        features: Any = values
        if hasattr(estimator.model, "feature_names_in_"):
            import pandas as pd

            features = pd.DataFrame(values, columns=columns)
        labels = estimator.model.predict(features)
        scores = (estimator.model.predict_proba(features).max(axis=1)
                  if hasattr(estimator.model, "predict_proba") else None)
    return [{"row": i, "label": str(label),
             **({} if scores is None else {"score": round(float(scores[i]), 6)})}
            for i, label in enumerate(labels)]
