"""The model catalog: model-card facts that model selection ranks on.

The catalog ships as ``catalog.json`` beside this module. A user can point
``HUGGINGGPT_CATALOG`` (or the ``catalog`` argument) at a file of the same format to
replace it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

__all__ = ["ModelCard", "Catalog", "load_catalog", "DEFAULT_CATALOG"]

DEFAULT_CATALOG = Path(__file__).with_name("catalog.json")


class ModelCard(BaseModel):
    """What selection needs to know about one model, from its Hugging Face model card."""

    id: str
    task: str
    downloads: int = Field(default=0, ge=0)
    likes: int = Field(default=0, ge=0)
    license: str = "unknown"
    languages: list[str] = Field(default_factory=list)
    size_mb: float | None = None
    expected_latency_s: float = Field(default=1.0, ge=0)
    description: str = ""
    trust_remote_code: bool = False
    """Whether the local backend may run code shipped with the model (off unless the
    catalog says so for this model)."""
    library_name: str | None = None
    """The library that loads the model, as the Hub names it (``transformers``,
    ``sentence-transformers``, ...); None where the card does not say."""
    pipeline_tag: str | None = None
    """The Hub's task tag for the model (may differ from ``task``)."""
    gated: bool | str = False
    """Whether the Hub asks users to accept terms first (False, ``"auto"`` or
    ``"manual"``, as the Hub says)."""
    revision: str | None = None
    """The commit the catalog pins (downloads fetch exactly it); None for the default branch."""
    providers: list[str] = Field(default_factory=list)
    """The inference providers that serve the model for ``task`` (from the Hub's
    ``inferenceProviderMapping``); empty where unknown."""
    subjects: list[str] = Field(default_factory=list)
    """For a specialist (a face detector): the words a request uses for what it serves
    (``face``, ``people``, ...). Selection offers it only to a subtask whose request says
    one of them; empty for a general model."""
    source_languages: list[str] = Field(default_factory=list)
    """For translation: the languages it translates from, when not all of ``languages``
    (T5 lists en, fr, de and ro but translates only from English). Selection reads a
    text's language against these (or ``languages``)."""
    limits: str = ""
    """Where the model's output falls short (a robotic voice, a small vocabulary): the
    response tells the user whenever the model ran."""
    architecture: str | None = None
    """The class that loads the model: its config's ``architectures[0]`` for transformers,
    the pipeline class for diffusers, the estimator for scikit-learn. The local backend's
    tests build a tiny model of this class for each task type's default model."""


class Catalog:
    """Model cards by task type, and the chat LLMs that can run in this process
    (``llms``: ``--llm transformers:ID``; never selected as experts)."""

    def __init__(self, cards: list[ModelCard], llms: list[ModelCard] | None = None) -> None:
        self.llms = list(llms or [])
        self._by_task: dict[str, list[ModelCard]] = {}
        for card in cards:
            self._by_task.setdefault(card.task, []).append(card)

    def for_task(self, task: str) -> list[ModelCard]:
        return list(self._by_task.get(task, []))

    def get(self, task: str, model_id: str) -> ModelCard | None:
        return next((c for c in self._by_task.get(task, []) if c.id == model_id), None)

    def find(self, model_id: str) -> ModelCard | None:
        """The first card of ``model_id`` for any task type: what is true of the model
        itself (its library, size, licence, gating) whatever it is used for."""
        return next((c for cards in self._by_task.values() for c in cards
                     if c.id == model_id), None)

    def llm(self, model_id: str) -> ModelCard | None:
        """The card of a chat LLM the catalog lists (``llms``)."""
        return next((c for c in self.llms if c.id == model_id), None)

    def cards(self) -> list[ModelCard]:
        """Every card, task type by task type."""
        return [c for cards in self._by_task.values() for c in cards]

    def __len__(self) -> int:
        return sum(len(cards) for cards in self._by_task.values())


@lru_cache(maxsize=8)
def load_catalog(path: str | Path = DEFAULT_CATALOG) -> Catalog:
    """Read a catalog file (cached per path)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return Catalog([ModelCard.model_validate(entry) for entry in data["models"]],
                   [ModelCard.model_validate(entry) for entry in data.get("llms", [])])
