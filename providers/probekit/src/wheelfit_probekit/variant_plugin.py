"""The WheelNext ``variant_plugins`` API, shared by the detector distributions: only their namespaces differ.

Each provider's ``variant_plugin`` module keeps what is its own: the pure functions over
report-shaped data (``*_supported_configs``, ``*_all_configs``) and, per namespace, a
:class:`VariantPlugin` subclass naming them and the provider's detector. Everything an
installer calls around them lives here once: probing this machine (or ``WHEELFIT_SYSROOT``)
within ``WHEELFIT_PROBE_TIMEOUT``, turning configs into variantlib-shaped objects, and the
early-2025 ``validate_property``. Stdlib only and no variantlib import: installers load the
plugins in isolated environments that hold only their declared dependencies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .records import Provider
from .system import System

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "Config",
    "NamespaceFunction",
    "OverrideError",
    "VariantFeatureConfig",
    "VariantPlugin",
    "detect_configs",
    "feature_configs",
    "known_property",
    "probe_timeout",
]

#: One feature: (name, supported values most preferred first, multi_value).
Config = tuple[str, list[str], bool]
#: (accelerators, cpu, environ) -> configs: a namespace's pure part, the contract the wheelfit core calls.
NamespaceFunction = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any] | None, Mapping[str, str]], list[Config]]

#: Seconds each tool may take when ``WHEELFIT_PROBE_TIMEOUT`` is unset or not a number (the core's default).
DEFAULT_PROBE_TIMEOUT = 15.0


class OverrideError(ValueError):
    """An override variable holds a value the provider cannot read."""


@dataclass(frozen=True)
class VariantFeatureConfig:
    """One feature as variantlib's ``VariantFeatureConfigType`` expects: values most preferred first."""

    name: str
    values: list[str]
    multi_value: bool = False


def probe_timeout(environ: Mapping[str, str]) -> float:
    """``WHEELFIT_PROBE_TIMEOUT`` in seconds (at least 0.1); an installer passes no options, only the environment."""
    try:
        return max(0.1, float(environ.get("WHEELFIT_PROBE_TIMEOUT") or DEFAULT_PROBE_TIMEOUT))
    except ValueError:
        return DEFAULT_PROBE_TIMEOUT


def detect_configs(provider: Provider, function: NamespaceFunction, environ: Mapping[str, str]) -> list[Config]:
    """Probe the machine (or ``WHEELFIT_SYSROOT``, so a simulated one works) with ``provider``, then apply the
    pure ``function``: the installer's answer is the core's answer for the same report."""
    env = dict(environ)
    system = System.from_sysroot(env.get("WHEELFIT_SYSROOT") or None, environ=env, command_timeout=probe_timeout(env))
    result = provider.probe(system)
    return function(result.accelerators, result.cpu, env)


def feature_configs(configs: Sequence[Config]) -> list[VariantFeatureConfig]:
    """Configs as the objects installers read (``.name``, ``.values``, ``.multi_value``)."""
    return [VariantFeatureConfig(name, list(values), multi) for name, values, multi in configs]


def known_property(namespace: str, configs: Sequence[Config], prop: Any) -> bool:
    """Whether ``prop`` (``namespace :: feature :: value``) is in ``namespace``'s value universe ``configs``."""
    if getattr(prop, "namespace", None) != namespace:
        return False
    feature, value = getattr(prop, "feature", None), getattr(prop, "value", None)
    return any(name == feature and value in values for name, values, _ in configs)


class VariantPlugin:
    """Base of the ``variant_plugins`` entry-point classes; a subclass sets ``namespace`` and the three hooks.

    Class methods, so variantlib (which never instantiates) and uv's prototype (which does)
    both work; the optional argument accepts the ``known_properties`` that the early-2025
    API passed. The hooks are private so the classes show installers the reference's
    attributes only.
    """

    namespace: ClassVar[str]
    is_aot_plugin: ClassVar[bool] = False
    is_build_plugin: ClassVar[bool] = False
    all_properties_compatible: ClassVar[bool] = False
    dynamic: ClassVar[bool] = False

    #: The distribution's detector (its ``wheelfit.providers`` entry point).
    _provider: ClassVar[Provider]

    @staticmethod
    def _supported(
        accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
    ) -> list[Config]:
        """The namespace's pure function (its ``VARIANT_NAMESPACES`` entry)."""
        raise NotImplementedError

    @staticmethod
    def _all() -> list[Config]:
        """The namespace's fixed value universe (the reference's ``get_all_configs()``)."""
        raise NotImplementedError

    @classmethod
    def get_supported_configs(cls, known_properties: object = None) -> list[VariantFeatureConfig]:
        del known_properties
        return feature_configs(detect_configs(cls._provider, cls._supported, os.environ))

    @classmethod
    def get_all_configs(cls, known_properties: object = None) -> list[VariantFeatureConfig]:
        del known_properties
        return feature_configs(cls._all())

    @classmethod
    def validate_property(cls, variant_property: Any) -> bool:
        """Early-2025 API: whether ``namespace :: feature :: value`` is a value this provider knows."""
        return known_property(cls.namespace, cls._all(), variant_property)
