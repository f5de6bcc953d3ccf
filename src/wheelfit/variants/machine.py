"""From a hardware report to what the variant providers say this machine supports.

The namespace logic lives in the detector distributions (``wheelfit_<p>.variant_plugin``,
each exposing ``VARIANT_NAMESPACES``); this module finds them, calls them with the report
and checks what they return. It also derives the PEP 508 marker environment of the
report's platform, which ``enable-if`` and dependency markers are evaluated in (so a
``--target`` Windows machine is judged as Windows).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from ..errors import UsageError, clip
from ..report import HardwareReport
from .errors import VariantError
from .ranking import FeatureConfig

__all__ = ["PROVIDER_MODULES", "NamespacePlugin", "load_plugins", "marker_environment", "supported_configs"]

PROVIDER_MODULES = (
    "wheelfit_nvidia.variant_plugin",
    "wheelfit_amd.variant_plugin",
    "wheelfit_intel.variant_plugin",
    "wheelfit_cpu.variant_plugin",
)

#: (accelerators, cpu, environ) -> [(feature, supported values best first, multi_value)]
NamespacePlugin = Callable[
    [Sequence[Mapping[str, Any]], Mapping[str, Any] | None, Mapping[str, str]], list[tuple[str, list[str], bool]]
]

_SYS_PLATFORM = {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}


def load_plugins(modules: Sequence[str] = PROVIDER_MODULES) -> dict[str, tuple[str, NamespacePlugin]]:
    """namespace -> (module, function) for every installed provider module; missing ones are skipped."""
    found: dict[str, tuple[str, NamespacePlugin]] = {}
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # that provider (or its variant module) is not installed
            raise
        table = getattr(module, "VARIANT_NAMESPACES", None)
        if not isinstance(table, Mapping):
            raise VariantError(f"{name} has no VARIANT_NAMESPACES mapping; reinstall that provider")
        for ns, func in table.items():
            if ns in found:
                raise VariantError(f"namespace {ns!r} is provided by both {found[ns][0]} and {name}; uninstall one")
            if not callable(func):
                raise VariantError(f"{name}: VARIANT_NAMESPACES[{ns!r}] is not callable; reinstall that provider")
            found[ns] = (name, func)
    return found


def supported_configs(
    report: HardwareReport,
    environ: Mapping[str, str],
    plugins: Mapping[str, tuple[str, NamespacePlugin]] | None = None,
) -> dict[str, list[FeatureConfig]]:
    """namespace -> supported features for ``report`` (plugins default to the installed providers)."""
    plugins = load_plugins() if plugins is None else plugins
    accelerators = [a.to_dict() for a in report.accelerators]
    cpu = {f.name: getattr(report.cpu, f.name) for f in fields(report.cpu)}
    out: dict[str, list[FeatureConfig]] = {}
    from wheelfit_probekit.variant_plugin import OverrideError

    for ns, (module, func) in plugins.items():
        try:
            raw = func(accelerators, cpu, environ)
        except OverrideError as exc:  # a provider's *_FORCE_* variable the user set: a usage error, said as it is
            raise UsageError(clip(str(exc), 400)) from None
        out[ns] = _checked(raw, f"{module} namespace {ns!r}")
    return out


def _checked(raw: object, where: str) -> list[FeatureConfig]:
    if not isinstance(raw, list):
        raise VariantError(f"{where} returned {type(raw).__name__}, not a list of features; report this")
    out: list[FeatureConfig] = []
    for item in raw:
        ok = (
            isinstance(item, (tuple, list))
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[1], (list, tuple))
            and all(isinstance(v, str) for v in item[1])
            and isinstance(item[2], bool)
        )
        if not ok:
            raise VariantError(f"{where} returned {item!r:.80}, not (feature, [values], multi_value); report this")
        out.append(FeatureConfig(item[0], tuple(item[1]), item[2]))
    return out


def marker_environment(report: HardwareReport) -> dict[str, str]:
    """The PEP 508 environment of the report's platform (its Python, OS and machine)."""
    p = report.platform
    full = p.python
    parts = full.split(".")
    windows = p.system == "Windows"
    return {
        "implementation_name": "cpython",
        "implementation_version": full,
        "os_name": "nt" if windows else "posix",
        "platform_machine": ("AMD64" if windows and p.machine == "x86_64" else p.machine) or "",
        "platform_python_implementation": "CPython",
        "platform_release": p.release or "",
        "platform_system": p.system,
        "platform_version": "",
        "python_full_version": full,
        "python_version": ".".join(parts[:2]),
        "sys_platform": _SYS_PLATFORM.get(p.system, p.system.lower()),
    }
