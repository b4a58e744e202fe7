"""Tiny random Hugging Face models, built on this machine for the local-backend tests.

Nothing is downloaded: each builder makes a config with a few small layers, a tokenizer
from a fixed word list (the ``tokenizers`` library) or a character vocabulary, and an
image processor or feature extractor where the model needs one, then ``save_pretrained``
into a directory of its own. Weights are random, so outputs are random too: tests check
types, shapes and labels, never content. Each builder takes well under a second once
transformers is imported.

Usage::

    path = build("text-classification", tmp_dir)   # -> tmp_dir / "text-classification"
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["BUILDERS", "build", "WORDS", "TEXT_LABELS", "IMAGE_LABELS", "AUDIO_LABELS",
           "NER_LABELS", "SIZE"]

WORDS = [
    "the", "a", "an", "is", "are", "was", "of", "to", "in", "on", "and", "or", "not", "it",
    "this", "that", "cat", "cats", "dog", "dogs", "sat", "mat", "good", "bad", "happy", "sad",
    "great", "terrible", "love", "hate", "movie", "film", "book", "day", "night", "paris",
    "france", "london", "city", "capital", "where", "who", "what", "when", "why", "how", "big",
    "small", "red", "blue", "green", "man", "woman", "walks", "runs", "sees", "photo",
    "picture", "image", "sound", "speech", "says", "hello", "world", "weather", "today",
]
TEXT_LABELS = {0: "NEGATIVE", 1: "POSITIVE"}
NER_LABELS = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"}
IMAGE_LABELS = {0: "cat", 1: "dog", 2: "car"}
AUDIO_LABELS = {0: "yes", 1: "no", 2: "silence"}
SIZE = 32
"""Side of the square images the vision models expect (processors resize to it)."""

_SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
          "intermediate_size": 37}


def _word_tokenizer(style: str) -> Any:
    """A WordLevel tokenizer over :data:`WORDS`: ``bert`` ([CLS] text [SEP]), ``gpt``
    (no specials added, one end-of-text token) or ``t5`` (text </s>)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = {
        "bert": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        "gpt": ["<|endoftext|>", "<unk>"],
        "t5": ["<pad>", "</s>", "<unk>"],
    }[style]
    vocab = {token: i for i, token in enumerate(specials + WORDS + list(".,?!'"))}
    unk = next(s for s in specials if "unk" in s.lower())
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if style == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
        return PreTrainedTokenizerFast(
            tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
            sep_token="[SEP]", mask_token="[MASK]", model_max_length=64)
    if style == "t5":
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", vocab["</s>"])])
        return PreTrainedTokenizerFast(
            tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
            model_max_length=64)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>", unk_token="<unk>", model_max_length=64)


def _bert_config(**extra: Any) -> Any:
    from transformers import BertConfig

    return BertConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64,
                      **_SMALL, **extra)


def _labels(id2label: dict[int, str]) -> dict[str, Any]:
    return {"id2label": id2label, "label2id": {v: k for k, v in id2label.items()}}


def _save(out: Path, model: Any, *processors: Any) -> Path:
    model.eval()
    model.save_pretrained(out)
    for processor in processors:
        processor.save_pretrained(out)
    return out


def text_classification(out: Path) -> Path:
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification(_bert_config(**_labels(TEXT_LABELS)))
    return _save(out, model, _word_tokenizer("bert"))


def _minilm_config(**extra: Any) -> Any:
    """all-MiniLM-L6's shape (6 layers of 384; about 11M parameters with this vocabulary,
    43 MB): loading it costs what loading a small real model does, for the benchmarks
    that weigh model loads."""
    from transformers import BertConfig

    return BertConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=128,
                      hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                      intermediate_size=1536, **extra)


def small_text_classification(out: Path) -> Path:
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification(_minilm_config(**_labels(TEXT_LABELS)))
    return _save(out, model, _word_tokenizer("bert"))


def small_token_classification(out: Path) -> Path:
    from transformers import BertForTokenClassification

    model = BertForTokenClassification(_minilm_config(**_labels(NER_LABELS)))
    return _save(out, model, _word_tokenizer("bert"))


def small_question_answering(out: Path) -> Path:
    from transformers import BertForQuestionAnswering

    return _save(out, BertForQuestionAnswering(_minilm_config()), _word_tokenizer("bert"))


def zero_shot_classification(out: Path) -> Path:
    from transformers import BertForSequenceClassification

    nli = {0: "entailment", 1: "neutral", 2: "contradiction"}
    model = BertForSequenceClassification(_bert_config(**_labels(nli)))
    return _save(out, model, _word_tokenizer("bert"))


