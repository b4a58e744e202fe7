"""The local backend's image generation: diffusers pipelines (Stable Diffusion and its
distilled small versions) on this machine.

A diffusers model is a folder of parts (``model_index.json`` names them: text encoder,
UNet, VAE, scheduler); :func:`_load_diffusion` loads it with ``DiffusionPipeline`` from
local files, through the backend's one cache. On a CPU each step costs seconds, so the
number of steps is bounded by :data:`MAX_STEPS` and the image side by
:data:`MAX_SIDE`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.tools.experts.local.models import Loading, _running, adapter, device_and_dtype
from hugginggpt.tools.experts.registry import ToolContext

__all__ = ["MAX_STEPS", "MAX_SIDE", "SEED", "text_to_image"]

MAX_STEPS = 25
"""Denoising steps per image (fewer if the model's scheduler asks for fewer)."""
MAX_SIDE = 512
"""Longest side of a generated image, in pixels."""
SEED = 0
"""Generation is seeded, so one prompt gives one image."""


def _load_diffusion(model_id: str, path: str, trust: bool) -> Any:
    from diffusers import DiffusionPipeline
    from diffusers.utils import logging as diffusers_logging

    diffusers_logging.disable_progress_bar()  # its bars would cut through the run's display
    device, dtype = device_and_dtype()
    pipe = DiffusionPipeline.from_pretrained(path, dtype=dtype, local_files_only=True,
                                             trust_remote_code=trust)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)




@adapter("text-to-image",
         Loading(loader=_load_diffusion, libraries=frozenset({"diffusers"})),
         deterministic=True)
def text_to_image(text: str, model: str, ctx: ToolContext) -> Path:
    """An image generated from the prompt, as a PNG."""
    import torch

    with _running("text-to-image", model) as pipe:
        side = min(MAX_SIDE, int(getattr(pipe.unet.config, "sample_size", 64))
                   * int(getattr(pipe, "vae_scale_factor", 8)))
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        out = pipe(text, num_inference_steps=MAX_STEPS, height=side, width=side,
                   generator=generator)
    _, path = ctx.artifacts.new_path(".png")
    out.images[0].save(path)
    return path
