"""``resume``, ``trace`` and ``replay`` find a thread's saved settings from any folder:
``run`` records each thread in a per-user index (``HUGGINGGPT_STATE_DIR``, by default
``$XDG_STATE_HOME/hugginggpt`` or ``~/.local/state/hugginggpt``) that points at the
settings in the run's workspace; when they really cannot be found, the message says
where it looked and what to pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.cli import main

PLAN = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long text"}}]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    here, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    return plan, here, elsewhere


def test_resume_from_another_folder_finds_the_default_workspace(capsys, tmp_path,
                                                                monkeypatch):
    """The issue's case: a run in the default workspace of one folder, resumed from
    another, failed with "no saved settings" (it looked in that folder's default)."""
    plan, here, elsewhere = _folders(tmp_path)
    monkeypatch.chdir(here)
    code, _, err = _cli(capsys, "run", "summarise a long text", "--dry-run", "--plan",
                        str(plan), "--latency-scale", "0.01", "--approval", "plan",
                        "--thread", "far")
    assert code == 6, err
    monkeypatch.chdir(elsewhere)
    code, out, err = _cli(capsys, "resume", "--thread", "far", "--approve", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed"
    assert doc["workspace"] == str(here / "hugginggpt-workspace")
    assert not (elsewhere / "hugginggpt-workspace").exists()  # nothing made here

    code, out, err = _cli(capsys, "trace", "--thread", "far")
    assert code == 0 and "Thread far: 1 run(s)" in out, err
    code, _, err = _cli(capsys, "replay", "--thread", "far")
    assert code == 0 and "same plan, selections and response as recorded" in err


def test_a_relative_workspace_and_checkpoint_file_are_found_from_elsewhere(
        capsys, tmp_path, monkeypatch):
    plan, here, elsewhere = _folders(tmp_path)
    monkeypatch.chdir(here)
    code, _, err = _cli(capsys, "run", "summarise a long text", "--dry-run", "--plan",
                        str(plan), "--latency-scale", "0.01", "--approval", "plan",
                        "--thread", "rel", "--workspace", "ws",
                        "--checkpoint-url", "sqlite:///runs.sqlite")
    assert code == 6, err
    monkeypatch.chdir(elsewhere)
    code, out, err = _cli(capsys, "resume", "--thread", "rel", "--approve", "--json")
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(here / "ws")
    assert not (elsewhere / "runs.sqlite").exists()  # the run's own checkpoint file


def test_an_unknown_thread_says_where_it_looked(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, "resume", "--thread", "ghost")
    assert code == 2
    assert "no saved settings for thread 'ghost'" in err
    index = Path(__import__("os").environ["HUGGINGGPT_STATE_DIR"]) / "threads"
    assert str(index) in err and str(tmp_path / "hugginggpt-workspace") in err
    assert "--workspace" in err and "--checkpoint-url" in err


def test_a_thread_whose_workspace_was_removed_is_told_so(capsys, tmp_path, monkeypatch):
    import shutil

    plan, here, elsewhere = _folders(tmp_path)
    monkeypatch.chdir(here)
    _cli(capsys, "run", "summarise", "--dry-run", "--plan", str(plan), "--latency-scale",
         "0.01", "--thread", "gone", "--workspace", "ws")
    shutil.rmtree(here / "ws")
    monkeypatch.chdir(elsewhere)
    code, _, err = _cli(capsys, "trace", "--thread", "gone")
    assert code == 2 and "no saved settings for thread 'gone'" in err
    assert f"the index points at {here / 'ws' / 'threads' / 'gone.json'}, which is gone" in err
