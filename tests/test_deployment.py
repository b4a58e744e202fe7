"""The image that ``langgraph build`` / ``langgraph up`` make, checked on the Dockerfile the
real ``langgraph dockerfile`` writes from the repository's ``langgraph.json``: torch from
PyTorch's CPU index (and the CUDA index through the documented build argument), the
Hugging Face cache and the workspace as volumes, langgraph.json's ``auth`` and ``http``
entries carried into the image, and a build context of what a clone holds. (No image is
built here: that needs a Docker daemon.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "langgraph.json"
GPU_CONFIG = ROOT / "langgraph.gpu.json"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_INDEX = "https://download.pytorch.org/whl/cu126"
GUIDE = ROOT / "docs" / "guides" / "deploying.md"
"""The documentation's deployment guide: its commands are the ones checked here."""


def _deploying() -> str:
    """The guide's "Deploying" section (the page's last)."""
    text = GUIDE.read_text()
    return text[text.index("\n## Deploying"):]


def _langgraph() -> str:
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or \
        shutil.which("langgraph")
    if exe is None:
        pytest.fail("langgraph CLI is not installed: pip install -e '.[dev]'")
    return exe


def _write_dockerfile(config: Path, out: Path) -> str:
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1"}
    done = subprocess.run([_langgraph(), "dockerfile", "-c", str(config), str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return out.read_text()


@pytest.fixture(scope="module")
def dockerfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _write_dockerfile(CONFIG, tmp_path_factory.mktemp("cpu") / "Dockerfile")


@pytest.fixture(scope="module")
def gpu_dockerfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _write_dockerfile(GPU_CONFIG, tmp_path_factory.mktemp("gpu") / "Dockerfile")


def _config() -> dict[str, Any]:
    return json.loads(CONFIG.read_text())


def _env_json(dockerfile: str, name: str) -> Any:
    """The JSON value of ``ENV NAME='...'`` as the CLI writes it (one line, single-quoted)."""
    [line] = [x for x in dockerfile.splitlines() if x.startswith(f"ENV {name}=")]
    value = line.removeprefix(f"ENV {name}=")
    assert value.startswith("'") and value.endswith("'"), line
    inner = value[1:-1]
    # a single quote inside would end Docker's quoting and mangle the variable
    assert "'" not in inner, f"{name} holds a single quote, which breaks the ENV line: {line}"
    return json.loads(inner)


def _torch_pin() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    [pin] = re.findall(r'"torch==([0-9][0-9.]*)"', text)
    return pin


def _lines(dockerfile: str) -> list[str]:
    return [x.strip() for x in dockerfile.splitlines()]


def _plain_env(dockerfile: str) -> dict[str, str]:
    """The image's ``ENV A=x B=y`` settings (not the CLI's quoted JSON ones)."""
    env: dict[str, str] = {}
    for line in _lines(dockerfile):
        if line.startswith("ENV ") and "='" not in line:
            for pair in line.removeprefix("ENV ").split():
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def _torch_line(dockerfile: str) -> tuple[int, str]:
    lines = _lines(dockerfile)
    [(at, torch)] = [(i, x) for i, x in enumerate(lines) if x.startswith("RUN") and "torch==" in x]
    # installed before the project, so the project's torch==X pin is already satisfied
    # by this build instead of pulling the CUDA-linked one from the package index
    project = next(i for i, x in enumerate(lines) if x.startswith("RUN for dep in /deps/*"))
    assert at < project
    # the pinned version of pyproject.toml
    assert f"torch=={_torch_pin()}" in torch.split(), torch
    # nothing of this machine's pip setup (its wheel folder, its local index) is used
    assert "/opt/wheels" not in dockerfile and "file://" not in dockerfile
    return at, torch


def test_torch_is_the_cpu_build_from_pytorchs_index_before_the_project(dockerfile: str):
    _, torch = _torch_line(dockerfile)
    assert f"--index-url {CPU_INDEX} " in torch, torch
    assert "download.pytorch.org/whl/cu" not in dockerfile


def test_the_image_has_the_lite_and_local_extras_after_torch_before_the_project(
        dockerfile: str):
    """``"."`` installs the light core; the image serves the offline default too, so a line
    before the project installs it with its lite and local extras from the build context
    (after torch's CPU build, which then satisfies the local extra's pin)."""
    lines = _lines(dockerfile)
    torch_at, _ = _torch_line(dockerfile)
    [(at, extras)] = [(i, x) for i, x in enumerate(lines) if "[lite,local]" in x]
    project = next(i for i, x in enumerate(lines) if x.startswith("RUN for dep in /deps/*"))
    assert torch_at < at < project
    assert extras.startswith("RUN --mount=type=bind,source=.,target=/tmp/hugginggpt,rw ")
    spec = extras.split("pip install --no-cache-dir ")[1].split(" ")[0].strip("'")
    assert spec == "/tmp/hugginggpt[lite,local]", spec
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert {"lite", "local"} <= set(extras)


def test_the_gpu_variant_is_langgraph_json_with_the_cuda_index(
        dockerfile: str, gpu_dockerfile: str):
    _, torch = _torch_line(gpu_dockerfile)
    assert f"--index-url {CUDA_INDEX} " in torch, torch
    assert CPU_INDEX not in gpu_dockerfile
    # everything else is the same: the two configurations must not drift apart (a new
    # entry of langgraph.json, such as auth or http, belongs in langgraph.gpu.json too)
    cpu, gpu = _config(), json.loads(GPU_CONFIG.read_text())
    cpu_lines, gpu_lines = cpu.pop("dockerfile_lines"), gpu.pop("dockerfile_lines")
    assert gpu == cpu, "langgraph.gpu.json must be langgraph.json with the CUDA torch index"
    differ = [(a, b) for a, b in zip(cpu_lines, gpu_lines, strict=True) if a != b]
    assert [b.replace(CUDA_INDEX, CPU_INDEX) for a, b in differ if a.startswith("RUN")] == \
        [a for a, b in differ if a.startswith("RUN")]
    assert all(a.startswith("#") for a, b in differ if not a.startswith("RUN")), differ
    assert _lines(gpu_dockerfile).index(torch) == _torch_line(dockerfile)[0]
    assert "-c langgraph.gpu.json" in _deploying()


def test_dockerfile_lines_survive_langgraph_up(dockerfile: str, gpu_dockerfile: str):
    # `langgraph up` puts the Dockerfile inline in a Compose file, where Compose replaces
    # $NAME with the caller's environment (the CLI escapes only its own $dep): a $ in a
    # line of langgraph.json (dockerfile_lines, the description, auth, http) would build
    # something else under `up` than under `build`
    for text in (dockerfile, gpu_dockerfile):
        stray = [x for x in text.splitlines() if "$" in x.replace("$dep", "")]
        assert not stray, stray


def test_hf_cache_and_workspace_are_volumes_of_the_image(
        dockerfile: str, monkeypatch: pytest.MonkeyPatch):
    env = _plain_env(dockerfile)
    volumes = [v for x in _lines(dockerfile) if x.startswith("VOLUME ")
               for v in json.loads(x.removeprefix("VOLUME "))]
    assert env.get("HF_HOME", "").startswith("/"), env
    assert env.get("HUGGINGGPT_WORKSPACE", "").startswith("/"), env
    assert env["HF_HOME"] in volumes and env["HUGGINGGPT_WORKSPACE"] in volumes, volumes
    # the workspace is not inside the cache (or the other way round): two mounts
    assert not env["HF_HOME"].startswith(env["HUGGINGGPT_WORKSPACE"] + "/")
    assert not env["HUGGINGGPT_WORKSPACE"].startswith(env["HF_HOME"] + "/")
    # the settings read the workspace from that variable (graph/context.py)
    from hugginggpt.graph.context import Context

    monkeypatch.setenv("HUGGINGGPT_WORKSPACE", env["HUGGINGGPT_WORKSPACE"])
    assert Context().workspace == env["HUGGINGGPT_WORKSPACE"]


def test_the_graph_its_description_and_checkpointer_reach_the_image(dockerfile: str):
    config = _config()
    assert _env_json(dockerfile, "LANGSERVE_GRAPHS") == config["graphs"]
    assert _env_json(dockerfile, "LANGGRAPH_CHECKPOINTER") == config["checkpointer"]


def _in_image(path: str) -> str:
    """Where the CLI puts a local file of the repository: under /deps/<folder name>/."""
    return f"/deps/{ROOT.name}/{path.removeprefix('./')}"


@pytest.mark.parametrize(("key", "env_name", "field"),
                         [("auth", "LANGGRAPH_AUTH", "path"), ("http", "LANGGRAPH_HTTP", "app")])
def test_auth_and_http_entries_of_langgraph_json_reach_the_image(
        dockerfile: str, key: str, env_name: str, field: str):
    config = _config()
    # the served graph's auth handler and routes (hugginggpt.server) are part of it
    assert key in config, f"langgraph.json has no {key!r} entry"
    assert config[key][field].startswith("hugginggpt.server."), config[key]
    carried = _env_json(dockerfile, env_name)
    wanted = dict(config[key])
    if field in wanted:
        module, _, attr = wanted[field].partition(":")
        if "/" in module:  # a file of the repository: the CLI rewrites it to the image's copy
            wanted[field] = f"{_in_image(module)}:{attr}"
    assert carried == wanted


def test_every_env_line_the_cli_quotes_is_valid_json(dockerfile: str):
    # auth, http, store, the graphs: a single quote in any value of langgraph.json would
    # break the line silently (the server would read a mangled configuration)
    names = re.findall(r"^ENV (\w+)='", dockerfile, flags=re.M)
    assert "LANGSERVE_GRAPHS" in names
    for name in names:
        _env_json(dockerfile, name)


def test_the_build_context_is_what_a_clone_holds(dockerfile: str):
    # the image adds the repository folder; .dockerignore keeps out whatever git ignores
    # (this machine's venv, workspaces, caches, the dev server's threads) and .git, .env
    assert f"ADD . /deps/{ROOT.name}" in dockerfile
    ignore = [x.strip() for x in (ROOT / ".dockerignore").read_text().splitlines()
              if x.strip() and not x.startswith("#")]
    for name in (".git", "**/.env"):
        assert name in ignore, ignore
    for pattern in (ROOT / ".gitignore").read_text().splitlines():
        pattern = pattern.strip().rstrip("/")
        if not pattern or pattern.startswith("#"):
            continue
        # a .gitignore pattern without a leading slash matches at any depth
        expected = pattern[1:] if pattern.startswith("/") else f"**/{pattern}"
        assert expected in ignore, f".dockerignore lacks {expected!r} (.gitignore: {pattern!r})"
    # every file the Dockerfile copies from the build context is in the repository
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.splitlines())
    for line in _lines(dockerfile):
        if line.startswith(("ADD ", "COPY ")) and "--from=" not in line:
            source = line.split()[1]
            if source != ".":
                assert source in tracked, f"{line}: {source} is not in the repository"
    assert ".dockerignore" in tracked


def test_system_libraries_opencv_loads_are_installed(dockerfile: str):
    # opencv-python's wheel links the system's libGL, GLib and X11 client libraries, which
    # the server's slim Debian image lacks: without them `import cv2` (the lite OCR, face
    # detection) fails in the container. Read what this environment's wheel needs.
    site = Path(__import__("cv2").__file__).resolve().parent.parent
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed: cannot read what cv2 links")
    libs = [*site.glob("cv2/cv2*.so"), *site.glob("opencv_python.libs/*.so*")]
    assert libs, site
    needed: set[str] = set()
    for lib in libs:
        out = subprocess.run([readelf, "-d", str(lib)], capture_output=True, text=True).stdout
        needed |= set(re.findall(r"\(NEEDED\).*\[(.+?)\]", out))
    bundled = {p.name for p in libs}
    system = {n for n in needed - bundled if not n.startswith(("libc.", "libm.", "libdl.",
              "libpthread.", "librt.", "ld-linux", "libgcc_s.", "libstdc++.", "libz."))}
    # the Debian package that provides each library (bookworm, the image's distribution)
    packages = {"libGL.so.1": "libgl1", "libglib-2.0.so.0": "libglib2.0-0",
                "libgthread-2.0.so.0": "libglib2.0-0", "libSM.so.6": "libsm6",
                "libICE.so.6": "libice6", "libX11.so.6": "libx11-6",
                "libXext.so.6": "libxext6", "libxcb.so.1": "libxcb1"}
    unknown = system - set(packages)
    assert not unknown, f"cv2 needs system libraries this test does not map: {unknown}"
    [apt] = [x for x in _lines(dockerfile) if x.startswith("RUN apt-get")]
    for lib in sorted(system):
        assert packages[lib] in apt.split(), f"{lib} ({packages[lib]}) is not installed: {apt}"
    assert _config().get("image_distro") == "debian"  # apt-get is Debian's


def test_the_compose_file_runs_replicas_on_the_shared_volumes(dockerfile: str):
    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    api = services["api"]
    assert api["deploy"]["replicas"] >= 2
    # the server's scale-out engine: one Redis and one PostgreSQL for every replica
    assert api["environment"]["REDIS_URI"].startswith("redis://redis:")
    assert "@postgres:5432/" in api["environment"]["DATABASE_URI"]
    assert {"redis", "postgres"} <= set(api["depends_on"])
    # every replica mounts the image's cache and workspace from the same named volumes
    env = _plain_env(dockerfile)
    mounts = dict(reversed(v.split(":")[:2]) for v in api["volumes"])
    assert mounts.get(env["HF_HOME"]) in compose["volumes"], (mounts, env)
    assert mounts.get(env["HUGGINGGPT_WORKSPACE"]) in compose["volumes"], (mounts, env)
    # the image the guide's build command makes
    tag = re.search(r"langgraph build -t (\S+)", _deploying())
    assert tag is not None and api["image"] in (tag.group(1), f"${{HUGGINGGPT_IMAGE:-{tag.group(1)}}}")
    # the load balancer reaches the api service's port and passes streams unbuffered
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server api:8000;" in nginx and "proxy_buffering off;" in nginx
    assert services["lb"]["volumes"] == ["./nginx.conf:/etc/nginx/conf.d/default.conf:ro"]


def _gpu_request(service: dict[str, Any]) -> list[dict[str, Any]]:
    return service["deploy"]["resources"]["reservations"]["devices"]


def test_the_gpu_overrides_name_the_services_they_extend():
    import yaml
    from langgraph_cli.docker import DockerCapabilities, compose_as_dict
    from packaging.version import Version

    # langgraph up's compose file, as the CLI builds it: its server service's name
    up = compose_as_dict(DockerCapabilities(Version("28.0.0"), Version("2.30.0"), True),
                         port=8123)
    override = yaml.safe_load((ROOT / "deploy" / "up.gpu.yaml").read_text())["services"]
    assert set(override) == {"langgraph-api"} <= set(up["services"])
    [device] = _gpu_request(override["langgraph-api"])
    assert device["capabilities"] == ["gpu"] and device["driver"] == "nvidia"
    # deploy/compose.yaml's replicas, with the image langgraph.gpu.json builds
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"]
    gpu = yaml.safe_load((ROOT / "deploy" / "compose.gpu.yaml").read_text())["services"]
    assert set(gpu) == {"api"} <= set(compose)
    [device] = _gpu_request(gpu["api"])
    assert device["capabilities"] == ["gpu"]
    guide = GUIDE.read_text()
    tag = re.search(r"-c langgraph\.gpu\.json -t (\S+)", guide)
    assert tag is not None and gpu["api"]["image"] == f"${{HUGGINGGPT_IMAGE:-{tag.group(1)}}}"
    assert "-c langgraph.gpu.json -d deploy/up.gpu.yaml" in guide
