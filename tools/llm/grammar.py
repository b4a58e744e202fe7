"""JSON schemas a local model can be held to token by token (xgrammar).

A local model (``transformers:REPO``) answers a structured request under a grammar: at
each step only the tokens that keep the reply inside the schema may be chosen, so even
a small model's reply always parses. A schema written for providers says too little
for that: an unbounded string may run past the token limit, and ``maxLength`` alone
let control characters through. :func:`bounded` makes every string an ASCII
``pattern`` with its length inside the pattern, every integer a small enum, every
array short, and every object closed; a caller that knows more (the planner: the task
names, the ids each subtask may depend on) passes its own bounded schema instead.

:func:`logits_processor` compiles a schema for a tokenizer once (compiled grammars are
cached per tokenizer and schema) and returns a fresh processor for each call: a
processor keeps the state of one generation. Importing this module imports neither
xgrammar nor transformers.
"""

from __future__ import annotations

import json
import threading
from typing import Any

__all__ = ["bounded", "text_pattern", "logits_processor", "GrammarUnavailableError",
           "MAX_STRING", "MAX_ITEMS", "MAX_INT"]

MAX_STRING = 80
"""Characters a bounded string may have."""
MAX_ITEMS = 5
"""Items a bounded array may have."""
MAX_INT = 20
"""A bounded integer is one of 0..MAX_INT."""


class GrammarUnavailableError(ImportError):
    """xgrammar is not installed: ``pip install 'hugginggpt[local-llm]'``."""


def text_pattern(max_chars: int = MAX_STRING) -> str:
    """Printable ASCII text without quotes, backslashes or ``<``: no escapes to get
    wrong, no control characters, no ``<GENERATED>`` reference, and the length bound
    inside the pattern (xgrammar honours it there)."""
    return f"^[A-Za-z0-9][A-Za-z0-9 ,.;:'?!()/+=_-]{{0,{max_chars - 1}}}$"


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _resolve(defs[ref.split("/")[-1]], defs)
        return {k: _resolve(v, defs) for k, v in node.items() if k not in ("$defs", "title")}
    if isinstance(node, list):
        return [_resolve(v, defs) for v in node]
    return node


def bounded(schema: dict[str, Any], *, max_string: int = MAX_STRING,
            max_items: int = MAX_ITEMS, max_int: int = MAX_INT) -> dict[str, Any]:
    """``schema`` with every value bounded (references inlined): strings as
    :func:`text_pattern`, integers as ``0..max_int``, arrays at most ``max_items`` long,
    objects without properties of their own choosing beyond string maps."""
    return _bound(_resolve(schema, schema.get("$defs", {})), max_string, max_items, max_int)


def _bound(node: Any, max_string: int, max_items: int, max_int: int) -> Any:
    if not isinstance(node, dict):
        return node
    again = lambda child: _bound(child, max_string, max_items, max_int)  # noqa: E731
    if "enum" in node or "const" in node:
        return node
    for key in ("anyOf", "oneOf"):
        if key in node:
            return {key: [again(c) for c in node[key]]}
    kind = node.get("type")
    described = {"description": node["description"]} if "description" in node else {}
    if kind == "string":
        return described | {"type": "string", "pattern": text_pattern(max_string)}
    if kind == "integer":
        low = max(int(node.get("minimum", 0)), 0)
        high = min(int(node.get("maximum", max_int)), low + max_int)
        return described | {"type": "integer", "enum": list(range(low, high + 1))}
    if kind == "array":
        items = again(node.get("items", {"type": "string"}))
        return described | {"type": "array", "items": items,
                            "maxItems": min(int(node.get("maxItems", max_items)), max_items)}
    if kind == "object":
        properties = {k: again(v) for k, v in node.get("properties", {}).items()}
        out: dict[str, Any] = described | {"type": "object", "properties": properties,
                                           "required": list(node.get("required", []))}
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not properties:  # a string map: a few short keys
            out |= {"additionalProperties": again(extra), "maxProperties": max_items,
                    "propertyNames": {"pattern": "^[a-z_]{1,20}$"}}
        else:
            out["additionalProperties"] = False
        return out
    return node


_COMPILED: dict[tuple[int, str], Any] = {}
_LOCK = threading.Lock()


def _compiled(tokenizer: Any, vocab_size: int, schema: dict[str, Any]) -> Any:
    try:
        import xgrammar as xgr
    except ImportError as exc:
        raise GrammarUnavailableError(
            "a local LLM answers structured requests under a grammar, which needs the "
            "xgrammar package: pip install 'hugginggpt[local-llm]'") from exc
    text = json.dumps(schema)
    key = (id(tokenizer), text)
    with _LOCK:
        if key not in _COMPILED:
            info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
            _COMPILED[key] = xgr.GrammarCompiler(info).compile_json_schema(
                text, any_whitespace=False)
        return _COMPILED[key]


def logits_processor(tokenizer: Any, vocab_size: int, schema: dict[str, Any]) -> Any:
    """A new ``LogitsProcessorList`` that holds one generation to ``schema``.

    Raises:
        GrammarUnavailableError: xgrammar is not installed.
    """
    import xgrammar as xgr
    from transformers import LogitsProcessorList

    compiled = _compiled(tokenizer, vocab_size, schema)
    return LogitsProcessorList([xgr.contrib.hf.LogitsProcessor(compiled)])
