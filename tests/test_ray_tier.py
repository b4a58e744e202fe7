"""The expert tier on a real local Ray: ``hugginggpt experts serve --local`` in a process
of its own (2 replicas, multiplexed, and a group of one replica for depth estimation),
tiny models published on the mini-hub and downloaded by the replicas, and ``hugginggpt
run --backend ray`` in processes of their own, as a user runs them.

What it shows: a run names the replica and the model's load time; the second run of the
same model loads nothing (warm); a worker inside the cluster calls the tier through a
DeploymentHandle; a grouped task type runs on its group's deployment; an image goes in
as bytes or through the shared folder and the output image comes back as the run's own
artifact; a request over the tier's bound is refused, saying what to do; a wrong key
is refused; a replica killed mid-call is retried on the other (over HTTP and through a
handle); a worker killed while the tier runs its second subtask resumes without sending
the first again; the tier stopped mid-run gives a clean fallback (and, with no other
backend, a failure saying why); every Ray process stays on the loopback address (each
Python process audited, every process's sockets sampled all along); and nothing is left
running.

Slow (Ray starts in about 25 s on 2 cores): marked ``ray``; ``make test-ray`` runs them.
"""

from __future__ import annotations

import contextlib
import http.server
import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.tools.extras import missing

pytestmark = [
    pytest.mark.ray,
    pytest.mark.timeout(900),
    pytest.mark.skipif(bool(missing("ray") or missing("local")),
                       reason="the tier needs the ray and local extras"),
]

KEY = "tier-test-key"
WARM, KILLED, STOPPED, DEPTH = ("tiny-org/sentiment-warm", "tiny-org/sentiment-killed",
                                "tiny-org/sentiment-stopped", "tiny-org/depth")
REMOTE, RESUMED = "tiny-org/remote-code", "tiny-org/sentiment-resumed"
KILLED_BY_HANDLE = "tiny-org/sentiment-killed-by-handle"
SENTIMENT = [{"id": 0, "task": "text-classification", "dep": [], "args": {"text": "a good movie"}}]
WEIGHTS = "model.safetensors"
CONNECT_AUDIT = Path(__file__).parent / "connect_audit"


