"""hugginggpt's extras: which of them is installed, and the command that installs one.

``pip install hugginggpt`` is the core (the graph, the CLI, the API, the LLM client and
hosted inference); the rest comes as extras (``[lite]``, ``[local]``, ``[ui]``, ...).
What each extra holds is read from this package's own metadata, so ``pyproject.toml``
stays the one place that says it.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.requirements import Requirement

__all__ = ["extra_of", "install_command", "missing"]

_PROJECT = "hugginggpt"


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name  # 40 ms: imported when first asked

    return canonicalize_name(name)


@cache
def _requirements() -> tuple[Requirement, ...]:
    from packaging.requirements import Requirement

    try:
        return tuple(Requirement(line) for line in metadata.requires(_PROJECT) or [])
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return ()


def _in_extra(requirement: Requirement, extra: str) -> bool:
    return requirement.marker is not None and requirement.marker.evaluate({"extra": extra})


def _extras() -> list[str]:
    try:
        return metadata.metadata(_PROJECT).get_all("Provides-Extra") or []
    except metadata.PackageNotFoundError:
        return []


def extra_of(package: str) -> str | None:
    """The extra of this project that installs ``package`` (the first that names it)."""
    name = _canonical(package)
    for requirement in _requirements():
        if _canonical(requirement.name) == name and requirement.marker is not None:
            extra = next((e for e in _extras() if _in_extra(requirement, e)), None)
            if extra is not None:
                return extra
    return None


@cache
def _installed(package: str) -> bool:
    try:
        metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return False
    return True


@cache
def missing(extra: str) -> tuple[str, ...]:
    """The packages of ``extra`` (and of the extras it names, as ``local-llm`` names
    ``local``) that are not installed; empty when it is installed, or when this project's
    metadata cannot say."""
    lacking: list[str] = []
    for requirement in _requirements():
        if not _in_extra(requirement, extra):
            continue
        if _canonical(requirement.name) == _PROJECT:
            lacking += [p for named in sorted(requirement.extras) for p in missing(named)]
        elif not _installed(requirement.name):
            lacking.append(requirement.name)
    return tuple(dict.fromkeys(lacking))


def install_command(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'hugginggpt[lite]'``."""
    return f"pip install '{_PROJECT}[{extra}]'"
