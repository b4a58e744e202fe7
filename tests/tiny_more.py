"""More tiny random models, of the architectures the catalog's default models have for
the task types :mod:`tests.tiny_models` does not cover: masked language models, CLIP,
a SmolVLM-style vision-language model (Idefics3), LayoutLM, TAPAS, Swin2SR, a Stable
Diffusion pipeline (diffusers) and a scikit-learn classifier saved with skops.

As there, nothing is downloaded and weights are random: tests check shapes and types.
Each builder returns the directory it saved into; :data:`ARCHITECTURES` says which class
each builds, so a test can match a catalog card's ``architecture`` to a builder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.tiny_models import _SMALL, SIZE, WORDS, _save, _word_tokenizer

__all__ = ["BUILDERS", "ARCHITECTURES", "build", "TABLE_COLUMNS", "TABLE_LABELS"]

TABLE_COLUMNS = ["age", "income", "visits"]
"""The columns the tiny scikit-learn classifier was trained on."""
TABLE_LABELS = ["stays", "leaves"]


def fill_mask(out: Path) -> Path:
    """A tiny DistilBERT with its masked-language-model head."""
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    config = DistilBertConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64, dim=32,
                              n_layers=2, n_heads=2, hidden_dim=37)
    return _save(out, DistilBertForMaskedLM(config), _word_tokenizer("bert"))


def bert_fill_mask(out: Path) -> Path:
    """A tiny BERT with its masked-language-model head."""
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64, **_SMALL)
    return _save(out, BertForMaskedLM(config), _word_tokenizer("bert"))


def zero_shot_image_classification(out: Path) -> Path:
    """A tiny CLIP: a ViT image tower and a text tower over the word vocabulary."""
    from transformers import CLIPConfig, CLIPModel
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tokenizer = _word_tokenizer("bert")
    text = {"vocab_size": len(WORDS) + 10, "max_position_embeddings": 64,
            "eos_token_id": tokenizer.sep_token_id, "bos_token_id": tokenizer.cls_token_id,
            "pad_token_id": tokenizer.pad_token_id, **_SMALL}
    vision = {"image_size": SIZE, "patch_size": 8, **_SMALL}
    config = CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    processor = CLIPImageProcessorPil(size={"shortest_edge": SIZE},
                                      crop_size={"height": SIZE, "width": SIZE})
    return _save(out, CLIPModel(config), processor, tokenizer)


_VLM_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% for part in message['content'] %}{% if part['type'] == 'text' %} {{ part['text'] }}"
    "{% elif part['type'] == 'image' %}<image>{% endif %}{% endfor %}<end_of_utterance>\n"
    "{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}")


def image_text_to_text(out: Path) -> Path:
    """A tiny Idefics3 (SmolVLM's architecture): a SigLIP-style vision tower, a pixel
    shuffle connector and a Llama decoder, with its processor and chat template."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.image_processing_pil_idefics3 import (
        Idefics3ImageProcessorPil,
    )

    tokenizer = _word_tokenizer("gpt")
    image_tokens = ["<fake_token_around_image>", "<image>", "<end_of_utterance>",
                    "<global-img>"] + [f"<row_{i}_col_{j}>" for i in range(1, 7)
                                       for j in range(1, 7)]
    tokenizer.add_special_tokens({"additional_special_tokens": image_tokens})
    image_id = tokenizer.convert_tokens_to_ids("<image>")
    text = {"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32,
            "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 2, "max_position_embeddings": 128, "pad_token_id": 0,
            "bos_token_id": 0, "eos_token_id": 0}
    vision = {"image_size": SIZE, "patch_size": 8, **_SMALL}
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=2,
                            image_token_id=image_id)
    model = Idefics3ForConditionalGeneration(config)
    model.generation_config.pad_token_id = model.generation_config.eos_token_id = 0
    images = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": SIZE},
        max_image_size={"longest_edge": SIZE})
    seq_len = (SIZE // 8) ** 2 // 4
    processor = Idefics3Processor(image_processor=images, tokenizer=tokenizer,
                                  image_seq_len=seq_len, chat_template=_VLM_TEMPLATE)
    return _save(out, model, processor)


def document_question_answering(out: Path) -> Path:
    """A tiny LayoutLM for extractive question answering over OCR words and boxes."""
    from transformers import LayoutLMConfig, LayoutLMForQuestionAnswering

    config = LayoutLMConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64,
                            max_2d_position_embeddings=1024, **_SMALL)
    return _save(out, LayoutLMForQuestionAnswering(config), _word_tokenizer("bert"))


def table_question_answering(out: Path) -> Path:
    """A tiny TAPAS with cell selection and the WTQ aggregation head."""
    from transformers import TapasConfig, TapasForQuestionAnswering, TapasTokenizer

    out.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[EMPTY]", *WORDS,
             *"0123456789", ".", ",", "?"]
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = TapasTokenizer(str(out / "vocab.txt"), model_max_length=64)
    config = TapasConfig(vocab_size=len(vocab), max_position_embeddings=64,
                         num_aggregation_labels=4, no_aggregation_label_index=0,
                         aggregation_labels={0: "NONE", 1: "SUM", 2: "AVERAGE", 3: "COUNT"},
                         **_SMALL)
    return _save(out, TapasForQuestionAnswering(config), tokenizer)


