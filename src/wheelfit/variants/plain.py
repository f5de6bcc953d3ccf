"""A variant wheel made plain: its name and METADATA as an installer without variant support accepts them.

PyTorch's variant wheels gate their runtime dependencies on variant markers (``triton==3.5.0; ... and 'nvidia'
in variant_namespaces``, wheelnext/variant-repack ``configs/torch-2.9`` ``deps_add_list``). uv 0.13 refuses such
a wheel outright and pip 23 crashes on it, and the installed METADATA would trip every later resolve. PEP 825
(Backwards Compatibility) suggests evaluating the variant markers ahead of time for such installers; wheelfit
does it at install time, for the variant it chose and the machine it chose it for. Pure: bytes in, bytes out.
"""

from __future__ import annotations

import re

from ..errors import first_line
from .errors import VariantError
from .filename import VariantWheelName
from .markers import VariantEnvironment, plain_requirement

__all__ = ["plain_filename", "plain_metadata"]

#: The blank line that ends METADATA's header block (CRLF files too).
_END_OF_HEADERS = re.compile(r"\n(?=\r?\n)")


def plain_filename(wheel: VariantWheelName) -> str:
    """``torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12_8.whl`` -> the same without ``-cuda12_8``."""
    if wheel.label is None:
        return wheel.filename
    return wheel.filename.removesuffix(f"-{wheel.label}.whl") + ".whl"


def plain_metadata(metadata: bytes, variant: VariantEnvironment) -> bytes:
    """``metadata`` with each Requires-Dist's variant comparisons evaluated for ``variant``.

    A dependency they rule out is dropped; one they allow keeps the rest of its marker (``extra``, platform) for
    the installer. Every other byte is kept as it was, so the result differs only where it has to."""
    try:
        text = metadata.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VariantError(f"METADATA is not UTF-8 ({exc.reason})") from None
    end = _END_OF_HEADERS.search(text)
    headers, body = (text[: end.end()], text[end.end() :]) if end else (text, "")
    lines = headers.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and lines[j][:1] in (" ", "\t"):
            j += 1  # a folded header continues on indented lines
        field = "".join(lines[i:j])
        name, colon, value = field.partition(":")
        if colon and name.strip().lower() == "requires-dist":
            line_end = lines[j - 1][len(lines[j - 1].rstrip("\r\n")) :]
            requirement = " ".join(part.strip() for part in value.splitlines()).strip()
            try:
                plain = plain_requirement(requirement, variant)
            except VariantError as exc:
                raise VariantError(f"Requires-Dist {requirement!r}: {first_line(exc)}") from None
            if plain is not None:
                out.append(field if plain == requirement else f"{name}: {plain}{line_end}")
        else:
            out.append(field)
        i = j
    return ("".join(out) + body).encode("utf-8")
