"""The files of an answers sample, made from its labels in a folder of the run's own.

A sample of ``evals/answers.jsonl`` carries no binary files: each attachment is a spec
the harness turns into a file, so the set stays readable, and what the picture says or
the voicemail speaks is the label itself:

- ``{"name": "notes.txt", "text": "..."}``: the text, UTF-8 (any extension: ``.txt``,
  ``.md``, ``.csv``, ``.json``...);
- ``{"name": "shot.png", "image_text": ["line", ...]}``: the lines drawn black on white
  with Pillow's own font (``ImageFont.load_default``, shipped in the wheel, as the demo
  draws its notice), one line a row, as a screenshot or a photographed notice;
- ``{"name": "vm.wav", "speech": "text", "voice": "en"}``: the text spoken by the
  offline text-to-speech (eSpeak NG, the lite backend's engine) in that language's
  voice, a 16-bit mono WAV;
- ``{"name": "me.png", "drawing": "face"}``: a frontal face drawn as the lite face
  detector's tests draw one; ``"drawing": "street"``: a road with a red car and no face.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["drawn_face", "drawn_street", "DRAWINGS", "FileSpecError", "check_file_spec",
           "materialise"]

DRAWINGS = ("face", "street")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
_KINDS = {"text": (), "image_text": _IMAGE_SUFFIXES, "speech": (".wav",),
          "drawing": _IMAGE_SUFFIXES}
"""What each spec holds besides its name, and the extensions its file may have (any
for text)."""


class FileSpecError(ValueError):
    """A file spec the harness cannot make; the message says what is wrong."""


def check_file_spec(spec: Any) -> str:
    """The kind of file ``spec`` describes (a key of :data:`_KINDS`).

    Raises:
        FileSpecError: not one of the forms of the module docstring.
    """
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise FileSpecError(f"a file spec is an object with a 'name': {spec!r}")
    name = spec["name"]
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise FileSpecError(f"{name!r}: a file name, without folders")
    kinds = [key for key in _KINDS if key in spec]
    extra = set(spec) - {"name", "voice", *_KINDS}
    if len(kinds) != 1 or extra:
        raise FileSpecError(f"{name}: give exactly one of {sorted(_KINDS)} "
                            f"(and 'voice' with 'speech'), not {sorted(spec)}")
    kind = kinds[0]
    suffixes = _KINDS[kind]
    if suffixes and Path(name).suffix.lower() not in suffixes:
        raise FileSpecError(f"{name}: a {kind} file is one of {', '.join(suffixes)}")
    value = spec[kind]
    if kind == "image_text":
        ok = isinstance(value, list) and bool(value) and all(isinstance(v, str) and v.strip()
                                                             for v in value)
    elif kind == "drawing":
        ok = value in DRAWINGS
    else:
        ok = isinstance(value, str) and bool(value.strip())
    if not ok:
        raise FileSpecError(f"{name}: {kind!r} has the wrong value {value!r}")
    if "voice" in spec and (kind != "speech" or not isinstance(spec["voice"], str)):
        raise FileSpecError(f"{name}: 'voice' is a language code, only with 'speech'")
    return kind


def _text_image(lines: list[str], path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=32)
    width = max(int(font.getlength(line)) for line in lines) + 48
    image = Image.new("RGB", (max(width, 320), 70 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((24, 30 + 60 * row), line, fill="black", font=font)
    image.save(path)


def drawn_face(path: Path, size: int = 400) -> Path:
    """A grey face on a dark ground, as a Haar cascade sees faces: a light oval, dark eyes
    under darker brows, a shaded nose and a mouth."""
    from PIL import Image, ImageDraw, ImageFilter

    image = Image.new("L", (size, size), 60)
    draw = ImageDraw.Draw(image)
    c, w, h, r = size // 2, int(size * 0.31), int(size * 0.4), int(size * 0.025)
    draw.ellipse((c - w // 2, c - h // 2, c + w // 2, c + h // 2), fill=190)
    ex, ey = int(w * 0.22), int(h * 0.12)
    for side in (-1, 1):
        draw.ellipse((c + side * ex - 2 * r, c - ey - r, c + side * ex + 2 * r, c - ey + r),
                     fill=40)
        draw.rectangle((c + side * ex - 2 * r - 4, c - ey - 3 * r,
                        c + side * ex + 2 * r + 4, c - ey - 2 * r), fill=70)
    draw.polygon([(c, c - ey), (c - r, c + int(h * 0.12)), (c + r, c + int(h * 0.12))],
                 fill=150)
    draw.ellipse((c - int(w * 0.2), c + int(h * 0.22), c + int(w * 0.2), c + int(h * 0.28)),
                 fill=80)
    image.filter(ImageFilter.GaussianBlur(size / 80)).convert("RGB").save(path)
    return path


def drawn_street(path: Path) -> Path:
    """Not a face: a road, a red car-like box with wheels, a sky."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 320), (120, 170, 230))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 220, 480, 320), fill=(70, 70, 70))
    draw.rectangle((120, 150, 360, 230), fill=(200, 30, 30))
    for x in (170, 310):
        draw.ellipse((x - 25, 205, x + 25, 255), fill=(20, 20, 20))
    image.save(path)
    return path


def _speech(text: str, voice: str | None, path: Path) -> None:
    from hugginggpt.tools.audio import write_wav
    from hugginggpt.tools.experts.lite.speech import speak

    samples, rate = speak(text, voice)
    write_wav(path, samples, rate)


def materialise(specs: Iterable[Mapping[str, Any]], folder: Path) -> list[Path]:
    """Make each spec's file in ``folder`` (created if needed); their paths, in order.

    Raises:
        FileSpecError: a spec of the wrong form.
        ToolExecutionError: eSpeak NG could not speak a text (no voice for it).
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for spec in specs:
        kind = check_file_spec(dict(spec))
        path = folder / spec["name"]
        if kind == "text":
            path.write_text(spec["text"], encoding="utf-8")
        elif kind == "image_text":
            _text_image(list(spec["image_text"]), path)
        elif kind == "speech":
            _speech(spec["speech"], spec.get("voice"), path)
        elif spec["drawing"] == "face":
            drawn_face(path)
        else:
            drawn_street(path)
        paths.append(path)
    return paths