def token_classification(out: Path) -> Path:
    from transformers import BertForTokenClassification

    model = BertForTokenClassification(_bert_config(**_labels(NER_LABELS)))
    return _save(out, model, _word_tokenizer("bert"))


def question_answering(out: Path) -> Path:
    from transformers import BertForQuestionAnswering

    return _save(out, BertForQuestionAnswering(_bert_config()), _word_tokenizer("bert"))


def feature_extraction(out: Path) -> Path:
    from transformers import BertModel

    return _save(out, BertModel(_bert_config()), _word_tokenizer("bert"))


def text_generation(out: Path) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _word_tokenizer("gpt")
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=32, n_layer=2,
                        n_head=2, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    return _save(out, GPT2LMHeadModel(config), tokenizer)


def seq2seq(out: Path) -> Path:
    """A tiny T5: serves summarization, translation and text2text-generation."""
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _word_tokenizer("t5")
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=16, d_ff=37, num_layers=2,
                      num_decoder_layers=2, num_heads=2, pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0)
    return _save(out, T5ForConditionalGeneration(config), tokenizer)


def _vit_config(**extra: Any) -> Any:
    from transformers import ViTConfig

    return ViTConfig(image_size=SIZE, patch_size=8, **_SMALL, **extra)


def _vit_processor() -> Any:
    from transformers.models.vit.image_processing_pil_vit import ViTImageProcessorPil

    return ViTImageProcessorPil(size={"height": SIZE, "width": SIZE})


def image_classification(out: Path) -> Path:
    from transformers import ViTForImageClassification

    model = ViTForImageClassification(_vit_config(**_labels(IMAGE_LABELS)))
    return _save(out, model, _vit_processor())


def object_detection(out: Path) -> Path:
    """A tiny YOLOS: a ViT with detection tokens, so no backbone to fetch."""
    from transformers import YolosConfig, YolosForObjectDetection
    from transformers.models.yolos.image_processing_pil_yolos import YolosImageProcessorPil

    config = YolosConfig(image_size=[SIZE, SIZE], patch_size=8, num_detection_tokens=5,
                         **_SMALL, **_labels(IMAGE_LABELS))
    processor = YolosImageProcessorPil(size={"shortest_edge": SIZE, "longest_edge": SIZE * 2})
    return _save(out, YolosForObjectDetection(config), processor)


def image_segmentation(out: Path) -> Path:
    """A tiny SegFormer for semantic segmentation."""
    from transformers import SegformerConfig, SegformerForSemanticSegmentation
    from transformers.models.segformer.image_processing_pil_segformer import (
        SegformerImageProcessorPil,
    )

    config = SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                             hidden_sizes=[8, 16], patch_sizes=[7, 3], strides=[4, 2],
                             num_attention_heads=[1, 2], mlp_ratios=[2, 2],
                             decoder_hidden_size=16, **_labels(IMAGE_LABELS))
    processor = SegformerImageProcessorPil(size={"height": SIZE, "width": SIZE})
    return _save(out, SegformerForSemanticSegmentation(config), processor)


def depth_estimation(out: Path) -> Path:
    """A tiny GLPN (a SegFormer-style encoder with a depth head)."""
    from transformers import GLPNConfig, GLPNForDepthEstimation
    from transformers.models.glpn.image_processing_pil_glpn import GLPNImageProcessorPil

    config = GLPNConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                        hidden_sizes=[8, 16], patch_sizes=[7, 3], strides=[4, 2],
                        num_attention_heads=[1, 2], mlp_ratios=[2, 2], decoder_hidden_size=16)
    return _save(out, GLPNForDepthEstimation(config), GLPNImageProcessorPil())


def _char_tokenizer(out: Path) -> Any:
    from transformers import Wav2Vec2CTCTokenizer

    chars = ["<pad>", "<s>", "</s>", "<unk>", "|", *"abcdefghijklmnopqrstuvwxyz'"]
    out.mkdir(parents=True, exist_ok=True)
    vocab_file = out / "vocab.json"
    vocab_file.write_text(json.dumps({c: i for i, c in enumerate(chars)}))
    return Wav2Vec2CTCTokenizer(str(vocab_file), word_delimiter_token="|")


def _wav2vec2_config(**extra: Any) -> Any:
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8),
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                          mask_time_prob=0.0, **_SMALL, **extra)


def _audio_features() -> Any:
    from transformers import Wav2Vec2FeatureExtractor

    return Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                    do_normalize=True, return_attention_mask=False)


