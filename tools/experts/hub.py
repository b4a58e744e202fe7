"""What the Hugging Face Hub says about models: the catalog rebuilt from it, and which
inference providers serve a model.

``refresh_catalog`` asks the Hub for the most downloaded models of each task type and
merges their model-card facts into the catalog: downloads, likes, license, languages,
size, library, pipeline tag, gating, the commit (``revision``) and the providers that
serve the model for the task are refreshed; a hand-written description and expected
latency are kept where the catalog already had them, and estimated from the model's size
where it did not. Models the catalog had that the Hub no longer has are dropped, and so
are models no backend here can run (the caller says which those are).

``serving`` looks up a model's ``inferenceProviderMapping`` once per process and keeps it
for :data:`PROVIDER_TTL_S` (a failed look-up for :data:`FAILED_LOOKUP_TTL_S`), so that the
hf-inference backend offers only models a provider serves for the task, without a request
per subtask.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from hugginggpt.tools.experts.catalog import Catalog, ModelCard

__all__ = ["HubUnavailableError", "Refreshed", "refresh_catalog", "write_catalog",
           "card_from_hub", "ProviderMapping", "Serving", "serving", "clear_serving",
           "PROVIDER_TTL_S", "FAILED_LOOKUP_TTL_S"]

_EXPAND = ["downloads", "likes", "tags", "pipeline_tag", "safetensors", "cardData",
           "library_name", "gated", "sha", "inferenceProviderMapping"]
_SERVING_EXPAND = ["inferenceProviderMapping", "gated"]

PROVIDER_TTL_S = 3600.0
"""How long a provider look-up holds: providers add and drop models over days, not
minutes."""
FAILED_LOOKUP_TTL_S = 60.0
"""How long a failed look-up holds, so that an unreachable Hub costs one timeout a
minute, not one per candidate model."""
LOOKUP_TIMEOUT_S = 10.0

_BYTES_PER_PARAM = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4,
                    "F16": 2, "BF16": 2, "I16": 2, "U16": 2}
"""Bytes per weight by safetensors dtype; the 8-bit and smaller ones count 1."""


class HubUnavailableError(RuntimeError):
    """The Hub could not be reached (offline, a proxy, a wrong endpoint)."""


def _hub_errors() -> tuple[type[BaseException], ...]:
    """The failures of a Hub request that mean "the Hub said no or could not be reached"
    (imported lazily: huggingface_hub is not needed to read a catalog). Transport errors
    are named through ``huggingface_hub.utils.httpx``, the hub's own name for its HTTP
    library (httpx today, httpx2 in huggingface_hub 2.x)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
    from huggingface_hub.utils import httpx as hub_httpx

    return (OfflineModeIsEnabled, HfHubHTTPError, hub_httpx.HTTPError, OSError)


# ----------------------------------------------------------------------------- providers


@dataclass(frozen=True)
class ProviderMapping:
    """One provider's entry in a model's ``inferenceProviderMapping``."""

    provider: str
    task: str
    status: str = "live"


@dataclass(frozen=True)
class Serving:
    """What the Hub says about serving one model.

    Attributes:
        mappings: the providers that map the model, each for one task.
        gated: whether users must accept terms first (False, ``"auto"``, ``"manual"``).
        error: why the look-up failed (the model is not on the Hub, the Hub is
            unreachable); None when it succeeded.
    """

    mappings: tuple[ProviderMapping, ...] = ()
    gated: bool | str = False
    error: str | None = None

    def providers(self, task: str) -> list[str]:
        """The providers serving the model live for ``task`` (a Hub task name, which
        this project's task types are)."""
        return sorted({m.provider for m in self.mappings
                       if m.task == task and m.status == "live"})


def _mappings(raw: Any) -> tuple[ProviderMapping, ...]:
    """huggingface_hub's parsed mapping (a list of objects), or the Hub's older form (a
    dict by provider), as :class:`ProviderMapping` entries."""
    if not raw:
        return ()
    items = raw.items() if isinstance(raw, dict) else ((None, m) for m in raw)
    found = []
    for provider, entry in items:
        get = entry.get if isinstance(entry, dict) else lambda k, e=entry: getattr(e, k, None)
        name = provider or get("provider")
        if name and get("task"):
            found.append(ProviderMapping(str(name), str(get("task")),
                                         str(get("status") or "live")))
    return tuple(found)


@dataclass
class _Lookups:
    """The per-process cache of :func:`serving`: one look-up per (Hub, model) at a time,
    however many threads ask."""

    entries: dict[tuple[str, str], tuple[float, Serving]] = field(default_factory=dict)
    locks: dict[tuple[str, str], threading.Lock] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic


_LOOKUPS = _Lookups()


def clear_serving() -> None:
    """Forget every look-up (tests; a user who just changed a model's providers)."""
    with _LOOKUPS.lock:
        _LOOKUPS.entries.clear()


def _fresh(key: tuple[str, str]) -> Serving | None:
    found = _LOOKUPS.entries.get(key)
    if found is None:
        return None
    at, result = found
    ttl = FAILED_LOOKUP_TTL_S if result.error else PROVIDER_TTL_S
    return result if _LOOKUPS.clock() - at < ttl else None