@dataclass
class Tier:
    """The tier's process, what the workers need, and what its processes did."""

    process: subprocess.Popen[str]
    url: str
    env: dict[str, str]
    root: Path
    hub: Any
    ray_address: str
    """The local Ray's GCS address, for a worker that joins it (``HUGGINGGPT_RAY_ADDRESS``)."""
    watched: list[int] = field(default_factory=list)
    """Other processes to sample with the tier's: graph workers that joined its Ray."""
    seen: dict[int, Any] = field(default_factory=dict)
    """Every process of the tier's tree ever sampled: pid -> psutil.Process."""
    names: dict[int, set[str]] = field(default_factory=dict)
    """pid -> every name it had: a Ray worker's title follows its task, and an exiting one
    reads as Linux's 15-character ``comm`` only (``ray::ServeRepli``)."""
    connections: list[tuple[int, str, str, str]] = field(default_factory=list)
    """(pid, status, local address, remote address) of each inet socket seen."""
    stop: threading.Event = field(default_factory=threading.Event)

    def tree(self) -> list[Any]:
        import psutil

        found = []
        for pid in [self.process.pid, *self.watched]:
            with contextlib.suppress(psutil.NoSuchProcess):
                found += [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        return found

    def sample(self) -> None:
        """Record the tree's processes and sockets, until told to stop."""
        import psutil

        while not self.stop.wait(0.3):
            for process in self.tree():
                self.seen.setdefault(process.pid, process)
                with contextlib.suppress(psutil.Error):
                    self.names.setdefault(process.pid, set()).add(process.name())
                    for c in process.net_connections(kind="inet"):
                        self.connections.append((process.pid, c.status, c.laddr.ip,
                                                 c.raddr.ip if c.raddr else ""))

    def named(self, pid: int) -> tuple[str, ...]:
        return tuple(sorted(self.names.get(pid, ())))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tier]:
    from tests import tiny_models
    from tests.mini_hub import MiniHub

    root = tmp_path_factory.mktemp("tier")
    clf = tiny_models.build("text-classification", root / "built")
    depth = tiny_models.build("depth-estimation", root / "built")
    hub = MiniHub().start()
    cards = []
    for repo, folder, task in [(WARM, clf, "text-classification"),
                               (KILLED, clf, "text-classification"),
                               (KILLED_BY_HANDLE, clf, "text-classification"),
                               (STOPPED, clf, "text-classification"),
                               (REMOTE, clf, "text-classification"),
                               (RESUMED, clf, "text-classification"),
                               (DEPTH, depth, "depth-estimation")]:
        hub.add_model(repo, folder, info={"library_name": "transformers", "pipeline_tag": task})
        cards.append({"id": repo, "task": task, "downloads": 10, "license": "mit",
                      "library_name": "transformers", "expected_latency_s": 0.1,
                      "trust_remote_code": repo == REMOTE})
    catalog = root / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": cards}))
    port, shared = _free_port(), root / "shared"
    config = root / "tier.toml"
    config.write_text(f'[tier]\nport = {port}\nreplicas = 2\nmax_models_per_replica = 2\n'
                      f'num_cpus = 0.5\ndownload = "yes"\ncatalog = "{catalog}"\n'
                      f'shared_dir = "{shared}"\ngraceful_shutdown_s = 1\nmax_request_mb = 1\n'
                      '[tier.groups.images]\ntasks = ["depth-estimation"]\nreplicas = 1\n')
    env = {**os.environ, "HF_HOME": str(root / "hf-home"), "HF_ENDPOINT": hub.url,
           "HF_HUB_DISABLE_TELEMETRY": "1", "HUGGINGGPT_CATALOG": str(catalog),
           "HUGGINGGPT_CACHE_DIR": str(root / "cache"), "HUGGINGGPT_EXPERTS_KEY": KEY,
           "HUGGINGGPT_EXPERTS_URL": f"http://127.0.0.1:{port}", "HUGGINGGPT_CACHE": "0",
           "HUGGINGGPT_RETRY_BACKOFF": "0.5", "HUGGINGGPT_SUBTASK_RETRIES": "3",
           # every Python process of the tier and the workers logs a reach past loopback
           "PYTHONPATH": os.pathsep.join(filter(None, [str(CONNECT_AUDIT),
                                                       os.environ.get("PYTHONPATH")])),
           "HUGGINGGPT_TEST_CONNECTS": str(root / "connects.log")}
    env.pop("HF_HUB_OFFLINE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "hugginggpt", "experts", "serve", "--local", "--config",
         str(config)], env=env, stdout=subprocess.PIPE, text=True,
        stderr=(root / "tier.err").open("w"))
    served = Tier(process, f"http://127.0.0.1:{port}", env, root, hub, ray_address="")
    sampler = threading.Thread(target=served.sample, daemon=True)
    sampler.start()
    try:
        started = time.monotonic()
        line = process.stdout.readline() if process.stdout else ""
        gcs = re.search(r"HUGGINGGPT_RAY_ADDRESS=(\S+)\)", line)
        assert "expert tier on" in line and gcs, (root / "tier.err").read_text()[-3000:]
        served.ray_address = gcs.group(1)
        print(f"\nthe tier started in {time.monotonic() - started:.1f} s")
        yield served
    finally:
        served.stop.set()
        sampler.join(5)
        if process.poll() is None:  # a test failed before stopping it: stop it now
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                for leftover in [*served.tree(), *served.seen.values()]:
                    with contextlib.suppress(Exception):
                        leftover.kill()
        hub.stop()


