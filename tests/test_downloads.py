"""Downloads on consent (local backend), on the mini-hub: the real ``snapshot_download``
and ``from_pretrained`` paths, run by the CLI (and the Python API) in subprocesses whose
``HF_ENDPOINT`` points at the mini-hub and whose ``HF_HOME`` is fresh.

Consent given, asked and refused; what is fetched (only the loader's files); progress;
the run's download budget; a dropped connection resumed; a later run served by the
cache with the hub stopped; ``--download no`` naming the command and the size; a model
that runs its own code; ``models download | cached | remove``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.progress import Progress
from hugginggpt.tools.errors import Fix
from hugginggpt.tools.experts.local import download as dl
from hugginggpt.tools.experts.local import hub_cache
from tests import tiny_models
from tests.mini_hub import MiniHub

REPO = "tiny-org/sentiment"
REMOTE_CODE = "tiny-org/remote-code"
PLAN = [{"id": 0, "task": "text-classification", "dep": [], "args": {"text": "a good movie"}}]
EXTRAS = {"onnx/model.onnx": b"onnx" * 100, "tf_model.h5": b"h5" * 100,
          "README.md": b"# tiny", "pytorch_model.bin": b"bin" * 100}
"""Files a real repo carries that the loader does not need: never fetched."""


@pytest.fixture(scope="module")
def tiny_clf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_models.build("text-classification", tmp_path_factory.mktemp("built"))


@pytest.fixture
def hub(tiny_clf: Path):
    with MiniHub() as server:
        info = {"library_name": "transformers", "pipeline_tag": "text-classification",
                "cardData": {"license": "mit"}, "tags": ["license:mit"]}
        server.add_model(REPO, tiny_clf, files=EXTRAS, info=info)
        server.add_model(REMOTE_CODE, tiny_clf, info=info)
        yield server


def _needed(tiny_clf: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in tiny_clf.iterdir()}


@pytest.fixture
def setup(tmp_path: Path, hub: MiniHub, tiny_clf: Path) -> dict[str, Any]:
    """A catalog with cards for the published repos, a plan file, a workspace and the
    subprocess environment (the mini-hub, a fresh HF_HOME, no offline switch)."""
    size_mb = round(sum(_needed(tiny_clf).values()) / 2**20, 3)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": REPO, "task": "text-classification", "downloads": 1000, "license": "mit",
         "size_mb": size_mb, "library_name": "transformers", "expected_latency_s": 0.1},
        {"id": REMOTE_CODE, "task": "token-classification", "downloads": 10,
         "trust_remote_code": True, "size_mb": size_mb, "expected_latency_s": 0.1},
    ]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_ENDPOINT": hub.url,
           "HUGGINGGPT_CATALOG": str(catalog), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HUGGINGGPT_SUBTASK_RETRIES": "0"}
    env.pop("HF_HUB_OFFLINE", None)
    return {"catalog": catalog, "plan": plan, "env": env, "size_mb": size_mb,
            "workspace": tmp_path / "ws", "hub_cache": tmp_path / "hf-home" / "hub"}


_SMALL_CHUNKS = ("import sys, huggingface_hub.constants as c; c.DOWNLOAD_CHUNK_SIZE = 8192; "
                 "from hugginggpt.cli import main; sys.exit(main(sys.argv[1:]))")
"""The CLI with huggingface_hub reading 8 kB chunks instead of 10 MB: it resumes from the
last whole chunk it wrote, so a tiny file needs small chunks to resume mid-file as a
real model's weights do."""


def _cli(setup: dict[str, Any], *args: str, small_chunks: bool = False
         ) -> subprocess.CompletedProcess[str]:
    command = ["-c", _SMALL_CHUNKS] if small_chunks else ["-m", "hugginggpt"]
    return subprocess.run([sys.executable, *command, *args], env=setup["env"],
                          capture_output=True, text=True, timeout=300)


def _run(setup: dict[str, Any], *flags: str, small_chunks: bool = False
         ) -> tuple[int, dict[str, Any], str]:
    """A CLI run of the plan: its exit code, its JSON document and its stderr.

    (A run that loaded torch models here sometimes aborts at interpreter exit, after its
    result is printed, "terminate called without an active exception", on main too; so
    tests of such runs read the status from the document, which has its own exit code.)"""
    done = _cli(setup, "run", "Is 'a good movie' positive?", "--plan", str(setup["plan"]),
                "--backend", "local", "--json", "--workspace", str(setup["workspace"]), *flags,
                small_chunks=small_chunks)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _usable(setup: dict[str, Any], repo: str = REPO) -> bool:
    """Whether the subprocesses' cache holds a snapshot with a config.json."""
    folder = setup["hub_cache"] / f"models--{repo.replace('/', '--')}" / "snapshots"
    return any(folder.glob("*/config.json"))


