"""Tiny random models of the architectures of the shipped catalog's default models that
:mod:`tests.tiny_models` and :mod:`tests.tiny_more` do not build: DistilBERT and BART
classifiers, RoBERTa question answering, BART summarization, Qwen2 chat, AST audio
classification, Depth Anything, DETR, BLIP captioning, Whisper, OWL-ViT and OWLv2.

As there, nothing is downloaded and weights are random. :data:`ARCHITECTURES` says
which class each builder makes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.tiny_models import (
    _SMALL,
    AUDIO_LABELS,
    IMAGE_LABELS,
    SIZE,
    TEXT_LABELS,
    WORDS,
    _labels,
    _save,
    _word_tokenizer,
)
from tests.tiny_more import _clip_bpe_tokenizer

__all__ = ["BUILDERS", "ARCHITECTURES", "build"]

_NLI = {0: "contradiction", 1: "neutral", 2: "entailment"}


def distilbert_classifier(out: Path) -> Path:
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    config = DistilBertConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64, dim=32,
                              n_layers=2, n_heads=2, hidden_dim=37, **_labels(TEXT_LABELS))
    return _save(out, DistilBertForSequenceClassification(config), _word_tokenizer("bert"))


def roberta_qa(out: Path) -> Path:
    from transformers import RobertaConfig, RobertaForQuestionAnswering

    config = RobertaConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=72,
                           pad_token_id=0, **_SMALL)
    return _save(out, RobertaForQuestionAnswering(config), _word_tokenizer("bert"))


def _bart_config(**extra: Any) -> Any:
    from transformers import BartConfig

    return BartConfig(vocab_size=len(WORDS) + 10, d_model=32, encoder_layers=1,
                      decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                      encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=256,
                      pad_token_id=0, bos_token_id=2, eos_token_id=3,
                      decoder_start_token_id=3, forced_eos_token_id=3, **extra)


def bart_nli(out: Path) -> Path:
    from transformers import BartForSequenceClassification

    model = BartForSequenceClassification(_bart_config(**_labels(_NLI)))
    return _save(out, model, _word_tokenizer("bert"))


def bart_summarizer(out: Path) -> Path:
    from transformers import BartForConditionalGeneration

    return _save(out, BartForConditionalGeneration(_bart_config()), _word_tokenizer("bert"))


_CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                  "{% if add_generation_prompt %}assistant:{% endif %}")


def qwen2_chat(out: Path) -> Path:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = _word_tokenizer("gpt")
    tokenizer.chat_template = _CHAT_TEMPLATE
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=128, bos_token_id=0, eos_token_id=0,
                         pad_token_id=0)
    return _save(out, Qwen2ForCausalLM(config), tokenizer)


def ast_classifier(out: Path) -> Path:
    """A tiny Audio Spectrogram Transformer over 16 mel bins."""
    from transformers import ASTConfig, ASTFeatureExtractor, ASTForAudioClassification

    config = ASTConfig(num_mel_bins=16, max_length=64, patch_size=8, frequency_stride=8,
                       time_stride=8, **_SMALL, **_labels(AUDIO_LABELS))
    features = ASTFeatureExtractor(num_mel_bins=16, max_length=64)
    return _save(out, ASTForAudioClassification(config), features)


def depth_anything(out: Path) -> Path:
    """A tiny Depth Anything: a DINOv2 backbone and the DPT-style head."""
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config
    from transformers.models.dpt.image_processing_pil_dpt import DPTImageProcessorPil

    backbone = Dinov2Config(image_size=SIZE, patch_size=8, out_features=["stage1", "stage2"],
                            reshape_hidden_states=False, **_SMALL)
    config = DepthAnythingConfig(backbone_config=backbone, reassemble_hidden_size=32,
                                 neck_hidden_sizes=[8, 16], fusion_hidden_size=16,
                                 head_hidden_size=8, reassemble_factors=[2, 1],
                                 patch_size=8)
    processor = DPTImageProcessorPil(size={"height": SIZE, "width": SIZE},
                                     keep_aspect_ratio=False, ensure_multiple_of=8)
    return _save(out, DepthAnythingForDepthEstimation(config), processor)


def detr_detector(out: Path) -> Path:
    """A tiny DETR with a small ResNet backbone of transformers' own (no timm)."""
    from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig
    from transformers.models.detr.image_processing_pil_detr import DetrImageProcessorPil

    backbone = ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                            layer_type="basic", out_features=["stage2"])
    config = DetrConfig(use_timm_backbone=False, backbone_config=backbone, d_model=16,
                        encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
                        num_queries=5, use_pretrained_backbone=False, **_labels(IMAGE_LABELS))
    processor = DetrImageProcessorPil(size={"shortest_edge": SIZE, "longest_edge": SIZE * 2})
    return _save(out, DetrForObjectDetection(config), processor)