def _run(tier: Tier, plan: list[dict[str, Any]], *flags: str, background: bool = False,
         **env: str) -> Any:
    plan_file = tier.root / f"plan-{time.monotonic_ns()}.json"
    plan_file.write_text(json.dumps(plan))
    command = [sys.executable, "-m", "hugginggpt", "run", "Run the plan", "--plan",
               str(plan_file), "--json", "--workspace", str(tier.root / "ws"), *flags]
    if background:
        return subprocess.Popen(command, env={**tier.env, **env}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    done = subprocess.run(command, env={**tier.env, **env}, capture_output=True, text=True,
                          timeout=300)
    return _document(done.stdout, done.stderr)


def _document(stdout: str, stderr: str) -> dict[str, Any]:
    assert stdout.strip(), stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    return json.loads(stdout)


def _only(tier: Tier, model: str) -> dict[str, str]:
    """A catalog with only ``model`` for its task, so selection has one choice."""
    catalog = json.loads(Path(tier.env["HUGGINGGPT_CATALOG"]).read_text())
    mine = tier.root / f"catalog-{model.rsplit('/', 1)[-1]}.json"
    mine.write_text(json.dumps({**catalog, "models": [
        c for c in catalog["models"] if c["id"] == model or c["task"] != "text-classification"]}))
    return {"HUGGINGGPT_CATALOG": str(mine)}


def test_a_run_names_the_replica_and_the_second_run_loads_nothing(tier):
    first = _run(tier, SENTIMENT, "--backend", "ray", **_only(tier, WARM))
    result = first["results"]["0"]
    assert (result["status"], result["backend"], result["model"]) == ("done", "ray", WARM)
    assert result["outputs"]["labels"][0]["label"] in ("POSITIVE", "NEGATIVE")
    replica = result["replica"]
    assert replica["replica"] and replica["warm"] is False and replica["load_s"] > 0

    second = _run(tier, SENTIMENT, "--backend", "ray", **_only(tier, WARM))["results"]["0"]
    assert second["status"] == "done"
    assert second["replica"] == {**second["replica"], "replica": replica["replica"],
                                 "warm": True, "load_s": 0.0}
    assert second["latency_s"] < result["latency_s"]


@pytest.mark.parametrize("address", ["gcs", "auto"])
def test_a_worker_inside_the_cluster_calls_the_tier_through_a_handle(tier, address):
    """HUGGINGGPT_RAY_ADDRESS: the worker joins the tier's Ray as a driver and calls it
    through a DeploymentHandle, by its GCS address or by ``auto`` (``RAY_ADDRESS``, as
    on a node of the cluster). It wins over a URL that answers nothing, and needs no
    key; its Ray traffic is sampled with the tier's (the loopback check at the end)."""
    joined = ({"HUGGINGGPT_RAY_ADDRESS": tier.ray_address} if address == "gcs" else
              {"HUGGINGGPT_RAY_ADDRESS": "auto", "RAY_ADDRESS": tier.ray_address})
    running = _run(tier, SENTIMENT, "--backend", "ray", background=True, **joined,
                   HUGGINGGPT_EXPERTS_KEY="",
                   HUGGINGGPT_EXPERTS_URL=f"http://127.0.0.1:{_free_port()}",
                   **_only(tier, WARM))
    tier.watched.append(running.pid)
    out, err = running.communicate(timeout=300)
    assert running.pid in tier.seen, "the sampler saw the worker"
    assert " -- " not in err, f"Ray's own log lines reached the worker's stderr: {err}"
    doc = _document(out, err)
    result = doc["results"]["0"]
    assert (result["status"], result["backend"], result["model"]) == ("done", "ray", WARM), \
        (result.get("failure"), result.get("candidates"), err[-2000:])
    assert result["outputs"]["labels"][0]["label"] in ("POSITIVE", "NEGATIVE")
    replica = result["replica"]
    assert replica["replica"] and replica["pid"] > 0 and replica["run_s"] > 0
    assert replica["warm"] is (replica["load_s"] == 0.0)


def test_a_grouped_task_type_runs_on_its_groups_deployment(tier):
    from PIL import Image

    image = tier.root / "room.png"
    Image.new("RGB", (64, 64), (120, 80, 40)).save(image)
    plan = [*SENTIMENT, {"id": 1, "task": "depth-estimation", "dep": [],
                         "args": {"image": image.name}}]
    doc = _run(tier, plan, "--file", str(image), "--backend", "ray", **_only(tier, WARM))
    ran = {result["task"]: result["replica"]["replica"] for result in doc["results"].values()
           if result["status"] == "done"}
    assert ran.keys() == {"text-classification", "depth-estimation"}, doc["results"]
    assert ran["text-classification"].startswith("Experts#")
    assert ran["depth-estimation"].startswith("Experts-images#")


@pytest.mark.parametrize("through", ["inline", "shared"])
def test_an_image_goes_to_the_tier_and_its_output_comes_back_as_an_artifact(tier, through):
    from PIL import Image

    image = tier.root / f"room-{through}.png"
    Image.new("RGB", (64, 64), (120, 80, 40)).save(image)
    shared = tier.root / "shared"
    before = set(shared.glob("*.png")) if shared.is_dir() else set()
    env = ({"HUGGINGGPT_EXPERTS_SHARED_DIR": str(shared), "HUGGINGGPT_EXPERTS_INLINE_MAX_MB": "0"}
           if through == "shared" else {})
    plan = [{"id": 0, "task": "depth-estimation", "dep": [], "args": {"image": image.name}}]
    doc = _run(tier, plan, "--file", str(image), "--backend", "ray", **env)
    result = doc["results"]["0"]
    assert (result["status"], result["backend"]) == ("done", "ray"), result
    ref = result["outputs"]["image"]
    made = tier.root / "ws" / ref["path"]
    assert made.is_file() and made.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    copied = (set(shared.glob("*.png")) if shared.is_dir() else set()) - before
    assert len(copied) == (1 if through == "shared" else 0)


@pytest.mark.parametrize("through", ["http", "handle"])
def test_a_request_over_the_tiers_bound_is_refused_saying_what_to_do(tier, through):
    """The tier takes 1 MB here (``max_request_mb``): a 1.5 MB image sent inline is
    refused before it runs, over HTTP as through a handle, and not retried."""
    from PIL import Image

    image = tier.root / "noise.png"
    Image.frombytes("RGB", (800, 640), os.urandom(800 * 640 * 3)).save(image)
    assert image.stat().st_size > 2**20
    env = ({"HUGGINGGPT_RAY_ADDRESS": tier.ray_address, "HUGGINGGPT_EXPERTS_KEY": ""}
           if through == "handle" else {})
    plan = [{"id": 0, "task": "depth-estimation", "dep": [], "args": {"image": image.name}}]
    doc = _run(tier, plan, "--file", str(image), "--backend", "ray", **env)
    result = doc["results"]["0"]
    assert (result["status"], result["attempts"]) == ("failed", 1), result
    assert "the request is over the tier's 1 MB: large inputs go through its shared folder" \
        in result["failure"]["reason"]
    assert result["failure"]["fix"]["controls"] == [
        {"kind": "setting", "name": "experts_shared_dir", "value": ""}]
    assert "(its shared_dir) with --experts-shared-dir" in doc["response"], doc["response"]


def test_a_wrong_key_is_refused(tier):
    doc = _run(tier, SENTIMENT, "--backend", "ray", HUGGINGGPT_EXPERTS_KEY="not-the-key")
    result = doc["results"]["0"]
    assert result["status"] == "failed"
    assert "the expert tier refused the call: its key is missing or wrong" in \
        result["failure"]["reason"]


def test_a_model_that_runs_its_own_code_is_refused_unless_the_tier_names_it(tier):
    doc = _run(tier, SENTIMENT, "--backend", "ray", **_only(tier, REMOTE))
    result = doc["results"]["0"]
    assert result["status"] == "failed" and result["attempts"] == 1  # not retried
    assert f"{REMOTE} runs code shipped with it (trust_remote_code): the expert tier runs " \
        "it only when its settings name it in remote_code" in result["failure"]["reason"]
    assert not tier.hub.downloads(REMOTE)


class _Counting(http.server.BaseHTTPRequestHandler):
    """A pass-through to the tier that records each ``/run`` call's subtask and task."""

    calls: list[tuple[int, str]]
    tier_url: str

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path.endswith("/run"):
            sent = json.loads(body)
            self.calls.append((sent["subtask"], sent["task"]))
        forwarded = urllib.request.Request(
            self.tier_url + self.path, data=body, method="POST",
            headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
        try:
            with urllib.request.urlopen(forwarded, timeout=120) as answer:
                status, reply = answer.status, answer.read()
        except urllib.error.HTTPError as refused:
            status, reply = refused.code, refused.read()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a killed worker
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_subtask_the_tier_finished_is_not_sent_again_on_resume(tier):
    """The worker is killed while the tier runs subtask 1; resuming the thread sends
    subtask 1 again and subtask 0, which the tier had finished, never."""
    from PIL import Image

    handler = type("Counting", (_Counting,), {"calls": [], "tier_url": tier.url})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    image = tier.root / "resumed.png"
    Image.new("RGB", (64, 64), (10, 200, 40)).save(image)
    plan = [{"id": 0, "task": "depth-estimation", "dep": [], "args": {"image": image.name}},
            {"id": 1, "task": "text-classification", "dep": [0],
             "args": {"text": "a good movie"}}]
    env = {"HUGGINGGPT_EXPERTS_URL": f"http://127.0.0.1:{server.server_port}",
           **_only(tier, RESUMED)}
    before = len(tier.hub.stalled)
    tier.hub.stall[(RESUMED, WEIGHTS)] = 8.0
    try:
        running = _run(tier, plan, "--file", str(image), "--backend", "ray", "--thread",
                       "resumed-on-ray", background=True, **env)
        _downloading(tier, before)  # subtask 1 is on the tier: subtask 0 has finished
        running.kill()
        running.wait(30)
        assert handler.calls == [(0, "depth-estimation"), (1, "text-classification")]

        resumed = subprocess.run(
            [sys.executable, "-m", "hugginggpt", "resume", "--thread", "resumed-on-ray",
             "--json", "--workspace", str(tier.root / "ws")],
            env={**tier.env, **env}, capture_output=True, text=True, timeout=300)
        doc = _document(resumed.stdout, resumed.stderr)
    finally:
        server.shutdown()
        server.server_close()
    assert doc["status"] == "completed", doc
    assert [doc["results"][i]["status"] for i in ("0", "1")] == ["done", "done"]
    assert doc["results"]["1"]["model"] == RESUMED
    assert handler.calls == [(0, "depth-estimation"), (1, "text-classification"),
                             (1, "text-classification")]


def _downloading(tier: Tier, before: int, timeout_s: float = 60) -> Any:
    """The process of the tier whose download the mini-hub started stalling after the
    first ``before`` stalls (a test's own: an earlier test's stall is over), found by
    the client port of the stalled request to the hub (a replica that downloaded
    earlier may still hold an idle connection to it, and the same port number may be
    another socket's)."""
    import psutil

    hub_port = int(tier.hub.url.rstrip("/").rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len(tier.hub.stalled) > before:
            port = tier.hub.stalled[before][1]
            for process in tier.tree():
                with contextlib.suppress(psutil.Error):
                    if any(c.laddr.port == port and c.raddr and c.raddr.port == hub_port
                           for c in process.net_connections(kind="inet")):
                        return process
        time.sleep(0.05)
    raise AssertionError("no process of the tier started the stalled download")


@pytest.mark.parametrize("through", ["http", "handle"])
def test_a_replica_killed_mid_call_is_retried_on_the_other(tier, through):
    model = KILLED if through == "http" else KILLED_BY_HANDLE
    env = ({"HUGGINGGPT_RAY_ADDRESS": tier.ray_address, "HUGGINGGPT_EXPERTS_KEY": ""}
           if through == "handle" else {})
    before = len(tier.hub.stalled)
    tier.hub.stall[(model, WEIGHTS)] = 8.0
    running = _run(tier, SENTIMENT, "--backend", "ray", background=True,
                   **_only(tier, model), **env)
    tier.watched.append(running.pid)
    victim = _downloading(tier, before)
    assert "ServeReplica" in victim.name()
    victim.kill()
    out, err = running.communicate(timeout=300)
    result = _document(out, err)["results"]["0"]
    assert (result["status"], result["backend"], result["model"]) == ("done", "ray", model)
    failed, *_, last = result["attempt_log"]
    assert failed["ok"] is False and failed["error_type"] == "TransientToolError"
    assert "stopped during the call" in failed["error"]
    assert last["ok"] and last["replica"]["warm"] is False
    assert last["replica"]["pid"] != victim.pid


def test_stopping_the_tier_mid_run_falls_back_then_fails_with_the_reason(tier):
    before = len(tier.hub.stalled)
    tier.hub.stall[(STOPPED, WEIGHTS)] = 8.0
    running = _run(tier, SENTIMENT, "--backend", "ray,local", "--download", "yes",
                   background=True, **_only(tier, STOPPED))
    _downloading(tier, before)
    tier.process.send_signal(signal.SIGTERM)
    out, err = running.communicate(timeout=300)
    result = _document(out, err)["results"]["0"]
    assert (result["status"], result["backend"]) == ("done", "local"), result
    on_tier = [a for a in result["attempt_log"] if a["backend"] == "ray"]
    assert on_tier and not any(a["ok"] for a in on_tier)
    assert "the expert tier" in on_tier[-1]["error"]

    assert tier.process.wait(60) == 0, (tier.root / "tier.err").read_text()[-3000:]
    doc = _run(tier, SENTIMENT, "--backend", "ray")
    assert doc["status"] == "failed"
    assert f"the expert tier at {tier.url} is not answering" in \
        doc["results"]["0"]["failure"]["reason"]
    by_handle = _run(tier, SENTIMENT, "--backend", "ray", HUGGINGGPT_RAY_ADDRESS=tier.ray_address)
    assert by_handle["status"] == "failed"
    assert f"the Ray cluster at {tier.ray_address} is not answering" in \
        by_handle["results"]["0"]["failure"]["reason"]


def test_nothing_is_left_running_and_ray_stayed_on_the_loopback(tier):
    import psutil

    if tier.process.poll() is None:
        pytest.fail("the tier is still running: the test that stops it did not")
    def running() -> list[str]:
        left = []
        for process in tier.seen.values():
            with contextlib.suppress(psutil.NoSuchProcess):
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{process.pid} {process.name()}")
        return left

    deadline = time.monotonic() + 10  # a killed process takes a moment to be gone
    while (left := running()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"left running: {left}"

    assert len(tier.seen) > 5 and tier.connections, "the sampler saw Ray's processes"
    # every attempt of a Python process (Ray's dashboard and agents, the replicas, the
    # workers): a connect or lookup, however short, past the loopback
    audited = tier.root / "connects.log"
    assert not audited.exists(), f"reached past the loopback: {audited.read_text()[:3000]}"
    # the C++ ones (GCS, raylet) and gRPC's own sockets, as sampled
    connected = {(tier.named(pid), remote) for pid, _, _, remote in tier.connections if remote}
    assert connected and all(_loopback(remote) for _, remote in connected), \
        f"Ray processes connected off the loopback: {sorted(connected)}"
    # what listens: the loopback only, but for one socket Ray Serve 2.60 binds itself on
    # every interface, "[::]:0", in each replica (its inter-deployment gRPC server; no
    # setting moves it): docs/guides/experts-tier.md says so
    listening = {(tier.named(pid), local) for pid, status, local, _ in tier.connections
                 if status == "LISTEN" and not _loopback(local)}
    assert {local for _, local in listening} <= {"::"} and all(
        any(name.startswith("ray::ServeReplica:hugginggpt-experts:") for name in names)
        for names, _ in listening), \
        f"Ray processes listening off the loopback: {sorted(listening)}"


def test_the_connect_audit_logs_a_reach_past_the_loopback_and_nothing_else(tmp_path):
    """The audit the tier's processes carry (``connect_audit``) can fail: a UDP connect
    to a documentation address (no packet leaves) and a lookup are logged, loopback not."""
    log = tmp_path / "connects.log"
    probe = ("import socket\n"
             "for host in ('127.0.0.1', '::1', '192.0.2.1'):\n"
             "    family = socket.AF_INET6 if ':' in host else socket.AF_INET\n"
             "    socket.socket(family, socket.SOCK_DGRAM).connect((host, 9))\n"
             "socket.getaddrinfo('localhost', 9)\n"
             "try:\n    socket.getaddrinfo('metadata.google.internal.invalid', 80)\n"
             "except OSError:\n    pass\n")
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60, env={
        **os.environ, "PYTHONPATH": str(CONNECT_AUDIT), "HUGGINGGPT_TEST_CONNECTS": str(log)})
    logged = [line.split(": ", 1)[1] for line in log.read_text().splitlines()]
    assert logged == ["socket.connect 192.0.2.1",
                      "socket.getaddrinfo metadata.google.internal.invalid"]


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return (mapped or ip).is_loopback
