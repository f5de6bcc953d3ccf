"""``wheelfit env``: the values a CI job or a Docker build needs from a plan, and their plain-text forms.

The values (:class:`CiValues`) come from :func:`.targets.plan_targets`; the renderers here and in :mod:`.github`
are pure (values in, text out) so that each format is tested on its own and ``wheelfit env`` only picks one.

Variable names all start with ``WHEELFIT_PLANNED_``: wheelfit reads other ``WHEELFIT_*`` variables as input
(``WHEELFIT_TARGET``, ``WHEELFIT_INDEX_URL``, ``WHEELFIT_PYTORCH_INDEX``, ...), and exporting an output must not
change what a later wheelfit run plans. ``UV_TORCH_BACKEND`` is not exported for the same reason (wheelfit reads
it too): its value is ``WHEELFIT_PLANNED_UV_TORCH_BACKEND``. The plan's run-time environment
(``HSA_OVERRIDE_GFX_VERSION``) is exported under its own name: the build needs it where torch runs.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, WheelfitError

if TYPE_CHECKING:
    from ..app.session import Network
    from ..options import MachineOptions, PlanOptions
    from ..resolve.plan import Rejection
    from .targets import TargetPlan

__all__ = [
    "ENV_SCHEMA_VERSION",
    "PREFIX",
    "CiValues",
    "EnvOutput",
    "Renderer",
    "apply_output",
    "ci_values",
    "env_values",
    "matrix",
    "render_dotenv",
    "render_json",
    "render_matrix",
    "render_shell",
]

#: ``wheelfit env --format json``'s keys; "1": the first version.
ENV_SCHEMA_VERSION = "1"
PREFIX = "WHEELFIT_PLANNED_"


@dataclass(frozen=True)
class CiValues:
    """What one target's plan means for a CI job: where the build comes from, what to pin, what to cache by."""

    name: str
    #: The ``--target`` as given, ``None`` for this machine.
    target: str | None
    variant: str
    index_url: str
    #: The plan's pins (``torch==2.14.1+cu126``), torch first; then each extension's file (``flash-attn @ URL``).
    requirements: tuple[str, ...]
    #: The variant as uv's ``--torch-backend``/``UV_TORCH_BACKEND`` spells it; ``""`` when uv has no such name.
    uv_torch_backend: str
    torch_version: str
    platform: str
    python: str
    cache_key: str
    #: Environment the build needs at run time (``HSA_OVERRIDE_GFX_VERSION``).
    runtime_env: Mapping[str, str]
    warnings: tuple[str, ...]
    reasons: tuple[str, ...]
    rejected: tuple[Rejection, ...]
    #: A target with a GPU that gets the CPU build: why (``None``: it does not).
    gpu_fallback: str | None
    #: The plan and target these came from (for a renderer that needs more, e.g. the machine's hardware).
    source: TargetPlan = field(repr=False, compare=False)

    def variables(self) -> dict[str, str]:
        """The environment-variable form (shell, dotenv): one line each except the warnings."""
        return {
            f"{PREFIX}NAME": self.name,
            f"{PREFIX}VARIANT": self.variant,
            f"{PREFIX}INDEX_URL": self.index_url,
            f"{PREFIX}REQUIREMENTS": " ".join(self.requirements),
            f"{PREFIX}UV_TORCH_BACKEND": self.uv_torch_backend,
            f"{PREFIX}TORCH_VERSION": self.torch_version,
            f"{PREFIX}PLATFORM": self.platform,
            f"{PREFIX}PYTHON": self.python,
            f"{PREFIX}CACHE_KEY": self.cache_key,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": ENV_SCHEMA_VERSION,
            "name": self.name,
            "target": self.target,
            "variant": self.variant,
            "index_url": self.index_url,
            "requirements": list(self.requirements),
            "uv_torch_backend": self.uv_torch_backend,
            "torch_version": self.torch_version,
            "platform": self.platform,
            "python": self.python,
            "cache_key": self.cache_key,
            "env": dict(self.runtime_env),
            "warnings": list(self.warnings),
            "fallback": "cpu" if self.gpu_fallback else None,
            "fallback_reason": self.gpu_fallback,
        }


@dataclass(frozen=True)
class EnvOutput:
    """A rendered format: text for stdout, warnings for stderr, and text to append to files (GitHub's)."""

    stdout: str = ""
    stderr: tuple[str, ...] = ()
    appends: tuple[tuple[Path, str], ...] = ()


def ci_values(found: TargetPlan) -> CiValues:
    plan = found.plan
    requirements = tuple(p.requirement for p in plan.packages) + tuple(
        f"{p.name} @ {p.url}" + (f"#sha256={p.sha256}" if p.sha256 else "") for p in plan.extensions
    )  # an extension as the very file built for this torch (a direct reference pip and uv take)
    return CiValues(
        name=found.name,
        target=found.spec,
        variant=plan.variant,
        index_url=plan.index_url,
        requirements=requirements,
        uv_torch_backend=uv_backend(plan.variant),
        torch_version=plan.torch_version,
        platform=plan.platform,
        python=plan.python,
        cache_key=cache_key(plan.variant, plan.platform, plan.python, plan.torch_version, plan.index_url, requirements),
        runtime_env=dict(plan.env),
        warnings=tuple(plan.warnings),
        reasons=tuple(plan.reasons),
        rejected=tuple(plan.rejected),
        gpu_fallback=plan.gpu_fallback,
        source=found,
    )


