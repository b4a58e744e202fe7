"""The local backend's text tools: classification, tagging, generation, embeddings,
sequence-to-sequence (summarization, translation, text2text) and extractive question
answering.

Classification, tagging, generation and embeddings run transformers pipelines
(embeddings from a sentence-transformers model run ``SentenceTransformer``, which pools
as the model says); the sequence-to-sequence tasks and question answering, whose
pipelines transformers 5 removed, call the model class directly (see
:class:`~.models._Bundle`).
"""

from __future__ import annotations

import math
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.local.models import Loading, _Bundle, _running, adapter
from hugginggpt.tools.experts.local.outputs import MAX_NEW_TOKENS, MAX_TOP_K, _labels
from hugginggpt.tools.languages import code_of, name_of

_GENERATION = Loading(pipeline="text-generation")
"""Run greedily (``do_sample=False``), so a result may be reused."""
_EMBEDDINGS = Loading(pipeline="feature-extraction", embeddings=True,
                      libraries=frozenset({"transformers", "sentence-transformers"}))
_SEQ2SEQ = Loading(model_class="AutoModelForSeq2SeqLM")

MASK_MARKERS = ("[MASK]", "<mask>", "___")
"""How a plan may mark the blank; each becomes the model's own mask token."""

__all__ = [
    "MAX_ANSWER_TOKENS",
    "text_classification",
    "zero_shot_classification",
    "token_classification",
    "text_generation",
    "conversational",
    "feature_extraction",
    "sentence_similarity",
    "summarization",
    "translation",
    "text2text_generation",
    "question_answering",
    "fill_mask",
    "MASK_MARKERS",
]

MAX_ANSWER_TOKENS = 30
"""Longest span extractive question answering returns."""


@adapter("text-classification", Loading(pipeline="text-classification"))
def text_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Labels of a text, best first, with their scores."""
    with _running("text-classification", model) as pipe:
        return _labels(pipe(text, top_k=MAX_TOP_K, truncation=True))


@adapter("zero-shot-classification", Loading(pipeline="zero-shot-classification"))
def zero_shot_classification(text: str, labels: str, model: str) -> list[dict[str, Any]]:
    """The candidate labels (comma-separated) ranked for a text, by NLI entailment."""
    candidates = [label.strip() for label in labels.split(",") if label.strip()]
    if not candidates:
        raise ToolExecutionError("zero-shot classification needs at least one label")
    with _running("zero-shot-classification", model) as pipe:
        out = pipe(text, candidate_labels=candidates)
    return [{"label": label, "score": round(float(score), 6)}
            for label, score in zip(out["labels"], out["scores"], strict=True)]


@adapter("token-classification", Loading(pipeline="token-classification"))
def token_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Entities in a text (tokens grouped into words), with character offsets."""
    with _running("token-classification", model) as pipe:
        entities = pipe(text, aggregation_strategy="simple")
    return [{"entity": str(e.get("entity_group", e.get("entity"))), "word": str(e["word"]),
             "score": round(float(e["score"]), 6), "start": e.get("start"), "end": e.get("end")}
            for e in entities]


def _generation_budget(model: Any, input_length: int) -> int:
    """New tokens allowed: :data:`MAX_NEW_TOKENS`, less for models with short contexts."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") \
        else model.config
    limit = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings",
                                                             None)
    if limit and not getattr(config, "is_encoder_decoder", False):
        return max(1, min(MAX_NEW_TOKENS, int(limit) - input_length))
    return MAX_NEW_TOKENS


def _generate_text(task: str, text: str, model: str) -> str:
    with _running(task, model) as pipe:
        chat = bool(getattr(pipe.tokenizer, "chat_template", None))
        prompt: Any = [{"role": "user", "content": text}] if chat else text
        length = len(pipe.tokenizer(text)["input_ids"]) + 16  # and a chat template's tokens
        out = pipe(prompt, max_new_tokens=_generation_budget(pipe.model, length),
                   return_full_text=False, do_sample=False)
    generated = out[0]["generated_text"]
    if isinstance(generated, list):  # chat output: the messages, the reply last
        generated = generated[-1]["content"] if generated else ""
    return str(generated).strip()


@adapter("text-generation", _GENERATION, deterministic=True)
def text_generation(text: str, model: str) -> str:
    """A continuation of the text (a chat model answers it as a user message)."""
    return _generate_text("text-generation", text, model)


@adapter("conversational", _GENERATION, deterministic=True)
def conversational(text: str, model: str) -> str:
    """A chat reply, through the model's chat template when it has one."""
    return _generate_text("conversational", text, model)


