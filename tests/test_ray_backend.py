"""The ``ray`` backend's parts that need no Ray (fast; the tier itself on a real Ray is
``tests/test_ray_tier.py``): a warm model ranks first among equals; files travel inline
or through the shared folder, and a shared name cannot lead out of it; the tier's
settings file is checked; the client against a stub of the tier on real HTTP (its
errors become retryable or not, its outputs the run's own artifacts, its word on models
feeds selection)."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.nodes.ranking import WARM, rank_candidates
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.errors import ArgumentError, ToolExecutionError, TransientToolError
from hugginggpt.tools.experts import ray as ray_backend
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.ray import client
from hugginggpt.tools.experts.ray.config import read_config
from hugginggpt.tools.experts.ray.wire import decode_inputs, encode_inputs
from hugginggpt.tools.experts.registry import ToolContext, register_tool, run_settings
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.extras import missing

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==")


def _catalog(tmp_path: Path, *models: str) -> str:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"version": 1, "models": [
        {"id": m, "task": "summarization", "downloads": 1000, "likes": 10} for m in models]}))
    return str(path)


def test_a_warm_model_ranks_first_among_equals(tmp_path, test_tools):
    catalog = load_catalog(_catalog(tmp_path, "a/cold", "b/warm"))

    def summarize(text: str, model: str) -> str:
        return text

    test_tools.append(register_tool(summarize, "summarization", backend="tier-test",
                                    warm=lambda model: model == "b/warm"))
    ranked = rank_candidates("summarization", catalog, "tier-test")
    assert [c.model for c in ranked] == ["b/warm", "a/cold"]
    assert ranked[0].parts["warm"] == WARM and "warm" not in ranked[1].parts


def test_files_go_inline_when_small_and_through_the_shared_folder_when_large(tmp_path):
    task_type = get_task_type("image-classification")
    image = tmp_path / "cat.png"
    image.write_bytes(PNG)
    shared, tier_side = tmp_path / "shared", tmp_path / "tier"
    tier_side.mkdir()
    plain, files = encode_inputs(task_type, {"image": image}, inline_max_bytes=1 << 20,
                                 shared_dir=shared)
    assert plain == {} and base64.b64decode(files["image"]["data"]) == PNG
    assert not shared.exists()
    _, by_name = encode_inputs(task_type, {"image": image}, inline_max_bytes=10,
                               shared_dir=shared)
    [copy] = shared.iterdir()
    assert by_name["image"] == {"shared": copy.name} and copy.read_bytes() == PNG
    for sent in (files, by_name):
        assert decode_inputs(sent, tier_side, shared)["image"].read_bytes() == PNG
    outside = tmp_path / "secret.png"
    outside.write_bytes(PNG)
    with pytest.raises(ArgumentError, match="names no file of the shared folder"):
        decode_inputs({"image": {"shared": "../secret.png"}}, tier_side, shared)
    with pytest.raises(ArgumentError, match="the tier has no shared folder"):
        decode_inputs(by_name, tier_side, None)


def test_the_tiers_settings_are_checked(tmp_path):
    assert read_config(None).host == "127.0.0.1"
    good = tmp_path / "tier.toml"
    good.write_text('[tier]\nreplicas = 2\nnum_gpus = 0.25\n[tier.autoscaling]\nmax_replicas = 4\n')
    config = read_config(good)
    assert (config.replicas, config.num_gpus, config.autoscaling.max_replicas) == (2, 0.25, 4)
    bad = tmp_path / "bad.toml"
    bad.write_text('[tier]\nreplicas = 0\ncolour = "red"\n')
    with pytest.raises(ValueError) as refused:
        read_config(bad)
    assert "replicas: Input should be greater than or equal to 1" in str(refused.value)
    assert "colour: Extra inputs are not permitted" in str(refused.value)


def test_a_group_of_task_types_is_a_deployment_of_its_own(tmp_path):
    settings = tmp_path / "tier.toml"
    settings.write_text('[tier]\nreplicas = 3\nmax_models_per_replica = 4\nnum_cpus = 1\n'
                        '[tier.groups.images]\ntasks = ["text-to-image", "Image To Image"]\n'
                        'num_gpus = 0.5\nmax_models_per_replica = 1\n'
                        '[tier.groups.speech]\ntasks = ["automatic-speech-recognition"]\n'
                        '[tier.groups.speech.autoscaling]\nmax_replicas = 4\n')
    config = read_config(settings)
    deployments = config.deployments()
    assert list(deployments) == ["Experts", "Experts-images", "Experts-speech"]
    own = {name: (d.replicas, d.autoscaling and d.autoscaling.max_replicas,
                  d.max_models_per_replica, d.num_cpus, d.num_gpus, d.groups)
           for name, d in deployments.items()}
    assert own == {"Experts": (3, None, 4, 1, 0, {}),        # the [tier] table's
                   "Experts-images": (3, None, 1, 1, 0.5, {}),  # its own keys over it
                   "Experts-speech": (1, 4, 4, 1, 0, {})}  # autoscaling instead of replicas
    assert config.groups["images"].tasks == ["text-to-image", "image-to-image"]
    assert [config.deployment_of(task) for task in
            ("text-to-image", "image_to_image", "text-classification", "no-such-task")] == \
        ["Experts-images", "Experts-images", "Experts", "Experts"]


@pytest.mark.parametrize(("table", "said"), [
    ('[tier.groups.images]\ntasks = ["text-to-image", "pictures"]\n',
     "groups.images.tasks: unknown task type(s) pictures"),
    ('[tier.groups.a]\ntasks = ["text-to-image"]\n[tier.groups.b]\ntasks = ["text-to-image"]\n',
     "groups: text-to-image is in two groups, a and b"),
    ('[tier.groups.images]\ntasks = []\n', "groups.images.tasks: List should have at least 1"),
    ('[tier.groups.images]\ntasks = ["text-to-image"]\ngpus = 1\n',
     "groups.images.gpus: Extra inputs are not permitted"),
    ('[tier.groups."GPU images"]\ntasks = ["text-to-image"]\n',
     "groups.GPU images.[key]: String should match pattern"),
])
def test_a_wrong_group_is_refused_naming_the_file_and_the_setting(tmp_path, table, said):
    settings = tmp_path / "tier.toml"
    settings.write_text(f"[tier]\n{table}")
    with pytest.raises(ValueError, match="^" + re.escape(f"{settings}: {said}")):
        read_config(settings)


class _StubTier(BaseHTTPRequestHandler):
    """The tier's HTTP front as the client sees it: replies scripted per path."""

    replies: dict[str, tuple[int, dict[str, Any]]] = {}
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "key": self.headers.get("x-hugginggpt-experts-key"),
                          "body": body})
        status, reply = self.replies[self.path]
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StubTier)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _StubTier.seen.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    client._forget_status()