def serving(model_id: str, *, endpoint: str | None = None) -> Serving:
    """What the Hub (``endpoint``, else huggingface_hub's: ``HF_ENDPOINT``) says about
    serving ``model_id``, looked up once per :data:`PROVIDER_TTL_S`. Never raises for
    the Hub's answers: a failed look-up is a :class:`Serving` with its ``error``."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HFValidationError, RepositoryNotFoundError

    key = (endpoint or constants.ENDPOINT, model_id)
    with _LOOKUPS.lock:
        if (hit := _fresh(key)) is not None:
            return hit
        key_lock = _LOOKUPS.locks.setdefault(key, threading.Lock())
    with key_lock:
        with _LOOKUPS.lock:
            if (hit := _fresh(key)) is not None:
                return hit
        try:
            info = HfApi(endpoint=key[0]).model_info(
                model_id, expand=_SERVING_EXPAND, timeout=LOOKUP_TIMEOUT_S)  # type: ignore[arg-type]
            result = Serving(_mappings(info.inference_provider_mapping), info.gated or False)
        except RepositoryNotFoundError:
            result = Serving(error="not on the Hub (deleted, renamed or private)")
        except HFValidationError:  # a local folder, say
            result = Serving(error="not a Hub model id")
        except _hub_errors() as exc:
            result = Serving(error=f"provider look-up failed ({type(exc).__name__})")
        with _LOOKUPS.lock:
            _LOOKUPS.entries[key] = (_LOOKUPS.clock(), result)
        return result


# ----------------------------------------------------------------------------- the catalog


def _languages(tags: list[str], card_data: dict[str, Any]) -> list[str]:
    declared = card_data.get("language") or []
    if isinstance(declared, str):
        declared = [declared]
    from_tags = [t for t in tags if len(t) == 2 and t.isalpha() and t.islower()]
    return sorted(set(map(str, declared)) | set(from_tags))


def _license(tags: list[str], card_data: dict[str, Any]) -> str:
    if card_data.get("license"):
        return str(card_data["license"])
    return next((t.removeprefix("license:") for t in tags if t.startswith("license:")),
                "unknown")


def _size_mb(info: Any) -> float | None:
    """The weights' size from the safetensors parameter counts by dtype (None when the
    Hub does not say)."""
    tensors = info.safetensors
    if tensors is None:
        return None
    by_dtype = dict(tensors.parameters or {})
    total = sum(n * _BYTES_PER_PARAM.get(dtype.upper(), 1) for dtype, n in by_dtype.items())
    total = total or (tensors.total or 0) * 4
    return round(total / 1e6, 1) if total else None


def card_from_hub(info: Any, task: str, known: ModelCard | None) -> ModelCard:
    """A model card from a Hub ``ModelInfo``, keeping hand-written facts of ``known``."""
    tags = list(info.tags or [])
    card_data = info.card_data.to_dict() if info.card_data is not None else {}
    size_mb = _size_mb(info) or (known.size_mb if known else None)
    # A CPU runs roughly 400 MB of float32 weights a second for one short input.
    latency = known.expected_latency_s if known else round(max(0.05, (size_mb or 400) / 400), 2)
    library = info.library_name or (known.library_name if known else None)
    description = known.description if known and known.description else (
        f"{task} model by {info.id.split('/')[0]}" + (f" ({library})" if library else ""))
    return ModelCard(
        id=info.id, task=task, downloads=info.downloads or 0, likes=info.likes or 0,
        license=_license(tags, card_data), languages=_languages(tags, card_data),
        size_mb=size_mb, expected_latency_s=latency, description=description,
        trust_remote_code=known.trust_remote_code if known else False,
        library_name=library, pipeline_tag=info.pipeline_tag, gated=info.gated or False,
        revision=info.sha or (known.revision if known else None),
        providers=Serving(_mappings(info.inference_provider_mapping)).providers(task),
    )


class Refreshed(NamedTuple):
    """What :func:`refresh_catalog` found: the cards to keep, and the ones it dropped,
    each with the reason."""

    cards: list[ModelCard]
    dropped: list[tuple[ModelCard, str]]


def refresh_catalog(
    current: Catalog,
    tasks: Iterable[str],
    *,
    per_task: int = 5,
    endpoint: str | None = None,
    token: str | bool | None = None,
    unrunnable: Callable[[ModelCard], str | None] | None = None,
) -> Refreshed:
    """The refreshed cards: the Hub's top ``per_task`` models per task type, plus the
    models the catalog had, refreshed one by one. A model the Hub no longer has is
    dropped, and so is a card for which ``unrunnable`` gives a reason (no backend here
    can run it).

    Raises:
        HubUnavailableError: the Hub could not be reached; nothing was changed.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    api = HfApi(endpoint=endpoint, token=token)
    kept: list[ModelCard] = []
    dropped: list[tuple[ModelCard, str]] = []
    for task in tasks:
        try:
            infos = list(api.list_models(pipeline_tag=task, sort="downloads",
                                         limit=per_task, expand=_EXPAND))  # type: ignore[arg-type]
            fresh = [card_from_hub(i, task, current.get(task, i.id)) for i in infos]
            listed = {c.id for c in fresh}
            for known in current.for_task(task):
                if known.id in listed:
                    continue
                try:
                    info = api.model_info(known.id, expand=_EXPAND)  # type: ignore[arg-type]
                except RepositoryNotFoundError:
                    dropped.append((known, "no longer on the Hub"))
                    continue
                fresh.append(card_from_hub(info, task, known))
        except _hub_errors() as exc:
            raise HubUnavailableError(
                f"cannot read {task} models from the Hub ({type(exc).__name__}: {exc}); "
                "the catalog was not changed"
            ) from exc
        for card in fresh:
            reason = unrunnable(card) if unrunnable else None
            if reason:
                dropped.append((card, reason))
            else:
                kept.append(card)
    return Refreshed(kept, dropped)


def write_catalog(cards: list[ModelCard], path: Path) -> None:
    """Write a catalog file atomically (a crash never leaves half a catalog)."""
    data = {"version": 1, "models": [c.model_dump(exclude_defaults=False) for c in cards]}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalog-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
    os.replace(tmp, path)