def _embedding(text: str, model: str, task: str) -> Any:
    """The L2-normalised embedding of a text: a sentence-transformers model pools as its
    own configuration says (CLS, mean, ...); a plain encoder's last hidden state is
    mean-pooled over tokens."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    with _running(task, model) as encoder:
        if isinstance(encoder, SentenceTransformer):
            return np.asarray(encoder.encode(text, normalize_embeddings=True), dtype=np.float32)
        hidden = np.asarray(encoder(text, truncation=True), dtype=np.float32)
    vector = hidden.reshape(-1, hidden.shape[-1]).mean(axis=0)  # mean over tokens
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


@adapter("feature-extraction", _EMBEDDINGS)
def feature_extraction(text: str, model: str) -> list[float]:
    """The L2-normalised embedding of a text (pooled as a sentence-transformers model
    says; mean-pooled for a plain encoder)."""
    return [float(v) for v in _embedding(text, model, "feature-extraction")]


@adapter("sentence-similarity", _EMBEDDINGS)
def sentence_similarity(text: str, text2: str, model: str) -> float:
    """Cosine similarity of the two texts' embeddings."""
    first = _embedding(text, model, "sentence-similarity")
    second = _embedding(text2, model, "sentence-similarity")
    return float(first @ second)


def _seq2seq_prompt(bundle: _Bundle, task: str, text: str, tgt: str | None,
                    src: str | None) -> tuple[str, dict[str, Any]]:
    """The input text (with the model's task prefix) and extra ``generate`` arguments."""
    config, tokenizer = bundle.model.config, bundle.tokenizer
    specific: dict[str, Any] = getattr(config, "task_specific_params", None) or {}
    extra: dict[str, Any] = {}
    if task == "summarization":
        return specific.get("summarization", {}).get("prefix", "") + text, extra
    if task != "translation":
        return text, extra
    directions = [k for k in specific if k.startswith("translation_")]
    wanted = f"translation_{src or 'en'}_to_{tgt}" if tgt else None
    key = wanted if wanted in specific else (directions[0] if directions and not tgt else None)
    if key is not None:
        return specific[key].get("prefix", "") + text, extra
    if getattr(config, "model_type", "") == "t5":
        if not tgt:
            raise ToolExecutionError(f"{bundle.model.name_or_path}: say tgt_lang to translate")
        source = name_of(src or "en")
        return f"translate {source} to {name_of(tgt)}: {text}", extra
    if tgt:
        vocab = tokenizer.get_vocab()
        marian = f">>{tgt}<<"
        if marian in vocab:
            return f"{marian} {text}", extra
        for token in (tgt, f"__{tgt}__", f"{tgt}_XX"):
            if token in vocab:  # multilingual models (M2M100, mBART) start with the language
                extra["forced_bos_token_id"] = vocab[token]
                break
        if src and hasattr(tokenizer, "src_lang"):
            tokenizer.src_lang = next(
                (t for t in (src, f"__{src}__", f"{src}_XX") if t in vocab), src)
    return text, extra


def _seq2seq(task: str, text: str, model: str, tgt_lang: str | None = None,
             src_lang: str | None = None) -> str:
    with _running(task, model) as bundle:
        prompt, extra = _seq2seq_prompt(bundle, task, text, code_of(tgt_lang),
                                        code_of(src_lang))
        limit = min(int(bundle.tokenizer.model_max_length or 512), 1024)
        inputs = bundle.tokenizer(prompt, return_tensors="pt", truncation=True, max_length=limit)
        output = bundle.model.generate(**inputs.to(bundle.model.device),
                                       max_new_tokens=MAX_NEW_TOKENS, **extra)
        return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()


