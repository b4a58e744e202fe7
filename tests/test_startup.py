"""Start-up: MiniLM without torch (``tools/experts/lite/encoder.py``), the example bank's
vectors kept on disk, and commands that import only what they use."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from hugginggpt.nodes.planning import bank as bank_module
from hugginggpt.nodes.planning.bank import BankExample, PlanBank
from hugginggpt.tools.experts.lite import minilm, text_encoder
from hugginggpt.tools.experts.lite.encoder import MiniLMEncoder

TEXTS = [
    'Is "what a lovely morning" positive or negative?',
    "Generate an image of a cat, describe it, then read the description aloud in French.",
    "x",
    "",
    "Résumé : « les chats dorment beaucoup » — traduis en anglais, s'il te plaît.",
    "一只猫在沙发上睡觉",
    "a long text that is truncated at 256 word pieces, as sentence-transformers does " * 40,
]


def test_the_numpy_encoder_gives_sentence_transformers_vectors():
    """The same texts through both paths, in one batch (padded to the longest) and one by
    one: the vectors agree to float32 rounding, and the nearest text is the same."""
    ours = text_encoder()
    assert isinstance(ours, MiniLMEncoder)
    theirs = minilm().encode(TEXTS, normalize_embeddings=True)
    batched = ours.encode(TEXTS, normalize_embeddings=True)
    alone = np.stack([ours.encode(t, normalize_embeddings=True) for t in TEXTS])
    for mine in (batched, alone):
        assert mine.shape == theirs.shape and mine.dtype == np.float32
        cosines = (mine * theirs).sum(1) / np.linalg.norm(mine, axis=1)
        assert cosines.min() > 0.999, cosines
        assert (np.argsort(mine @ mine.T, 1) == np.argsort(theirs @ theirs.T, 1))[:, -2:].all()
    unnormalised = ours.encode(TEXTS[:2])
    assert not np.allclose(np.linalg.norm(unnormalised, axis=1), 1.0)


def test_the_banks_vectors_are_computed_once_and_read_back(tmp_path, monkeypatch):
    """The first search writes the vectors to the cache folder; a new bank with the same
    examples reads that file (it is not computed again: a file with other vectors under
    that key is what it gets); a changed example is embedded afresh."""
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path))
    examples = [BankExample("a", "Caption my photo", []),
                BankExample("b", "Translate this text into German", [])]
    first = PlanBank(examples)
    assert first.nearest("Describe the picture", k=1)[0][0].id == "a"
    files = list((tmp_path / "bank").glob("*.npy"))
    assert len(files) == 1
    stored = np.load(files[0])
    np.testing.assert_allclose(stored, first._embeddings())

    np.save(files[0], stored[::-1].copy())  # swapped: proves the file is what is read
    assert PlanBank(list(examples)).nearest("Describe the picture", k=1)[0][0].id == "b"

    changed = PlanBank([examples[0], BankExample("c", "Summarize this article", [])])
    changed._embeddings()
    assert len(list((tmp_path / "bank").glob("*.npy"))) == 2


def test_an_unreadable_cache_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path))
    texts = ["Caption my photo", "Translate this text"]
    good = bank_module._cached_vectors(texts)
    [path] = (tmp_path / "bank").glob("*.npy")
    path.write_bytes(b"not an array")
    np.testing.assert_allclose(bank_module._cached_vectors(texts), good, atol=1e-6)


def _loaded_after(code: str, tmp_path) -> set[str]:
    """The top-level packages in ``sys.modules`` after running ``code`` in a fresh
    interpreter."""
    script = code + "\nimport sys, json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    env = {**os.environ, "HUGGINGGPT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


HEAVY = {"torch", "transformers", "sentence_transformers", "openai", "langchain_openai"}


def test_help_imports_no_library(tmp_path):
    """``hugginggpt --help`` lists the commands from a table: no command module, so none of
    LangGraph, LangChain or the experts."""
    loaded = _loaded_after(
        "from hugginggpt.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass", tmp_path)
    assert not loaded & (HEAVY | {"langgraph", "langchain_core", "pydantic", "numpy"})
    assert "hugginggpt" in loaded


@pytest.mark.timeout(600)
def test_an_offline_run_imports_neither_torch_nor_the_llm_stack(tmp_path):
    """A trivial offline request plans, selects and runs a lite expert: MiniLM runs on
    NumPy, and no LLM is configured, so torch, transformers and openai stay unloaded."""
    env_clear = "".join(f"os.environ.pop({k!r}, None)\n" for k in (
        "OPENAI_API_KEY", "HUGGINGGPT_LLM_API_KEY", "HUGGINGGPT_LLM", "HF_TOKEN"))
    loaded = _loaded_after(
        "import os\n" + env_clear + "from hugginggpt.cli import main\n"
        "assert main(['run', 'Is \"what a lovely morning\" positive or negative?', "
        "'--planner', 'offline', '--workspace', 'ws']) == 0", tmp_path)
    assert not loaded & HEAVY, loaded & HEAVY
    assert {"langgraph", "numpy", "tokenizers"} <= loaded


def test_each_commands_help_line_is_its_parsers():
    """``--help`` shows the table's lines; each must be the one its module registers."""
    import argparse

    from hugginggpt.cli import COMMANDS, _parser, command_module

    full = _parser()
    action = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    shown = {c.dest: c.help for c in action._choices_actions}
    assert shown == {name: help_line for name, (_, help_line) in COMMANDS.items()}
    for name in COMMANDS:
        assert command_module(name).__name__.startswith("hugginggpt.cli.")


