"""``wheelfit configure``: the command group; ``configure uv`` and ``configure pip`` register on it from their own
modules (:mod:`.configure_uv_cmd`, :mod:`.configure_pip_cmd`)."""

from __future__ import annotations

import typer

from .app import app

__all__ = ["configure_app"]

configure_app = typer.Typer(
    name="configure",
    help="Write the files another tool reads so that it installs this machine's (or --target's) PyTorch build.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(configure_app)

# The group is whole once this module is imported (it is built when first run: ``cli.app.ELSEWHERE``), whichever of
# the three was imported first (``sync`` imports ``configure uv``'s module for an option).
from . import configure_pip_cmd, configure_uv_cmd  # noqa: E402, F401 - they register on configure_app