def image_to_image(out: Path) -> Path:
    """A tiny Swin2SR that doubles an image's side."""
    from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution
    from transformers.models.swin2sr.image_processing_pil_swin2sr import (
        Swin2SRImageProcessorPil,
    )

    config = Swin2SRConfig(image_size=SIZE, embed_dim=8, depths=[1], num_heads=[2],
                           window_size=4, upscale=2, drop_path_rate=0.0)
    return _save(out, Swin2SRForImageSuperResolution(config),
                 Swin2SRImageProcessorPil(size_divisor=4))


def _clip_bpe_tokenizer(out: Path, pad: str | None = None) -> Any:
    """A CLIP tokenizer (byte-level BPE files) over :data:`WORDS`, with no merges
    beyond whole words; ``pad``, a padding token of id 0 (OWL-ViT takes a query that
    starts with id 0 for padding)."""
    from transformers import CLIPTokenizer

    out.mkdir(parents=True, exist_ok=True)
    letters = sorted({c for w in WORDS for c in w})
    vocab = [*([pad] if pad else []), "<|startoftext|>", "<|endoftext|>", *letters,
             *(f"{c}</w>" for c in letters)]
    merges = []
    for word in WORDS:  # merge each word left to right
        piece = word[0]
        for i, char in enumerate(word[1:], 1):
            tail = char + ("</w>" if i == len(word) - 1 else "")
            merges.append(f"{piece} {tail}")
            piece += tail
            vocab.append(piece)
    vocab = list(dict.fromkeys(vocab))
    (out / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab)}))
    (out / "merges.txt").write_text("#version: 0.2\n" + "\n".join(dict.fromkeys(merges)) + "\n")
    return CLIPTokenizer(str(out / "vocab.json"), str(out / "merges.txt"), model_max_length=16,
                         **({"pad_token": pad} if pad else {}))


def text_to_image(out: Path) -> Path:
    """A tiny Stable Diffusion pipeline (diffusers): CLIP text encoder, UNet, VAE and
    scheduler, 32x32 pixels, no safety checker."""
    from diffusers import (
        AutoencoderKL,
        DDIMScheduler,
        StableDiffusionPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextConfig, CLIPTextModel

    tokenizer = _clip_bpe_tokenizer(out / "tokenizer-files")
    text = CLIPTextModel(CLIPTextConfig(vocab_size=len(tokenizer), max_position_embeddings=16,
                                        hidden_size=32, intermediate_size=37,
                                        num_hidden_layers=2, num_attention_heads=2,
                                        projection_dim=32, pad_token_id=1,
                                        bos_token_id=tokenizer.bos_token_id,
                                        eos_token_id=tokenizer.eos_token_id))
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(16, 32), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
        attention_head_dim=4, norm_num_groups=8)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4,
                        block_out_channels=(8, 16), norm_num_groups=8,
                        down_block_types=("DownEncoderBlock2D",) * 2,
                        up_block_types=("UpDecoderBlock2D",) * 2)
    pipe = StableDiffusionPipeline(
        vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet, scheduler=DDIMScheduler(steps_offset=1, clip_sample=False),
        safety_checker=None, feature_extractor=None, requires_safety_checker=False)
    pipe.save_pretrained(out)
    return out


def tabular_classification(out: Path) -> Path:
    """A scikit-learn logistic regression on three numeric columns, saved as skops
    does on the Hub: the ``.skops`` file and a ``config.json`` naming it and the columns."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from skops import io as skops_io

    rng = np.random.default_rng(0)
    features = rng.normal(size=(40, len(TABLE_COLUMNS)))
    labels = np.where(features[:, 1] > 0, TABLE_LABELS[1], TABLE_LABELS[0])
    model = LogisticRegression().fit(features, labels)
    out.mkdir(parents=True, exist_ok=True)
    skops_io.dump(model, out / "model.skops")
    (out / "config.json").write_text(json.dumps({"sklearn": {
        "columns": TABLE_COLUMNS, "model": {"file": "model.skops"}, "model_format": "skops",
        "task": "tabular-classification"}}))
    return out


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "fill-mask": fill_mask,
    "bert-fill-mask": bert_fill_mask,
    "zero-shot-image-classification": zero_shot_image_classification,
    "image-text-to-text": image_text_to_text,
    "document-question-answering": document_question_answering,
    "table-question-answering": table_question_answering,
    "image-to-image": image_to_image,
    "text-to-image": text_to_image,
    "tabular-classification": tabular_classification,
}
ARCHITECTURES: dict[str, str] = {
    "fill-mask": "DistilBertForMaskedLM",
    "bert-fill-mask": "BertForMaskedLM",
    "zero-shot-image-classification": "CLIPModel",
    "image-text-to-text": "Idefics3ForConditionalGeneration",
    "document-question-answering": "LayoutLMForQuestionAnswering",
    "table-question-answering": "TapasForQuestionAnswering",
    "image-to-image": "Swin2SRForImageSuperResolution",
    "text-to-image": "StableDiffusionPipeline",
    "tabular-classification": "LogisticRegression",
}
"""Builder name -> the class it builds (what a catalog card's ``architecture`` says)."""


def build(name: str, root: Path) -> Path:
    """Build the tiny model ``name`` (a key of :data:`BUILDERS`) under ``root``."""
    import torch

    torch.manual_seed(0)
    return BUILDERS[name](Path(root) / name)
