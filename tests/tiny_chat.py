"""A tiny random chat model with a real tokenizer and a chat template, built offline.

The architecture is Qwen2's (``Qwen2ForCausalLM``, as Qwen/Qwen2.5-0.5B-Instruct), with
two layers of width 32. The tokenizer is a byte-level BPE trained here on the planner's
prompts and a few plans, so it can spell any ASCII text (as a real model's can) with
tokens that look like a real vocabulary's; its chat template is Qwen's ``<|im_start|>``
format, saved as ``chat_template.jinja`` (transformers 5). Weights are random: the
model writes gibberish, which is what shows whether a grammar keeps a plan parseable.

Usage::

    folder = build(tmp_dir)   # -> tmp_dir / "tiny-chat", about 0.2 MB
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["build", "CHAT_TEMPLATE", "REPO", "REQUESTS"]

REPO = "tiny-org/tiny-chat"

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")

_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _corpus() -> list[str]:
    """What the tokenizer learns its merges from: the prompts the model will read and
    plans in the shape it should write."""
    from hugginggpt.nodes import prompts
    from hugginggpt.tools.experts.tasks import task_types

    texts = [getattr(prompts, name) for name in prompts.__all__]
    texts += [t.describe() for t in task_types()]
    texts += [json.dumps({"subtasks": [{"id": 0, "task": t.name, "dep": [],
                                        "args": {a.name: "a photo of a cat" for a in t.args}}]})
              for t in task_types()]
    return texts * 3


def build(root: Path, vocab_size: int = 1024) -> Path:
    """Build the model, tokenizer and template into ``root / "tiny-chat"``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    out = root / "tiny-chat"
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=_SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(_corpus(), trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        model_max_length=8192)
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=8192, tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


REQUESTS: list[tuple[str, list[str]]] = [
    ("Translate 'good morning, how are you' into French.", []),
    ("What is the sentiment of 'I loved this film'?", []),
    ("Summarise this: the meeting moved to Tuesday and the budget was approved.", []),
    ("Describe photo.jpg in one sentence.", ["photo.jpg"]),
    ("How many people are in crowd.png?", ["crowd.png"]),
    ("Transcribe speech.wav and translate it into German.", ["speech.wav"]),
    ("Read the text aloud: welcome to the museum.", []),
    ("Draw a red fox in the snow.", []),
    ("Which objects are in street.jpg, and what is their depth?", ["street.jpg"]),
    ("Classify the sound in dog.wav.", ["dog.wav"]),
    ("Hello! How are you today?", []),
    ("Answer from the document scan.png: what is the total?", ["scan.png"]),
    ("Find the named entities in 'Ada Lovelace was born in London'.", []),
    ("Caption photo.jpg, then read the caption aloud.", ["photo.jpg"]),
    ("Is 'the service was slow' positive or negative?", []),
    ("Segment the image cat.png and estimate its depth.", ["cat.png"]),
    ("Fill in the blank: Paris is the [MASK] of France.", []),
    ("Translate speech.wav into English text.", ["speech.wav"]),
    ("Generate an image of a lighthouse at dusk and describe it.", []),
    ("What does the sign in sign.jpg say?", ["sign.jpg"]),
]
"""Twenty requests, some with files, for the plans a model makes (tests and benchmark)."""
