"""The ``hugginggpt`` command, in-process (``main``) and as the installed script."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hugginggpt.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "caption-translate-speak.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_without_llm_explains_how_to_configure(capsys, workspace):
    code, _, err = _run(capsys, "run", "--planner", "llm", "caption my photo",
                        "--workspace", str(workspace))
    assert code == 2
    assert "No LLM is configured" in err
    for hint in ("OPENAI_API_KEY", "--llm-base-url", "hf:", "--dry-run --plan"):
        assert hint in err


def test_dry_run_plan_json_document(capsys, workspace):
    code, out, err = _run(capsys, "run", "draw, caption, translate, speak", "--dry-run",
                          "--plan", str(EXAMPLE), "--latency-scale", "0.01", "--json",
                          "--thread", "doc-1", "--workspace", str(workspace))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["thread_id"] == "doc-1" and doc["status"] == "completed"
    assert [s["id"] for s in doc["plan"]] == [0, 1, 2, 3, 4, 5]
    assert set(doc["plan"][1]) >= {"id", "task", "dep", "args"}
    for selection in doc["selections"].values():
        assert selection["model"] and selection["backend"] == "dry-run" and selection["reason"]
    for result in doc["results"].values():
        assert result["status"] == "done"
        assert {"outputs", "attempts", "error", "latency_s"} <= set(result)
    audio = doc["results"]["3"]["outputs"]["audio"]
    assert (workspace / audio["path"]).read_bytes()[:4] == b"RIFF"
    assert doc["planner"] == "fixed plan" and doc["response"]
    # progress went to stderr as plain lines (not a terminal here)
    assert "[plan] 6 subtask(s)" in err and "[execute] #3 text-to-speech: done" in err
    assert "thread doc-1: completed" in err


def test_missing_attached_file_is_refused_before_running(capsys, workspace):
    code, _, err = _run(capsys, "run", "caption", "--dry-run", "--plan", str(EXAMPLE),
                        "--file", "nope.png", "--workspace", str(workspace))
    assert code == 2 and "--file nope.png: no such file" in err


def test_invalid_plan_file_aborts_with_its_problems(capsys, workspace, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": 0, "task": "image-to-text", "dep": [],
                                "args": {"image": "not an image"}}]))
    code, out, err = _run(capsys, "run", "x", "--dry-run", "--plan", str(bad), "--json",
                          "--workspace", str(workspace))
    assert code == 5  # aborted's own code; 1 is Python's for an unexpected error (issue 12)
    doc = json.loads(out)
    assert doc["status"] == "aborted"
    assert "plan file is invalid" in doc["abort_reason"]
    assert "argument 'image' needs image" in doc["abort_reason"]


def test_unreadable_plan_file(capsys, workspace, tmp_path):
    code, _, err = _run(capsys, "run", "x", "--plan", str(tmp_path / "missing.json"),
                        "--workspace", str(workspace))
    assert code == 2 and "cannot read the plan file" in err
    (tmp_path / "prose.json").write_text("first caption, then translate")
    code, _, err = _run(capsys, "run", "x", "--plan", str(tmp_path / "prose.json"),
                        "--workspace", str(workspace))
    assert code == 2 and "holds no plan" in err


def test_resume_unknown_thread(capsys, workspace):
    code, _, err = _run(capsys, "resume", "--thread", "ghost", "--workspace", str(workspace))
    assert code == 2 and "no saved settings for thread 'ghost'" in err


def test_run_with_llm_flags_against_a_server(capsys, workspace, llm_server):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "sentence-similarity", "dep": [],
         "args": {"text": "I love dogs", "text2": "Dogs are great"}}]}})
    llm_server.script("responder", {"content": "They are quite similar."})
    code, out, err = _run(capsys, "run", "how similar are these?", "--llm", "scripted",
                          "--llm-base-url", llm_server.url, "--backend", "lite", "--json",
                          "--workspace", str(workspace))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["response"] == "They are quite similar."
    assert doc["results"]["0"]["outputs"]["score"] > 0.5
    assert doc["planner"] == f"llm: scripted @ {llm_server.url}"
    assert llm_server.requests[0]["model"] == "scripted"
    assert doc["usage"]["by_role"] == {"planner": 1, "responder": 1}
    assert doc["usage"]["prompt_tokens"] == 20 and len(doc["llm_calls"]) == 2
    assert (f"LLM calls: 2 (planner 1, responder 1; 0 failed; endpoints: scripted @ "
            f"{llm_server.url} 2), tokens: 20 in, 10 out") in err


def test_console_script_is_installed(tmp_path):
    exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
    assert exe, "the hugginggpt console script is missing: pip install -e ."
    done = subprocess.run([exe, "run", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--dry-run" in done.stdout


def test_a_run_in_a_log_prints_no_library_progress_bars(tmp_path):
    """Not on a terminal, stderr is a log: the lines of the run's progress, not the
    "Loading weights" bars transformers prints for every model it loads."""
    exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUGGINGGPT_", "OPENAI_"))}
    done = subprocess.run(
        [str(exe), "run", "How similar are 'a cat sat on the mat' and 'a kitten lay on the "
         "rug'?", "--backend", "lite", "--workspace", str(tmp_path / "ws")],
        capture_output=True, text=True, timeout=300, env={**env, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert "sentence-similarity" in done.stderr  # the run's own progress lines are there
    assert "Loading weights" not in done.stderr and "it/s]" not in done.stderr, done.stderr


def test_empty_request_is_refused(capsys, workspace):
    code, _, err = _run(capsys, "run", "  ", "--dry-run", "--plan", str(EXAMPLE),
                        "--workspace", str(workspace))
    assert code == 2 and "the request is empty" in err


def _checkpointed_done(workspace: Path, thread: str) -> set[int]:
    """The subtasks whose results the thread's last checkpoint holds (waiting for this,
    not for an output file, the test cannot race the checkpoint write)."""
    from hugginggpt.graph.checkpoint import open_checkpointer

    database = workspace / "checkpoints.sqlite"
    if not database.is_file():
        return set()
    with open_checkpointer(f"sqlite:///{database}") as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread}})
    writes = (found.pending_writes or []) if found else []
    return {int(v["id"]) for _, _, v in writes
            if isinstance(v, dict) and v.get("status") == "done" and "id" in v}


def test_ctrl_c_interrupts_then_resume_finishes(tmp_path):
    import os
    import signal
    import time

    workspace = tmp_path / "ws"
    plan = tmp_path / "plan.json"  # simulated: 0.5 s, then 0.04 s, then 2.4 s
    plan.write_text(json.dumps([
        {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a kite"}},
        {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
        {"id": 2, "task": "text-to-video", "dep": [1], "args": {"text": "<GENERATED>-1"}},
    ]))
    cli = [sys.executable, "-m", "hugginggpt.cli"]
    proc = subprocess.Popen(
        [*cli, "run", "draw and caption", "--dry-run", "--plan", str(plan),
         "--latency-scale", "0.02", "--thread", "ctrl-c", "--json", "--workspace", str(workspace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not _checkpointed_done(workspace, "ctrl-c"):  # subtask 0's result is saved
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    assert "resume with: hugginggpt resume --thread ctrl-c" in err

    resumed = subprocess.run([*cli, "resume", "--thread", "ctrl-c", "--json",
                              "--workspace", str(workspace)],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["status"] == "completed" and doc["workspace"] == str(workspace.resolve())
    assert {r["status"] for r in doc["results"].values()} == {"done"}
    # text-to-image (subtask 0) had finished before Ctrl-C: it did not run again; the
    # 2.4 s text-to-video (subtask 2) could not have finished, so it ran now
    assert "#0 text-to-image: running" not in resumed.stderr
    assert "#2 text-to-video: running" in resumed.stderr


def test_progress_on_a_terminal_uses_rich(monkeypatch):
    import io

    from hugginggpt.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream)
    progress.handle("custom", {"type": "stage", "stage": "execute", "event": "start"})
    progress.handle("custom", {"type": "subtask", "id": 1, "task": "translation",
                               "event": "started", "model": "m/t5", "backend": "lite",
                               "attempt": 1})
    progress.handle("custom", {"type": "subtask", "id": 1, "task": "translation",
                               "event": "done", "model": "m/t5", "latency_s": 0.5})
    progress.handle("custom", {"type": "subtask", "id": 2, "task": "summarization",
                               "event": "failed", "error": "boom"})
    progress.close()
    raw = stream.getvalue()
    assert "\x1b[" in raw  # a live display with styles and cursor moves
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert "#1 translation: ✓ done in 0.50s on m/t5" in text  # the subtask's live row
    assert "#2 summarization: boom" in text


def test_offline_lite_run_reads_an_image_then_classifies_it(capsys, workspace, tmp_path):
    """The whole CLI, offline, no LLM: OCR of an attached image, then sentiment of the text."""
    from PIL import Image, ImageDraw, ImageFont

    image = tmp_path / "review.png"
    canvas = Image.new("RGB", (900, 160), "white")
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default(size=30)
    draw.text((10, 20), "The delivery was late and the box was broken.", fill="black", font=font)
    draw.text((10, 80), "Terrible service, I am very disappointed.", fill="black", font=font)
    canvas.save(image)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([
        {"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "review.png"}},
        {"id": 1, "task": "text-classification", "dep": [0], "args": {"text": "<GENERATED>-0"}},
    ]))
    code, out, err = _run(capsys, "run", "read this review and tell me its sentiment",
                          "--file", str(image), "--plan", str(plan), "--backend", "lite",
                          "--json", "--workspace", str(workspace))
    assert code == 0, err
    doc = json.loads(out)
    ocr, sentiment = doc["results"]["0"], doc["results"]["1"]
    assert (ocr["backend"], ocr["model"]) == ("lite", "lite/rapidocr")
    words = ocr["outputs"]["text"].replace(" ", "").lower()
    assert "deliverywaslate" in words and "verydisappointed" in words
    assert sentiment["model"] == "lite/vader-sentiment"
    assert sentiment["outputs"]["labels"][0]["label"] == "NEGATIVE"


@pytest.mark.parametrize("thread", ["../../escape", "a/b", "..", "-rf", "x" * 200, ""])
def test_a_thread_id_that_is_not_a_name_is_refused(capsys, workspace, thread):
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["run", "Summarise it", "--dry-run", "--plan", str(EXAMPLE),
              f"--thread={thread}", "--workspace", str(workspace)])
    assert exited.value.code == 2 and "is not a thread id" in capsys.readouterr().err
    assert not (workspace / "threads").exists() and not (workspace.parent / "escape.json").exists()