def _call(url: str, tmp_path: Path, task: str = "depth-estimation", **args: Any) -> Any:
    return _call_with({"url": url}, tmp_path, task, **args)


def _call_with(tier: dict[str, Any], tmp_path: Path, task: str = "depth-estimation",
               **args: Any) -> Any:
    import asyncio

    context = ToolContext(subtask_id=3, task=task, model="m/depth",
                          artifacts=ArtifactStore(tmp_path / "ws"))
    with run_settings({"ray": tier}):
        outputs = asyncio.run(client.call_tier(task, "m/depth", args, context))
    return outputs, context


def test_the_outputs_become_the_runs_artifacts_and_the_replica_is_recorded(
        stub, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_EXPERTS_KEY", "k1")
    _StubTier.replies = {"/run": (200, {
        "outputs": {"image": {"artifact": {}, "kind": "image", "suffix": ".png",
                              "data": base64.b64encode(PNG).decode()}},
        "replica": "abc", "pid": 7, "load_s": 1.5, "warm": False, "run_s": 1.6})}
    image = tmp_path / "room.png"
    image.write_bytes(PNG)
    outputs, context = _call(stub, tmp_path, image=image)
    [sent] = _StubTier.seen
    assert sent["key"] == "k1" and sent["body"]["task"] == "depth-estimation"
    assert base64.b64decode(sent["body"]["files"]["image"]["data"]) == PNG
    ref = outputs["image"]
    assert ref["kind"] == "image" and context.artifacts.resolve(ref).read_bytes() == PNG
    assert context.extra["replica"] == {"replica": "abc", "pid": 7, "load_s": 1.5,
                                        "warm": False, "run_s": 1.6}


@pytest.mark.parametrize(("status", "transient", "raised"), [
    (503, True, TransientToolError), (422, False, ToolExecutionError),
    (401, False, ToolExecutionError)])
def test_the_tiers_errors_keep_whether_a_retry_may_pass(stub, tmp_path, status, transient,
                                                       raised):
    _StubTier.replies = {"/run": (status, {"error": {
        "type": "X", "message": f"said with {status}", "transient": transient, "fix": None}})}
    with pytest.raises(raised, match=f"said with {status}") as caught:
        _call(stub, tmp_path, task="summarization", text="hello")
    assert isinstance(caught.value, TransientToolError) == transient


def test_a_tier_that_does_not_answer_is_a_retryable_error_saying_where(tmp_path):
    url = "http://127.0.0.1:9"  # discard: nothing listens
    with pytest.raises(TransientToolError, match=f"the expert tier at {url} is not answering"):
        _call(url, tmp_path, task="summarization", text="hello")


def test_the_tiers_word_on_models_feeds_selection(stub, tmp_path):
    catalog = _catalog(tmp_path, "a/cached", "b/missing")
    _StubTier.replies = {"/status": (200, {"models": {
        "a/cached": {"reason": None, "warm": True},
        "b/missing": {"reason": "not cached (90 MB to download)", "warm": False}}})}
    with run_settings({"ray": {"url": stub, "catalog": catalog}}):
        assert ray_backend.unavailable_reason("summarization", "a/cached") is None
        assert ray_backend.is_warm("summarization", "a/cached")
        assert ray_backend.unavailable_reason("summarization", "b/missing") == \
            "on the expert tier: not cached (90 MB to download)"
        ranked = rank_candidates("summarization", load_catalog(catalog), "ray")
    assert [(c.model, c.parts.get("warm")) for c in ranked] == [("a/cached", WARM)]
    [asked] = _StubTier.seen  # one request for the task's models, then kept
    assert asked["body"] == {"task": "summarization", "models": ["a/cached", "b/missing"]}


def test_a_call_marks_its_model_warm_and_a_model_not_asked_yet_is_asked(stub, tmp_path):
    catalog = _catalog(tmp_path, "m/depth")
    _StubTier.replies = {
        "/status": (200, {"models": {"m/depth": {"reason": None, "warm": False}}}),
        "/run": (200, {"outputs": {"text": "short"}, "replica": "r1", "pid": 7,
                       "load_s": 0.5, "warm": False, "run_s": 0.6})}
    with run_settings({"ray": {"url": stub, "catalog": catalog}}):
        assert not ray_backend.is_warm("summarization", "m/depth")
        _call(stub, tmp_path, task="summarization", text="hello")
        assert ray_backend.is_warm("summarization", "m/depth")  # from the reply: not asked
        assert ray_backend.unavailable_reason("summarization", "n/other") == \
            "on the expert tier: it does not say"
    assert [(s["path"], s["body"].get("models")) for s in _StubTier.seen] == [
        ("/status", ["m/depth"]), ("/run", None), ("/status", ["n/other", "m/depth"])]


def test_the_tier_will_not_listen_beyond_the_loopback_without_a_key(tmp_path, monkeypatch,
                                                                    capsys):
    from hugginggpt.cli import main

    monkeypatch.delenv("HUGGINGGPT_EXPERTS_KEY", raising=False)
    config = tmp_path / "tier.toml"
    config.write_text('[tier]\nhost = "0.0.0.0"\n')
    assert main(["experts", "serve", "--local", "--config", str(config)]) == 2
    assert "the tier would listen on 0.0.0.0 with no key: set HUGGINGGPT_EXPERTS_KEY" in \
        capsys.readouterr().err
    config.write_text('[tier]\nreplicas = "many"\n')
    assert main(["experts", "serve", "--local", "--config", str(config)]) == 2
    assert "replicas: Input should be a valid integer" in capsys.readouterr().err


@pytest.fixture
def driver_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A worker joining a loopback Ray sets Ray's loopback settings in its environment (and
    importing Ray sets more): the environment is put back whole after the test, so no
    later test (nor a process it starts) inherits them; Ray's home is the test's own."""
    saved = dict(os.environ)
    monkeypatch.setenv("HUGGINGGPT_CACHE_DIR", str(tmp_path / "cache"))
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_without_ray_a_ray_address_says_what_to_install(stub, tmp_path, monkeypatch,
                                                        driver_env):
    """A worker given ``ray_address`` needs Ray (its import fails here as it does where
    Ray is not installed): the run says which extra, or the HTTP way, in each caller's
    words; the address wins over the URL, which is not asked."""
    from hugginggpt.nodes.responding.advice import said
    from hugginggpt.tools.errors import NotInstalledError

    monkeypatch.setitem(sys.modules, "ray", None)
    catalog = _catalog(tmp_path, "a/model")
    tier = {"url": stub, "ray_address": "127.0.0.1:6379", "catalog": catalog}
    with run_settings({"ray": tier}):
        reason = ray_backend.unavailable_reason("summarization", "a/model")
        with pytest.raises(NotInstalledError) as caught:
            _call_with(tier, tmp_path, task="summarization", text="hello")
    assert reason == ("Ray, which the expert tier's Ray address needs, is not installed: "
                      "pip install 'hugginggpt[ray]'")
    assert str(caught.value) == reason and not isinstance(caught.value, TransientToolError)
    assert said(caught.value.fix, "cli") == "or reach the tier over HTTP with " \
        "HUGGINGGPT_EXPERTS_URL"
    assert said(caught.value.fix, "served") == "or reach the tier over HTTP with " \
        "HUGGINGGPT_EXPERTS_URL in the server's environment (ask its operator)"
    assert _StubTier.seen == []


@pytest.mark.skipif(bool(missing("ray")), reason="joining a cluster needs the ray extra")
def test_a_ray_cluster_that_does_not_answer_is_a_retryable_error_saying_where(tmp_path,
                                                                             driver_env):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
    tier = {"ray_address": address, "catalog": _catalog(tmp_path, "a/model")}
    said = f"the Ray cluster at {address} is not answering (ConnectionRefusedError)"
    with pytest.raises(TransientToolError, match=re.escape(said)):
        _call_with(tier, tmp_path, task="summarization", text="hello")
    client._forget_status()
    with run_settings({"ray": tier}):
        assert ray_backend.unavailable_reason("summarization", "a/model") == said
    client._forget_status()


_SILENT_JOIN = """
import socket, sys, threading, time
from hugginggpt.tools.experts.ray import handle

