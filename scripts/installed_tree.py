"""Run a checker on the package as it installs: ``python scripts/installed_tree.py CMD...``.

``graph/``, ``nodes/`` and ``tools/`` install as ``hugginggpt.graph``, ``.nodes`` and
``.tools`` (setuptools ``package-dir``). Checkers that find a package's modules on disk
(import-linter through grimp, mypy) see only the front door in ``hugginggpt/``. This lays
out the installed tree with symbolic links in ``build/installed-tree``, from the mapping in
``pyproject.toml``, and runs ``CMD`` there with ``{config}`` replaced by the path of
``pyproject.toml``. Exit code: the command's.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "installed-tree"
"""Made afresh on every call; a fixed place, so that mypy's cache stays useful."""


def checkout(rev: str, into: Path) -> Path:
    """The files of commit ``rev`` of this repository under ``into`` (``git archive``: no
    worktree to clean up), for a benchmark that compares with earlier code."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def lay_out(tree: Path, source: Path = ROOT) -> None:
    """Mirror the installed package of the checkout ``source`` under ``tree``, with links
    to its files (its own ``pyproject.toml``'s mapping)."""
    config = tomllib.loads((source / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        target = tree.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for entry in (source / folder).iterdir():
            if entry.name != "__pycache__" and not (target / entry.name).exists():
                (target / entry.name).symlink_to(entry)


def main(command: list[str]) -> int:
    if not command:
        print(__doc__, file=sys.stderr)
        return 2
    shutil.rmtree(TREE, ignore_errors=True)
    lay_out(TREE)
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PYTHONPATH": str(TREE),
           "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    argv = [arg.replace("{config}", str(ROOT / "pyproject.toml")) for arg in command]
    return subprocess.call(argv, cwd=TREE, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