# ----------------------------------------------------------------------------- consent given


def test_download_yes_fetches_the_loader_files_with_progress_then_the_cache_serves(
        setup, hub, tiny_clf):
    _, doc, err = _run(setup, "--download", "yes")
    assert doc["status"] == "completed", err
    result = doc["results"]["0"]
    assert (result["status"], result["model"], result["backend"]) == ("done", REPO, "local")
    assert result["outputs"]["labels"][0]["label"] in tiny_models.TEXT_LABELS.values()
    fetched = {path.rsplit("/", 1)[-1] for path in hub.downloads(REPO)}
    assert fetched == set(_needed(tiny_clf)), "only what the loader needs"
    assert not any(name in path for path in hub.downloads(REPO) for name in EXTRAS)
    total = sum(_needed(tiny_clf).values()) / 2**20
    assert f"[download] downloading {REPO}: 0.00 of {total:.2f} MB (0%)" in err
    assert f"[download] downloaded {REPO}: {total:.2f} of {total:.2f} MB (100%)" in err

    hub.stop()  # the next run is served by the cache: nothing to reach
    asked = len(hub.requests)
    _, doc, err = _run(setup, "--download", "yes")
    assert doc["status"] == "completed", err
    assert doc["results"]["0"]["status"] == "done" and "[download]" not in err
    assert len(hub.requests) == asked