server, held = socket.create_server(("127.0.0.1", 0)), []

def hold():
    while True:
        held.append(server.accept())

threading.Thread(target=hold, daemon=True).start()
handle.JOIN_TIMEOUT_S = 3.0
for attempt in range(2):
    started = time.monotonic()
    try:
        handle.app_handle(f"127.0.0.1:{server.getsockname()[1]}")
    except Exception as exc:
        print(f"{time.monotonic() - started:.1f} {type(exc).__name__}: {exc}", flush=True)
"""


@pytest.mark.skipif(bool(missing("ray")), reason="joining a cluster needs the ray extra")
def test_joining_a_cluster_that_accepts_and_never_answers_fails_in_bounded_time(tmp_path):
    """Ray's join waits on such an address for minutes (over 140 s measured): the join
    gives up after its bound, the next attempt fails at once, and the process exits.
    (In a process of its own: Ray's join is left behind in it.)"""
    done = subprocess.run([sys.executable, "-c", _SILENT_JOIN], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "HUGGINGGPT_CACHE_DIR": str(tmp_path)})
    first, again = (line.split(" ", 1) for line in done.stdout.splitlines())
    assert done.returncode == 0 and first[1] == again[1], done.stdout + done.stderr[-2000:]
    assert first[1].startswith("TransientToolError: joining the Ray cluster at 127.0.0.1:")
    assert "took over 3 s: it answers but does not take this worker" in first[1]
    assert 3.0 <= float(first[0]) < 20 and float(again[0]) < 0.5, done.stdout


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("::ffff:127.0.0.1", True), ("::ffff:10.0.0.1", False), ("10.0.0.1", False),
    ("ray-head", False)])
def test_a_loopback_cluster_is_joined_with_the_loopback_settings(host, loopback):
    from hugginggpt.tools.experts.ray.handle import _is_loopback

    assert _is_loopback(host) is loopback


def test_a_ray_address_must_name_a_running_cluster():
    """``local`` would start a new Ray inside the worker: refused where settings enter."""
    from hugginggpt.graph.context import Context
    from hugginggpt.tools.errors import SettingsError

    with pytest.raises(SettingsError, match=re.escape(
            "ray_address = 'local' is not valid: expected a Ray cluster's address")):
        Context(ray_address="local")
    both = Context(ray_address="ray://head:10001", experts_url="http://tier:8000")
    assert both.backend_settings()["ray"] == {**both.backend_settings()["ray"],
                                              "ray_address": "ray://head:10001",
                                              "url": "http://tier:8000"}