def test_endpoint_failures_are_told_without_importing_openai_first():
    """``llm_call_errors()`` names openai's classes once openai is loaded (only then can
    one be raised): a real connection failure from the openai client is an endpoint
    failure, told with its hint; a bug is not one."""
    import httpx
    import openai

    from hugginggpt.tools.llm.errors import describe_llm_error, llm_call_errors

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APIConnectionError(request=request)
    timed_out = openai.APITimeoutError(request=request)
    assert isinstance(refused, llm_call_errors()) and isinstance(timed_out, llm_call_errors())
    assert not isinstance(KeyError("x"), llm_call_errors())
    assert "is the server running" in describe_llm_error(refused, "planner")
    assert "HUGGINGGPT_LLM_TIMEOUT" in describe_llm_error(timed_out, "planner")
    assert "HUGGINGGPT_LLM_TIMEOUT" in describe_llm_error(httpx.ReadTimeout("slow"), "planner")


def test_the_llm_error_module_does_not_load_openai(tmp_path):
    loaded = _loaded_after(
        "from hugginggpt.tools.llm.errors import llm_call_errors, describe_llm_error\n"
        "assert describe_llm_error(ConnectionError('refused'), 'planner')\n"
        "assert ConnectionError in llm_call_errors()", tmp_path)
    assert "openai" not in loaded


LANGUAGE_TEXTS = [
    "what a lovely morning, is it positive?", "Quelle belle matinée, n'est-ce pas ?",
    "Was für ein schöner Morgen heute", "¿Qué hermosa mañana, verdad?",
    "今日はとても良い朝ですね", "Questa è una bella giornata di sole", "Это хорошее утро",
]


def _detections(factory) -> list[list[tuple[str, float]]]:
    from langdetect import DetectorFactory

    DetectorFactory.seed = 0
    found = []
    for text in LANGUAGE_TEXTS:
        detector = factory.create()
        detector.append(text)
        found.append([(lang.lang, lang.prob) for lang in detector.get_probabilities()])
    return found


def test_langdetects_profiles_come_from_the_cache_with_the_same_answers(tmp_path, monkeypatch):
    """langdetect's own loading, then the table written to the cache folder, then read
    back from it (a new factory each time): the same languages with the same
    probabilities, to the last bit."""
    from langdetect import DetectorFactory, detector_factory

    from hugginggpt.tools.experts.lite import engines

    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path))
    theirs = DetectorFactory()
    theirs.load_profile(detector_factory.PROFILES_DIRECTORY)
    answers = []
    for _ in range(2):  # the first fills the cache, the second reads it
        ours = DetectorFactory()
        ours.langlist, ours.word_lang_prob_map = engines._profile_table(ours)
        answers.append(_detections(ours))
    assert isinstance(ours.word_lang_prob_map, engines._Profiles)  # read from the cache
    assert [f.suffix for f in sorted((tmp_path / "langdetect").iterdir())] == [".json", ".npy"]
    assert answers[0] == answers[1] == _detections(theirs)
    assert [found[0][0] for found in answers[1]] == ["en", "fr", "de", "es", "ja", "it", "ru"]