def test_python_api_asks_through_the_approval_interrupt(setup, hub):
    script = textwrap.dedent(f"""
        import json, hugginggpt
        plan = {PLAN!r}
        kw = dict(plan=plan, backend="local", download="ask", workspace={str(setup["workspace"])!r})
        first = hugginggpt.run("classify", **kw)
        asked = first.approval
        done = hugginggpt.resume(first.thread_id, {{"downloads": {{"{REPO}": True}}, "who": "ana"}}, **kw)
        print(json.dumps({{"first": first.status, "asked": asked, "status": done.status,
                          "model": done.results[0].model,
                          "approvals": [a.model_dump() for a in done.approvals]}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], env=setup["env"],
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip(), done.stderr  # (the exit code: see _run)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["first"] == "waiting" and got["asked"]["type"] == "download"
    [item] = got["asked"]["downloads"]
    assert (item["model"], item["license"], item["gated"]) == (REPO, "mit", False)
    assert item["size_mb"] == pytest.approx(setup["size_mb"], abs=0.002)
    assert (got["status"], got["model"]) == ("completed", REPO)
    [record] = got["approvals"]
    assert (record["policy"], record["action"], record["who"]) == ("download", "approve", "ana")
    assert f"yes: {REPO}" in record["detail"]


# ----------------------------------------------------------------------------- consent refused


def test_download_ask_shows_the_size_and_a_no_is_respected(setup, hub):
    code, doc, err = _run(setup, "--download", "ask")
    assert code == 6 and doc["status"] == "waiting", err
    [item] = doc["interrupt"]["downloads"]
    assert item["size_mb"] == pytest.approx(setup["size_mb"], abs=0.002)
    assert "license mit, not gated" in item["summary"]
    assert f"resume --thread {doc['thread_id']} --approve | --reject REASON" in err
    assert hub.downloads(REPO) == []  # sizes come from the Hub's metadata only

    done = _cli(setup, "resume", "--thread", doc["thread_id"], "--reject", "no thanks",
                "--json", "--workspace", str(setup["workspace"]))
    doc = json.loads(done.stdout)
    result = doc["results"]["0"]
    assert doc["status"] == "failed" and result["status"] == "failed", done.stderr
    assert "was refused" in result["error"]  # the fix, a field, says how to get it later
    assert f"get it later with hugginggpt models download {REPO}" in doc["response"]
    assert result["failure"]["fix"]["controls"] == [
        {"kind": "models", "name": "download", "value": REPO}]
    assert doc["approvals"][0]["action"] == "reject"
    assert hub.downloads(REPO) == [] and not _usable(setup)


def test_download_no_names_the_command_and_the_size(setup, monkeypatch, capsys):
    import socket

    monkeypatch.setenv("HUGGINGGPT_CATALOG", str(setup["catalog"]))
    connects: list[Any] = []
    real = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect",
                        lambda self, address: connects.append(address) or real(self, address))
    expected = f"hugginggpt models download {REPO}, {setup['size_mb']:g} MB"
    for backend, status in (("local", "failed"), ("auto", "completed")):
        code = main(["run", "classify it", "--plan", str(setup["plan"]), "--backend", backend,
                     "--download", "no", "--json", "--workspace", str(setup["workspace"])])
        doc = json.loads(capsys.readouterr().out)
        assert doc["status"] == status, (backend, doc["selections"])
        # no model ran: the answer's fix names it; a model ran: the choice's fix does
        said = doc["response"] if status == "failed" else str(
            Fix.model_validate(doc["selections"]["0"]["fix"]))
        assert expected in said, doc["selections"]["0"]
    assert code == 0 and doc["results"]["0"]["backend"] == "lite"  # auto: lite ran it
    assert connects == []  # downloads off: nothing touched the network


def test_a_model_that_runs_its_own_code_is_asked_about_even_with_yes(setup, hub, tmp_path):
    plan = tmp_path / "ner.json"
    plan.write_text(json.dumps([{"id": 0, "task": "token-classification", "dep": [],
                                 "args": {"text": "a man in paris"}}]))
    done = _cli(setup, "run", "entities", "--plan", str(plan), "--backend", "local",
                "--download", "yes", "--json", "--workspace", str(setup["workspace"]))
    doc = json.loads(done.stdout)
    assert done.returncode == 6 and doc["interrupt"]["type"] == "download", done.stderr
    [item] = doc["interrupt"]["downloads"]
    assert item["model"] == REMOTE_CODE and item["trust_remote_code"] is True
    assert "RUNS CODE SHIPPED WITH THE MODEL" in item["summary"]
    assert hub.downloads(REMOTE_CODE) == []


# ----------------------------------------------------------------------------- limits, resume


def test_the_run_budget_refuses_a_download_before_any_byte(setup, hub):
    _, doc, err = _run(setup, "--download", "yes", "--max-download-total-mb", "0.01")
    result = doc["results"]["0"]
    assert doc["status"] == "failed" and result["status"] == "failed", err
    assert "was not downloaded: it needs" in result["error"]
    assert "max_download_total_mb=0.01 MB" in result["error"]
    assert result["failure"]["fix"]["controls"][0] == {
        "kind": "limit", "name": "max_download_total_mb", "value": ""}
    assert "raise it with --max-download-total-mb" in doc["response"]  # said for the CLI
    assert hub.downloads(REPO) == [] and not _usable(setup)


def test_a_dropped_connection_resumes_where_it_stopped(setup, hub, tiny_clf):
    weights = (tiny_clf / "model.safetensors").stat().st_size
    cut = 5 * 8192 + 100  # mid-chunk: the last whole chunk is where it resumes
    hub.cut_after[(REPO, "model.safetensors")] = cut
    _, doc, err = _run(setup, "--download", "yes", small_chunks=True)
    assert doc["status"] == "completed", err
    gets = [p for p in hub.downloads(REPO) if p.endswith("/model.safetensors")]
    assert len(gets) == 2  # the cut one, then the rest
    assert weights > cut
    assert [start for path, start in hub.ranges if path.endswith("/model.safetensors")] == [
        5 * 8192]
    blob = setup["hub_cache"] / f"models--{REPO.replace('/', '--')}" / "snapshots"
    [snapshot] = list(blob.iterdir())
    assert (snapshot / "model.safetensors").read_bytes() == (
        tiny_clf / "model.safetensors").read_bytes()


def test_a_download_killed_midway_is_not_usable_and_the_next_one_completes_it(
        setup, hub, tiny_clf):
    """What a process killed while fetching the weights leaves (the other files linked,
    the weights' unfinished attempt file, no weights blob) is not a usable model; the
    next download fetches only the weights."""
    assert _cli(setup, "models", "download", REPO, "--yes").returncode == 0
    repo = setup["hub_cache"] / f"models--{REPO.replace('/', '--')}"
    [snapshot] = list((repo / "snapshots").iterdir())
    etag = hub.repos[REPO].oid("model.safetensors")
    (snapshot / "model.safetensors").unlink()
    (repo / "blobs" / etag).unlink()
    weights = (tiny_clf / "model.safetensors").read_bytes()
    (repo / "blobs" / f"{etag}.1f2e3d4c.incomplete").write_bytes(weights[:30_000])
    listed = json.loads(_cli(setup, "models", "cached", "--json").stdout)
    assert [(e["model"], e["complete"]) for e in listed] == [(REPO, False)]

    fetched = len(hub.downloads(REPO))
    done = _cli(setup, "models", "download", REPO, "--yes")
    assert done.returncode == 0, done.stderr
    assert [p.rsplit("/", 1)[-1] for p in hub.downloads(REPO)[fetched:]] == ["model.safetensors"]
    assert (snapshot / "model.safetensors").read_bytes() == weights
    listed = json.loads(_cli(setup, "models", "cached", "--json").stdout)
    assert [(e["model"], e["complete"]) for e in listed] == [(REPO, True)]


# ----------------------------------------------------------------------------- the commands


def test_models_download_cached_and_remove(setup, hub, tiny_clf):
    done = _cli(setup, "models", "download", REPO, "--yes")
    assert done.returncode == 0, done.stderr
    assert "license mit, not gated" in done.stderr and "(100%)" in done.stderr
    assert f"{REPO}: {setup['size_mb']:.2f} MB downloaded to" in done.stdout
    assert {p.rsplit("/", 1)[-1] for p in hub.downloads(REPO)} == set(_needed(tiny_clf))

    listed = _cli(setup, "models", "cached", "--json")
    [entry] = json.loads(listed.stdout)
    assert (entry["model"], entry["complete"]) == (REPO, True)
    assert entry["size_mb"] == pytest.approx(setup["size_mb"], abs=0.002)

    refused = _cli(setup, "models", "download", "--task", "token-classification", "--yes")
    assert refused.returncode == 2 and "name one to download it anyway" in refused.stderr

    removed = _cli(setup, "models", "remove", REPO, "--yes")
    assert removed.returncode == 0 and "removed" in removed.stdout, removed.stderr
    assert json.loads(_cli(setup, "models", "cached", "--json").stdout) == []


# ----------------------------------------------------------------------------- in process


def test_loader_files_keep_one_weight_format_and_no_other_runtime():
    names = ["config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json",
             "onnx/model.onnx", "onnx/config.json", "tf_model.h5", "flax_model.msgpack",
             "README.md", "vocab.txt", "modeling_x.py", "1_Pooling/config.json"]
    assert dl.loader_files(names) == ["1_Pooling/config.json", "config.json",
                                      "model.safetensors", "tokenizer.json", "vocab.txt"]
    assert "modeling_x.py" in dl.loader_files(names, trust_remote_code=True)
    assert "pytorch_model.bin" in dl.loader_files(["config.json", "pytorch_model.bin"])


def test_disk_space_is_checked_first(monkeypatch, tmp_path):
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(dl.shutil, "disk_usage", lambda path: usage(100, 90, 10 * 2**20))
    with pytest.raises(dl.DownloadError, match="not enough disk space"):
        dl.check_disk(tmp_path / "not-yet" / "hub", 2 * 2**20)
    dl.check_disk(tmp_path, 1024, margin_mb=1)  # 10 MB free is enough for that


def test_an_unfinished_download_is_not_a_usable_model(monkeypatch, tmp_path):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    repo = tmp_path / "models--someone--half"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    assert hub_cache.is_cached("someone/half")
    (repo / "blobs").mkdir()
    (repo / "blobs" / "0123.incomplete").write_bytes(b"half a file")
    assert not hub_cache.is_cached("someone/half")  # resumable, not loadable
    assert not hub_cache.may_download("someone/half")  # downloads are off outside a run


def test_the_terminal_asks_per_model(monkeypatch):
    from hugginggpt.cli import session

    pending = {"type": "download", "request": "r", "downloads": [
        {"model": "a/one", "size_mb": 1.5, "task": "text-classification",
         "summary": "a/one: 1.5 MB to download"},
        {"model": "b/two", "size_mb": 0.2, "task": "summarization",
         "summary": "b/two: 0.200 MB to download"}]}
    answers = iter(["y", ""])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    answer = session._ask(pending)
    assert answer["downloads"] == {"a/one": True, "b/two": False}
    assert "b/two: 0.200 MB to download (for summarization)" in session.describe_approval(pending)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_download_progress_is_a_bar_on_a_terminal_and_quarters_elsewhere():
    events = [{"type": "download", "model": "m/x", "done": d, "total": 4 * 2**20,
               "finished": f, "id": 0, "task": "summarization"}
              for d, f in ((0, False), (2**20, False), (3 * 2**20, False), (4 * 2**20, True))]
    terminal = _Terminal()
    live = Progress(terminal)
    for event in events:
        live.handle("custom", event)
    live.close()
    shown = terminal.getvalue()
    assert "downloaded m/x: 4.00 of 4.00 MB (100%)" in shown and "━" in shown

    plain = io.StringIO()
    lines = Progress(plain)
    for event in events:
        lines.handle("custom", event)
    said = [line.strip().split(" ", 1)[1] for line in plain.getvalue().splitlines()]
    assert said == ["[download] downloading m/x: 0.00 of 4.00 MB (0%)",
                    "[download] downloading m/x: 1.00 of 4.00 MB (25%)",
                    "[download] downloading m/x: 3.00 of 4.00 MB (75%)",
                    "[download] downloaded m/x: 4.00 of 4.00 MB (100%)"]


def test_the_download_setting_is_checked_where_it_enters(monkeypatch, capsys, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    monkeypatch.setenv("HUGGINGGPT_DOWNLOAD", "maybe")
    code = main(["run", "classify", "--plan", str(plan), "--workspace", str(tmp_path)])
    assert code == 2
    assert ("HUGGINGGPT_DOWNLOAD = 'maybe' is not a valid download: expected one of ask, yes, "
            "no") in capsys.readouterr().err
