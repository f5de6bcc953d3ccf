"""Requirements in every form ``pip install`` and ``uv pip install`` take: command-line specs, ``-r``/``-c`` files
(nested), their index options and ``--hash`` values, each requirement classified (named, direct reference, local
wheel or source). Pure but for :func:`read_file`, the default reader the caller passes in.

Typical use::

    reqs = read_requirements(["torch"], ["requirements.txt"], reader=read_file, cwd=os.getcwd(),
                             environ=os.environ).for_environment(target_markers)
    family, other = reqs.split(is_torch_family)
"""

from __future__ import annotations

from .files import MAX_FILE_BYTES, FileReader, read_requirements
from .model import MARKER_KEYS, Origin, ParsedRequirement, RequirementSet
from .reader import read_file

__all__ = [
    "MARKER_KEYS",
    "MAX_FILE_BYTES",
    "FileReader",
    "Origin",
    "ParsedRequirement",
    "RequirementSet",
    "read_file",
    "read_requirements",
]
