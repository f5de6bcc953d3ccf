"""Requirements in every form ``pip install`` and ``uv pip install`` take: command-line specs, ``-r``/``-c`` files
(nested), their index options and ``--hash`` values, each requirement classified. Pure but for :func:`read_file`,
the default reader the caller passes in (with the working directory and the environment for ``${VAR}``)::

    reqs = read_requirements(specs, requirement_files, constraint_files, reader=read_file, cwd=os.getcwd(),
                             environ=os.environ, given=IndexOptions(index_url=..., find_links=..., pre=...))
    reqs = reqs.for_environment(target_env.markers)        # markers evaluated for the target, not this Python
    family, other = reqs.split(is_torch_family)            # a torch-family sdist or directory is a UsageError
    reqs.names(); reqs.constraints; reqs.index_url; ...    # ParsedRequirement.spec / .line() for the backend

Every error is a one-line :class:`~wheelfit.errors.UsageError`, ``FILE:LINE: what is wrong; what to do``.

The format is pip's (https://pip.pypa.io/en/stable/reference/requirements-file-format/), with these choices:

- ``-r``/``-c`` paths are relative to the including file, ``-f`` paths to the file's directory (uv 0.12.1+;
  pip does so when the directory exists), bare paths (``./torch-...whl``) to the working directory, as pip and
  uv read them (pypa/pip#8765, astral-sh/uv#13239), so one file installs the same wheel under all three.
- A later ``--index-url`` in the files replaces an earlier one (pip); the command line's wins over the files'
  (uv). ``--extra-index-url``, ``--find-links``, ``--pre`` and ``--no-index`` add up.
- Refused where pip would silently do something else: an include cycle (pip recurses until it crashes), an
  option other than ``--hash`` on a requirement's line (pip ignores it), ``-e`` and the options wheelfit does not
  carry out (``--use-feature``, ``--trusted-host``, ``--no-binary``, ...), ``-r https://...`` (not fetched),
  a constraint that is not a name with versions, a file over 16 MiB or over 20,000 lines in all.
- A file without BOM or PEP 263 coding line is UTF-8 (pip falls back to the locale's encoding).
- ``${NAME}`` (upper case, digits, ``_``) is expanded from ``environ``; unset or empty stays as written (pip).
"""

from __future__ import annotations

from .files import MAX_FILE_BYTES, FileReader, read_requirements
from .model import MARKER_KEYS, IndexOptions, Origin, ParsedRequirement, RequirementSet
from .reader import read_file

__all__ = [
    "MARKER_KEYS",
    "MAX_FILE_BYTES",
    "FileReader",
    "IndexOptions",
    "Origin",
    "ParsedRequirement",
    "RequirementSet",
    "read_file",
    "read_requirements",
]
