"""The example bank: request -> plan pairs written by the project, searched by meaning.

The offline planner adapts the nearest example to a new request; the LLM planner gets the
nearest few as few-shot examples. Requests are embedded with the bundled all-MiniLM-L6-v2
(without torch, :func:`~hugginggpt.tools.experts.lite.text_encoder`). The bank's vectors
are computed once and kept on disk (:func:`~hugginggpt.tools.env.cache_dir`), keyed by
the model and the very texts embedded, so a changed example or a changed ``key`` is
embedded afresh and a new process reads them in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hugginggpt.nodes.planning.reading import request_shape
from hugginggpt.tools.env import cache_dir
from hugginggpt.tools.kept import keep, read_kept

__all__ = ["BankExample", "PlanBank", "DEFAULT_BANK", "load_bank"]

DEFAULT_BANK = Path(__file__).with_name("plan_bank.jsonl")


@dataclass(frozen=True)
class BankExample:
    id: str
    request: str
    plan: list[dict[str, Any]]


class PlanBank:
    """Examples with embeddings of their requests, computed on first search.

    ``key`` turns a request into the text that is embedded: by default its
    :func:`request_shape`, so that examples match on what is asked, not on the words
    quoted.
    """

    def __init__(self, examples: list[BankExample],
                 key: Callable[[str], str] | None = None) -> None:
        if not examples:
            raise ValueError("the example bank is empty")
        self.examples = examples
        self.key = key or request_shape
        self._lock = threading.Lock()
        self._matrix: Any = None

    def _embeddings(self) -> Any:
        with self._lock:
            if self._matrix is None:
                self._matrix = _cached_vectors([self.key(e.request) for e in self.examples])
            return self._matrix

    def nearest(self, request: str, k: int = 4) -> list[tuple[BankExample, float]]:
        """The ``k`` examples most similar to ``request`` (compared through ``key``),
        with cosine similarities."""
        return self.nearest_many([request], k)[0]

    def nearest_many(self, requests: list[str], k: int = 4
                     ) -> list[list[tuple[BankExample, float]]]:
        """:meth:`nearest` for several requests, embedded in one call. Each is clipped
        to its first 2,000 characters after ``key``: an instruction longer than that is
        rare, and a long one would cost time in proportion to its length."""
        from hugginggpt.tools.experts.lite import text_encoder

        if not requests:
            return []
        matrix = self._embeddings()
        queries = text_encoder().encode([self.key(r)[:2000] for r in requests],
                                  normalize_embeddings=True)
        found = []
        for query in queries:
            scores = matrix @ query
            order = scores.argsort()[::-1][:k]
            found.append([(self.examples[i], float(scores[i])) for i in order])
        return found


def _cached_vectors(texts: list[str]) -> Any:
    """The normalised embeddings of ``texts``, read from the cache folder when the same
    model embedded the same texts before; else computed and written there (atomically:
    a concurrent process reads a whole file or none). A folder that cannot be written
    costs only the time to embed again."""
    import numpy as np

    from hugginggpt.tools.experts.lite import MINILM, text_encoder

    digest = hashlib.sha256(json.dumps([MINILM, "mean, normalised", texts]).encode())
    base = cache_dir() / "bank" / digest.hexdigest()[:32]
    if (found := read_kept(base)) is not None:
        matrix = found[0]
        if (matrix.ndim == 2 and matrix.shape[0] == len(texts)
                and matrix.dtype == np.float32):
            return matrix
    matrix = np.asarray(text_encoder().encode(texts, normalize_embeddings=True,
                                              batch_size=64), dtype=np.float32)
    keep(base, matrix)
    return matrix


@lru_cache(maxsize=4)
def load_bank(path: str | Path = DEFAULT_BANK) -> PlanBank:
    """Read a bank file (JSON lines of ``{"id", "request", "plan"}``), once per path."""
    examples = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        data = json.loads(line)
        plan = data["plan"]["subtasks"] if isinstance(data["plan"], dict) else data["plan"]
        examples.append(BankExample(str(data.get("id", number)), data["request"], plan))
    return PlanBank(examples)
