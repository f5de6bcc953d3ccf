"""``wheelfit env --format uv-variants``: the variables that make uv's wheel-variant preview choose for another
machine, as ``export`` lines (the facts about uv are :mod:`wheelfit.variants.uv_preview`'s)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..variants.uv_preview import uv_variant_env

if TYPE_CHECKING:
    from .ci_env import CiValues, EnvOutput

__all__ = ["render_uv_variants"]


def render_uv_variants(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """``export`` lines for ``eval``: the variables for the target's plan; the notes go to stderr."""
    from .ci_env import EnvOutput, one

    found = one(values, "uv-variants")
    made = uv_variant_env(found.source.target.report, found.variant)
    lines = [f"export {name}={shlex.quote(value)}" for name, value in made.variables]
    return EnvOutput("".join(line + "\n" for line in lines), stderr=(*made.notes, *found.warnings))