@adapter("summarization", _SEQ2SEQ)
def summarization(text: str, model: str) -> str:
    """A summary, generated by a sequence-to-sequence model."""
    return _seq2seq("summarization", text, model)


@adapter("translation", _SEQ2SEQ)
def translation(text: str, model: str, tgt_lang: str | None = None,
                src_lang: str | None = None) -> str:
    """A translation. T5-style models get their task prefix; multilingual models are
    steered to ``tgt_lang``; single-pair models (Marian) translate their one direction."""
    return _seq2seq("translation", text, model, tgt_lang, src_lang)


@adapter("text2text-generation", _SEQ2SEQ)
def text2text_generation(text: str, model: str) -> str:
    """The output of an instruction-following sequence-to-sequence model (e.g. FLAN-T5)."""
    return _seq2seq("text2text-generation", text, model)


@adapter("question-answering", Loading(model_class="AutoModelForQuestionAnswering"))
def question_answering(question: str, text: str, model: str) -> str:
    """The span of ``text`` that best answers ``question`` (an extractive QA model)."""
    import torch

    with _running("question-answering", model) as bundle:
        tokenizer, qa = bundle.tokenizer, bundle.model
        limit = min(int(tokenizer.model_max_length or 512), 512)
        inputs = tokenizer(question, text, return_tensors="pt", truncation="only_second",
                           max_length=limit, return_offsets_mapping=tokenizer.is_fast)
        offsets = inputs.pop("offset_mapping", None)
        out = qa(**inputs.to(qa.device))
        start, end = out.start_logits[0].float().cpu(), out.end_logits[0].float().cpu()
        ids = inputs["input_ids"][0].cpu()
        if tokenizer.is_fast:
            in_context = torch.tensor([s == 1 for s in inputs.sequence_ids(0)])
        else:  # the second segment, where the tokenizer marks one; never special tokens
            special = set(tokenizer.all_special_ids)
            in_context = torch.tensor([int(i) not in special for i in ids])
            if "token_type_ids" in inputs:
                in_context &= inputs["token_type_ids"][0].cpu() == 1
        if not bool(in_context.any()):
            raise ToolExecutionError("the context is empty after tokenisation")
        scores = start[:, None] + end[None, :]
        n = len(ids)
        ones = torch.ones(n, n, dtype=torch.bool)
        allowed = ones.triu() & ~ones.triu(MAX_ANSWER_TOKENS)  # start <= end, short spans
        allowed &= in_context[:, None] & in_context[None, :]
        best = int(torch.where(allowed, scores, -math.inf).flatten().argmax())
        first, last = divmod(best, n)
        if offsets is not None:
            return text[int(offsets[0][first][0]):int(offsets[0][last][1])].strip()
        return str(tokenizer.decode(ids[first:last + 1], skip_special_tokens=True)).strip()



def masked_text(text: str, mask_token: str) -> str:
    """The text with its one blank as ``mask_token``, whichever marker the plan used.

    Raises:
        ToolExecutionError: no blank, or more than one (the models fill exactly one).
    """
    found = [m for m in MASK_MARKERS if m in text]
    count = sum(text.count(m) for m in found)
    if count != 1:
        raise ToolExecutionError(
            f"fill-mask needs exactly one blank marked {' or '.join(MASK_MARKERS)} in the "
            f"text; found {count}")
    return text.replace(found[0], mask_token)


@adapter("fill-mask", Loading(pipeline="fill-mask"))
def fill_mask(text: str, model: str) -> dict[str, Any]:
    """The sentence with its blank filled by the likeliest word, and the candidates
    (word, score, the filled sentence), best first."""
    with _running("fill-mask", model) as pipe:
        out = pipe(masked_text(text, pipe.tokenizer.mask_token), top_k=MAX_TOP_K)
    candidates = [{"label": str(c["token_str"]).strip(), "score": round(float(c["score"]), 6),
                   "sequence": str(c["sequence"])} for c in out]
    if not candidates:
        raise ToolExecutionError(f"{model} proposed no word for the blank")
    return {"text": candidates[0]["sequence"], "labels": candidates}
