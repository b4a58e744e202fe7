"""langdetect's language profiles, kept in a SQLite file in the per-user cache folder.

langdetect reads its 55 profiles from JSON files into one map, n-gram -> probability per
language (87,598 n-grams): 0.6-0.8 s of CPU at every start. Detecting the language of a
request looks up a few hundred of those n-grams. So the map is written once to
``<cache>/langdetect/<key>.sqlite`` (one row per n-gram, its probabilities as the bytes
of 55 doubles) and read back one n-gram at a time, as the detector asks: opening the
file takes a millisecond, and no NumPy or whole-table load is needed. The numbers are
the same doubles langdetect computed, so its answers are the same to the last bit
(``tests/test_startup.py``).

The file's name is a key over langdetect's version and its profile files' names and
sizes: another langdetect writes another file. It is written whole under a temporary
name and then moved into place (:func:`~hugginggpt.tools.kept.write_whole`), so a
process reading it meanwhile sees the old file or the new one. A folder that cannot be
written costs only the JSON reading again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import sqlite3
import sys
import threading
from array import array
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hugginggpt.tools.env import cache_dir
from hugginggpt.tools.kept import write_whole

__all__ = ["Profiles", "profile_table"]


class Profiles(Mapping[str, list[float]]):
    """langdetect's n-gram -> probability-per-language map, read from the SQLite file
    one n-gram at a time (each kept once read: a detection asks for the same n-grams
    again and again)."""

    def __init__(self, db: sqlite3.Connection, languages: list[str]) -> None:
        self._db = db
        self.languages = languages
        self._lock = threading.Lock()
        self._read: dict[str, list[float] | None] = {}

    @classmethod
    def open(cls, path: Path) -> Profiles | None:
        """The table of a complete file at ``path``; None when there is none, or it
        cannot be read."""
        if not path.exists():
            return None
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        try:
            (languages,) = db.execute("SELECT languages FROM meta").fetchone()
            found = json.loads(languages)
        except (sqlite3.Error, TypeError, ValueError):
            found = None
        if not isinstance(found, list):
            db.close()
            return None
        return cls(db, found)

    def _row(self, gram: str) -> list[float] | None:
        if gram in self._read:
            return self._read[gram]
        with self._lock:
            row = self._db.execute("SELECT probs FROM grams WHERE gram = ?", (gram,)).fetchone()
        found = array("d", row[0]).tolist() if row is not None else None
        self._read[gram] = found
        return found

    def __getitem__(self, gram: str) -> list[float]:
        if (found := self._row(gram)) is None:
            raise KeyError(gram)
        return found

    def __contains__(self, gram: object) -> bool:
        return isinstance(gram, str) and self._row(gram) is not None

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            grams = [gram for (gram,) in self._db.execute("SELECT gram FROM grams")]
        return iter(grams)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM grams").fetchone()[0])


def profile_table(factory: Any) -> tuple[list[str], Mapping[str, list[float]]]:
    """The language list and the n-gram table of langdetect's profiles, for the
    ``DetectorFactory`` ``factory``: from the cache folder when this langdetect's
    profiles were written there before, else read from its JSON files
    (``factory.load_profile``) and written there."""
    from langdetect import detector_factory

    folder = detector_factory.PROFILES_DIRECTORY
    files = sorted((name, os.path.getsize(os.path.join(folder, name)))
                   for name in os.listdir(folder))
    key = hashlib.sha256(json.dumps(
        [importlib.metadata.version("langdetect"), files, sys.byteorder]).encode())
    path = cache_dir() / "langdetect" / f"{key.hexdigest()[:32]}.sqlite"
    if (table := Profiles.open(path)) is not None:
        return table.languages, table
    factory.load_profile(folder)
    languages, grams = factory.langlist, factory.word_lang_prob_map

    def write(temporary: Path) -> None:
        db = sqlite3.connect(temporary)
        try:
            db.execute("CREATE TABLE grams (gram TEXT PRIMARY KEY, probs BLOB) WITHOUT ROWID")
            db.executemany("INSERT INTO grams VALUES (?, ?)", (
                (gram, array("d", probs).tobytes()) for gram, probs in grams.items()))
            db.execute("CREATE TABLE meta (languages TEXT)")  # last: marks it complete
            db.execute("INSERT INTO meta VALUES (?)", (json.dumps(languages),))
            db.commit()
        finally:
            db.close()

    # a cache folder that cannot be written: the JSON files are read again next time
    with contextlib.suppress(OSError, sqlite3.Error):
        write_whole(path, write)
    return languages, grams
