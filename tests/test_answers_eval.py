"""``hugginggpt eval --answers``: the judge's rules on constructed answers, the shipped
answers set's shape and its distance from the example bank, the harness's files, and one
run of the real command on a small set (a text file, a rendered image, a spoken WAV)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import soundfile
from PIL import Image

from hugginggpt.cli import main
from hugginggpt.cli.eval_answers import offline_environment
from hugginggpt.evaluation import DatasetError
from hugginggpt.evaluation.answer_files import FileSpecError, check_file_spec, materialise
from hugginggpt.evaluation.answer_report import record_of, run_answers
from hugginggpt.evaluation.answers import (
    SPLITS,
    AnswerSample,
    judge,
    parse_answer_sample,
    read_answer_samples,
)
from hugginggpt.nodes.planning.bank import load_bank
from tests.conftest import benchmark
from tests.llm_server import ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "evals" / "answers.jsonl"
BANK = ROOT / "nodes" / "planning" / "plan_bank.jsonl"
NEAR_COPY = 0.80
"""As ``tests/test_plan_data.py``: a shape cosine this close to a bank example is a
near-copy of it."""


def _sample(expect: tuple[str, ...] | list[str] | None = ("negative",),
            forbid: tuple[str, ...] | list[str] = (), why: str | None = None) -> AnswerSample:
    return AnswerSample(id="t-1", split="tune", language="en", category="sentiment",
                        request="good or bad?", expect=None if expect is None else tuple(expect),
                        forbid=tuple(forbid), why=why)


# the judge


def test_every_expected_fact_stated_is_right_and_one_missing_is_not():
    sample = _sample(["negative", r"\b10[.,]50\b"])
    assert judge("The review is negative. The total is 10.50.", sample).label == "right"
    verdict = judge("The review is negative.", sample)
    assert verdict.label == "wrong" and verdict.missing == (r"\b10[.,]50\b",)


def test_a_forbidden_fact_stated_plainly_is_wrong_even_with_the_expected_ones():
    sample = _sample(["negative"], forbid=[r"\bneutral\b"])
    verdict = judge("The review is negative. Overall it reads as neutral.", sample)
    assert verdict.label == "wrong" and verdict.forbidden == (r"\bneutral\b",)
    assert judge("The review is negative.", sample).label == "right"


def test_a_hedge_in_another_line_does_not_cover_a_claim():
    sample = _sample(["negative"], forbid=[r"\bneutral\b"])
    noted = "The text is neutral (100%).\nNote: this may be wrong, as VADER reads English only."
    assert judge(noted, sample).label == "wrong"
    attached = "The text is neutral (100%). This may be wrong, as VADER reads English only."
    assert judge(attached, sample).label == "honest"
    same = "I am not sure it is neutral: VADER reads English only."
    assert judge(same, sample).label == "honest"


def test_honest_needs_a_reason_as_well_as_the_admission():
    sample = _sample()
    assert judge("I could not do that.", sample).label == "wrong"
    assert judge("I could not do that: no model for Spanish sentiment is installed.",
                 sample).label == "honest"
    assert judge("Sorry, I'm not sure.", sample).label == "wrong"
    assert judge("I'm not sure, because the recording is very noisy.", sample).label == "honest"


@pytest.mark.parametrize("answer", [
    "I'm unable to translate offline.",
    "Sorry, I can't do that without an internet connection.",
    "I'm not sure - the text is too short to tell.",
    "This would need a translation model, which is not installed.",
    "Transcription failed because the file is silent.",
])
def test_honest_markers_are_general_phrasings(answer):
    assert judge(answer, _sample()).label == "honest"


def test_a_note_or_footer_without_an_admission_is_not_honest():
    footer = "(Written without a responder LLM; to have an LLM write the answer, set a key.)"
    assert judge(f"The text is in Spanish (100%).\n\n{footer}", _sample()).label == "wrong"


def test_a_fact_stated_only_with_a_hedge_is_not_right():
    sample = _sample(["negative"])
    assert judge("It is probably negative, but I am unsure because the text is short.",
                 sample).label == "honest"
    assert judge("It is probably negative.", sample).label == "wrong"


def test_a_partial_multi_step_answer_is_honest_only_when_it_says_what_failed_and_why():
    sample = _sample(["library", "Bibliothek"])
    explained = ("I planned 2 steps:\n1. Summary: the council approved a new library.\n"
                 "2. The translation failed: no model for German is available offline.")
    verdict = judge(explained, sample)
    assert verdict.label == "honest" and verdict.missing == ("Bibliothek",)
    silent = "I planned 2 steps:\n1. Summary: the council approved a new library.\n2. Done."
    assert judge(silent, sample).label == "wrong"


def test_what_cannot_be_done_is_never_right_and_honest_must_name_why():
    sample = _sample(None, why="translat|offline")
    assert judge("Here it is: Das Treffen ist abgesagt.", sample).label == "wrong"
    assert judge("I cannot do that offline: no model is cached.", sample).label == "honest"
    verdict = judge("I cannot do that because my battery is low.", sample)
    assert verdict.label == "wrong" and "translat|offline" in verdict.reason


def test_a_crash_is_wrong_and_the_run_goes_on(tmp_path):
    samples = [parse_answer_sample({"id": f"c-{n}", "split": "tune", "language": "en",
                                    "category": "x", "request": "hi",
                                    "expect": {"all": ["hello"]}}) for n in (1, 2)]

    def answer(sample, files, workspace):
        if sample.id == "c-1":
            raise RuntimeError("boom")
        return "hello there", "completed"

    report = run_answers(samples, answer)
    first, second = report.records
    assert (first.judgement.label, first.status, first.error) == (
        "wrong", "crashed", "RuntimeError: boom")
    assert second.judgement.label == "right"
    assert "RuntimeError: boom" in report.format()
    assert record_of(samples[1], "hello", "completed", error="x").judgement.label == "wrong"


# the shipped set


SAMPLES = read_answer_samples(ANSWERS)


def test_the_set_is_big_enough_in_enough_languages_and_both_halves_cover_every_category():
    assert len(SAMPLES) >= 60
    assert len({s.id for s in SAMPLES}) == len(SAMPLES)
    assert len({s.language for s in SAMPLES}) >= 5
    halves = {split: {s.category for s in SAMPLES if s.split == split} for split in SPLITS}
    present = {split: categories for split, categories in halves.items() if categories}
    assert {"tune", "held-out"} <= set(present)
    assert all(categories == {s.category for s in SAMPLES} for categories in present.values())
    sizes = Counter(s.split for s in SAMPLES)
    assert max(sizes.values()) - min(sizes.values()) <= 2


def test_the_set_has_every_kind_of_input_and_requests_that_cannot_be_done_offline():
    kinds = Counter(check_file_spec(dict(f)) for s in SAMPLES for f in s.files)
    assert {"text", "image_text", "speech", "drawing"} <= set(kinds)
    suffixes = {Path(f["name"]).suffix for s in SAMPLES for f in s.files if "text" in f}
    assert {".txt", ".md", ".csv", ".json"} <= suffixes
    drawings = {f["drawing"] for s in SAMPLES for f in s.files if "drawing" in f}
    assert drawings == {"face", "street"}
    impossible = [s for s in SAMPLES if s.category == "cannot-offline"]
    assert len(impossible) >= 4 and all(s.why for s in impossible)


def test_the_set_is_new_to_the_example_bank():
    bank = load_bank(BANK)
    known = {" ".join(e.request.lower().split()) for e in bank.examples}
    assert [s.id for s in SAMPLES if " ".join(s.request.lower().split()) in known] == []
    near = []
    for s in SAMPLES:
        ((example, similarity),) = bank.nearest(s.request, k=1)
        if similarity >= NEAR_COPY:
            near.append((round(similarity, 3), s.id, example.id))
    assert near == [], f"near-copies of bank examples (similarity, sample, example): {near}"


@pytest.mark.parametrize(("spec", "problem"), [
    ({"name": "a/b.txt", "text": "x"}, "without folders"),
    ({"name": "a.txt"}, "exactly one of"),
    ({"name": "a.txt", "text": "x", "speech": "y"}, "exactly one of"),
    ({"name": "a.txt", "speech": "hello"}, ".wav"),
    ({"name": "a.png", "image_text": []}, "wrong value"),
    ({"name": "a.png", "drawing": "cat"}, "wrong value"),
    ({"name": "a.txt", "text": "x", "voice": "en"}, "only with 'speech'"),
])
def test_a_bad_file_spec_is_refused_saying_why(spec, problem):
    with pytest.raises(FileSpecError, match=re.escape(problem)):
        check_file_spec(spec)


def test_a_bad_line_is_named(tmp_path):
    path = tmp_path / "set.jsonl"
    good = {"id": "a", "split": "tune", "language": "en", "category": "c", "request": "hi",
            "expect": {"all": ["hello"]}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"split": "dev"}) + "\n")
    with pytest.raises(DatasetError, match="line 2: split must be one of"):
        read_answer_samples(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"expect": {"all": ["("]}}))
    with pytest.raises(DatasetError, match="line 2: expect: '\\(' is not a regular"):
        read_answer_samples(path)


def test_the_files_are_made_from_the_labels(tmp_path):
    paths = materialise([
        {"name": "n.md", "text": "# Title\nbody"},
        {"name": "shot.png", "image_text": ["first line", "a longer second line of text"]},
        {"name": "face.png", "drawing": "face"},
        {"name": "vm.wav", "speech": "Good morning.", "voice": "en"},
    ], tmp_path / "files")
    assert paths[0].read_text() == "# Title\nbody"
    assert Image.open(paths[1]).size[1] == 70 + 60 * 2
    assert Image.open(paths[2]).size == (400, 400)
    assert soundfile.info(str(paths[3])).duration > 0.3


def test_the_offline_environment_hides_keys_and_settings_and_puts_them_back(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("HUGGINGGPT_LLM", "gpt-4o")
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", "/tmp/cache-here")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with offline_environment():
        assert "OPENAI_API_KEY" not in os.environ and "HUGGINGGPT_LLM" not in os.environ
        assert os.environ["HUGGINGGPT_CACHE_DIR"] == "/tmp/cache-here"
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["OPENAI_API_KEY"] == "sk-test" and "HF_HUB_OFFLINE" not in os.environ


def test_eval_takes_one_set_and_names_a_bad_one(capsys, tmp_path):
    assert main(["eval"]) == 2
    assert "one of the two" in capsys.readouterr().err
    assert main(["eval", "x.jsonl", "--answers", "y.jsonl"]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n')
    assert main(["eval", "--answers", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "line 1" in err and "Traceback" not in err
    assert main(["eval", "--answers", str(ANSWERS), "--planner", "llm"]) == 2


def test_the_benchmark_verdict_needs_both_targets():
    bench = benchmark("answers")
    sample = parse_answer_sample({"id": "h", "split": "held-out", "language": "en",
                                  "category": "c", "request": "hi",
                                  "expect": {"all": ["hello"]}})
    from hugginggpt.evaluation.answer_report import AnswerReport

    right = AnswerReport([record_of(sample, "hello", "completed")])
    wrong = AnswerReport([record_of(sample, "bye", "completed")])
    assert bench.verdict(wrong, right) == []
    assert len(bench.verdict(right, right)) == 1  # no more right than before
    assert len(bench.verdict(wrong, wrong)) == 2  # wrong on held-out, and no gain


# the real command on a small set


def test_the_command_runs_a_small_set_offline_and_reports_each_half(tmp_path):
    rows = [
        {"id": "e-1", "split": "tune", "language": "en", "category": "summary",
         "request": "sum up memo.txt for me",
         "files": [{"name": "memo.txt", "text": "The budget for the new bridge was approved. "
                                                 "Work starts in May."}],
         "expect": {"all": ["bridge"]}},
        {"id": "e-2", "split": "held-out", "language": "en", "category": "image",
         "request": "what does this notice say?",
         "files": [{"name": "notice.png", "image_text": ["SWIMMING POOL CLOSED",
                                                         "until Monday"]}],
         "expect": {"all": ["pool", "closed"]}},
        {"id": "e-3", "split": "tune", "language": "en", "category": "voicemail",
         "request": "write down what is said in memo.wav",
         "files": [{"name": "memo.wav", "speech": "The weather is nice today.", "voice": "en"}],
         "expect": {"all": ["weather"]}},
        {"id": "e-4", "split": "held-out", "language": "en", "category": "small-talk",
         "request": "hey, how are you?", "expect": {"all": ["zz-never-said"]},
         "forbid": [r"\w"]},
    ]
    dataset = tmp_path / "small.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = ScriptedLLMServer().start()
    try:  # configured in the shell, ignored by the measured run
        env = {**os.environ, "HUGGINGGPT_LLM": "scripted", "OPENAI_API_KEY": "sk-test",
               "HUGGINGGPT_LLM_BASE_URL": server.url,
               "HUGGINGGPT_CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run(
            [sys.executable, "-m", "hugginggpt", "eval", "--answers", str(dataset),
             "--output", str(tmp_path / "report.json")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.requests == []
    report = json.loads((tmp_path / "report.json").read_text())
    by_id = {s["id"]: s for s in report["samples"]}
    assert list(by_id) == ["e-1", "e-2", "e-3", "e-4"]
    samples = {s.id: s for s in read_answer_samples(dataset)}
    for sid, got in by_id.items():  # the labels are the judge's, on the answers shown
        assert got["label"] == judge(got["answer"], samples[sid]).label, got
        assert got["status"] != "crashed", got
    assert by_id["e-2"]["label"] == "right", by_id["e-2"]  # the rendered text was read
    assert "weather" in by_id["e-3"]["answer"].lower()  # the speech was heard
    assert by_id["e-4"]["label"] == "wrong"
    counts = report["counts"]
    assert counts["tune"]["total"] == counts["held-out"]["total"] == 2
    assert sum(counts["all"][k] for k in ("right", "honest", "wrong")) == 4
    out = done.stdout
    assert re.search(r"^tune: 2 answers: \d right, \d honest, \d wrong", out, re.M)
    assert re.search(r"^held-out: 2 answers: ", out, re.M)
    assert "each held-out split wrong at most 1 in 30: no" in out
    assert "- e-4 (held-out, small-talk, en) 'hey, how are you?'\n    answer: " in out
    assert "[4/4] e-4 wrong" in done.stderr
