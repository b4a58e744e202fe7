"""Rebuilding the model catalog from the Hugging Face Hub.

``refresh_catalog`` asks the Hub for the most downloaded models of each task type and
merges their model-card facts into the catalog: downloads, likes, license, languages and
size are refreshed; a hand-written description and expected latency are kept where the
catalog already had them, and estimated from the model's size where it did not.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hugginggpt.tools.experts.catalog import Catalog, ModelCard

__all__ = ["HubUnavailableError", "refresh_catalog", "write_catalog", "card_from_hub"]

_EXPAND = ["downloads", "likes", "tags", "pipeline_tag", "safetensors", "cardData",
           "library_name"]


class HubUnavailableError(RuntimeError):
    """The Hub could not be reached (offline, a proxy, a wrong endpoint)."""


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


def card_from_hub(info: Any, task: str, known: ModelCard | None) -> ModelCard:
    """A model card from a Hub ``ModelInfo``, keeping hand-written facts of ``known``."""
    tags = list(info.tags or [])
    card_data = info.card_data.to_dict() if info.card_data is not None else {}
    params = (info.safetensors.total if info.safetensors is not None else None) or 0
    size_mb = round(params * 4 / 1e6, 1) if params else (known.size_mb if known else None)
    # A CPU runs roughly 400 MB of float32 weights a second for one short input.
    latency = known.expected_latency_s if known else round(max(0.05, (size_mb or 400) / 400), 2)
    description = known.description if known and known.description else (
        f"{task} model by {info.id.split('/')[0]}"
        + (f" ({info.library_name})" if info.library_name else "")
    )
    return ModelCard(
        id=info.id, task=task, downloads=info.downloads or 0, likes=info.likes or 0,
        license=_license(tags, card_data), languages=_languages(tags, card_data),
        size_mb=size_mb, expected_latency_s=latency, description=description,
        trust_remote_code=known.trust_remote_code if known else False,
    )


def refresh_catalog(
    current: Catalog,
    tasks: Iterable[str],
    *,
    per_task: int = 5,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> list[ModelCard]:
    """The refreshed cards: the Hub's top ``per_task`` models per task type, plus the
    models the catalog had that the Hub did not list this time (kept as they were).

    Raises:
        HubUnavailableError: the Hub could not be reached; nothing was changed.
    """
    import httpx
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    api = HfApi(endpoint=endpoint, token=token)
    cards: list[ModelCard] = []
    for task in tasks:
        try:
            infos = list(api.list_models(pipeline_tag=task, sort="downloads",
                                         limit=per_task, expand=_EXPAND))  # type: ignore[arg-type]
        except (OfflineModeIsEnabled, HfHubHTTPError, httpx.HTTPError, OSError) as exc:
            raise HubUnavailableError(
                f"cannot list {task} models on the Hub ({type(exc).__name__}: {exc}); "
                "the catalog was not changed"
            ) from exc
        fresh = [card_from_hub(i, task, current.get(task, i.id)) for i in infos]
        listed = {c.id for c in fresh}
        cards += fresh + [c for c in current.for_task(task) if c.id not in listed]
    return cards


def write_catalog(cards: list[ModelCard], path: Path) -> None:
    """Write a catalog file atomically (a crash never leaves half a catalog)."""
    data = {"version": 1, "models": [c.model_dump(exclude_defaults=False) for c in cards]}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalog-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
    os.replace(tmp, path)