def uv_backend(variant: str) -> str:
    """uv names its backends as the PyTorch indexes are named (``cpu``, ``cu126``, ``rocm7.1``, ``xpu``:
    ``uv-torch``'s ``TorchMode``); a variant outside those (a wheel-variant label) has no uv name."""
    from ..candidates.knowledge import label_kind

    return variant if label_kind(variant) is not None else ""


def cache_key(variant: str, platform: str, python: str, torch: str, index_url: str, requirements: Sequence[str]) -> str:
    """A key for a CI cache of the downloaded or installed build: readable parts, then a digest of everything
    that changes the files (index and pins), so two targets or two pin sets never share a cache. No commas or
    spaces (``actions/cache`` keys), well under its 512 characters."""
    digest = hashlib.sha256("\n".join([index_url, *requirements]).encode()).hexdigest()[:12]
    parts = ["wheelfit", variant, platform or "any", f"py{python}" if python else "py", f"torch{torch}", digest]
    return "-".join(p.replace(" ", "_").replace(",", "_") for p in parts)


def one(values: Sequence[CiValues], fmt: str) -> CiValues:
    if len(values) != 1:
        raise UsageError(
            f"--format {fmt} holds one target, {len(values)} were given: use --format json or --matrix, "
            "or run wheelfit env once per --target"
        )
    return values[0]


def render_shell(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """POSIX ``export NAME=value`` lines quoted by :func:`shlex.quote`: ``eval "$(wheelfit env)"`` sets them."""
    found = one(values, "shell")
    pairs = {**found.variables(), f"{PREFIX}WARNINGS": "\n".join(found.warnings), **found.runtime_env}
    lines = [f"export {name}={shlex.quote(value)}" for name, value in pairs.items()]
    return EnvOutput("".join(line + "\n" for line in lines), stderr=found.warnings)


def render_dotenv(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """``NAME=value`` lines, unquoted: ``docker run --env-file`` takes a value literally (quotes included) and
    docker compose's ``env_file`` strips quotes, expands ``$`` and cuts `` #`` comments, so a value is written
    only where both read the same text. Warnings go to stderr (a value has one line)."""
    found = one(values, "dotenv")
    pairs = {**found.variables(), **found.runtime_env}
    lines = []
    for name, value in pairs.items():
        if not dotenv_safe(value):
            raise WheelfitError(
                f"{name}={value!r} cannot be written so that both docker --env-file and docker compose read it "
                "unchanged: use --format json or --format shell"
            )
        lines.append(f"{name}={value}")
    return EnvOutput("".join(line + "\n" for line in lines), stderr=found.warnings)


def dotenv_safe(value: str) -> bool:
    """Docker's ``--env-file`` and compose's ``env_file`` read ``NAME=value`` the same when the value has no line
    break, no ``$`` (compose interpolates), no ``#`` after a blank (a compose comment), no quote or blank at
    either end (compose strips them) and no backslash."""
    if any(c in value for c in "\n\r$\\\0"):
        return False
    if " #" in value or "\t#" in value:
        return False
    return value == value.strip() and not value.startswith(("'", '"', "#"))


def render_json(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """One object per target (``schema_version``): the object alone for one target, a list for several."""
    data: Any = values[0].to_dict() if len(values) == 1 else [v.to_dict() for v in values]
    return EnvOutput(json.dumps(data, indent=2) + "\n")


def matrix(values: Sequence[CiValues]) -> dict[str, Any]:
    """GitHub's job matrix (``strategy.matrix: ${{ fromJSON(...) }}``): one ``include`` entry per target, keys
    spelled as workflow expressions read them (``matrix.index-url``)."""
    return {
        "include": [
            {
                "target": v.target or "",
                "name": v.name,
                "variant": v.variant,
                "index-url": v.index_url,
                "requirements": " ".join(v.requirements),
                "uv-torch-backend": v.uv_torch_backend,
                "torch-version": v.torch_version,
                "platform": v.platform,
                "python": v.python,
                "cache-key": v.cache_key,
                # a GPU target that gets the CPU build says so in its job (``if: matrix.fallback == ''``)
                "fallback": "cpu" if v.gpu_fallback else "",
                "fallback-reason": v.gpu_fallback or "",
            }
            for v in values
        ]
    }


def render_matrix(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """The matrix as one line of JSON, so that ``echo "matrix=$(wheelfit env --matrix ...)"`` is a valid output."""
    return EnvOutput(json.dumps(matrix(values), separators=(",", ":")) + "\n", stderr=_all_warnings(values))


def _all_warnings(values: Sequence[CiValues]) -> tuple[str, ...]:
    if len(values) == 1:
        return values[0].warnings
    return tuple(f"{v.name}: {w}" for v in values for w in v.warnings)


def apply_output(output: EnvOutput) -> None:
    """Append each file's text (``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``); the runner reads them after the
    step, so a write that fails is an error here, not a silent loss."""
    for path, text in output.appends:
        try:
            with path.open("a", encoding="utf-8", newline="\n") as out:
                out.write(text)
        except OSError as exc:
            raise WheelfitError(f"cannot append to {path}: {exc.strerror or exc}") from None


#: A format: the targets' values and the environment (``$GITHUB_OUTPUT``, ...) in, text out.
Renderer = Callable[[Sequence[CiValues], Mapping[str, str]], EnvOutput]


def env_values(
    requirements: Sequence[str],
    targets: Sequence[str],
    where: MachineOptions,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    network: Network | None,
) -> list[CiValues]:
    """Plan ``requirements`` for each target (this machine when none) and give each plan's CI values."""
    from .targets import plan_targets

    found = plan_targets(requirements or ["torch"], targets, where, options, environ=environ, network=network)
    return [ci_values(f) for f in found]