def automatic_speech_recognition(out: Path) -> Path:
    """A tiny Wav2Vec2 with a CTC head over characters, saved with its processor."""
    from transformers import Wav2Vec2ForCTC, Wav2Vec2Processor

    tokenizer = _char_tokenizer(out)
    config = _wav2vec2_config(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    processor = Wav2Vec2Processor(feature_extractor=_audio_features(), tokenizer=tokenizer)
    return _save(out, Wav2Vec2ForCTC(config), processor)


def audio_classification(out: Path) -> Path:
    from transformers import Wav2Vec2ForSequenceClassification

    model = Wav2Vec2ForSequenceClassification(_wav2vec2_config(**_labels(AUDIO_LABELS)))
    return _save(out, model, _audio_features())


def text_to_speech(out: Path) -> Path:
    """A tiny VITS over characters (no phonemizer), a few hundred samples per word."""
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    chars = ["<pad>", "<unk>", " ", *"abcdefghijklmnopqrstuvwxyz'.,"]
    out.mkdir(parents=True, exist_ok=True)
    vocab_file = out / "vocab.json"
    vocab_file.write_text(json.dumps({c: i for i, c in enumerate(chars)}))
    tokenizer = VitsTokenizer(str(vocab_file), phonemize=False, add_blank=True)
    config = VitsConfig(
        vocab_size=len(chars), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        ffn_dim=16, flow_size=8, spectrogram_bins=9, upsample_initial_channel=16,
        upsample_rates=[2, 2], upsample_kernel_sizes=[4, 4], resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1]], depth_separable_num_layers=1,
        duration_predictor_num_flows=1, duration_predictor_filter_channels=16,
        prior_encoder_num_flows=1, prior_encoder_num_wavenet_layers=1,
        posterior_encoder_num_wavenet_layers=1, pad_token_id=0, sampling_rate=16000)
    return _save(out, VitsModel(config), tokenizer)


def image_to_text(out: Path) -> Path:
    """A tiny vision-encoder-decoder captioner: ViT encoder, GPT-2 decoder."""
    from transformers import (
        GPT2Config,
        VisionEncoderDecoderConfig,
        VisionEncoderDecoderModel,
    )

    tokenizer = _word_tokenizer("gpt")
    decoder = GPT2Config(vocab_size=len(tokenizer), n_positions=160, n_embd=32, n_layer=2,
                         n_head=2, add_cross_attention=True, is_decoder=True,
                         bos_token_id=0, eos_token_id=0, pad_token_id=0)
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(_vit_config(), decoder)
    config.decoder_start_token_id = config.pad_token_id = config.eos_token_id = 0
    model = VisionEncoderDecoderModel(config=config)
    model.generation_config.decoder_start_token_id = 0
    model.generation_config.pad_token_id = model.generation_config.eos_token_id = 0
    return _save(out, model, _vit_processor(), tokenizer)


def visual_question_answering(out: Path) -> Path:
    """A tiny ViLT that classifies over a few answers."""
    from transformers import ViltConfig, ViltForQuestionAnswering, ViltProcessor
    from transformers.models.vilt.image_processing_pil_vilt import ViltImageProcessorPil

    answers = {0: "yes", 1: "no", 2: "two"}
    config = ViltConfig(vocab_size=len(WORDS) + 10, max_position_embeddings=64, image_size=SIZE,
                        patch_size=8, max_image_length=-1, **_SMALL, **_labels(answers))
    processor = ViltProcessor(
        image_processor=ViltImageProcessorPil(size={"shortest_edge": SIZE}, size_divisor=8),
        tokenizer=_word_tokenizer("bert"))
    return _save(out, ViltForQuestionAnswering(config), processor)


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "text-classification": text_classification,
    "text-classification-small": small_text_classification,
    "zero-shot-classification": zero_shot_classification,
    "token-classification": token_classification,
    "token-classification-small": small_token_classification,
    "question-answering": question_answering,
    "question-answering-small": small_question_answering,
    "feature-extraction": feature_extraction,
    "text-generation": text_generation,
    "seq2seq": seq2seq,
    "image-classification": image_classification,
    "object-detection": object_detection,
    "image-segmentation": image_segmentation,
    "depth-estimation": depth_estimation,
    "automatic-speech-recognition": automatic_speech_recognition,
    "audio-classification": audio_classification,
    "text-to-speech": text_to_speech,
    "image-to-text": image_to_text,
    "visual-question-answering": visual_question_answering,
}


def build(name: str, root: Path) -> Path:
    """Build the tiny model ``name`` (a key of :data:`BUILDERS`) under ``root``."""
    import torch

    torch.manual_seed(0)
    return BUILDERS[name](Path(root) / name)