def blip_captioner(out: Path) -> Path:
    """A tiny BLIP captioner: a ViT-style vision tower and a BERT-style text decoder."""
    from transformers import BlipConfig, BlipForConditionalGeneration
    from transformers.models.blip.image_processing_pil_blip import BlipImageProcessorPil

    tokenizer = _word_tokenizer("bert")
    text = {"vocab_size": len(WORDS) + 10, "max_position_embeddings": 256,
            "bos_token_id": tokenizer.cls_token_id, "sep_token_id": tokenizer.sep_token_id,
            "pad_token_id": tokenizer.pad_token_id, "eos_token_id": tokenizer.sep_token_id,
            "encoder_hidden_size": 32, **_SMALL}
    vision = {"image_size": SIZE, "patch_size": 8, **_SMALL}
    config = BlipConfig(text_config=text, vision_config=vision, projection_dim=16)
    model = BlipForConditionalGeneration(config)
    model.generation_config.bos_token_id = tokenizer.cls_token_id
    model.generation_config.eos_token_id = model.generation_config.pad_token_id = \
        tokenizer.sep_token_id
    return _save(out, model, BlipImageProcessorPil(size={"height": SIZE, "width": SIZE}),
                 tokenizer)


def whisper_asr(out: Path) -> Path:
    """A tiny Whisper over 16 mel bins, with a byte-level Whisper tokenizer (the 256
    byte symbols, no merges) and Whisper's special tokens, which the pipeline's decoding
    looks for."""
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperTokenizer,
    )
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = ["<|endoftext|>", *bytes_to_unicode().values()]
    tokenizer = WhisperTokenizer(vocab={s: i for i, s in enumerate(symbols)}, merges=[])
    specials = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    tokenizer.add_special_tokens({"additional_special_tokens": specials})
    start, _, _, no_ts = tokenizer.convert_tokens_to_ids(specials)
    config = WhisperConfig(vocab_size=len(tokenizer), num_mel_bins=16, d_model=32,
                           encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                           decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37,
                           max_source_positions=50, max_target_positions=300, pad_token_id=0,
                           bos_token_id=0, eos_token_id=0, decoder_start_token_id=start)
    model = WhisperForConditionalGeneration(config)
    model.generation_config.decoder_start_token_id = start
    model.generation_config.no_timestamps_token_id = no_ts
    model.generation_config.pad_token_id = model.generation_config.eos_token_id = 0
    model.generation_config.forced_decoder_ids = None
    features = WhisperFeatureExtractor(feature_size=16, chunk_length=1, n_samples=16000)
    return _save(out, model, features, tokenizer)


def owlvit_detector(out: Path, version: int = 1) -> Path:
    """A tiny OWL-ViT (``version`` 2: OWLv2, which pads the image to a square and adds an
    objectness head): CLIP's two towers (the text one over a BPE vocabulary whose id 0 is
    padding) with a class and a box head on each of the image's 4x4 patches."""
    from transformers import (
        Owlv2Config,
        Owlv2ForObjectDetection,
        Owlv2Processor,
        OwlViTConfig,
        OwlViTForObjectDetection,
        OwlViTProcessor,
    )
    from transformers.models.owlv2.image_processing_pil_owlv2 import Owlv2ImageProcessorPil
    from transformers.models.owlvit.image_processing_pil_owlvit import (
        OwlViTImageProcessorPil,
    )

    square = {"height": SIZE, "width": SIZE}
    if version == 1:
        config_class, model_class, processor_class = (
            OwlViTConfig, OwlViTForObjectDetection, OwlViTProcessor)
        images = OwlViTImageProcessorPil(size=square, crop_size=square)
    else:
        config_class, model_class, processor_class = (
            Owlv2Config, Owlv2ForObjectDetection, Owlv2Processor)
        images = Owlv2ImageProcessorPil(size=square)
    tokenizer = _clip_bpe_tokenizer(out / "bpe", pad="<pad>")
    text = {"vocab_size": len(tokenizer), "max_position_embeddings": 16, "pad_token_id": 0,
            "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
            **_SMALL}
    vision = {"image_size": SIZE, "patch_size": 8, **_SMALL}
    config = config_class(text_config=text, vision_config=vision, projection_dim=32)
    return _save(out, model_class(config),
                 processor_class(image_processor=images, tokenizer=tokenizer))


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "distilbert-classifier": distilbert_classifier,
    "roberta-qa": roberta_qa,
    "bart-nli": bart_nli,
    "bart-summarizer": bart_summarizer,
    "qwen2-chat": qwen2_chat,
    "ast-classifier": ast_classifier,
    "depth-anything": depth_anything,
    "detr-detector": detr_detector,
    "blip-captioner": blip_captioner,
    "whisper-asr": whisper_asr,
    "owlvit-detector": owlvit_detector,
    "owlv2-detector": functools.partial(owlvit_detector, version=2),
}
ARCHITECTURES: dict[str, str] = {
    "distilbert-classifier": "DistilBertForSequenceClassification",
    "roberta-qa": "RobertaForQuestionAnswering",
    "bart-nli": "BartForSequenceClassification",
    "bart-summarizer": "BartForConditionalGeneration",
    "qwen2-chat": "Qwen2ForCausalLM",
    "ast-classifier": "ASTForAudioClassification",
    "depth-anything": "DepthAnythingForDepthEstimation",
    "detr-detector": "DetrForObjectDetection",
    "blip-captioner": "BlipForConditionalGeneration",
    "whisper-asr": "WhisperForConditionalGeneration",
    "owlvit-detector": "OwlViTForObjectDetection",
    "owlv2-detector": "Owlv2ForObjectDetection",
}
"""Builder name -> the class it builds (what a catalog card's ``architecture`` says)."""


def build(name: str, root: Path) -> Path:
    """Build the tiny model ``name`` (a key of :data:`BUILDERS`) under ``root``."""
    import torch

    torch.manual_seed(0)
    return BUILDERS[name](Path(root) / name)

