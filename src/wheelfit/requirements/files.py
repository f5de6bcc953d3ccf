"""Requirement files (``-r``/``-c``, nested) and the command line read into one :class:`RequirementSet`.

Pure: files are read only through the ``reader`` the caller passes (:func:`wheelfit.requirements.reader.read_file`
reads the local disk), the working directory and the environment (for ``${VAR}``) are passed in too. The format
is pip's (https://pip.pypa.io/en/stable/reference/requirements-file-format/, ``req_file.py``), with what pip would
silently ignore or loop on turned into a one-line ``FILE:LINE: what; what to do`` error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import UsageError
from .classify import HASH_ALGORITHMS, classify, path_from_file_url
from .lines import decode, logical_lines, split_options
from .model import IndexOptions, Origin, ParsedRequirement, RequirementSet, clip, cut
from .options import LineOptions, OptionError, parse_options

__all__ = ["MAX_DEPTH", "MAX_FILES", "MAX_FILE_BYTES", "MAX_LINES", "FileReader", "read_requirements"]

#: ``reader(path, limit)``: at most ``limit`` bytes of the file at ``path`` (absolute, as joined: it may hold
#: ``..``, which the OS resolves through symlinks as pip's open() does); raises ``OSError``.
FileReader = Callable[[str, int], bytes]

#: Larger files are refused unread past this: real ones (pip-compile with hashes for a big project) are < 1 MiB.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Files read in one go (a file included twice counts twice, as pip reads it twice): bounds a hostile include tree.
MAX_FILES = 1000
#: Lines that say something, in all files together: a lock file of a large project has a few thousand, and each
#: costs a PEP 508 parse (16 MiB of ``a\n`` would be 8 million of them, minutes of work).
MAX_LINES = 20_000
#: Includes nested deeper than this are refused (a chain of distinct files, which cycle detection cannot see).
MAX_DEPTH = 64


def _is_remote(value: str) -> bool:
    return value.lower().startswith(("http:", "https:"))


def _is_url(value: str) -> bool:
    return "://" in value or value.lower().startswith("file:")


@dataclass
class _Reading:
    """The state of one :func:`read_requirements`: what was found so far, in order."""

    reader: FileReader
    cwd: str
    environ: Mapping[str, str]
    requirements: list[ParsedRequirement] = field(default_factory=list)
    constraints: list[ParsedRequirement] = field(default_factory=list)
    index_url: str | None = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    pre: bool = False
    no_index: bool = False
    sources: list[str] = field(default_factory=list)
    lines: int = 0
    #: (absolute path, name as shown) of the files being read, outermost first: a cycle is a path seen again.
    stack: list[tuple[str, str]] = field(default_factory=list)

    def result(self) -> RequirementSet:
        return RequirementSet(
            requirements=tuple(self.requirements),
            constraints=tuple(self.constraints),
            index_url=self.index_url,
            extra_index_urls=tuple(dict.fromkeys(self.extra_index_urls)),
            find_links=tuple(dict.fromkeys(self.find_links)),
            pre=self.pre,
            no_index=self.no_index,
            sources=tuple(self.sources),
        )

    def include(self, value: str, *, constraint: bool, at: Origin | None) -> None:
        """Read the file ``value`` names (``-r``/``-c`` ``value`` written at ``at``; ``None``: the command line)."""
        flag = "-c" if constraint else "-r"
        where = f"{at}: {flag} {cut(value)}" if at is not None else f"{flag} {cut(value)}"
        parent_abs, parent_shown = self.stack[-1] if self.stack else (os.path.join(self.cwd, "-"), "")
        if _is_remote(value):
            raise UsageError(f"{where}: requirement files are read from disk only; download it and give its path")
        if value.lower().startswith("file:"):
            try:
                absolute = shown = path_from_file_url(value, os.path.dirname(parent_abs))
            except ValueError as exc:
                raise UsageError(f"{where}: {exc}; give a local path") from exc
        else:
            # Relative to the including file, as pip joins them; the OS resolves `..` (through symlinks), the
            # normalized form only names the file and finds cycles.
            shown = os.path.normpath(os.path.join(os.path.dirname(parent_shown), value))
            absolute = os.path.join(os.path.dirname(parent_abs), value)
        keys = [os.path.normpath(a) for a, _ in self.stack]
        if os.path.normpath(absolute) in keys:
            chain = [s for _, s in self.stack]
            loop = " -> ".join([*chain[keys.index(os.path.normpath(absolute)) :], shown])
            raise UsageError(f"{where}: includes a file that is already being read ({loop}); remove the cycle")
        if len(self.stack) >= MAX_DEPTH:
            raise UsageError(f"{where}: requirement files nested more than {MAX_DEPTH} deep; flatten them")
        if len(self.sources) >= MAX_FILES:
            raise UsageError(f"{where}: more than {MAX_FILES} requirement files read; include each file once")
        try:
            data = self.reader(absolute, MAX_FILE_BYTES + 1)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise UsageError(f"{where}: cannot read {shown} ({why}); check the path") from exc
        if len(data) > MAX_FILE_BYTES:
            limit = MAX_FILE_BYTES // (1024 * 1024)
            raise UsageError(f"{where}: {shown} is larger than {limit} MiB; give a requirements file, not this")
        try:
            text = decode(data)
        except UnicodeDecodeError as exc:
            line = exc.object[: exc.start].count(b"\n") + 1
            raise UsageError(
                f"{shown}:{line}: not valid {exc.encoding} (byte {exc.object[exc.start]:#04x}); save the file as UTF-8"
            ) from exc
        except LookupError as exc:
            raise UsageError(f"{shown}:1: unknown encoding in its coding line ({exc}); save it as UTF-8") from exc
        self.sources.append(shown)
        self.stack.append((absolute, shown))
        for number, logical in logical_lines(text, self.environ):
            self.lines += 1
            if self.lines > MAX_LINES:
                raise UsageError(f"{shown}:{number}: more than {MAX_LINES} requirement lines in all; split the install")
            self._line(Origin(shown, number), logical, constraint=constraint, directory=os.path.dirname(absolute))
        self.stack.pop()

    def _line(self, origin: Origin, line: str, *, constraint: bool, directory: str) -> None:
        text, option_text = split_options(line)
        try:
            options = parse_options(option_text) if option_text else LineOptions()
        except OptionError as exc:
            raise UsageError(f"{origin}: {exc}") from exc
        if text:
            self._requirement(origin, text, options, constraint=constraint)
            return
        if options.hashes:
            raise UsageError(f"{origin}: --hash belongs to a requirement; write it on the requirement's line")
        if options.no_index:
            self.no_index = True
        if options.index_urls:
            self.index_url = options.index_urls[-1]  # pip: a later --index-url replaces an earlier one
        self.extra_index_urls += options.extra_index_urls
        self.find_links += [
            v if _is_url(v) else os.path.normpath(os.path.join(directory, v)) for v in options.find_links
        ]
        self.pre = self.pre or options.pre
        for value in options.requirements:
            self.include(value, constraint=False, at=origin)  # pip: -r inside a -c file is requirements
        for value in options.constraints:
            self.include(value, constraint=True, at=origin)

    def _requirement(self, origin: Origin, text: str, options: LineOptions, *, constraint: bool) -> None:
        misplaced = [o for o in options.seen if o != "--hash"]
        if misplaced:
            raise UsageError(
                f"{origin}: {misplaced[0]} applies to the whole file, not to {clip(text)}; give it a line of its own"
            )
        hashes = tuple(_check_hash(origin, h) for h in options.hashes)
        parsed = classify(text, origin, cwd=self.cwd)
        parsed = replace(parsed, hashes=tuple(dict.fromkeys(parsed.hashes + hashes)))
        if not constraint:
            self.requirements.append(parsed)
            return
        if parsed.kind != "named":
            raise UsageError(f"{origin}: constraint {clip(text)} is not a name; a constraint is a name and versions")
        if parsed.extras:
            raise UsageError(
                f"{origin}: constraint {clip(text)} has extras; drop them (constraints take none, as in pip)"
            )
        self.constraints.append(parsed)


def _check_hash(origin: Origin, value: str) -> str:
    algorithm, _, digest = value.partition(":")
    if algorithm.lower() not in HASH_ALGORITHMS or not digest or any(c not in "0123456789abcdefABCDEF" for c in digest):
        raise UsageError(
            f"{origin}: --hash={cut(value)} is not ALGORITHM:HEXDIGEST with {', '.join(sorted(HASH_ALGORITHMS))}; "
            f"fix it (pip hash FILE prints one)"
        )
    return f"{algorithm.lower()}:{digest.lower()}"


def read_requirements(
    requirements: Sequence[str] = (),
    requirement_files: Sequence[str] = (),
    constraint_files: Sequence[str] = (),
    *,
    reader: FileReader,
    cwd: str,
    environ: Mapping[str, str],
    given: IndexOptions | None = None,
) -> RequirementSet:
    """What ``pip install REQ... -r FILE... -c FILE... [options]`` would read, typed.

    ``cwd`` (absolute) anchors relative paths on the command line and bare paths everywhere; ``environ`` gives
    ``${VAR}`` values. The command line's requirements come first; its index URL (``given``) wins over any file's
    (as uv's does), and the other options add up. Raises :class:`~wheelfit.errors.UsageError`.
    """
    given = given or IndexOptions()
    reading = _Reading(reader=reader, cwd=cwd, environ=environ)
    for value in requirement_files:
        reading.include(value, constraint=False, at=None)
    for value in constraint_files:
        reading.include(value, constraint=True, at=None)
    files = reading.result()
    cli = RequirementSet(
        requirements=tuple(classify(text, Origin(), cwd=cwd) for text in requirements),
        index_url=given.index_url,
        extra_index_urls=given.extra_index_urls,
        find_links=tuple(v if _is_url(v) else os.path.normpath(os.path.join(cwd, v)) for v in given.find_links),
        pre=given.pre,
        no_index=given.no_index,
    )
    merged = files.merge(cli)
    _check_names(cli.requirements + files.requirements)
    return replace(merged, requirements=cli.requirements + files.requirements)


def _check_names(requirements: Sequence[ParsedRequirement]) -> None:
    """A named requirement that is a typo of a name wheelfit plans (``troch``: the rule is
    :func:`~wheelfit.resolve.request.misspelt`) is refused here, before anything is detected or fetched: it would
    go to the default index, which has no such package, or a squatter's. A torch-family name is never refused,
    nor a direct reference or a path (``troch @ https://...``), which names its own file."""
    from ..family import is_torch_family
    from ..resolve.request import UnknownPackageError, misspelt

    for req in requirements:
        if req.kind != "named" or req.name is None or req.requirement is None or is_torch_family(req.name):
            continue
        meant = misspelt(req.name)
        if meant is not None:
            where = f"{req.origin}: " if req.origin.file is not None else ""
            raise UnknownPackageError(req.requirement.name, meant, where)
