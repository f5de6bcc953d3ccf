"""GitHub Actions' formats, as "Workflow commands for GitHub Actions" documents them (and ``actions/toolkit``'s
``core`` writes them): step outputs appended to ``$GITHUB_OUTPUT`` as ``name<<DELIMITER`` blocks, a markdown job
summary appended to ``$GITHUB_STEP_SUMMARY``, and ``::warning title=...::message`` annotations on stdout.

Pure: values in, text out; :func:`.ci_env.apply_output` appends the text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import UsageError
from .ci_env import CiValues, EnvOutput, matrix

__all__ = [
    "annotation",
    "escape_data",
    "escape_property",
    "output_block",
    "output_path",
    "outputs",
    "render_github",
    "summary",
]


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF percent-encoded (``%`` first, so the runner's decoding is exact)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: as a message, and ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(kind: str, message: str, *, title: str | None = None) -> str:
    """One workflow command line: ``::warning title=T::message``."""
    props = f" title={escape_property(title)}" if title else ""
    return f"::{kind}{props}::{escape_data(message)}"


def output_block(name: str, value: str) -> str:
    """``name<<DELIMITER``, the value, the delimiter, each on its own line: the multi-line form, used for every
    value as ``core.setOutput`` does. The delimiter (``ghadelimiter_`` and a digest of the name: the same text
    for the same output) is lengthened until the value does not contain it, so the value cannot end the block
    early. The runner reads lines: a CR before a LF in a value is lost (wheelfit's values have none)."""
    delimiter = "ghadelimiter_" + hashlib.sha256(name.encode()).hexdigest()[:32]
    while delimiter in value:
        delimiter += "_"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def _key(name: str) -> str:
    """An output name usable as ``steps.<id>.outputs.<name>``: letters, digits, ``-`` and ``_``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def outputs(values: Sequence[CiValues]) -> dict[str, str]:
    """The step outputs: for one target ``variant``, ``index-url``, ...; for several each prefixed by the
    target's name (``cu126-variant``); ``matrix`` (the job matrix) always."""
    out: dict[str, str] = {}
    for v in values:
        prefix = "" if len(values) == 1 else _key(v.name) + "-"
        fields = {
            "name": v.name,
            "target": v.target or "",
            "variant": v.variant,
            "index-url": v.index_url,
            "requirements": " ".join(v.requirements),
            "uv-torch-backend": v.uv_torch_backend,
            "torch-version": v.torch_version,
            "platform": v.platform,
            "python": v.python,
            "cache-key": v.cache_key,
            "env": "\n".join(f"{k}={val}" for k, val in v.runtime_env.items()),
            "warnings": "\n".join(v.warnings),
        }
        out.update({prefix + k: val for k, val in fields.items()})
    out["matrix"] = json.dumps(matrix(values), separators=(",", ":"))
    return out


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def summary(values: Sequence[CiValues]) -> str:
    """The job summary in GitHub-flavoured markdown: per target the chosen build and why, its pins and run-time
    environment, the builds turned down (a table) and the warnings."""
    parts: list[str] = []
    for v in values:
        head = f"### wheelfit: torch {v.torch_version} ({v.variant})"
        if v.target:
            head += f" for `{v.target}`"
        lines = [head, "", f"Index: {v.index_url}", ""]
        lines += [f"- {r}" for r in v.reasons]
        lines += ["", "Pins: " + ", ".join(f"`{r}`" for r in v.requirements)]
        if v.runtime_env:
            lines += ["", "Run-time environment: " + ", ".join(f"`{k}={val}`" for k, val in v.runtime_env.items())]
        lines += ["", f"Cache key: `{v.cache_key}`", ""]
        if v.rejected:
            lines += ["Turned down:", "", "| Build | torch | Why |", "| --- | --- | --- |"]
            lines += [f"| {_cell(r.variant)} | {_cell(r.version)} | {_cell(r.reason)} |" for r in v.rejected]
            lines.append("")
        if v.warnings:
            lines += ["Warnings:", "", *(f"- {_cell(w)}" for w in v.warnings), ""]
        parts.append("\n".join(lines))
    return "\n".join(parts)


def output_path(environ: Mapping[str, str]) -> Path:
    """``$GITHUB_OUTPUT``, which ``--format github`` needs (checked before planning, so it fails at once)."""
    output = environ.get("GITHUB_OUTPUT")
    if not output:
        raise UsageError(
            "--format github appends to the file named by $GITHUB_OUTPUT, which is not set: "
            "run it in a GitHub Actions step or set GITHUB_OUTPUT to a file"
        )
    return Path(output)


def render_github(values: Sequence[CiValues], environ: Mapping[str, str]) -> EnvOutput:
    """Outputs appended to ``$GITHUB_OUTPUT`` (required), the summary to ``$GITHUB_STEP_SUMMARY`` (when set), and
    the warnings as annotations on stdout, titled with the target."""
    appends = [(output_path(environ), "".join(output_block(k, val) for k, val in outputs(values).items()))]
    step_summary = environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        appends.append((Path(step_summary), summary(values) + "\n"))
    notes = []
    for v in values:
        title = f"wheelfit: {v.name}" + (f" ({v.target})" if v.target else "")
        notes += [annotation("warning", w, title=title) for w in v.warnings]
    return EnvOutput("".join(n + "\n" for n in notes), appends=tuple(appends))
