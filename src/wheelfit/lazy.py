"""Start-up laziness, in one place: names that load their module on first use.

A ``wheelfit`` process runs one command, so whatever that command does not use should cost nothing. Two forms of
the one idea, "a table of names and the module each lives in, imported when the name is first asked for":

- :func:`lazy_attributes`: package namespaces (PEP 562). Importing a package for one light module must not import
  its heavy siblings (httpx and a TLS trust store, ``html.parser``, ``email``).
- :class:`LazyMapping`: a mapping whose entries are made on first use. The command line's commands are one: typer
  turns every command it knows into a click command (signatures, type hints, 175 options: ~60 ms), and the
  command modules import what their commands render with (rich: ~20 ms), so ``wheelfit detect`` loads and builds
  ``detect`` alone; ``--help`` lists, and so loads, them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any, TypeVar

__all__ = ["LazyMapping", "lazy_attributes"]

V = TypeVar("V")


def lazy_attributes(package: str, where: Mapping[str, str], under: str | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``<under>.<where[name]>`` when ``name`` is asked for;
    ``under`` is ``package`` itself unless given (a module, such as ``wheelfit.api``, names its parent's)."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{under or package}.{module}"), name)

    return getattr_


class LazyMapping(MutableMapping[str, V]):
    """The entries of ``made``, and one for each name of ``later``, made by ``make(name)`` when first asked for.

    Looking a name up (``m[name]``, ``m.get(name)``) makes that entry alone; ``name in m`` makes none; iterating,
    ``len`` and the views make every one. The order is ``made``'s entries that ``later`` does not name, then
    ``later``'s, whichever were made first."""

    def __init__(self, made: Mapping[str, V], later: Iterable[str], make: Callable[[str], V]) -> None:
        self._made = dict(made)
        self._later = list(later)
        self._make = make

    def __getitem__(self, name: str) -> V:
        if name not in self._made and name in self._later:
            self._made[name] = self._make(name)
        return self._made[name]

    def __contains__(self, name: object) -> bool:
        return name in self._made or name in self._later

    def __iter__(self) -> Iterator[str]:
        for name in self._later:
            if name not in self._made:
                self._made[name] = self._make(name)
        return iter([n for n in self._made if n not in self._later] + self._later)

    def __len__(self) -> int:
        return len(list(iter(self)))  # not list(self): list() asks len() first

    def __setitem__(self, name: str, value: V) -> None:
        self._made[name] = value

    def __delitem__(self, name: str) -> None:
        if name in self._later:  # deleted stays deleted: never made again
            self._later.remove(name)
            self._made.pop(name, None)
            return
        del self._made[name]
