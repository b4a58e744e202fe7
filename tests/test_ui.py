"""The web UI's pieces without a browser: the plan picture, the view of a run built from
the real graph's stream and state, the embedded runner (uploads, approvals, threads),
the server runner on a real ``langgraph dev``, the CLI command, and the Space's files.
The page itself in a browser: tests/test_ui_browser.py."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from hugginggpt import api
from hugginggpt.graph.context import Context
from hugginggpt.ui.plan_picture import COLOURS, depths, plan_svg
from hugginggpt.ui.runners import (
    EmbeddedRunner,
    ServerRunner,
    UIError,
    stage_uploads,
    summary_of_server_thread,
    view_of_server_state,
)
from hugginggpt.ui.view import RunView, text_outputs

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"
DIAMOND = [
    {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a boat"}},
    {"id": 1, "task": "image-to-text", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 2, "task": "object-detection", "dep": [0], "args": {"image": "<GENERATED>-0"}},
    {"id": 3, "task": "summarization", "dep": [1, 2],
     "args": {"text": "<GENERATED>-1 <GENERATED>-2"}},
]
SIMILAR = "How similar are 'a cat sat on the mat' and 'a kitten lay on the rug'?"


def _dry(workspace: Path, **more: Any) -> Context:
    return Context(backend="dry-run", plan=DIAMOND, dry_run_latency_scale=0.0,
                   workspace=str(workspace), **more)


# ----------------------------------------------------------------------------- picture


def test_the_plan_picture_lays_a_diamond_out_by_depth_with_an_arrow_per_dependency():
    svg = ET.fromstring(plan_svg(DIAMOND, {0: "done", 1: "running", 3: "failed"},
                                 {0: "lite/model"}))
    boxes = {int(g.get("data-id")): g for g in svg.iter(f"{SVG}g")
             if g.get("class") == "subtask"}
    assert sorted(boxes) == [0, 1, 2, 3]
    x = {i: float(g.find(f"{SVG}rect").get("x")) for i, g in boxes.items()}
    y = {i: float(g.find(f"{SVG}rect").get("y")) for i, g in boxes.items()}
    assert x[0] < x[1] == x[2] < x[3] and y[1] != y[2]  # columns by depth, rows within
    arrows = [p for p in svg.iter(f"{SVG}path") if p.get("marker-end")]
    assert len(arrows) == 4  # 0->1, 0->2, 1->3, 2->3
    states = {i: g.get("data-state") for i, g in boxes.items()}
    assert states == {0: "done", 1: "running", 2: "waiting", 3: "failed"}
    fills = {i: g.find(f"{SVG}rect").get("fill") for i, g in boxes.items()}
    assert fills[0] == COLOURS["done"][0] and fills[3] == COLOURS["failed"][0]
    texts = ["".join(t.itertext()) for t in boxes[0].iter(f"{SVG}text")]
    assert texts == ["#0 text-to-image", "lite/model"]


def test_the_plan_picture_escapes_what_a_plan_says_and_survives_bad_dependencies():
    plan = [{"id": 0, "task": "<script>alert(1)</script>", "dep": [0, 7]},
            {"id": 1, "task": "a&b", "dep": [2]}, {"id": 2, "task": "c", "dep": [1]}]
    text = plan_svg(plan)
    assert "<script>" not in text and "&lt;script&gt;" in text and "a&amp;b" in text
    ET.fromstring(text)  # well-formed
    assert depths(plan)[0] == 0  # a dependency on itself or on no subtask is ignored
    assert set(depths(plan)) == {0, 1, 2}  # a cycle ends
    assert "no subtasks planned" in plan_svg([])


# ----------------------------------------------------------------------------- the view


def test_the_view_follows_the_real_stream_and_ends_as_the_state_says(tmp_path):
    events: list[tuple[str, Any]] = []
    result = api.run("draw, caption, detect and sum up", context=_dry(tmp_path),
                     on_event=lambda mode, chunk: events.append((mode, chunk)))
    live = RunView(result.thread_id)
    seen_running = False
    for mode, chunk in events:
        live.handle(mode, chunk)
        seen_running |= any(r.state == "running" for r in live.rows.values())
    assert seen_running  # a subtask's started event showed it running
    assert live.status == "completed" and [s["task"] for s in live.plan] == [
        s["task"] for s in DIAMOND]
    assert {r.state for r in live.rows.values()} == {"done"}
    assert all(r.model.startswith("dry-run") or r.model for r in live.rows.values())
    assert live.response == result.response and "respond finished" in live.log
    final = RunView.from_values(result.thread_id, result.document(), result.status, None)
    assert {i: r.state for i, r in final.rows.items()} == {
        i: r.state for i, r in live.rows.items()}
    assert final.artifact_refs() and final.artifact_refs()[0][0] == 0  # the image


def test_text_outputs_read_like_the_answer():
    assert text_outputs({"outputs": {"text": "hi"}}) == "text: hi"
    labels = {"labels": [{"label": "POSITIVE", "score": 0.94}, {"label": "NEGATIVE",
                                                                "score": 0.06}]}
    assert text_outputs({"outputs": labels}) == "labels: POSITIVE (94%), NEGATIVE (6%)"
    ref = {"artifact_id": "a", "kind": "image", "path": "artifacts/t/a.png"}
    assert text_outputs({"outputs": {"image": ref, "score": 0.5}}) == "score: 0.5"


# ----------------------------------------------------------------------------- embedded


def test_uploads_are_copied_into_the_workspace_and_a_lost_one_is_said(tmp_path):
    one, two = tmp_path / "a" / "x.png", tmp_path / "b" / "x.png"
    for path, data in ((one, b"one"), (two, b"two")):
        path.parent.mkdir()
        path.write_bytes(data)
    staged = stage_uploads([one, two], tmp_path / "ws", "t1")
    assert [p.name for p in staged] == ["x.png", "x-1.png"]
    assert [p.read_bytes() for p in staged] == [b"one", b"two"]
    assert all(p.parent == (tmp_path / "ws" / "uploads" / "t1").resolve() for p in staged)
    with pytest.raises(UIError, match="the upload gone.png is gone"):
        stage_uploads([tmp_path / "gone.png"], tmp_path / "ws", "t1")


def test_the_embedded_runner_waits_for_approval_lists_the_thread_and_resumes(tmp_path):
    runner = EmbeddedRunner(_dry(tmp_path / "ws"))

    async def scenario() -> tuple[RunView, list[Any], RunView, RunView, list[Any]]:
        thread = await runner.new_thread()
        events: list[Any] = []
        waiting = await runner.start(thread, "draw and more", [], "plan",
                                     lambda *e: events.append(e))
        listed = await runner.threads()
        done = await runner.resume(thread, {"action": "approve"},
                                   lambda *e: events.append(e))
        opened = await runner.open(thread)
        return waiting, listed, done, opened, events

    waiting, listed, done, opened, events = asyncio.run(scenario())
    assert waiting.status == "waiting" and waiting.approval["policy"] == "plan"
    assert {r.state for r in waiting.rows.values()} == {"waiting"}
    assert [(t.thread_id, t.status) for t in listed] == [(waiting.thread_id, "waiting")]
    assert listed[0].request == "draw and more"
    assert done.status == "completed" and done.approval is None
    assert any(a.kind == "image" and a.path and a.path.is_file() for a in done.artifacts)
    assert opened.response == done.response and opened.status == "completed"
    assert any(mode == "custom" for mode, _ in events)
    # the audit trail has who answered
    snapshot = asyncio.run(runner._snapshot(waiting.thread_id))
    assert snapshot.values["approvals"][0].who == "web UI"


def test_the_embedded_runner_says_what_is_wrong(tmp_path):
    with pytest.raises(UIError, match="not memory"):
        EmbeddedRunner(_dry(tmp_path), checkpoint_url="memory")
    runner = EmbeddedRunner(_dry(tmp_path))
    with pytest.raises(UIError, match="has no checkpoint"):
        asyncio.run(runner.resume("nothing-here", {"action": "approve"}, print))
    with pytest.raises(UIError, match="the request is empty"):
        asyncio.run(runner.start("t", "  ", [], None, print))
    finished = asyncio.run(runner.start("t2", "draw", [], "never", lambda *e: None))
    assert finished.status == "completed"
    with pytest.raises(UIError, match="is not waiting for an approval"):
        asyncio.run(runner.resume("t2", {"action": "approve"}, lambda *e: None))
    # a follow-up on the same thread is a new turn of it
    again = asyncio.run(runner.start("t2", "and once more", [], "never", lambda *e: None))
    assert (again.thread_id, again.request, again.status) == ("t2", "and once more",
                                                              "completed")
    assert [t.thread_id for t in asyncio.run(runner.threads())] == ["t2"]
    assert asyncio.run(EmbeddedRunner(_dry(tmp_path / "empty")).threads()) == []


# ----------------------------------------------------------------------------- a server


def test_a_server_state_maps_to_the_view():
    ref = {"artifact_id": "a1", "kind": "audio", "path": "artifacts/t/a1.wav"}
    with_url = {**ref, "artifact_id": "a2", "path": "artifacts/t/a2.wav",
                "url": "/artifacts/t/a2.wav"}
    state = {"values": {"request": "say it", "status": "completed", "response": "Said.",
                        "plan": [{"id": 0, "task": "text-to-speech", "dep": [], "args": {}}],
                        "results": {"0": {"id": 0, "task": "text-to-speech",
                                          "status": "done", "model": "lite/espeak-ng",
                                          "outputs": {"audio": ref, "again": with_url}}}},
             "next": [], "tasks": [], "interrupts": []}
    view = view_of_server_state("t", state, "http://127.0.0.1:8123/")
    assert view.status == "completed" and view.response == "Said."
    assert view.rows[0].state == "done" and view.rows[0].model == "lite/espeak-ng"
    assert [a.where for a in view.artifacts] == [
        "artifacts/t/a1.wav on the server (it gives no download URL)",
        "http://127.0.0.1:8123/artifacts/t/a2.wav"]
    pending = {"values": {"request": "r", "status": "waiting", "plan": []},
               "next": ["approve"], "tasks": [{"interrupts": [{"value": {"policy": "plan"}}]}]}
    waiting = view_of_server_state("t", pending, "http://x")
    assert waiting.status == "waiting" and waiting.approval == {"policy": "plan"}
    cut = view_of_server_state("t", {"values": {"status": "running"}, "next": ["execute"]},
                               "http://x")
    assert cut.status == "interrupted"
    listed = summary_of_server_thread({"thread_id": "t", "status": "interrupted",
                                       "values": {"request": "r", "status": "waiting"}})
    assert (listed.status, listed.request) == ("waiting", "r")
    assert summary_of_server_thread({"thread_id": "u", "status": "idle",
                                     "values": None}).status == "idle"


def test_an_unreachable_server_is_said_in_words():
    from tests.test_served import _free_port

    runner = ServerRunner(f"http://127.0.0.1:{_free_port()}", api_key="k")
    assert runner.headers == {"x-api-key": "k"}
    with pytest.raises(UIError, match="cannot reach the server"):  # after the SDK's retries
        asyncio.run(runner.threads())


@pytest.mark.timeout(240)
def test_the_server_runner_on_a_real_langgraph_dev(tmp_path):
    from tests.test_served import DevServer

    server = DevServer(tmp_path)
    server.start()
    try:
        runner = ServerRunner(server.url, workspace=tmp_path / "ui-ws")

        async def scenario() -> tuple[RunView, list[Any], list[Any], RunView, RunView]:
            thread = await runner.new_thread()
            events: list[Any] = []
            waiting = await runner.start(thread, SIMILAR, [], "plan",
                                         lambda *e: events.append(e))
            listed = await runner.threads()
            done = await runner.resume(thread, {"action": "approve"},
                                       lambda *e: events.append(e))
            return waiting, listed, events, done, await runner.open(thread)

        waiting, listed, events, done, opened = asyncio.run(scenario())
    finally:
        server.stop()
    assert waiting.status == "waiting" and waiting.approval["policy"] == "plan"
    assert [s["task"] for s in waiting.plan] == ["sentence-similarity"]
    assert (listed[0].thread_id, listed[0].status) == (waiting.thread_id, "waiting")
    assert {"custom", "updates"} <= {mode for mode, _ in events}
    live = RunView(waiting.thread_id)
    for mode, chunk in events:
        live.handle(mode, chunk)
    assert live.rows[0].state == "done"  # the server's stream drove the rows
    assert done.status == "completed" and "similar" in done.response.lower()
    assert done.results[0]["outputs"]["score"] > 0.3
    assert opened.response == done.response


@pytest.mark.timeout(240)
def test_the_server_runner_sends_uploads_and_fetches_outputs_with_its_key(tmp_path):
    """Against a server with keys, on which a run may read no file of the server's disk:
    the upload travels in the chat message, the output comes back over /artifacts."""
    from PIL import Image

    from tests.test_served import DevServer

    key = "ui-key-0123456789abcdef"
    server = DevServer(tmp_path, {"HUGGINGGPT_API_KEYS": f"ui={key}",
                                  "HUGGINGGPT_WORKSPACE": str(tmp_path / "server-ws"),
                                  "HUGGINGGPT_BACKEND": "dry-run",
                                  "HUGGINGGPT_DRY_RUN_SCALE": "0.01"})
    photo = tmp_path / "photo.png"
    Image.new("RGB", (40, 30), "green").save(photo)
    server.start()
    try:
        runner = ServerRunner(server.url, api_key=key, workspace=tmp_path / "ui-ws")

        async def scenario() -> RunView:
            thread = await runner.new_thread()
            return await runner.start(thread, "Caption this photo, then draw a picture of "
                                      "the caption", [photo], None, lambda *e: None)

        done = asyncio.run(scenario())
        refused = ServerRunner(server.url, api_key="wrong-key-0123456789")
        with pytest.raises(UIError, match="answered 401"):
            asyncio.run(refused.threads())
    finally:
        server.stop()
    assert done.status == "completed", done.response
    sent = Path(done.plan[0]["args"]["image"])
    assert sent.name == "photo.png" and sent.read_bytes() == photo.read_bytes()
    assert sent.is_relative_to(tmp_path / "server-ws")
    [image] = [a for a in done.artifacts if a.kind == "image"]
    assert image.where.startswith(f"{server.url}/artifacts/")
    assert image.path is not None and image.path.is_relative_to(tmp_path / "ui-ws")
    ref = done.results[1]["outputs"]["image"]
    assert image.path.read_bytes() == (tmp_path / "server-ws" / ref["path"]).read_bytes()


# ----------------------------------------------------------------------------- the CLI


def test_the_cli_imports_no_gradio_and_refuses_a_memory_checkpointer(tmp_path):
    code = ("import sys, hugginggpt.cli; "
            "print(sorted(m for m in ('gradio', 'hugginggpt.ui') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.stdout.strip() == "[]", done.stderr
    cli = Path(sys.executable).with_name("hugginggpt")
    help_text = subprocess.run([str(cli), "ui", "--help"], capture_output=True, text=True,
                               timeout=120).stdout
    assert "--server URL" in help_text and "--api-key" in help_text
    refused = subprocess.run([str(cli), "ui", "--checkpoint-url", "memory",
                              "--workspace", str(tmp_path)], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path)
    assert refused.returncode == 2 and "not memory" in refused.stderr
    assert "Traceback" not in refused.stderr


# ----------------------------------------------------------------------------- the Space


def test_the_space_header_and_requirements_match_the_project():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    header = (ROOT / "space" / "README.md").read_text().split("---")[1]
    fields = dict(line.split(": ", 1) for line in header.strip().splitlines())
    assert fields["sdk"] == "gradio" and fields["app_file"] == "app.py"
    [gradio] = [d for d in config["project"]["optional-dependencies"]["ui"]
                if d.startswith("gradio")]
    low, high = re.findall(r"[<>]=?([\d.]+)", gradio)
    version = tuple(map(int, fields["sdk_version"].split(".")))
    assert tuple(map(int, low.split("."))) <= version < tuple(map(int, high.split(".")))
    lines = [line for line in (ROOT / "space" / "requirements.txt").read_text().splitlines()
             if line and not line.startswith(("#", "--"))]
    extras = config["project"]["optional-dependencies"]
    wanted = list(dict.fromkeys(config["project"]["dependencies"] + extras["lite"]
                                + extras["local"] + [d for d in extras["ui"] if d != gradio]))
    assert lines == wanted
    assert not (ROOT / "README.md").read_text().startswith("---")  # the project's own


@pytest.mark.timeout(240)
def test_app_py_builds_the_page_from_a_checkout_that_is_not_installed(tmp_path):
    """As on a Space: the files, not the package. ``python -S`` with only the
    dependencies' folder on the path loads no ``.pth`` file, so the editable install of
    this checkout is out of sight."""
    import sysconfig

    for name in ("app.py", "hugginggpt", "graph", "nodes", "tools"):
        source = ROOT / name
        if source.is_dir():
            import shutil

            shutil.copytree(source, tmp_path / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (tmp_path / name).write_text(source.read_text())
    code = ("import runpy, sys; ns = runpy.run_path('app.py', run_name='space'); "
            "import hugginggpt.graph; "
            "print(type(ns['demo']).__name__, hugginggpt.graph.__file__)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUGGINGGPT_")}
    env |= {"PYTHONPATH": sysconfig.get_paths()["purelib"],
            "GRADIO_TEMP_DIR": str(tmp_path / "gradio"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True,
                          text=True, timeout=200, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    kind, graph_file = done.stdout.split()[-2:]
    assert kind == "Blocks" and Path(graph_file).is_relative_to(tmp_path)
