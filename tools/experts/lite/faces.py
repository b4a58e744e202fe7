"""The lite face detector: OpenCV's frontal-face Haar cascade (Viola-Jones, 2001), from
the data the opencv-python wheel ships.

It finds upright faces seen from the front, and nothing else: no profiles, no bodies, no
other objects. Its card lists the words of requests it serves (faces, people, ...), and
selection offers it for object detection only to such requests (see
:attr:`~hugginggpt.tools.experts.catalog.ModelCard.subjects`), so a request for the cars
in a photo never gets a face detector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.lite.engines import FACE_LOCK, HAAR_FACES, engine, face_cascade
from hugginggpt.tools.experts.registry import ToolContext

__all__ = ["FACE_LABEL", "FACE_SUBJECTS", "MIN_NEIGHBOURS", "find_faces", "detect_faces"]

FACE_LABEL = "face"
FACE_SUBJECTS = (
    "faces", "people", "face", "facial", "person", "persons", "portrait", "portraits",
    "selfie", "selfies", "crowd", "man", "men", "woman", "women", "child", "children",
    "kid", "kids", "boy", "boys", "girl", "girls", "baby", "babies", "human", "humans",
    "someone", "anyone", "everyone", "somebody", "anybody", "headcount",
    # the same in the other languages the planner reads
    "cara", "caras", "rostro", "rostros", "persona", "personas", "gente", "alguien",
    "visage", "visages", "personne", "personnes", "gens", "gesicht", "gesichter",
    "menschen", "personen", "jemand", "rosto", "rostos", "pessoa", "pessoas", "alguém",
    "gezicht", "gezichten", "mensen", "iemand", "viso", "volti", "qualcuno",
)
"""Words of a request that the face detector answers: it is offered for object detection
only when the subtask's request uses one of them."""
MIN_NEIGHBOURS = 5
"""Overlapping raw detections a face needs (OpenCV's usual value): fewer lets textures
pass for faces."""
MAX_SIDE = 1600
"""Larger images are scaled down to this side for detection (boxes are scaled back): the
cascade's cost grows with the pixel count, and faces that small stay findable."""
_COLOR = (230, 25, 75)


def _picture(image: Path) -> Any:
    from PIL import Image, UnidentifiedImageError

    path = Path(image)
    if not path.is_file():
        raise ToolExecutionError(
            f"{image}: not a local file; the lite engines run offline and read only "
            "attached or workspace files")
    try:
        with Image.open(path) as opened:
            return opened.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolExecutionError(f"{path.name}: not a readable image: {exc}") from exc


def find_faces(picture: Any) -> list[dict[str, Any]]:
    """The faces in a PIL image, largest first, as object-detection labels: ``face``, a
    score and a box in pixels.

    The score is n / (n + 5) for the n overlapping raw detections that agree on the
    face (OpenCV's neighbour count): it orders faces by how clearly they are found; it is
    not a calibrated probability.
    """
    import cv2
    import numpy as np

    scale = min(1.0, MAX_SIDE / max(picture.size))
    small = picture if scale == 1.0 else picture.resize(
        (max(1, round(picture.width * scale)), max(1, round(picture.height * scale))))
    gray = cv2.equalizeHist(np.asarray(small.convert("L")))
    side = max(24, min(gray.shape) // 40)
    with FACE_LOCK:
        boxes, neighbours = face_cascade().detectMultiScale2(
            gray, scaleFactor=1.1, minNeighbors=MIN_NEIGHBOURS, minSize=(side, side))
    found = []
    for (x, y, w, h), n in zip(np.asarray(boxes).reshape(-1, 4).tolist(),
                               np.asarray(neighbours).reshape(-1).tolist(), strict=True):
        box = {"xmin": x / scale, "ymin": y / scale, "xmax": (x + w) / scale,
               "ymax": (y + h) / scale}
        found.append({"label": FACE_LABEL, "score": round(n / (n + MIN_NEIGHBOURS), 3),
                      "box": {k: int(round(v)) for k, v in box.items()}})
    return sorted(found, key=lambda f: -(f["box"]["xmax"] - f["box"]["xmin"]))


@engine(
    "object-detection", HAAR_FACES,
    "Face detection only: OpenCV's frontal-face Haar cascade (Viola-Jones; the cascade "
    "ships in the opencv-python package) boxes the upright faces seen from the front, "
    "each labelled 'face', and draws the boxes on the image. Offered only for requests "
    "about faces or people; finds no other object, and misses faces in profile, tilted, "
    "small or partly hidden.",
    license="bsd-3-clause", languages=["multilingual"], size_mb=1, latency_s=0.3,
    limits="A Haar cascade finds frontal faces only (no profiles, bodies or other "
           "objects), misses small or tilted ones and can take a texture for a face; its "
           "scores are not probabilities.",
    subjects=FACE_SUBJECTS,
)
def detect_faces(image: Path, ctx: ToolContext) -> dict[str, Any]:
    """The faces found (label ``face``, score, box in pixels) and the image with them
    drawn; no faces is an answer too (an empty list and the image unmarked)."""
    from PIL import ImageDraw

    picture = _picture(image)
    faces = find_faces(picture)
    draw = ImageDraw.Draw(picture)
    width = max(2, round(min(picture.size) / 150))
    for face in faces:
        box = face["box"]
        draw.rectangle((box["xmin"], box["ymin"], box["xmax"], box["ymax"]), outline=_COLOR,
                       width=width)
        draw.text((box["xmin"] + 2, box["ymin"] + 1), f"face {face['score']:.2f}",
                  fill=_COLOR)
    _, path = ctx.artifacts.new_path(".png")
    picture.save(path)
    return {"image": path, "objects": faces}

